"""TW201: a `for phase in ["train", "val"]` loop switches to eval mode for the validation phase, and nothing switches
back when the next epoch's train phase starts: from the second epoch on, training runs with Dropout off."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loaders = {phase: [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(2)] for phase in ("train", "val")}

for epoch in range(2):
    for phase in ["train", "val"]:
        if phase == "val":
            model.eval()  # error: TW201
        for x, y in loaders[phase]:
            optimizer.zero_grad()
            if phase == "val":
                with torch.no_grad():
                    outputs = model(x)
            else:
                outputs = model(x)
            loss = nn.functional.cross_entropy(outputs, y)
            if phase == "train":
                loss.backward()
                optimizer.step()
        print(epoch, phase, loss.item())
