"""How much slower correct training scripts run under `trainwell run` than under plain `python`.

Two workloads, measured side by side in one run:

- mlp: 784-256-128-10 on 60,000 synthetic MNIST-shaped samples, batch 128,
  Adam, a shuffled DataLoader, two epochs (few large forwards);
- small-forwards: pytorch/examples' actor_critic, with CartPole's equations
  written out in plain Python for the environment: a 4-128-(2, 1) policy
  called on one state at a time, an action sampled from a Categorical, one
  backward and Adam step per episode; 100,000 forwards in all (many tiny
  forwards: the watcher's per-forward cost shows).

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
    start, cpu_start = time.perf_counter(), time.process_time()
    for epoch in range(2):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    print(json.dumps({"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu_start, "loss": loss.item()}))
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
    import math
    from torch.distributions import Categorical

    threads, forwards = int(sys.argv[1]), int(sys.argv[2])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = Policy()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)


    def cartpole(state, action):
        # CartPole's equations of motion in plain floats (gymnasium's, Euler, tau 0.02)
        x, x_dot, theta, theta_dot = state
        force = 10.0 if action == 1 else -10.0
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + 0.05 * theta_dot ** 2 * sin) / 1.1
        theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / 1.1))
        x_acc = temp - 0.05 * theta_acc * cos / 1.1
        state = (x + 0.02 * x_dot, x_dot + 0.02 * x_acc, theta + 0.02 * theta_dot, theta_dot + 0.02 * theta_acc)
        return state, abs(state[0]) > 2.4 or abs(state[2]) > 0.21


    done_forwards, episodes = 0, 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while done_forwards < forwards:
        state, saved, rewards = tuple(torch.empty(4).uniform_(-0.05, 0.05).tolist()), [], []
        for t in range(500):
            probs, value = model(torch.tensor(state))
            m = Categorical(probs)
            action = m.sample()
            saved.append((m.log_prob(action), value))
            state, failed = cartpole(state, action.item())
            rewards.append(1.0)
            done_forwards += 1
            if failed:
                break
        returns, R = [], 0.0
        for r in rewards[::-1]:
            R = r + 0.99 * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8) if len(returns) > 1 else returns * 0
        policy_losses = [-log_prob * (R - value.item()) for (log_prob, value), R in zip(saved, returns)]
        value_losses = [F.smooth_l1_loss(value, torch.tensor([R])) for (_, value), R in zip(saved, returns)]
        optimizer.zero_grad()
        loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
        loss.backward()
        optimizer.step()
        episodes += 1
    print(json.dumps({"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu_start,
                      "loss": loss.item(), "episodes": episodes}))
    """
)


def run_once(command: list[str], watched: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of the workload's loop."""
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    last = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
    if watched and "trainwell: no findings" not in done.stderr:
        raise SystemExit(f"the correct workload produced findings:\n{done.stderr}")
    return float(last["seconds"]), float(last["cpu_seconds"])


Times = dict[str, tuple[list[tuple[float, float]], list[tuple[float, float]]]]


def side_by_side(workloads: dict[str, list[str]], repeats: int) -> Times:
    """Plain and watched loop times per workload, interleaved so drift in machine load hits both."""
    times: Times = {name: ([], []) for name in workloads}
    for _ in range(repeats):
        for name, command in workloads.items():
            times[name][0].append(run_once([sys.executable, *command], watched=False))
            times[name][1].append(run_once([sys.executable, "-m", "trainwell", "run", *command], watched=True))
    return times


def extra_per_forward(threads: int, repeats: int, block: int = 200) -> float:
    """Microseconds the watcher adds to one top-level forward of the small-forwards policy.

    Blocks of ``block`` forwards (outputs kept, one backward and step per
    block, as in an episode), the fastest of many blocks with and
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
        return min(timed_block() for _ in range(count))

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
    parser.add_argument("--forwards", type=int, default=100_000, help="forwards in the small-forwards workload (actor_critic made about 190,000)")
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
    print("(CPU seconds move less than wall seconds when other processes share the machine)")
    print(f"{'workload':<16} {'clock':<5} {'plain (median)':>15} {'watched (median)':>17} {'ratio':>7}   per-pair ratios")
    for name, (plain_runs, watched_runs) in times.items():
        for clock, index in (("wall", 0), ("cpu", 1)):
            plain, watched = [run[index] for run in plain_runs], [run[index] for run in watched_runs]
            p, w = statistics.median(plain), statistics.median(watched)
            pairs = sorted(b / a for a, b in zip(plain, watched))
            print(f"{name:<16} {clock:<5} {p:>15.3f} {w:>17.3f} {w / p:>7.3f}   "
                  f"{', '.join(f'{r:.3f}' for r in pairs)} (median {statistics.median(pairs):.3f})")
    forward = extra_per_forward(args.threads, args.repeats)
    plain_forward = statistics.median(run[1] for run in times["small-forwards"][0]) / args.forwards * 1e6
    print(f"watcher's extra work per top-level forward: {forward:.2f} us (policy, fastest blocks); "
          f"plain loop CPU time per forward here: {plain_forward:.1f} us -> estimated slowdown {1 + forward / plain_forward:.3f}")
    step = watcher_cost_per_step(args.threads, args.repeats)
    plain_step = statistics.median(run[1] for run in times["mlp"][0]) / (2 * -(-60_000 // 128)) * 1e6
    print(f"watcher's own work per optimizer step: {step:.0f} us (tiny twin of the MLP); plain MLP step (CPU time) here: {plain_step:.0f} us "
          f"-> estimated slowdown {1 + step / plain_step:.3f}")


if __name__ == "__main__":
    main()
