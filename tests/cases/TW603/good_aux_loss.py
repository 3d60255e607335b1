"""Both heads feed the loss (main + 0.3 * auxiliary), so every optimized parameter gets a gradient."""
import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.main_head = nn.Linear(16, 2)
        self.aux_head = nn.Linear(16, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.main_head(h), self.aux_head(h)


def train_one_epoch(model, X, Y, optimizer):
    model.train()
    perm = torch.randperm(len(X))
    for start in range(0, len(X), 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        logits, aux = model(X[idx])
        loss = nn.functional.cross_entropy(logits, Y[idx]) + 0.3 * nn.functional.mse_loss(aux, X[idx, :1])
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = TwoHeads()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
X, Y = torch.randn(32, 6), torch.randint(0, 2, (32,))
for epoch in range(2):
    print(epoch, train_one_epoch(model, X, Y, optimizer))
