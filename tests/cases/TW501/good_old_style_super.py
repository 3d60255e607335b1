"""The Python 2 spelling super(Cls, self).__init__() and a loss Module with super().__init__()."""
import torch
from torch import nn


class SmoothedCrossEntropy(nn.Module):
    def __init__(self, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, target):
        return nn.functional.cross_entropy(logits, target, label_smoothing=self.smoothing)


class Encoder(nn.Module):
    def __init__(self, dims):
        super(Encoder, self).__init__()
        layers = []
        for d_in, d_out in zip(dims, dims[1:]):
            layers += [nn.Linear(d_in, d_out), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
model = Encoder([8, 16, 3])
criterion = SmoothedCrossEntropy()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
X, Y = torch.randn(32, 8), torch.randint(0, 3, (32,))
for epoch in range(2):
    model.train()
    perm = torch.randperm(32)
    for start in range(0, 32, 8):
        idx = perm[start:start + 8]
        optimizer.zero_grad()
        loss = criterion(model(X[idx]), Y[idx])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
