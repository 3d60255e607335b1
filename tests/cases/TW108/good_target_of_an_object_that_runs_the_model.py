"""The prediction of an averaged copy is detached on purpose, and the target comes from an object of the script whose
method runs the trained model: the gradient reaches the model through the target."""
import copy

import torch
from torch import nn


class Predictor:
    def __init__(self, net):
        self.net = net

    def predict(self, x):
        return self.net(x)


torch.manual_seed(0)
model = nn.Linear(4, 2)
average = copy.deepcopy(model)
predictor = Predictor(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 4)
    loss = nn.functional.mse_loss(average(x).detach(), predictor.predict(x))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
