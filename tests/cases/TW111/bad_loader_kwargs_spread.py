# case: static-only
"""TW111: the training loader takes its settings from a `kwargs` dict the script writes out (batch size, workers,
pinned memory: no sampler among them), and no DistributedSampler: every rank reads the whole dataset, in the same
order."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def main(epochs=3):
    dist.init_process_group("gloo")
    X = torch.randn(256, 16)
    train_set = TensorDataset(X, (X[:, 0] > 0).long())
    val_set = TensorDataset(X[:64], (X[:64, 0] > 0).long())
    kwargs = dict(batch_size=32 // dist.get_world_size(), num_workers=2, pin_memory=True)
    train_loader = DataLoader(train_set, **kwargs)  # static: TW111, TW401
    val_loader = DataLoader(val_set, **kwargs)
    model = DDP(nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        with torch.no_grad():
            print(sum(nn.functional.cross_entropy(model(x), y).item() for x, y in val_loader))


if __name__ == "__main__":
    main()
