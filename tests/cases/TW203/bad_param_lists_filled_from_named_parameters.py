"""TW203: the model comes from a registry (its class unknown here); the optimizer holds it through two lists filled
from `model.named_parameters()` (a lower rate for the head), so `model` is the trained model, and its validation
pass runs with autograd on."""
import torch
from torch import nn

ARCHS = {"mlp": lambda classes: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, classes))}


def validate(loader, model):
    model.eval()
    correct = 0
    for inputs, targets in loader:
        output = model(inputs)  # error: TW203
        correct += (output.argmax(1) == targets).sum().item()
    return correct / 40


def main(arch="mlp"):
    torch.manual_seed(0)
    model = ARCHS[arch](3)
    trunk_parameters, head_parameters = [], []
    for name, param in model.named_parameters():
        if name.startswith("2."):
            head_parameters.append(param)
        else:
            trunk_parameters.append(param)
    optimizer = torch.optim.SGD([{"params": trunk_parameters}, {"params": head_parameters, "lr": 0.01}], lr=0.1)
    train = [(torch.randn(8, 8), torch.randint(0, 3, (8,))) for _ in range(5)]
    val = [(torch.randn(8, 8), torch.randint(0, 3, (8,))) for _ in range(5)]
    for epoch in range(2):
        model.train()
        for inputs, targets in train:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()
        print(epoch, validate(val, model))


if __name__ == "__main__":
    main()
