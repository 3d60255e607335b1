"""main() builds a model with Dropout, wraps it (`model = nn.DataParallel(model)`) and switches it to eval mode
before validation."""
import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
    model = nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(3)]
    for epoch in range(3):
        model.train()
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            for x, y in batches:
                print((model(x).argmax(1) == y).sum().item())


def probe():
    model = nn.Linear(6, 2)  # another function's `model`, without Dropout
    return model(torch.randn(1, 6))


if __name__ == "__main__":
    main()
