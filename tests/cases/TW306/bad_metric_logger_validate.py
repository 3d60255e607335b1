"""TW306: DINO's linear-evaluation form: the validation loader copies the training loader's `drop_last=True`, and
`validate()` reads it through `metric_logger.log_every(val_loader, ...)` (which yields each of its batches) under
no_grad: each evaluation skips the last 5 of the 37 validation samples."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class MetricLogger:
    def __init__(self):
        self.totals = {}

    def update(self, n=1, **values):
        for name, value in values.items():
            total, count = self.totals.get(name, (0.0, 0))
            self.totals[name] = (total + value * n, count + n)

    def log_every(self, iterable, print_freq, header=""):
        for i, obj in enumerate(iterable):
            yield obj
            if i % print_freq == 0:
                print(header, i)


@torch.no_grad()
def validate(val_loader, model):
    model.eval()
    metric_logger = MetricLogger()
    for inp, target in metric_logger.log_every(val_loader, 20, "Test:"):
        acc = (model(inp).argmax(1) == target).float().mean().item()
        metric_logger.update(n=inp.shape[0], acc=acc)
    total, count = metric_logger.totals["acc"]
    return total / count


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,))), batch_size=8, shuffle=True,
                              drop_last=True)
    val_loader = DataLoader(TensorDataset(torch.randn(37, 8), torch.randint(0, 3, (37,))),  # error: TW306
                            batch_size=8, drop_last=True)
    for epoch in range(2):
        model.train()
        for inp, target in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inp), target).backward()
            optimizer.step()
        print(epoch, validate(val_loader, model))


if __name__ == "__main__":
    main()
