"""TW403: the inputs go to the device, the labels do not: the loss mixes a GPU output with CPU targets."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(10, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(64, 10), torch.randint(0, 2, (64,))), batch_size=8, shuffle=True)
for epoch in range(2):
    for x, y in loader:
        x = x.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)  # static: TW403
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
