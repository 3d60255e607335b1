"""TW403: the images are flattened (which keeps them on the CPU) and only the labels are moved to the GPU."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
use_gpu = torch.cuda.is_available()
model = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))
if use_gpu:
    model = model.cuda()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(32, 4, 4), torch.randint(0, 3, (32,))), batch_size=8, shuffle=True)
for epoch in range(2):
    for i, (img, label) in enumerate(loader):
        img = img.view(img.size(0), -1).float()
        if use_gpu:
            label = label.cuda()
        out = model(img)  # static: TW403
        loss = criterion(out, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
