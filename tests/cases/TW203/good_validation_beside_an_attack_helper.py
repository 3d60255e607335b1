"""Robust-accuracy validation runs the model on the clean batch under no_grad; `fgsm(model, x)` needs autograd for
the gradient with respect to its own input and backpropagates only the graph it builds."""
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
            with torch.no_grad():
                outputs = model(x)
            clean_loss += nn.functional.cross_entropy(outputs, y).item()
            x_adv = fgsm(model, x, y)
            with torch.no_grad():
                robust += (model(x_adv).argmax(1) == y).sum().item()
        print(epoch, clean_loss, robust)


if __name__ == "__main__":
    main()
