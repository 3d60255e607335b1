"""The Trainer's per-step work, counted, never timed: trainwell's own calls per optimizer step on
the tensor path, the loss held across the step, and the evaluation's exact float64 sums."""

import collections
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import trainwell.fit
from trainwell.fit.callbacks import Callback
from trainwell.fit.trainer import Trainer

D, C = 4, 3
FIT = str(Path(trainwell.fit.__file__).parent)


def data(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, D, generator=g), torch.randint(0, C, (n,), generator=g)


def trainer(**kw):
    torch.manual_seed(0)
    args = {"loss": nn.CrossEntropyLoss(), "max_epochs": 1, "batch_size": 8, "progress": False,
            "device": "cpu", "log_every": 1000}
    args.update(kw)
    return Trainer(nn.Sequential(nn.Linear(D, 8), nn.ReLU(), nn.Linear(8, C)),
                   lambda p: torch.optim.AdamW(p, lr=1e-3), **args)


def trainwell_calls(steps):
    """trainwell.fit's Python calls (generator resumes included) in a fit of ``steps`` steps."""
    counts = collections.Counter()
    tr = trainer()
    batches = data(8 * steps)

    def profile(frame, event, arg):
        code = frame.f_code
        if event == "call" and code.co_filename.startswith(FIT):
            counts[f"{Path(code.co_filename).stem}.{code.co_name}"] += 1

    sys.setprofile(profile)
    try:
        tr.fit(batches)
    finally:
        sys.setprofile(None)
    return counts


def test_trainwell_makes_few_calls_per_optimizer_step():
    # Twice the steps, same everything else: the difference is the per-step work.
    counts = trainwell_calls(40)
    counts.subtract(trainwell_calls(20))
    per_step = {name: n / 20 for name, n in counts.items() if n}
    assert per_step.get("step.micro") == 1  # the profile saw the loop
    # The ordered phases, and nothing else: the batch, its size, micro -> loss (autocast
    # skipped in full precision) -> forward and loss -> backward, then the optimizer step
    # (unscale, step). A new per-step call must earn its place (benchmarks/trainer_speed.py).
    assert sum(per_step.values()) <= 12, per_step


def test_the_last_loss_is_held_across_the_step_and_dropped_after_fit():
    held = []

    class Look(Callback):
        def on_step_end(self, trainer, state):
            loss = trainer._runner.last_loss
            held.append(loss is not None and loss.grad_fn is not None)

    tr = trainer(callbacks=[Look()])
    tr.fit(data(40))
    assert held == [True] * 5
    assert tr._runner.last_loss is None


def test_a_skipped_loss_is_not_held():
    # Its graph was never run backward: holding it would keep the batch's activations.
    x, y = data(16)
    x[:8] = float("nan")
    tr = trainer(nonfinite="skip", batch_size=8, max_epochs=1)
    tr._runner.micro((x[:8], y[:8]), 1)
    assert tr._runner.last_loss is None


def test_evaluation_sums_are_the_float64_weighted_means_exactly():
    x, y = data(21, seed=3)
    tr = trainer(batch_size=4, eval_batch_size=4, metrics={"accuracy": "accuracy"})
    got = tr.evaluate((x, y))
    loss_sum = acc_sum = torch.zeros((), dtype=torch.float64)
    with torch.inference_mode():
        for a in range(0, 21, 4):
            out, target = tr.model(x[a:a + 4]), y[a:a + 4]
            loss = nn.functional.cross_entropy(out, target)
            acc = (out.argmax(-1) == target).float().mean()
            loss_sum = loss_sum + loss.double() * len(target)
            acc_sum = acc_sum + acc.double() * len(target)
    assert got == {"loss": (loss_sum / 21).item(), "accuracy": (acc_sum / 21).item()}


@pytest.mark.parametrize("n", [1, 7, 64, 129])
def test_accuracy_casts_inside_the_mean_bitwise(n):
    from trainwell.fit.evaluate import accuracy

    g = torch.Generator().manual_seed(n)
    out, target = torch.randn(n, C, generator=g), torch.randint(0, C, (n,), generator=g)
    assert torch.equal(accuracy(out, target), (out.argmax(-1) == target).float().mean())
