# case: static-only
"""TW603: an optimizer built over the head, then the whole model frozen for a "backbone freeze" (a forum report):
the head is frozen too, so nothing trains (here backward() even raises: no tensor of the loss requires grad)."""
import torch
from torch import nn
import torchvision

model = torchvision.models.resnet18(num_classes=10)
optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.01, momentum=0.9)
for param in model.parameters():  # error: TW603
    param.requires_grad = False
criterion = nn.CrossEntropyLoss()
images, labels = torch.randn(4, 3, 64, 64), torch.randint(0, 10, (4,))

for epoch in range(3):
    optimizer.zero_grad()
    loss = criterion(model(images), labels)
    loss.backward()
    optimizer.step()
