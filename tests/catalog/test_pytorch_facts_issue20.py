"""The PyTorch facts behind TW113, TW114, TW115, TW306, TW504 and TW603's static side, checked on the installed
torch (the rule pages cite these tests by name)."""
# trainwell: noqa: TW113, TW115, TW306, TW603 -- each test commits the bug whose fact it checks

from __future__ import annotations

import os
import tempfile
import warnings

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def _ddp_worker(rank: int, store: str, results: dict) -> None:
    """Four SGD steps per forward route on two gloo ranks fed different data; reports the max weight gap."""
    torch.set_num_threads(1)  # a forked child must not reuse the parent's OpenMP team (it hangs in gomp barriers)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    out = {}
    for route in ("wrapper", "module", "module_then_wrapper"):
        torch.manual_seed(rank)  # different initial weights per rank: DDP's construction must broadcast rank 0's
        ddp = DDP(nn.Linear(4, 1))
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.5)
        generator = torch.Generator().manual_seed(10 + rank)
        for _ in range(4):
            optimizer.zero_grad()
            x = torch.randn(8, 4, generator=generator)
            if route == "module_then_wrapper":
                ddp.module(x).pow(2).mean().backward()  # a micro-batch around the wrapper ...
                ddp(x).pow(2).mean().backward()  # ... then one through it, before the step
            else:
                (ddp(x) if route == "wrapper" else ddp.module(x)).pow(2).mean().backward()
            optimizer.step()
        flat = torch.cat([p.detach().flatten() for p in ddp.parameters()])
        gathered = [torch.zeros_like(flat) for _ in range(2)]
        dist.all_gather(gathered, flat)
        out[route] = float((gathered[0] - gathered[1]).abs().max())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DDP(nn.Linear(2, 2), broadcast_buffers=False)
    out["broadcast_buffers_warns"] = any("broadcast_buffers" in str(w.message) for w in caught)
    if rank == 0:
        results.update(out)
    dist.destroy_process_group()


def test_ddp_module_forward_is_never_all_reduced_and_a_following_wrapper_forward_is():
    """TW113/TW114: through `ddp.module` the two ranks drift apart; through the wrapper (or a module micro-batch
    followed by a wrapper forward before the step) they stay bit-equal; DDP broadcasts rank 0's initial weights."""
    with tempfile.TemporaryDirectory() as folder, mp.Manager() as manager:
        results = manager.dict()
        mp.start_processes(_ddp_worker, args=(os.path.join(folder, "store"), results), nprocs=2, start_method="fork")
        found = dict(results)
    assert found["wrapper"] == 0.0
    assert found["module_then_wrapper"] == 0.0
    assert found["module"] > 1e-3
    assert found["broadcast_buffers_warns"]  # torch 2.13: a FutureWarning; the argument still works


def test_modulo_accumulation_leaks_the_epoch_tail_into_the_next_first_step():
    """TW115: 10 batches, k = 4: the last 2 micro-batches' gradients stay in .grad past the epoch and the next
    epoch's first step applies 4 + 2 micro-batches."""
    torch.manual_seed(0)
    model = nn.Linear(3, 1, bias=False)
    batches = [torch.randn(2, 3) for _ in range(10)]
    k = 4
    first_step_grads = []
    for epoch in range(2):
        for i, x in enumerate(batches):
            model(x).sum().backward()
            if (i + 1) % k == 0:
                first_step_grads.append(model.weight.grad.clone())
                model.weight.grad = None
        if epoch == 0:
            leftover = model.weight.grad.clone()
            assert leftover.abs().sum() > 0
    tail = sum(x.sum(0) for x in batches[8:10])
    head = sum(x.sum(0) for x in batches[0:4])
    assert torch.allclose(leftover[0], tail)
    assert torch.allclose(first_step_grads[2][0], head + tail)  # epoch 1's first step: 6 micro-batches


def test_drop_last_skips_the_ragged_batch_of_an_evaluation_loader():
    """TW306: 50 samples in batches of 16 with drop_last=True: 3 batches, 48 samples seen, 2 never evaluated;
    with 64 samples nothing is dropped."""
    loader = DataLoader(TensorDataset(torch.arange(50)), batch_size=16, drop_last=True)
    seen = torch.cat([b for (b,) in loader])
    assert len(loader) == 3 and seen.numel() == 48 and set(seen.tolist()) == set(range(48))
    whole = DataLoader(TensorDataset(torch.arange(64)), batch_size=16, drop_last=True)
    assert sum(b.numel() for (b,) in whole) == 64


def test_unseeded_runs_differ_and_a_manual_seed_replays_them():
    """TW504: random init and a shuffled loader draw from the global generator: without a seed two builds
    differ; after the same torch.manual_seed they are identical."""
    def build() -> tuple[torch.Tensor, list[int]]:
        order = [int(i) for (i,) in DataLoader(TensorDataset(torch.arange(8)), batch_size=1, shuffle=True)]
        return nn.Linear(4, 4).weight.detach().clone(), order

    first, second = build(), build()
    assert not torch.equal(first[0], second[0])
    torch.manual_seed(3)
    a = build()
    torch.manual_seed(3)
    b = build()
    assert torch.equal(a[0], b[0]) and a[1] == b[1]


def test_an_all_frozen_optimizer_updates_nothing():
    """TW603: with every parameter of the optimizer frozen, backward raises when nothing else requires grad;
    when something else does (a learned temperature), the run goes on and the step changes nothing."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model[2].parameters(), lr=1.0, momentum=0.9)
    for p in model.parameters():
        p.requires_grad = False
    x, y = torch.randn(6, 4), torch.tensor([0, 1, 0, 1, 0, 1])
    with pytest.raises(RuntimeError, match="does not require grad"):
        nn.functional.cross_entropy(model(x), y).backward()
    temperature = nn.Parameter(torch.ones(()))
    before = [p.clone() for p in model[2].parameters()]
    for _ in range(3):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x) / temperature, y).backward()
        optimizer.step()
    assert all(p.grad is None for p in model.parameters()) and temperature.grad is not None
    assert all(torch.equal(a, b) for a, b in zip(before, model[2].parameters()))
