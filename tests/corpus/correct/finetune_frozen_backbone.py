"""Transfer learning: a pretrained backbone is frozen (requires_grad_(False), eval mode for its
BatchNorm) and only a new classification head is trained."""
import io

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_backbone():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    )


def pretrained_state():
    """Stands in for downloaded weights: serialised and read back with weights_only=True."""
    buffer = io.BytesIO()
    torch.save(make_backbone().state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer, map_location="cpu", weights_only=True)


def train_epoch(backbone, head, loader, optimizer, criterion):
    head.train()
    backbone.eval()  # BatchNorm statistics stay those of the pretrained model
    total, seen = 0.0, 0
    for images, labels in loader:
        optimizer.zero_grad()
        loss = criterion(head(backbone(images)), labels)
        loss.backward()
        optimizer.step()
        total += loss.item() * images.size(0)
        seen += images.size(0)
    return total / seen


@torch.no_grad()
def accuracy(backbone, head, loader):
    backbone.eval()
    head.eval()
    correct = 0
    for images, labels in loader:
        correct += (head(backbone(images)).argmax(1) == labels).sum().item()
    return correct / len(loader.dataset)


torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
images, labels = torch.randn(48, 3, 8, 8), torch.randint(0, 4, (48,))
train_loader = DataLoader(TensorDataset(images[:32], labels[:32]), batch_size=8, shuffle=True, generator=g)
val_loader = DataLoader(TensorDataset(images[32:], labels[32:]), batch_size=8)

backbone = make_backbone()
backbone.load_state_dict(pretrained_state())
backbone.requires_grad_(False)
head = nn.Sequential(nn.Dropout(0.2), nn.Linear(16, 4))
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

# Only the head is trainable, and only the head is in the optimizer.
optimizer = torch.optim.AdamW(head.parameters(), lr=1e-3, weight_decay=0.01)
for epoch in range(3):
    loss = train_epoch(backbone, head, train_loader, optimizer, criterion)
    print(f"epoch {epoch}: loss {loss:.4f} val acc {accuracy(backbone, head, val_loader):.3f}")
