"""Correct: each layer trains itself (forward-forward style) with its own optimizer in a method of the module class,
and clears the gradients before each backward."""
import torch
from torch import nn


class Layer(nn.Linear):
    def __init__(self, n_in, n_out, steps):
        super().__init__(n_in, n_out)
        self.opt = torch.optim.Adam(self.parameters(), lr=0.03)
        self.steps = steps

    def forward(self, x):
        return torch.relu(super().forward(x / (x.norm(2, 1, keepdim=True) + 1e-4)))

    def fit(self, x_pos, x_neg):
        for i in range(self.steps):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(torch.exp(torch.cat([2.0 - g_pos, g_neg - 2.0]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        with torch.no_grad():
            return self.forward(x_pos), self.forward(x_neg)


torch.manual_seed(0)
layers = [Layer(8, 16, 5), Layer(16, 16, 5)]
h_pos, h_neg = torch.randn(32, 8), torch.randn(32, 8)
for layer in layers:
    h_pos, h_neg = layer.fit(h_pos, h_neg)
