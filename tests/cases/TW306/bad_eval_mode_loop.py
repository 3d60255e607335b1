"""TW306: the test loader drops its last batch; the test loop puts the model in eval mode (no `no_grad`) and
sums the loss, so every test loss is taken over a subset."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train_set = TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
test_set = TensorDataset(torch.randn(45, 8), torch.randint(0, 3, (45,)))
train_loader = DataLoader(train_set, batch_size=16, shuffle=True)
test_loader = DataLoader(test_set, batch_size=16, shuffle=False, drop_last=True)  # error: TW306
model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.1), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train():
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()


def test():
    model.eval()
    test_loss = 0.0
    for x, y in test_loader:
        output = model(x)  # error: TW203
        test_loss += criterion(output, y).item()
    print(f"test loss {test_loss / len(test_loader.dataset):.4f}")


for epoch in range(2):
    train()
    test()
