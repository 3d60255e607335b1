"""TW108: batches drawn with `next(data_iter)` and the labels moved with `.to(device)`; the loss reads
`model(images).detach()`, so the only other input of the loss is data and no gradient reaches the model."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cpu")
dataset = TensorDataset(torch.randn(32, 8), torch.randint(0, 3, (32,)))
data_loader = DataLoader(dataset, batch_size=8, shuffle=True)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

data_iter = iter(data_loader)
for step in range(8):
    if step % len(data_loader) == 0:
        data_iter = iter(data_loader)
    images, labels = next(data_iter)
    images, labels = images.view(images.size(0), -1).to(device), labels.to(device)
    outputs = model(images)
    loss = criterion(outputs.detach(), labels).requires_grad_()
    optimizer.zero_grad()
    loss.backward()  # error: TW108
    optimizer.step()
    accuracy = (labels == outputs.argmax(1)).float().mean()
print(loss.item(), accuracy.item())
