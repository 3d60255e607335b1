"""A step helper returns (output, loss value): the unpacked loss value is a detached number, the output is not used."""
import torch
from torch import nn

torch.manual_seed(0)
rnn = nn.Linear(6, 3)
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.05)
criterion = nn.CrossEntropyLoss()


def train(category, line):
    optimizer.zero_grad()
    output = rnn(line)
    loss = criterion(output, category)
    loss.backward()
    optimizer.step()
    return output, loss.item()


current_loss, all_losses = 0.0, []
for step in range(1, 9):
    output, loss = train(torch.randint(0, 3, (4,)), torch.randn(4, 6))
    current_loss += loss
    if step % 4 == 0:
        all_losses.append(current_loss / 4)
        current_loss = 0.0
print(all_losses)
