"""Correct enough: the recurrent block builds its Dropout only when given a non-zero `dropout`, and the model builds
it with the default 0: the model has no layer whose train/eval mode matters, so validating without `.eval()` gives
the same numbers."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Recurrent(nn.Module):
    """A GRU whose optional dropout applies between steps."""

    def __init__(self, size, dropout=0.0):
        super().__init__()
        self.dropout = float(dropout)
        self.cell = nn.GRUCell(size, size)
        self.dropout_layer = nn.Dropout(dropout) if dropout > 0 else None

    def forward(self, x):
        h = torch.zeros(x.shape[0], x.shape[2])
        for t in range(x.shape[1]):
            h = self.cell(x[:, t], h)
            if self.dropout:
                h = self.dropout_layer(h)
        return h


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = Recurrent(8)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(self.rnn(x))


torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
X, Y = torch.randn(48, 5, 8), torch.randint(0, 2, (48,))
train_loader = DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=8, shuffle=True, generator=g)
val_loader = DataLoader(TensorDataset(X[32:], Y[32:]), batch_size=8)
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    val_loss = 0.0
    with torch.no_grad():
        for x, y in val_loader:
            val_loss += nn.functional.cross_entropy(model(x), y, reduction="sum").item()
    print(epoch, loss.item(), val_loss / len(val_loader.dataset))
