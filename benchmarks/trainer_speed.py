"""Training speed of the trainwell Trainer against hand-written PyTorch loops.

Measures samples/s, in one process and one run, of:
  (a) tutorial  the tutorial loop: TensorDataset + DataLoader(shuffle=True),
                ``loss.item()`` every step, evaluation under ``no_grad`` each epoch;
  (b) plain     the fastest plain loop we can write: one permutation per epoch and
                index slicing of in-memory tensors, ``zero_grad(set_to_none=True)``,
                losses summed on the device (no host sync per step), validation
                loss and accuracy under ``inference_mode``;
  (c) trainer   ``trainwell.Trainer`` with the same model, optimizer, batch size and
                epochs, validating each epoch, progress bar off, no run directory;
  (d) loader    the same Trainer handed the tutorial's own DataLoaders (what a user
                replacing that loop passes; cut by index, bitwise the loader's batches);
  (e) named     the same Trainer with its optimizer by name, ``optimizer="adamw"``,
                built as ``trainwell fit`` builds it (fused step where torch has one);
and, when installed, Lightning's Trainer (logger, checkpoints, progress bar off)
and an Accelerate loop. Each variant starts from the same weights; variants are
interleaved and each result is the median of ``--repeats`` runs after a warm-up
(``--stat pairs``: each ratio the median of the two variants' ratios round by round).

    python benchmarks/trainer_speed.py            # full run (a few minutes on 2 cores)
    python benchmarks/trainer_speed.py --quick    # smoke run (seconds)
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

LR = 1e-3


@dataclasses.dataclass
class Workload:
    """A model, in-memory train/validation tensors, a batch size and a number of epochs."""

    name: str
    make_model: Callable[[], nn.Module]
    train: tuple[torch.Tensor, torch.Tensor]
    val: tuple[torch.Tensor, torch.Tensor]
    batch_size: int
    epochs: int

    @property
    def samples(self) -> int:
        return len(self.train[0]) * self.epochs


def mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                         nn.ReLU(), nn.Linear(128, 10))


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def mnist_like(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Synthetic MNIST-shaped data: n images 1x28x28 in [0, 1) and labels 0..9."""
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(n, 1, 28, 28, generator=gen), torch.randint(0, 10, (n,), generator=gen)


