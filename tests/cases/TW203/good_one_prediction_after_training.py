"""A tutorial script: after training, one prediction (detached at once) for a plot."""
import torch
from torch import nn

torch.manual_seed(0)
x_train = torch.randn(16, 1)
y_train = 3 * x_train + 1
model = nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    loss = nn.functional.mse_loss(model(x_train), y_train)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

predicted = model(x_train).detach().numpy()
print(predicted[:2])
