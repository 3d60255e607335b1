"""TW306: the test loader drops its last batch; the test loop (written without `eval()` or `no_grad`, over a model
with no Dropout or BatchNorm) counts correct predictions, so the accuracy is over a subset."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train_set = TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
test_set = TensorDataset(torch.randn(45, 8), torch.randint(0, 3, (45,)))
train_loader = DataLoader(train_set, batch_size=16, shuffle=True)
test_loader = DataLoader(test_set, batch_size=16, shuffle=False, drop_last=True)  # static: TW306
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    for x, y in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    correct = 0
    for x, y in test_loader:
        pred = model(x).argmax(1)  # error: TW203
        correct += pred.eq(y).sum().item()
    print(f"epoch {epoch}: accuracy {correct / len(test_set):.3f}")
