"""TW202: the training mode is chosen per run (fine-tune in train mode, or a frozen backbone in eval mode) and the
validation pass never calls `model.eval()`: when fine-tuning, BatchNorm validates in training mode."""
import torch
from torch import nn

WEIGHTS = "finetune"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
train = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]
val = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(2)]
for epoch in range(2):
    if WEIGHTS == "finetune":
        model.train()
    elif WEIGHTS == "freeze":
        model.eval()
    else:
        assert False
    for x, y in train:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in val)  # error: TW202
    print(epoch, correct)
