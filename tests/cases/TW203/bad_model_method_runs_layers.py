"""TW203: `model.generate(x)` is a method of the model's own class that runs its layers (a forward pass by another
name); after training, the samples are drawn with autograd on, recording graphs nobody uses."""
import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 3)
        self.decoder = nn.Linear(3, 8)

    def forward(self, x):
        return self.decoder(torch.relu(self.encoder(x)))

    def generate(self, codes):
        return torch.sigmoid(self.decoder(codes))


torch.manual_seed(0)
model = AutoEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = [torch.rand(16, 8) for _ in range(4)]
for epoch in range(3):
    for x in data:
        loss = nn.functional.mse_loss(model(x), x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

model.eval()
samples = []
for i in range(4):
    samples.append(model.generate(torch.randn(2, 3)).tolist())  # static: TW203
print(samples)
