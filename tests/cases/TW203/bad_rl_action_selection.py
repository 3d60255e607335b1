"""TW203: a Q-network run with autograd on at every environment step to pick an action: only the argmax is
kept, so each step records a graph that nothing backpropagates (the update later runs its own forward)."""
import random

import torch
from torch import nn

torch.manual_seed(0)
random.seed(0)
policy_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(policy_net.parameters(), lr=1e-3)
memory = []


def select_action(state):
    q_values = policy_net(state)  # error: TW203
    return q_values.argmax().item()


def optimize_model():
    batch = random.sample(memory, 4)
    states = torch.stack([s for s, _, _ in batch])
    actions = torch.tensor([a for _, a, _ in batch])
    rewards = torch.tensor([r for _, _, r in batch])
    q = policy_net(states).gather(1, actions[:, None]).squeeze(1)
    loss = nn.functional.mse_loss(q, rewards)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


for episode in range(2):
    state = torch.randn(4)
    for t in range(10):
        action = select_action(state)
        memory.append((state, action, float(action)))
        state = torch.randn(4)
        if len(memory) >= 4:
            optimize_model()
