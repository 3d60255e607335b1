"""DDP scaling on the CPU and the cost of a checkpoint, measured in one run.

1. Samples/s of ``trainwell.Trainer`` training an MLP in 1 process and in 2
   processes (``torchrun --standalone --nproc-per-node 2``, gloo), one thread
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


def worker(samples: int, batch: int, epochs: int, out: str) -> None:
    """Train once (rank 0 writes samples/s to ``out``); run alone or under torchrun."""
    import torch
    from torch import nn

    from trainwell.fit.trainer import Trainer

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(samples, 256, generator=g), torch.randint(0, 10, (samples,), generator=g)
    trainer = Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-3), loss=nn.CrossEntropyLoss(),
                      max_epochs=epochs, batch_size=batch, device="cpu", progress=False,
                      log_every=10_000)
    trainer.fit((x[:batch * 4], y[:batch * 4]))  # warm-up (first-call costs), not timed
    world = int(os.environ.get("WORLD_SIZE", "1"))
    started = time.perf_counter()
    result = trainer.fit((x, y))
    seconds = time.perf_counter() - started
    trained = result.state.samples * world  # each rank counts its own shard
    if int(os.environ.get("RANK", "0")) == 0:
        Path(out).write_text(json.dumps({"samples_per_s": trained / seconds, "seconds": seconds,
                                         "world": world}))
    trainer.close()


def scaling(samples: int, batch: int, epochs: int, repeats: int) -> dict[int, list[float]]:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    args = ["--worker", str(samples), str(batch), str(epochs)]
    commands = {1: [sys.executable, __file__, *args],
                2: [sys.executable, "-m", "torch.distributed.run", "--standalone",
                    "--nproc-per-node", "2", __file__, *args]}
    found: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(repeats):
            for world in ((1, 2) if r % 2 == 0 else (2, 1)):  # interleaved
                out = Path(tmp) / f"{world}-{r}.json"
                subprocess.run([*commands[world], str(out)], env=env, check=True,
                               stdout=subprocess.DEVNULL)
                found[world].append(json.loads(out.read_text())["samples_per_s"])
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
        worker(int(rest[1]), int(rest[2]), int(rest[3]), rest[4])
        return
    samples, epochs, repeats = (4096, 1, 1) if args.quick else (16384, 2, 3)
    batch = 64
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    found = scaling(samples, batch, epochs, repeats)
    one, two = statistics.median(found[1]), statistics.median(found[2])
    print(f"\nDDP scaling (MLP 256-512-512-10, {samples} samples x {epochs} epochs, batch "
          f"{batch} per process, 1 thread per process, gloo; median of {repeats})")
    print(f"{'processes':>10} {'samples/s':>12} {'runs':>30}")
    for world, value in ((1, one), (2, two)):
        print(f"{world:>10} {value:>12.0f} {' '.join(f'{v:.0f}' for v in found[world]):>30}")
    print(f"ratio 2 processes / 1 process: {two / one:.2f}x (ideal 2.00x)")

    cost = checkpoint_cost(512 if args.quick else 1024, 3 if args.quick else 7)
    print(f"\nCheckpoint of {cost['MB']:.1f} MB (model + AdamW state + RNG), median ms per MB:")
    for key in ("torch.save to memory", "save_checkpoint", "load_checkpoint"):
        print(f"{key:>22} {cost[key]:8.2f} ms/MB")
    print(f"save_checkpoint / torch.save to memory: "
          f"{cost['save_checkpoint'] / cost['torch.save to memory']:.1f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
