"""TW203: robust-accuracy validation runs the model on the clean batch with autograd on, then calls `fgsm(model, x)`,
whose backward() differentiates only the graph fgsm builds itself (it is handed the model and a batch without a
graph): nothing ever backpropagates the clean forward pass."""
import torch
from torch import nn


def fgsm(model, images, labels, eps=0.1):
    images = images.clone().requires_grad_(True)
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    return (images + eps * images.grad.sign()).detach()


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(3)]
    val = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(2)]
    for epoch in range(2):
        model.train()
        for x, y in train:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()
        clean_loss, robust = 0.0, 0
        for x, y in val:
            outputs = model(x)  # error: TW203
            clean_loss += nn.functional.cross_entropy(outputs, y).item()
            x_adv = fgsm(model, x, y)
            with torch.no_grad():
                robust += (model(x_adv).argmax(1) == y).sum().item()
        print(epoch, clean_loss, robust)


if __name__ == "__main__":
    main()
