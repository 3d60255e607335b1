"""The GPU line is commented out: `device` is the CPU, so batches and model are on the same device."""
import torch
from torch import nn

device = "cpu"  # "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
model = model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(16, 6), torch.randint(0, 3, (16,))),
                                     batch_size=4, shuffle=True)
for epoch in range(2):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
