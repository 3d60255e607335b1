"""`model.train(training)` sets the mode from a flag: with `training=False` the validation pass runs in eval mode."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_batches = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(3)]
val_batches = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(2)]


def run_epoch(batches, training):
    model.train(training)
    total = 0.0
    for x, y in batches:
        if training:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        else:
            with torch.no_grad():
                loss = nn.functional.cross_entropy(model(x), y)
        total += loss.item()
    return total


for epoch in range(3):
    print(epoch, run_epoch(train_batches, True), run_epoch(val_batches, False))
