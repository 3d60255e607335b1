# case: static-only
"""TW113: the training helper runs its forward through `model.module(x)`; the epoch loop also calls the wrapper, but
only for validation under `torch.no_grad()`, which builds no graph and all-reduces nothing, so the training
gradients are never all-reduced."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train_one_epoch(model, optimizer, batches):
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model.module(x), y)  # error: TW113
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(model, batches):
    model.eval()
    return sum(nn.functional.mse_loss(model(x), y).item() for x, y in batches)


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(4)]
    val = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]
    for epoch in range(3):
        train_one_epoch(model, optimizer, train)
        print(epoch, validate(model, val))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
