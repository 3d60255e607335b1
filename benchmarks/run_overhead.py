"""How much slower correct training scripts run under `trainwell run` than under plain `python`.

Two workloads, measured side by side in one run:

- mlp: 784-256-128-10 on 60,000 synthetic MNIST-shaped samples, batch 128,
  Adam, a shuffled DataLoader, two epochs (few large forwards);
- small-forwards: actor_critic's shape: a 4-128-(2, 1) policy called on one
  sample at a time, 100,000 forwards, one backward and Adam step per episode
  of 200 forwards (many tiny forwards: the watcher's per-forward cost shows).

Both ways run as fresh processes, interleaved, and the median loop time of
each is compared (process start-up and `import torch` are left out; they are
the same both ways). Then two figures noise hardly moves, measured in one
process: the watcher's extra microseconds per top-level forward (the policy,
fastest blocks with and without `watch()`, interleaved), and its work per
optimizer step on a tiny twin of the MLP.

Usage: python benchmarks/run_overhead.py [--repeats 5] [--threads 1] [--forwards 100000]
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
import time

MLP = textwrap.dedent(
    """\
    import json, sys, time
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    threads = int(sys.argv[1])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    X = torch.randn(60_000, 784)
    Y = torch.randint(0, 10, (60_000,))
    loader = DataLoader(TensorDataset(X, Y), batch_size=128, shuffle=True, generator=torch.Generator().manual_seed(0))
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(2):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    print(json.dumps({"seconds": time.perf_counter() - start, "loss": loss.item()}))
    """
)

POLICY = textwrap.dedent(
    """\
    import json, sys, time
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 128)
            self.action_head = nn.Linear(128, 2)
            self.value_head = nn.Linear(128, 1)

        def forward(self, x):
            x = F.relu(self.affine1(x))
            return F.softmax(self.action_head(x), dim=-1), self.value_head(x)


    """
)

SMALL_FORWARDS = POLICY + textwrap.dedent(
    """\
    threads, forwards = int(sys.argv[1]), int(sys.argv[2])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = Policy()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    states = torch.randn(1000, 4)
    saved = []
    start = time.perf_counter()
    for t in range(forwards):
        probs, value = model(states[t % 1000])
        saved.append((probs[0] - 0.5) ** 2 + (value[0] - 1.0) ** 2)
        if len(saved) == 200:  # the end of an episode
            optimizer.zero_grad()
            loss = torch.stack(saved).sum()
            loss.backward()
            optimizer.step()
            saved = []
    print(json.dumps({"seconds": time.perf_counter() - start, "loss": loss.item()}))
    """
)


def run_once(command: list[str], watched: bool) -> float:
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    last = [line for line in done.stdout.splitlines() if line.startswith("{")][-1]
    if watched and "trainwell: no findings" not in done.stderr:
        raise SystemExit(f"the correct workload produced findings:\n{done.stderr}")
    return float(json.loads(last)["seconds"])


def side_by_side(workloads: dict[str, list[str]], repeats: int) -> dict[str, tuple[list[float], list[float]]]:
    """Plain and watched loop times per workload, interleaved so drift in machine load hits both."""
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in workloads}
    for _ in range(repeats):
        for name, command in workloads.items():
            times[name][0].append(run_once([sys.executable, *command], watched=False))
            times[name][1].append(run_once([sys.executable, "-m", "trainwell", "run", *command], watched=True))
    return times


def extra_per_forward(threads: int, repeats: int, block: int = 200) -> float:
    """Microseconds the watcher adds to one top-level forward of the small-forwards policy.

    Blocks of ``block`` forwards (outputs kept, one backward and step per
    block, as in an episode), the fastest tenth of many blocks with and
    without ``watch()``, interleaved; the steps are outside the timed part.
    Time is this thread's CPU time, which other processes on a loaded
    machine move far less than wall time.
    """
    import torch

    from trainwell.runtime.watcher import watch

    namespace: dict[str, object] = {}
    exec(POLICY, namespace)
    torch.set_num_threads(threads)
    model = namespace["Policy"]()  # type: ignore[operator]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    states = torch.randn(block, 4)

    def timed_block() -> float:
        saved = []
        start = time.thread_time()
        for t in range(block):
            probs, value = model(states[t])
            saved.append((probs[0] - 0.5) ** 2 + (value[0] - 1.0) ** 2)
        seconds = time.thread_time() - start
        optimizer.zero_grad()
        torch.stack(saved).sum().backward()
        optimizer.step()
        return seconds / block

    def fastest(count: int) -> float:
        return sorted(timed_block() for _ in range(count))[count // 10]

    costs = []
    for _ in range(repeats):
        plain = fastest(60)
        with watch():
            fastest(60)  # past the first, densely checked steps and the places' trust
            costs.append((fastest(60) - plain) * 1e6)
    return statistics.median(costs)


def watcher_cost_per_step(threads: int, repeats: int, steps: int = 3000) -> float:
    """Microseconds the watcher adds to one optimizer step, measured on a tiny twin of the MLP.

    Same modules, loss and optimizer, 8-wide layers: PyTorch's own work is
    small, so the fastest of many steps, with and without ``watch()``,
    interleaved, differ by the watcher's Python work alone.
    """
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
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads in the workloads")
    parser.add_argument("--forwards", type=int, default=100_000, help="forwards in the small-forwards workload")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scripts = {}
        for name, text in (("mlp", MLP), ("small-forwards", SMALL_FORWARDS)):
            scripts[name] = os.path.join(folder, f"{name}.py")
            with open(scripts[name], "w") as handle:
                handle.write(text)
        workloads = {
            "mlp": [scripts["mlp"], str(args.threads)],
            "small-forwards": [scripts["small-forwards"], str(args.threads), str(args.forwards)],
        }
        times = side_by_side(workloads, args.repeats)
    print(f"{args.repeats} interleaved pairs per workload, {args.threads} thread(s); loop seconds, plain python vs trainwell run")
    print(f"{'workload':<16} {'plain (median)':>15} {'watched (median)':>17} {'ratio':>7} {'per-pair ratios':>16}")
    for name, (plain, watched) in times.items():
        p, w = statistics.median(plain), statistics.median(watched)
        pairs = sorted(b / a for a, b in zip(plain, watched))
        print(f"{name:<16} {p:>15.3f} {w:>17.3f} {w / p:>7.3f}   {', '.join(f'{r:.3f}' for r in pairs)} (median {statistics.median(pairs):.3f})")
    forward = extra_per_forward(args.threads, args.repeats)
    plain_forward = statistics.median(times["small-forwards"][0]) / args.forwards * 1e6
    print(f"watcher's extra work per top-level forward: {forward:.2f} us (policy, fastest blocks); "
          f"plain loop time per forward here: {plain_forward:.1f} us -> estimated slowdown {1 + forward / plain_forward:.3f}")
    step = watcher_cost_per_step(args.threads, args.repeats)
    plain_step = statistics.median(times["mlp"][0]) / (2 * -(-60_000 // 128)) * 1e6
    print(f"watcher's own work per optimizer step: {step:.0f} us (tiny twin of the MLP); plain MLP step here: {plain_step:.0f} us "
          f"-> estimated slowdown {1 + step / plain_step:.3f}")


if __name__ == "__main__":
    main()
