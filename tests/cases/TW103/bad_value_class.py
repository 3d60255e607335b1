"""TW103: a trainer clips gradient values after the step."""
import torch
from torch import nn
from torch.nn.utils import clip_grad_value_


class RegressionTrainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def train_step(self, batch):
        self.optimizer.zero_grad()
        loss = nn.functional.smooth_l1_loss(self.model(batch["x"]), batch["y"])
        loss.backward()
        self.optimizer.step()
        clip_grad_value_(self.model.parameters(), clip_value=0.1)  # error: TW103
        return loss.item()

    def fit(self, batches, epochs):
        self.model.train()
        for epoch in range(epochs):
            for i in torch.randperm(len(batches)).tolist():
                loss = self.train_step(batches[i])
            print(epoch, loss)


torch.manual_seed(0)
batches = []
for _ in range(4):
    x = torch.randn(8, 4)
    batches.append({"x": x, "y": x.mean(1, keepdim=True)})
RegressionTrainer(nn.Linear(4, 1)).fit(batches, 3)
