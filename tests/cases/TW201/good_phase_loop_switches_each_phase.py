"""A `for phase in ["train", "val"]` loop switches the mode at the start of each phase (`model.train(True)` /
`model.train(False)`); the forward passes that train run only in the train phase, after `model.train(True)`."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loaders = {phase: [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(2)] for phase in ("train", "val")}
extra = [(torch.randn(8, 6), torch.randint(0, 2, (8,)))]

for epoch in range(2):
    for phase in ["train", "val"]:
        if phase == "train":
            model.train(True)
        else:
            model.train(False)
        for x, y in loaders[phase]:
            optimizer.zero_grad()
            if phase == "val":
                with torch.no_grad():
                    outputs = model(x)
            else:
                outputs = model(x)
            loss = nn.functional.cross_entropy(outputs, y)
            if phase == "train" and epoch > 0:
                loss = loss + nn.functional.cross_entropy(model(extra[0][0]), extra[0][1])
            if phase == "train":
                loss.backward()
                optimizer.step()
        print(epoch, phase, loss.item())
