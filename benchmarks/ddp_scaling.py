"""DDP and FSDP scaling on the CPU and the cost of a checkpoint, measured in one run.

1. Samples/s of ``trainwell.Trainer`` training an MLP in 1 process and in 2
   processes (``torchrun --standalone --nproc-per-node 2``, gloo) under DDP
   and under FSDP2 (``strategy="fsdp"``), next to a hand-written DDP loop (the
   baseline: what plain PyTorch gets from the same processes), one thread
   per process, the SAME per-process batch (so 2 processes train a global
   batch twice as large: weak scaling). Time is measured inside the workers,
   around ``fit`` only (no interpreter start, no process-group setup).
2. Checkpoint save (``checkpoint.save_checkpoint``: torch.save + sha256 +
   temp file + fsync + rename) and load (read + verify + ``weights_only``
   load) time per MB of state (model + AdamW state + RNG), next to a plain
   ``torch.save`` to memory, so the price of saving every N steps is known.

    python benchmarks/ddp_scaling.py            # a minute or so on 2 cores
    python benchmarks/ddp_scaling.py --quick    # seconds

Prints ratios; the machine may be shared: read them with its load (printed).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _model_and_data(samples: int) -> tuple:
    import torch
    from torch import nn

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    g = torch.Generator().manual_seed(1)
    return model, torch.randn(samples, 256, generator=g), torch.randint(0, 10, (samples,), generator=g)


def _report(out: str, samples_per_s: float) -> None:
    if int(os.environ.get("RANK", "0")) == 0:
        Path(out).write_text(json.dumps({"samples_per_s": samples_per_s}))


def hand_written(samples: int, batch: int, epochs: int, out: str) -> None:
    """The baseline: the DDP loop of PyTorch's tutorial, sharded index slicing, no extras."""
    import torch
    import torch.distributed as dist
    from torch import nn

    model, x, y = _model_and_data(samples)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-3)

    def epoch(n: int, e: int) -> None:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(e))[rank::world]
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            loss = nn.functional.cross_entropy(ddp(x[idx]), y[idx])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    epoch(batch * 4, -1)  # warm-up, not timed
    started = time.perf_counter()
    for e in range(epochs):
        epoch(samples, e)
    _report(out, samples * epochs / (time.perf_counter() - started))
    dist.destroy_process_group()


def worker(samples: int, batch: int, epochs: int, strategy: str, out: str) -> None:
    """Train once (rank 0 writes samples/s to ``out``); run alone or under torchrun."""
    import torch
    from torch import nn

    from trainwell.fit.trainer import Trainer

    if strategy == "hand-written":
        hand_written(samples, batch, epochs, out)
        return
    model, x, y = _model_and_data(samples)
    trainer = Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-3), loss=nn.CrossEntropyLoss(),
                      max_epochs=epochs, batch_size=batch, device="cpu", progress=False,
                      log_every=10_000, strategy=strategy)
    trainer.fit((x[:batch * 4], y[:batch * 4]))  # warm-up (first-call costs), not timed
    world = int(os.environ.get("WORLD_SIZE", "1"))
    started = time.perf_counter()
    result = trainer.fit((x, y))
    seconds = time.perf_counter() - started
    _report(out, result.state.samples * world / seconds)  # each rank counts its own shard
    trainer.close()


VARIANTS = {"1 process": ("none", 1), "2 DDP hand-written": ("hand-written", 2),
            "2 DDP": ("ddp", 2), "2 FSDP": ("fsdp", 2)}


def scaling(samples: int, batch: int, epochs: int, repeats: int) -> dict[str, list[float]]:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    found: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(repeats):
            order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))  # interleaved
            for name in order:
                strategy, world = VARIANTS[name]
                args = ["--worker", str(samples), str(batch), str(epochs), strategy]
                launcher = [sys.executable] if world == 1 else [
                    sys.executable, "-m", "torch.distributed.run", "--standalone",
                    "--nproc-per-node", str(world)]
                out = Path(tmp) / f"{strategy}-{r}.json"
                subprocess.run([*launcher, __file__, *args, str(out)], env=env, check=True,
                               stdout=subprocess.DEVNULL)
                found[name].append(json.loads(out.read_text())["samples_per_s"])
    return found


def checkpoint_cost(width: int, repeats: int) -> dict[str, float]:
    import torch
    from torch import nn

    from trainwell.fit import checkpoint as ckpt
    from trainwell.fit.trainer import Trainer

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
    trainer = Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-3), loss=nn.MSELoss(),
                      max_epochs=1, batch_size=8, device="cpu", progress=False)
    x = torch.randn(8, width)
    trainer.fit((x, x))  # AdamW state exists now
    payload = trainer._payload()
    buf = io.BytesIO()
    torch.save(payload, buf)
    megabytes = len(buf.getvalue()) / 2**20
    times: dict[str, list[float]] = {"torch.save to memory": [], "save_checkpoint": [],
                                     "load_checkpoint": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "step-00000001.ckpt"
        for _ in range(repeats):
            t = time.perf_counter()
            torch.save(payload, io.BytesIO())
            times["torch.save to memory"].append(time.perf_counter() - t)
            t = time.perf_counter()
            ckpt.save_checkpoint(path, payload)
            times["save_checkpoint"].append(time.perf_counter() - t)
            t = time.perf_counter()
            ckpt.load_checkpoint(path)
            times["load_checkpoint"].append(time.perf_counter() - t)
    out = {"MB": megabytes}
    out.update({k: statistics.median(v) * 1000 / megabytes for k, v in times.items()})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    args, rest = parser.parse_known_args()
    if rest and rest[0] == "--worker":
        worker(int(rest[1]), int(rest[2]), int(rest[3]), rest[4], rest[5])
        return
    samples, epochs, repeats = (4096, 1, 1) if args.quick else (16384, 2, 3)
    batch = 64
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    found = scaling(samples, batch, epochs, repeats)
    median = {name: statistics.median(runs) for name, runs in found.items()}
    print(f"\nScaling (MLP 256-512-512-10, {samples} samples x {epochs} epochs, batch "
          f"{batch} per process, 1 thread per process, gloo; median of {repeats})")
    base = median["2 DDP hand-written"]
    print(f"{'variant':>20} {'samples/s':>10} {'vs 1 process':>13} {'vs hand-written':>16}  runs")
    for name, value in median.items():
        print(f"{name:>20} {value:>10.0f} {value / median['1 process']:>12.2f}x "
              f"{value / base:>15.2f}x  {' '.join(f'{v:.0f}' for v in found[name])}")
    print("(ideal for 2 processes on 2 free cores: 2.00x vs 1 process)")

    cost = checkpoint_cost(512 if args.quick else 1024, 3 if args.quick else 7)
    print(f"\nCheckpoint of {cost['MB']:.1f} MB (model + AdamW state + RNG), median ms per MB:")
    for key in ("torch.save to memory", "save_checkpoint", "load_checkpoint"):
        print(f"{key:>22} {cost[key]:8.2f} ms/MB")
    print(f"save_checkpoint / torch.save to memory: "
          f"{cost['save_checkpoint'] / cost['torch.save to memory']:.1f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
