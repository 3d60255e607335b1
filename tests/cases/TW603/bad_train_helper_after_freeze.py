# case: static-only
"""TW603: the forum form: the optimizer over the new head, then every parameter frozen "to train only the head",
then a train_model() helper of the script (it never adds a parameter) runs the epochs."""
import torch
from torch import nn, optim
import torchvision


def train_model(model, criterion, optimizer, batches, num_epochs):
    for epoch in range(num_epochs):
        model.train()
        running_loss = 0.0
        for inputs, labels in batches:
            optimizer.zero_grad()
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item() * inputs.size(0)
        print(epoch, running_loss)
    return model


model = torchvision.models.resnet18(num_classes=1000)
model.fc = nn.Linear(model.fc.in_features, 5)
optimizer = optim.Adam(model.fc.parameters(), lr=1e-3)
for param in model.parameters():  # error: TW603
    param.requires_grad = False
batches = [(torch.randn(2, 3, 32, 32), torch.randint(0, 5, (2,))) for _ in range(3)]
model = train_model(model, nn.CrossEntropyLoss(), optimizer, batches, num_epochs=2)
