"""TW403: a two-input (siamese) model: the first image goes to the device, the second does not."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, a, b):
        return torch.sigmoid(self.head((self.body(a) - self.body(b)).abs()))


torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Siamese().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.BCELoss()
loader = DataLoader(TensorDataset(torch.randn(32, 8), torch.randn(32, 8), torch.randint(0, 2, (32,)).float()),
                    batch_size=8, shuffle=True)
for epoch in range(2):
    for images_1, images_2, targets in loader:
        images_1, images_2, targets = images_1.to(device), images_2, targets.to(device)
        optimizer.zero_grad()
        outputs = model(images_1, images_2).squeeze()  # static: TW403
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
