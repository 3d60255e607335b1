"""The loss class of the project moves the labels to the device of the logits itself."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class SmoothedLoss(nn.Module):
    def __init__(self, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, labels):
        labels = labels.to(logits.device)
        return nn.functional.cross_entropy(logits, labels, label_smoothing=self.smoothing)


def loss_fn(logits, labels):
    return nn.functional.cross_entropy(logits, labels.to(logits.device))


torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(10, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = SmoothedLoss()
loader = DataLoader(TensorDataset(torch.randn(64, 10), torch.randint(0, 2, (64,))), batch_size=8, shuffle=True)
for epoch in range(2):
    for x, y in loader:
        x = x.to(device)
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y) + loss_fn(out, y)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
