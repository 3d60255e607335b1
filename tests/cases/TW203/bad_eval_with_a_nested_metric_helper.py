"""TW203: the evaluation step defines a metric helper of its own whose parameter is also named `outputs`; the model's
forward runs with autograd on, and the helper only reads what it is handed: each evaluation records a graph."""
import torch
from torch import nn


def eval_step(model, parts):
    def compute_metric(outputs, targets):
        return (outputs.argmax(1) == targets).float().mean().item()

    metrics = {}
    for name, (x, y) in parts.items():
        outputs = model(x)  # error: TW203
        metrics[name] = compute_metric(outputs.detach(), y)
    return metrics


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(32, 4), torch.randint(0, 3, (32,))
    parts = {"train": (x[:24], y[:24]), "val": (x[24:], y[24:])}
    for step in range(20):
        model.train()
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x[:24]), y[:24]).backward()
        optimizer.step()
        model.eval()
        print(step, eval_step(model, parts))


if __name__ == "__main__":
    main()
