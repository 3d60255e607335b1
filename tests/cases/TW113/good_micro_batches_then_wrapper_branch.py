# case: static-only
"""Correct: gradient accumulation where the micro-batches go through `model.module(x)` and the last micro-batch of
each window goes through the wrapper in the other branch of the same `if`; the step runs only in that branch, so the
reducer all-reduces the accumulated gradients before every step."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(8)]
    accum = 4
    for step, (x, y) in enumerate(batches):
        if (step + 1) % accum != 0:
            outputs = model.module(x)
        else:
            outputs = model(x)
        (nn.functional.mse_loss(outputs, y) / accum).backward()
        if (step + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
