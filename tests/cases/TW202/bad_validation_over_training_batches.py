"""TW202 and TW203: accuracy measured over the training batches after each epoch, with neither `model.eval()` nor
`no_grad`: Dropout still drops, so the accuracy is too low and noisy, and every pass records a graph."""
import torch
from torch import nn

torch.manual_seed(0)
batches = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(4)]
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    correct = 0
    for x, y in batches:
        correct += (model(x).argmax(1) == y).sum().item()  # error: TW202, TW203
    print(epoch, correct)
