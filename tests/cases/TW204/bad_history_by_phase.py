"""TW204: the running loss of each phase adds the loss tensor itself; the epoch's mean goes into a history keyed by
the phase that also picks the loader. The training phase's graphs all stay reachable from `running_loss`."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(48, 6)
Y = X.sum(1, keepdim=True)
loaders = {"train": DataLoader(TensorDataset(X[:32], Y[:32]), batch_size=8, shuffle=True),
           "val": DataLoader(TensorDataset(X[32:], Y[32:]), batch_size=8)}
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
history = {"train": [], "val": []}
for epoch in range(2):
    for phase in ["train", "val"]:
        model.train(phase == "train")
        running_loss = 0.0
        for x, y in loaders[phase]:
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == "train"):
                loss = nn.functional.mse_loss(model(x), y)
                if phase == "train":
                    loss.backward()
                    optimizer.step()
            running_loss += loss * len(x)  # error: TW204
        epoch_loss = running_loss / len(loaders[phase].dataset)
        history[phase].append(epoch_loss.item())
    print(epoch, history["train"][-1], history["val"][-1])
