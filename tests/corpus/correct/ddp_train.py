# case: static-only
"""Multi-GPU data-parallel training launched with torchrun: one process per GPU, a DistributedSampler
with set_epoch, DDP-wrapped model, rank-0 logging and checkpointing."""
import io
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def setup():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def build_dataset():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1024, 32, generator=g)
    return TensorDataset(x, (x[:, 0] > 0).long())


def main(epochs=3, batch_size=32):
    local_rank = setup()
    device = torch.device("cuda", local_rank)
    dataset = build_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=2, pin_memory=True)

    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 2)).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1 * dist.get_world_size(), momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        model.train()
        total = torch.zeros(2, device=device)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total += torch.stack([loss.detach() * x.size(0), torch.tensor(float(x.size(0)), device=device)])
        scheduler.step()
        dist.all_reduce(total)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {(total[0] / total[1]).item():.4f}")
            buffer = io.BytesIO()
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, buffer)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
