# case: static-only
"""Correct: random augmentation for the training set, a deterministic transform for the test set."""
import torch
import torchvision
import torchvision.transforms as T
from torch import nn
from torch.utils.data import DataLoader

train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor()])
test_tf = T.Compose([T.ToTensor(), T.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])
trainset = torchvision.datasets.CIFAR10("./data", train=True, download=True, transform=train_tf)
testset = torchvision.datasets.CIFAR10("./data", train=False, download=True, transform=test_tf)
trainloader = DataLoader(trainset, batch_size=128, shuffle=True)
testloader = DataLoader(testset, batch_size=100)
model = nn.Sequential(nn.Flatten(), nn.Linear(3072, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in trainloader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        acc = sum((model(x).argmax(1) == y).sum().item() for x, y in testloader) / len(testset)
