"""Demo code under __main__: one loss and backward to show the API, then one prediction. Not a training run."""
import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    images = torch.randn(2, 6)
    loss = net(images).logsumexp(-1).mean()
    loss.backward()
    preds = net(images)
    assert preds.shape == (2, 3)
