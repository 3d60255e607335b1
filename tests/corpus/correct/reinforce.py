"""REINFORCE with a baseline on a small corridor environment: log-probs and values are saved over an
episode and backpropagated once when it ends."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Corridor:
    """Walk left or right along 6 cells; reaching the right end pays 1, every step costs 0.01."""

    def __init__(self, length=6, max_steps=20):
        self.length, self.max_steps = length, max_steps

    def reset(self):
        self.pos, self.t = 0, 0
        return self.observe()

    def observe(self):
        return F.one_hot(torch.tensor(self.pos), self.length).float()

    def step(self, action):
        self.t += 1
        self.pos = min(max(self.pos + (1 if action == 1 else -1), 0), self.length - 1)
        done = self.pos == self.length - 1 or self.t >= self.max_steps
        reward = 1.0 if self.pos == self.length - 1 else -0.01
        return self.observe(), reward, done


class Policy(nn.Module):
    def __init__(self, n_obs=6, n_actions=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, 32), nn.ReLU())
        self.action_head = nn.Linear(32, n_actions)
        self.value_head = nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return F.softmax(self.action_head(h), dim=-1), self.value_head(h)


def finish_episode(policy, optimizer, saved, rewards, gamma=0.99):
    returns, R = [], 0.0
    for r in reversed(rewards):
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    policy_losses, value_losses = [], []
    for (log_prob, value), R in zip(saved, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value.squeeze(0), R))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    return loss.item()


torch.manual_seed(543)
env = Corridor()
policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
running_reward = 0.0
for episode in range(6):
    state, saved, rewards, done = env.reset(), [], [], False
    while not done:
        probs, value = policy(state)
        m = Categorical(probs)
        action = m.sample()
        saved.append((m.log_prob(action), value))
        state, reward, done = env.step(action.item())
        rewards.append(reward)
    running_reward = 0.05 * sum(rewards) + 0.95 * running_reward
    loss = finish_episode(policy, optimizer, saved, rewards)
    print(f"episode {episode}: length {len(rewards)} running reward {running_reward:.3f} loss {loss:.3f}")
