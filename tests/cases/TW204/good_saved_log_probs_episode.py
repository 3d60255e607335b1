"""Policy gradient: log-probs saved on the policy during an episode, read back by a later loop into one backward."""
import torch
from torch import nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)


def select_action(state):
    m = Categorical(policy(state))
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode(gamma=0.99):
    returns, running = [], 0.0
    for r in reversed(policy.rewards):
        running = r + gamma * running
        returns.insert(0, running)
    returns = torch.tensor(returns)
    terms = []
    for log_prob, ret in zip(policy.saved_log_probs, returns):
        terms.append(-log_prob * ret)
    optimizer.zero_grad()
    loss = torch.stack(terms).sum()
    loss.backward()
    optimizer.step()
    del policy.saved_log_probs[:]
    del policy.rewards[:]


torch.manual_seed(0)
for episode in range(3):
    state = torch.randn(4)
    for t in range(5):
        action = select_action(state)
        policy.rewards.append(float(action))
        state = torch.randn(4)
    finish_episode()
