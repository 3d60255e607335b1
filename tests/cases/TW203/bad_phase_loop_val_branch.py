"""TW203: a `for phase in ["train", "val"]` loop runs the model under `if phase == "val":` with autograd on; the only
backward() sits under `if phase == "train":`, which cannot hold in the same phase, so the graph is never used."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
loaders = {phase: [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(2)] for phase in ("train", "val")}

for epoch in range(2):
    for phase in ["train", "val"]:
        if phase == "train":
            model.train()
        else:
            model.eval()
        running = 0.0
        for x, y in loaders[phase]:
            optimizer.zero_grad()
            if phase == "val":
                outputs = model(x)  # error: TW203
            else:
                outputs = model(x)
            loss = criterion(outputs, y)
            if phase == "train":
                loss.backward()
                optimizer.step()
            running += loss.item()
        print(epoch, phase, running)
