# case: static-only
"""TW405: the CIFAR-10 test set reuses the training transform (random crops and flips)."""
import torch
import torchvision
import torchvision.transforms as transforms
from torch import nn
from torch.utils.data import DataLoader

transform = transforms.Compose([
    transforms.RandomCrop(32, padding=4),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
    transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
])
trainset = torchvision.datasets.CIFAR10(root="./data", train=True, download=True, transform=transform)
testset = torchvision.datasets.CIFAR10(root="./data", train=False, download=True, transform=transform)
trainloader = DataLoader(trainset, batch_size=128, shuffle=True)
testloader = DataLoader(testset, batch_size=100, shuffle=False)  # error: TW405

model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(10):
    model.train()
    for inputs, targets in trainloader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(inputs), targets).backward()
        optimizer.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for inputs, targets in testloader:
            correct += (model(inputs).argmax(1) == targets).sum().item()
    print(epoch, correct / len(testset))
