"""An unrolled RNN cell collects its hidden states to stack them: a list per sequence, not per training step."""
import torch
from torch import nn

torch.manual_seed(0)
cell = nn.RNNCell(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.05)
sequences = [torch.randn(5, 2, 4) for _ in range(3)]


def run(sequence):
    hx = torch.zeros(2, 8)
    out = []
    for step in range(sequence.size(0)):
        hx = cell(sequence[step], hx)
        out.append(hx)
    return head(torch.stack(out)).mean()


for epoch in range(2):
    for sequence in sequences:
        optimizer.zero_grad()
        run(sequence).backward()
        optimizer.step()
