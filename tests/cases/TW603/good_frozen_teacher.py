"""Correct: the teacher is frozen and the optimizer holds the student only; a distillation loop."""
import torch
from torch import nn

torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 4))
student = nn.Linear(6, 4)
teacher.requires_grad_(False)
teacher.eval()
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
x = torch.randn(32, 6)
for step in range(5):
    optimizer.zero_grad()
    with torch.no_grad():
        soft = teacher(x).softmax(-1)
    loss = nn.functional.kl_div(student(x).log_softmax(-1), soft, reduction="batchmean")
    loss.backward()
    optimizer.step()
