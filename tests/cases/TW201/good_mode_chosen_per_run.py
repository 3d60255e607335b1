"""Linear evaluation: each epoch starts in train mode (fine-tuning) or eval mode (frozen backbone), by choice."""
import torch
from torch import nn

WEIGHTS = "finetune"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
train = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]
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
    model.eval()
    with torch.no_grad():
        print(epoch, model(train[0][0]).argmax(1).tolist())