def workloads(quick: bool) -> list[Workload]:
    from trainwell.fit.default import make_data, make_model

    n_mlp, n_cnn = (768, 256) if quick else (60_000, 10_000)
    digits_train, digits_val = make_data()
    return [
        Workload("mlp-784-256-128-10", mlp, mnist_like(n_mlp, 1), mnist_like(n_mlp // 6, 2), 128,
                 1 if quick else 2),
        Workload("cnn-2conv", cnn, mnist_like(n_cnn, 3), mnist_like(n_cnn // 5, 4), 128, 1),
        Workload("digits-default", make_model, digits_train, digits_val, 64, 1 if quick else 30),
    ]


# ------------------------------------------------------------------ the variants
def tutorial(w: Workload, model: nn.Module) -> None:
    """(a) The loop of the PyTorch tutorials."""
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
    train = DataLoader(TensorDataset(*w.train), batch_size=w.batch_size, shuffle=True)
    val = DataLoader(TensorDataset(*w.val), batch_size=w.batch_size)
    for _ in range(w.epochs):
        model.train()
        running = 0.0
        for x, y in train:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            running += loss.item()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in val:
                correct += (model(x).argmax(1) == y).sum().item()


def plain(w: Workload, model: nn.Module) -> None:
    """(b) The fastest plain-PyTorch loop we know for in-memory tensors."""
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
    x, y = w.train
    xv, yv = w.val
    n, bs = len(x), w.batch_size
    gen = torch.Generator().manual_seed(0)
    for _ in range(w.epochs):
        model.train()
        total = torch.zeros(())
        perm = torch.randperm(n, generator=gen)
        for start in range(0, n, bs):
            idx = perm[start:start + bs]
            loss = loss_fn(model(x.index_select(0, idx)), y.index_select(0, idx))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            total += loss.detach()
        model.eval()
        correct = torch.zeros((), dtype=torch.long)
        val_loss = torch.zeros(())
        with torch.inference_mode():
            for start in range(0, len(xv), w.batch_size):
                out, target = model(xv[start:start + w.batch_size]), yv[start:start + w.batch_size]
                val_loss += loss_fn(out, target) * len(target)
                correct += (out.argmax(1) == target).sum()
        total.item(), val_loss.item(), correct.item()  # one host sync per epoch


def trainer(w: Workload, model: nn.Module) -> None:
    """(c) trainwell's Trainer."""
    from trainwell import Trainer

    Trainer(model, lambda params: torch.optim.AdamW(params, lr=LR), loss=nn.CrossEntropyLoss(),
            metrics={"acc": "accuracy"}, max_epochs=w.epochs, batch_size=w.batch_size,
            eval_batch_size=w.batch_size, progress=False, run_dir=None,
            device="cpu").fit(w.train, w.val)


def trainer_loader(w: Workload, model: nn.Module) -> None:
    """(d) trainwell's Trainer given the tutorial's DataLoaders (same optimizer factory as (c))."""
    from trainwell import Trainer

    Trainer(model, lambda params: torch.optim.AdamW(params, lr=LR), loss=nn.CrossEntropyLoss(),
            metrics={"acc": "accuracy"}, max_epochs=w.epochs, progress=False, run_dir=None,
            device="cpu").fit(DataLoader(TensorDataset(*w.train), batch_size=w.batch_size, shuffle=True),
                              DataLoader(TensorDataset(*w.val), batch_size=w.batch_size))


def trainer_named(w: Workload, model: nn.Module) -> None:
    """(e) trainwell's Trainer with the optimizer by name and its arguments."""
    from trainwell import Trainer

    Trainer(model, "adamw", optimizer_args={"lr": LR}, loss=nn.CrossEntropyLoss(),
            metrics={"acc": "accuracy"}, max_epochs=w.epochs, batch_size=w.batch_size,
            eval_batch_size=w.batch_size, progress=False, run_dir=None, device="cpu").fit(w.train, w.val)


def lightning(w: Workload, model: nn.Module) -> None:
    """PyTorch Lightning's Trainer, with its logger, checkpoints and progress bar off."""
    try:
        import lightning.pytorch as pl
    except ImportError:
        import pytorch_lightning as pl

    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.model, self.loss_fn = model, nn.CrossEntropyLoss()

        def training_step(self, batch: Any, _: int) -> torch.Tensor:
            return self.loss_fn(self.model(batch[0]), batch[1])

        def validation_step(self, batch: Any, _: int) -> None:
            self.log("val_acc", (self.model(batch[0]).argmax(1) == batch[1]).float().mean())

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.AdamW(self.parameters(), lr=LR)

    pl.Trainer(max_epochs=w.epochs, logger=False, enable_checkpointing=False,
               enable_progress_bar=False, enable_model_summary=False, accelerator="cpu",
               num_sanity_val_steps=0).fit(
        Module(), DataLoader(TensorDataset(*w.train), batch_size=w.batch_size, shuffle=True),
        DataLoader(TensorDataset(*w.val), batch_size=w.batch_size))


def accelerate(w: Workload, model: nn.Module) -> None:
    """The Accelerate loop of its README (prepare, accelerator.backward)."""
    from accelerate import Accelerator

    acc = Accelerator(cpu=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
    train = DataLoader(TensorDataset(*w.train), batch_size=w.batch_size, shuffle=True)
    val = DataLoader(TensorDataset(*w.val), batch_size=w.batch_size)
    model, optimizer, train, val = acc.prepare(model, optimizer, train, val)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(w.epochs):
        model.train()
        for x, y in train:
            loss = loss_fn(model(x), y)
            acc.backward(loss)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        model.eval()
        correct = torch.zeros((), dtype=torch.long)
        with torch.inference_mode():
            for x, y in val:
                correct += (model(x).argmax(1) == y).sum()
        correct.item()


def variants() -> dict[str, Callable[[Workload, nn.Module], None]]:
    """The variants that can run here: Lightning and Accelerate only when installed."""
    out = {"tutorial": tutorial, "plain": plain, "trainer": trainer, "loader": trainer_loader,
           "named": trainer_named}
    if importable("lightning") or importable("pytorch_lightning"):
        out["lightning"] = lightning
    if importable("accelerate"):
        out["accelerate"] = accelerate
    return out


def importable(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


# -------------------------------------------------------------------- measuring
def time_once(fn: Callable[[Workload, nn.Module], None], w: Workload,
              clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds of one training run from the same initial weights (model build excluded)."""
    torch.manual_seed(0)
    model = w.make_model()
    started = clock()
    fn(w, model)
    return clock() - started


def measure_rounds(w: Workload, fns: dict[str, Callable[..., None]], repeats: int, warmup: bool = True,
                   clock: Callable[[], float] = time.perf_counter) -> dict[str, list[float]]:
    """Seconds of each run of each variant, by round: round r ran every variant once, back to back."""
    if warmup:
        short = dataclasses.replace(w, epochs=1, train=tuple(t[:2048] for t in w.train),
                                    val=tuple(t[:512] for t in w.val))
        for fn in fns.values():
            time_once(fn, short, clock)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for r in range(repeats):
        order = list(fns) if r % 2 == 0 else list(reversed(fns))  # no fixed position bias
        for name in order:
            times[name].append(time_once(fns[name], w, clock))
    return times


def paired_ratio(times: dict[str, list[float]], faster: str, baseline: str) -> float:
    """How many times faster ``faster`` ran than ``baseline``: the median over rounds of the two runs'
    ratio in that round. A round's two runs are seconds apart and share the machine's state (its
    clock speed, the other work on it), which moves every run of a round alike."""
    return statistics.median(b / a for a, b in zip(times[faster], times[baseline]))


def optimizer_implementation() -> str:
    """Which AdamW implementation PyTorch picks here (foreach and fused default to None)."""
    params = [nn.Parameter(torch.zeros(2))]
    try:
        from torch.optim.optimizer import _default_to_fused_or_foreach

        fused, foreach = _default_to_fused_or_foreach(params, differentiable=False, use_fused=False)
    except (ImportError, TypeError):
        return "unknown (PyTorch default)"
    return "fused" if fused else "foreach" if foreach else "for-loop (single-tensor)"


# (numerator, denominator) of every ratio printed: what the Trainer gains over each loop
RATIOS = [("trainer", "tutorial"), ("trainer", "plain"), ("loader", "plain"), ("named", "tutorial"),
          ("named", "plain"), ("trainer", "lightning"), ("trainer", "accelerate")]


def steps_of(w: Workload) -> int:
    """Optimizer steps of one run of ``w``."""
    return -(-len(w.train[0]) // w.batch_size) * w.epochs


def format_table(results: dict[str, dict[str, float]], workloads_: Sequence[Workload],
                 rounds: dict[str, dict[str, list[float]]] | None = None) -> str:
    """samples/s of every variant, every ratio (higher: the Trainer faster), and the Trainer's
    own cost per optimizer step over the plain loop of the same work. With ``rounds`` (each
    workload's run times by round) a ratio is :func:`paired_ratio`, else one of the two figures."""
    names = list(next(iter(results.values())))
    ratios = [(a, b) for a, b in RATIOS if a in names and b in names]
    head = ["workload", "batch", "samples"] + [f"{n}/s" for n in names] + \
        [f"{a}/{b}" for a, b in ratios] + ["trainer_us/step", "loader_us/step"]
    rows = [head]
    for w in workloads_:
        seconds = results[w.name]
        rate = {n: w.samples / seconds[n] for n in names}
        over = [(seconds[n] - seconds["plain"]) / steps_of(w) * 1e6 for n in ("trainer", "loader")]
        rows.append([w.name, str(w.batch_size), str(w.samples)] + [f"{rate[n]:,.0f}" for n in names]
                    + [f"{(paired_ratio(rounds[w.name], a, b) if rounds else rate[a] / rate[b]):.3f}x" for a, b in ratios]
                    + [f"{o:+.0f}" for o in over])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(wd) if i else c.ljust(wd) for i, (c, wd) in
                               enumerate(zip(row, widths))) for row in rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat: a smoke run")
    parser.add_argument("--repeats", type=int, help="runs per variant (median); default 5, quick 1")
    parser.add_argument("--threads", type=int, help="torch.set_num_threads (default: PyTorch's)")
    parser.add_argument("--stat", choices=("median", "min", "pairs"), default="median",
                        help="statistic of the repeated run times (min: the least disturbed run; pairs: samples/s "
                             "from the median run, each ratio the median of its per-round ratios)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: this process's CPU time, less moved by other work on a shared machine")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    repeats = args.repeats or (1 if args.quick else 5)
    fns = variants()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, AdamW "
          f"{optimizer_implementation()} (named: fused), {args.stat} of {repeats} {args.clock}-clock "
          f"runs after a warm-up; variants: {', '.join(fns)}")
    missing = [n for n in ("lightning", "accelerate") if n not in fns]
    if missing:
        print(f"(not installed, skipped: {', '.join(missing)})")
    loads = workloads(args.quick)
    results, rounds = {}, {}
    stat = min if args.stat == "min" else statistics.median
    for w in loads:
        rounds[w.name] = measure_rounds(w, fns, repeats, warmup=not args.quick, clock=clock)
        results[w.name] = {name: stat(ts) for name, ts in rounds[w.name].items()}
        print(f"  measured {w.name}", file=sys.stderr, flush=True)
    print(format_table(results, loads, rounds if args.stat == "pairs" else None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
