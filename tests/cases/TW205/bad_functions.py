"""TW205: train_one_epoch "freezes" the encoder with .eval() while the optimizer owns all parameters."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.1))
        self.classifier = nn.Linear(16, 3)

    def forward(self, x):
        return self.classifier(self.encoder(x))


def train_one_epoch(model, loader, optimizer):
    model.train()
    model.encoder.eval()  # error: TW205
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
loader = DataLoader(TensorDataset(torch.randn(32, 6), torch.randint(0, 3, (32,))), batch_size=8,
                    shuffle=True, generator=torch.Generator().manual_seed(0))
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer))
