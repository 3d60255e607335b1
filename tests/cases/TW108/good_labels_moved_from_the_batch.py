"""The same step with the loss read from the live output: the labels moved from the batch carry no graph, and
that is no detach."""
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def train(model, device, train_loader, optimizer):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
device = torch.device("cpu")
model = nn.Sequential(nn.Linear(8, 4), nn.LogSoftmax(dim=1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(16, 8), torch.randint(0, 4, (16,))), batch_size=4, shuffle=True)
for epoch in range(2):
    train(model, device, loader, optimizer)
