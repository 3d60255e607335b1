"""A detached target (distillation from an EMA teacher) is fine: the student's loss has a graph."""
import copy

import torch
from torch import nn


class DistillTrainer:
    def __init__(self, student, decay=0.9):
        self.student = student
        self.teacher = copy.deepcopy(student).requires_grad_(False)
        self.decay = decay
        self.optimizer = torch.optim.SGD(student.parameters(), lr=0.05)

    @torch.no_grad()
    def update_teacher(self):
        for t, s in zip(self.teacher.parameters(), self.student.parameters()):
            t.mul_(self.decay).add_(s, alpha=1 - self.decay)

    def training_step(self, batch):
        self.optimizer.zero_grad()
        target = self.teacher(batch["x"]).detach()
        loss = nn.functional.mse_loss(self.student(batch["x"] + 0.1 * torch.randn_like(batch["x"])), target)
        loss = loss + nn.functional.mse_loss(self.student(batch["x"]), batch["y"])
        loss.backward()
        self.optimizer.step()
        self.update_teacher()
        return loss.item()


torch.manual_seed(0)
batches = [{"x": torch.randn(8, 4), "y": torch.randn(8, 1)} for _ in range(4)]
trainer = DistillTrainer(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
trainer.student.train()
for epoch in range(2):
    for i in torch.randperm(len(batches)).tolist():
        loss = trainer.training_step(batches[i])
    print(epoch, loss)
