"""TW202 and TW203: full-batch training (a graph-style setup) whose validation loss is computed right after the
step with the model still in training mode: Dropout is on in the reported validation loss."""
import torch
from torch import nn

torch.manual_seed(0)
features, labels = torch.randn(40, 6), torch.randint(0, 3, (40,))
train_idx, val_idx = torch.arange(0, 30), torch.arange(30, 40)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features)
    loss_train = nn.functional.cross_entropy(output[train_idx], labels[train_idx])
    loss_train.backward()
    optimizer.step()
    output = model(features)  # error: TW202, TW203
    loss_val = nn.functional.cross_entropy(output[val_idx], labels[val_idx])
    print(epoch, loss_train.item(), loss_val.item())


for epoch in range(3):
    train(epoch)
