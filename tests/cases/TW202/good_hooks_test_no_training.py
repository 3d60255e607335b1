"""A test of forward hooks: forward passes under no_grad in train mode; the file never trains anything."""
import torch
from torch import nn


def test_hook_keeps_output():
    with torch.no_grad():
        model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 5))
        x = torch.randn(2, 3)
        expected = model(x)
        handle = model[0].register_forward_hook(lambda module, inputs, output: output)
        out = model(x)
        handle.remove()
    assert out.shape == expected.shape


test_hook_keeps_output()
