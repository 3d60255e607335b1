"""A script written for torchrun (env:// rendezvous): zero_grad between backward and step wipes the gradients (TW102)."""
import torch
import torch.distributed as dist
from torch import nn

torch.set_num_threads(1)
dist.init_process_group("gloo")
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for step in range(4):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.zero_grad()  # runtime: TW102
    optimizer.step()
dist.destroy_process_group()
