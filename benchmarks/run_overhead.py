"""How much slower a correct training script runs under `trainwell run` than under plain `python`.

The workload is the MLP of the trainer benchmark: 784-256-128-10 on 60,000
synthetic MNIST-shaped samples, batch 128, Adam, a shuffled DataLoader, two
epochs. Both ways run as fresh processes, interleaved, and the median
training-loop time of each is compared (process start-up and `import torch`
are left out; they are the same both ways).

Usage: python benchmarks/run_overhead.py [--repeats 5] [--epochs 2] [--threads 1]

On a shared, loaded machine single runs swing a lot: read the per-pair ratios
too. A second figure is printed that noise hardly moves: the watcher's own
work per step, measured in one process on a tiny twin of the model (see
`watcher_cost_per_step`), divided by the plain step time measured above.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

WORKLOAD = textwrap.dedent(
    """\
    import json, sys, time
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    epochs, threads = int(sys.argv[1]), int(sys.argv[2])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    X = torch.randn(60_000, 784)
    Y = torch.randint(0, 10, (60_000,))
    loader = DataLoader(TensorDataset(X, Y), batch_size=128, shuffle=True, generator=torch.Generator().manual_seed(0))
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "loss": loss.item()}))
    """
)


def run_once(command: list[str], watched: bool) -> float:
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    last = [line for line in done.stdout.splitlines() if line.startswith("{")][-1]
    if watched and "trainwell: no findings" not in done.stderr:
        raise SystemExit(f"the correct workload produced findings:\n{done.stderr}")
    return float(json.loads(last)["seconds"])


def watcher_cost_per_step(threads: int, repeats: int, steps: int = 3000) -> float:
    """Microseconds the watcher adds to one optimizer step, measured on a tiny twin of the MLP.

    Same modules, loss and optimizer, 8-wide layers: PyTorch's own work is
    small, so the fastest of many steps, with and without ``watch()``,
    interleaved, differ by the watcher's Python work alone, which does not
    depend on layer sizes.
    """
    import time

    import torch
    from torch import nn

    from trainwell.runtime.watcher import watch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x, y = torch.randn(4, 8), torch.randint(0, 10, (4,))
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()

    def fastest(count: int) -> float:
        best = float("inf")
        for _ in range(count):
            start = time.perf_counter()
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
            best = min(best, time.perf_counter() - start)
        return best

    costs = []
    for _ in range(repeats):
        plain = fastest(steps)
        with watch():
            fastest(60)  # past the first, densely checked steps
            costs.append((fastest(steps) - plain) * 1e6)
    return statistics.median(costs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads in the workload")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        script = os.path.join(folder, "mlp.py")
        with open(script, "w") as handle:
            handle.write(WORKLOAD)
        script_args = [str(args.epochs), str(args.threads)]
        plain_command = [sys.executable, script, *script_args]
        watched_command = [sys.executable, "-m", "trainwell", "run", script, *script_args]
        plain, watched = [], []
        for _ in range(args.repeats):  # interleaved, so drift in machine load hits both
            plain.append(run_once(plain_command, watched=False))
            watched.append(run_once(watched_command, watched=True))
    p, w = statistics.median(plain), statistics.median(watched)
    pairs = sorted(b / a for a, b in zip(plain, watched))
    print(f"workload: MLP 784-256-128-10, 60000 samples, batch 128, {args.epochs} epochs, {args.threads} thread(s)")
    print(f"plain python:  median {p:.3f} s  runs {', '.join(f'{s:.3f}' for s in plain)}")
    print(f"trainwell run: median {w:.3f} s  runs {', '.join(f'{s:.3f}' for s in watched)}")
    print(f"per-pair ratios: {', '.join(f'{r:.3f}' for r in pairs)} (median {statistics.median(pairs):.3f})")
    print(f"slowdown ratio: {w / p:.3f} ({(w / p - 1) * 100:+.1f}%)")
    steps = args.epochs * -(-60_000 // 128)
    cost = watcher_cost_per_step(args.threads, args.repeats)
    step_us = p / steps * 1e6
    print(f"watcher's own work: {cost:.0f} us per step (tiny twin, fastest steps); plain step here: {step_us:.0f} us "
          f"-> estimated slowdown {1 + cost / step_us:.3f}")


if __name__ == "__main__":
    main()
