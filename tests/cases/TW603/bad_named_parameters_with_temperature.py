"""TW603: the optimizer holds the classifier, then a named_parameters() loop freezes the whole encoder+classifier;
a learned temperature outside the optimizer still gets gradients, so the run goes on and trains nothing."""
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.classifier = nn.Linear(16, 3)

    def forward(self, x):
        return self.classifier(self.encoder(x))


torch.manual_seed(0)
model = Classifier()
log_temperature = nn.Parameter(torch.zeros(()))
optimizer = torch.optim.Adam([{"params": model.classifier.parameters(), "lr": 1e-3}])
for name, param in model.named_parameters():  # static: TW603
    param.requires_grad = False
x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))

for epoch in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x) / log_temperature.exp(), y)
    loss.backward()
    optimizer.step()
