"""Style transfer optimises an image: one loop of steps, and a StepLR sized in those steps."""
import torch

torch.manual_seed(0)
target = torch.randn(3, 8, 8)
image = torch.zeros(3, 8, 8, requires_grad=True)
optimizer = torch.optim.Adam([image], lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 40, gamma=0.1)
for i in range(60):
    loss = (image - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
print(loss.item())
