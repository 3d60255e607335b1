"""Correct: the torchvision fine-tuning tutorial form: freeze the whole pretrained network, then replace its head
`fc` with a new (trainable) layer and optimize that layer."""
import torch
from torch import nn


class Pretrained(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(12, 32), nn.ReLU())
        self.fc = nn.Linear(32, 1000)

    def forward(self, x):
        return self.fc(self.features(x))


torch.manual_seed(0)
model_conv = Pretrained()
for param in model_conv.parameters():
    param.requires_grad = False
num_ftrs = model_conv.fc.in_features
model_conv.fc = nn.Linear(num_ftrs, 2)
optimizer_conv = torch.optim.SGD(model_conv.fc.parameters(), lr=0.001, momentum=0.9)
inputs, labels = torch.randn(4, 12), torch.tensor([0, 1, 0, 1])
for epoch in range(2):
    optimizer_conv.zero_grad()
    nn.functional.cross_entropy(model_conv(inputs), labels).backward()
    optimizer_conv.step()
