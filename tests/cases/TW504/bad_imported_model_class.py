# case: static-only
"""TW504: the model class comes from a module the check does not read, but it is built here and trained from its
initial weights; --seed reaches only a gym environment's reset, never torch."""
import argparse

import gymnasium as gym
import torch

from nets import PolicyNet

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=543)
args = parser.parse_args()
env = gym.make("CartPole-v1")
env.reset(seed=args.seed)
policy = PolicyNet(4, 2).to("cpu")  # static: TW504
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(10):
    state, _ = env.reset()
    loss = -policy(torch.as_tensor(state)).log_softmax(-1)[0]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
