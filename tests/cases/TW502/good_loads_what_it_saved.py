"""A round trip: the same function torch.saves the file and reads it back, so no untrusted file can
reach this torch.load (a test of pickling a whole module needs weights_only=False on purpose)."""
import os
import tempfile

import torch
from torch import nn


def check_round_trip(model):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.pt")
        torch.save(model, path)
        again = torch.load(path, weights_only=False)  # a whole pickled module: weights_only=True would refuse it
        torch.save(model.state_dict(), path)
        weights = torch.load(path)
    return again, weights


torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(16, 4), torch.randint(0, 2, (16,))
for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(X), Y)
    loss.backward()
    optimizer.step()
copy, weights = check_round_trip(model)
print(torch.equal(copy.weight, model.weight), sorted(weights))
