"""TW301: the model's forward returns `torch.sigmoid(...).squeeze(1)` and the loss is BCEWithLogitsLoss, which
applies a sigmoid again (the squeeze hides the sigmoid from a check of the loss input's last operation)."""
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc(x)).squeeze(1)


torch.manual_seed(0)
model = Classifier()
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for i in range(4):
        x = torch.randn(16, 8)
        y = (x[:, 0] > 0).float()
        optimizer.zero_grad()
        loss = criterion(model(x), y)  # error: TW301
        loss.backward()
        optimizer.step()
