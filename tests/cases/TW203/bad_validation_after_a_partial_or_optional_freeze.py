"""Linear evaluation of a backbone: `backbone.requires_grad_(False)` then the head turned back on
(`model.head.requires_grad_(True)`), or the freeze only under an option. Either way the model is not
all frozen when validation runs, so its forwards without `no_grad` record a graph."""
import argparse

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        return self.head(self.body(x))


parser = argparse.ArgumentParser()
parser.add_argument("--freeze", action="store_true")
args = parser.parse_args([])

torch.manual_seed(0)
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]

probe = Classifier()
probe.requires_grad_(False)
probe.head.requires_grad_(True)
probe_optimizer = torch.optim.SGD(probe.head.parameters(), lr=0.1)

tuned = Classifier()
if args.freeze:
    tuned.requires_grad_(False)
    tuned.head.requires_grad_(True)
tuned_optimizer = torch.optim.SGD([p for p in tuned.parameters() if p.requires_grad], lr=0.1)

for epoch in range(2):
    for model, optimizer in ((probe, probe_optimizer), (tuned, tuned_optimizer)):
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    correct = 0
    for x, y in batches:
        correct += (probe(x).argmax(1) == y).sum().item()  # error: TW203
    for x, y in batches:
        correct += (tuned(x).argmax(1) == y).sum().item()  # error: TW203
    print(epoch, correct)
