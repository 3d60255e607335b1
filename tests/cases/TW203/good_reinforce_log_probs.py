"""REINFORCE: the policy runs with autograd on at every step because its log-probs are kept and
backpropagated together at the end of the episode; the greedy action under no_grad needs no graph."""
import torch
from torch import nn
from torch.distributions import Categorical

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2), nn.Softmax(dim=-1))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(2):
    log_probs, rewards = [], []
    state = torch.randn(4)
    for t in range(10):
        probs = policy(state)
        m = Categorical(probs)
        action = m.sample()
        log_probs.append(m.log_prob(action))
        rewards.append(float(action.item()))
        with torch.no_grad():
            greedy = policy(state).argmax().item()
        state = torch.randn(4) + greedy
    loss = -sum(lp * r for lp, r in zip(log_probs, rewards))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
