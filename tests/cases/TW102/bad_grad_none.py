"""TW102: gradients set to None by hand between backward and step."""
import torch
from torch import nn

torch.manual_seed(0)
batches = [
    {"input_ids": torch.randint(0, 20, (4, 6)), "labels": torch.randint(0, 2, (4,))}
    for _ in range(4)
]
model = nn.Sequential(nn.Embedding(20, 8), nn.Flatten(), nn.Linear(48, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(2):
    for i in torch.randperm(len(batches)).tolist():
        batch = batches[i]
        loss = nn.functional.cross_entropy(model(batch["input_ids"]), batch["labels"])
        loss.backward()
        for p in model.parameters():
            p.grad = None  # static: TW102
        optimizer.step()  # runtime: TW102
    print(epoch, loss.item())
