# case: static-only
"""TW113: the main forward goes through `model.module(x)`; the wrapper runs only for the adversarial batch every
fourth step, so in the other iterations no forward goes through the wrapper and the step applies gradients that
were never all-reduced."""
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
    for step, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        outputs = model.module(x)  # error: TW113
        loss = nn.functional.mse_loss(outputs, y)
        if step % 4 == 0:
            adversarial = model(x + 0.1 * torch.randn_like(x))
            loss = loss + nn.functional.mse_loss(adversarial, y)
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
