"""The images are flattened, then moved; the labels too; accuracy is counted on the CPU after `.cpu()`."""
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
    correct = 0
    for i, (img, label) in enumerate(loader):
        img = img.view(img.size(0), -1)
        if use_gpu:
            img = img.cuda()
            gpu_label = label.cuda()
        else:
            gpu_label = label
        out = model(img)
        loss = criterion(out, gpu_label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        correct += (out.argmax(1).cpu() == label).sum().item()
    print(epoch, loss.item(), correct)
