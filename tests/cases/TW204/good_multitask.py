"""Multi-task: per-head losses collected in a list and summed into one backward."""
import torch
from torch import nn


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.cls = nn.Linear(16, 3)
        self.reg = nn.Linear(16, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.reg(h)


torch.manual_seed(0)
model = MultiHead()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
batches = [{"x": torch.randn(8, 8), "label": torch.randint(0, 3, (8,)), "target": torch.randn(8, 1)} for _ in range(4)]

for epoch in range(2):
    for i in torch.randperm(len(batches)).tolist():
        batch = batches[i]
        logits, value = model(batch["x"])
        task_losses = []
        task_losses.append(nn.functional.cross_entropy(logits, batch["label"]))
        task_losses.append(nn.functional.mse_loss(value, batch["target"]))
        loss = sum(task_losses)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, [t.item() for t in task_losses])
