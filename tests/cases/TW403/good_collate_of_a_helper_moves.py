"""The loader comes from a helper whose collate_fn hands the batch to another helper that moves it to the device."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import default_collate

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def place(batch):
    return [t.to(device) for t in batch]


def collate(samples):
    return place(default_collate(samples))


def get_loader(dataset):
    loader = DataLoader(dataset, batch_size=4, shuffle=True, collate_fn=collate)
    return loader


torch.manual_seed(0)
loader = get_loader(TensorDataset(torch.randn(16, 6), torch.randint(0, 3, (16,))))
model = nn.Linear(6, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
