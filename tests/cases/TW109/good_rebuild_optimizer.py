"""Two-stage training: after swapping the head, a new optimizer is built over the new parameters."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def replace_head(self, num_classes):
        self.model.head = nn.Linear(12, num_classes)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)

    def fit(self, X, Y, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            perm = torch.randperm(len(X))
            for start in range(0, len(X), 8):
                idx = perm[start:start + 8]
                self.optimizer.zero_grad()
                loss = nn.functional.cross_entropy(self.model(X[idx]), Y[idx])
                loss.backward()
                self.optimizer.step()
            print(epoch, loss.item())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 12), nn.ReLU())
        self.head = nn.Linear(12, 2)

    def forward(self, x):
        return self.head(self.body(x))


torch.manual_seed(0)
X = torch.randn(32, 6)
trainer = Trainer(Net())
trainer.fit(X, torch.randint(0, 2, (32,)))
trainer.replace_head(4)
trainer.fit(X, torch.randint(0, 4, (32,)))
