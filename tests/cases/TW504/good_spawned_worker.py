# case: static-only
"""Correct: the program hands `run_worker` to `mp.spawn`, and each worker seeds torch (offset by its rank) before it
builds the agent whose policy it trains."""
import argparse
import functools

import gymnasium as gym
import torch
import torch.multiprocessing as mp
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=543)
parser.add_argument("--episodes", type=int, default=10)
args = parser.parse_args()


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 32), nn.Dropout(0.2), nn.Linear(32, 2))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


class Agent:
    def __init__(self):
        self.env = gym.make("CartPole-v1")
        self.env.reset(seed=args.seed)
        self.policy = Policy()
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-2)

    def finish_episode(self, log_probs, returns):
        self.optimizer.zero_grad()
        loss = -(torch.stack(log_probs) * returns).sum()
        loss.backward()
        self.optimizer.step()


def bind(fn, *args):
    return functools.partial(fn, args=args)  # a local `args`, not the options


def run_worker(rank, episodes):
    torch.manual_seed(args.seed + rank)
    agent = Agent()
    for episode in range(episodes):
        state = torch.randn(4)
        probs = agent.policy(state)
        agent.finish_episode([torch.log(probs[0])], torch.ones(1))


def main():
    mp.spawn(run_worker, args=(args.episodes,), nprocs=2, join=True)


if __name__ == "__main__":
    main()
