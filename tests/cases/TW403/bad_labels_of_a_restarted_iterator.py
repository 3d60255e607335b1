"""TW403: steps drawn with `next()` from an iterator that is restarted at each pass over the loader; the images go
to the device, the labels do not."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
loader = DataLoader(TensorDataset(torch.randn(40, 1, 4, 4), torch.randint(0, 3, (40,))), batch_size=8, shuffle=True)
model = nn.Linear(16, 3).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

batches = iter(loader)
for step in range(12):
    if (step + 1) % len(loader) == 0:
        batches = iter(loader)
    images, labels = next(batches)
    images, labels = images.view(images.size(0), -1).to(device), labels
    outputs = model(images)
    loss = criterion(outputs, labels)  # static: TW403
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
