"""TW303: a graph network whose forward ends in `F.softmax`, trained with NLLLoss on the rows a mask selects
(`output[mask]`): the selected rows are still probabilities, not log-probabilities."""
import torch
from torch import nn
import torch.nn.functional as F


class GraphNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, features, adjacency):
        return F.softmax(self.fc(adjacency @ features), dim=1)


def train_iter(model, optimizer, criterion, inputs, target, mask):
    model.train()
    optimizer.zero_grad()
    output = model(*inputs)
    loss = criterion(output[mask], target[mask])  # error: TW303
    loss.backward()
    optimizer.step()
    return loss.item()


torch.manual_seed(0)
features, adjacency = torch.randn(10, 4), torch.eye(10)
labels = torch.randint(0, 3, (10,))
train_mask = torch.arange(10) < 6
model = GraphNet()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = nn.NLLLoss()
for epoch in range(3):
    train_iter(model, optimizer, criterion, (features, adjacency), labels, train_mask)
