"""Self-distillation: during the first epoch the last layer's gradients are dropped on purpose before the step."""
import torch
from torch import nn


def cancel_gradients_last_layer(epoch, model, freeze_last_layer=1):
    if epoch >= freeze_last_layer:
        return
    for n, p in model.named_parameters():
        if "last_layer" in n:
            p.grad = None


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Linear(6, 12)
        self.last_layer = nn.Linear(12, 4)

    def forward(self, x):
        return self.last_layer(torch.relu(self.mlp(x)))


torch.manual_seed(0)
model = Head()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
data = [torch.randn(8, 6) for _ in range(3)]
for epoch in range(2):
    for x in data:
        optimizer.zero_grad()
        loss = model(x).logsumexp(-1).mean()
        loss.backward()
        cancel_gradients_last_layer(epoch, model)
        optimizer.step()
