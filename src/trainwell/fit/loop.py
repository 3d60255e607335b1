"""The loop: epoch -> optimizer step -> micro-step.

The hot path reads no tensor value: losses are kept as detached device
tensors and read once per log interval (``flush``), which is also where a
non-finite loss is found and named.
"""

from __future__ import annotations

import math
import operator
import time
from typing import TYPE_CHECKING, Any

import torch

from trainwell.errors import TrainwellError
from trainwell.fit.accumulate import Windows
from trainwell.fit.state import TrainState

if TYPE_CHECKING:
    from trainwell.fit.trainer import Trainer

NONFINITE_SKIP_LIMIT = 10


def train_epoch(tr: Trainer, state: TrainState, source: Any, windows: Windows) -> bool:
    """Train from ``state.batch`` to the end of the epoch or a stop; True if the epoch ended."""
    runner = tr._runner
    micro = runner.micro
    extras = tr._pending_extras
    optimizer_step = tr._runner.optimizer_step
    losses, sizes = tr._pending_losses, tr._pending_sizes
    step_hooks = tr._callbacks.on_step_end_targets
    size_of = source.size_of
    log_every = tr.log_every
    every = tr.checkpoint_every or 0
    max_steps = tr.max_steps if tr.max_steps is not None else math.inf
    k = windows.k
    n = windows.num_batches
    partial_start = windows.partial_start if windows.partial_start is not None else math.inf
    partial_size = windows.partial_size
    i = state.batch
    tr._runner.position = i % k  # where in its window the first micro-batch falls (DDP's no_sync)
    for batch in source.epoch(state.epoch, i):
        bs = size_of(batch)
        loss = micro(batch, k if i < partial_start else partial_size)
        if loss is not None:
            losses.append(loss)
            sizes.append(bs)
            if runner.extras is not None:  # the other scalars a step= returned
                extras.append((runner.extras, bs))
        else:
            _skipped(tr, state, i)
        i += 1
        state.batch = i
        state.samples += bs
        state.log_samples += bs
        if i % k == 0 or i == n:
            optimizer_step()
            state.step += 1
            for hook in step_hooks:
                hook(tr, state)
            if state.step % log_every == 0:
                log(tr, state)
            if every and state.step % every == 0:
                tr._save_checkpoint()
            if state.step >= max_steps:
                tr._stop = True
        if tr._stop:
            return i == n
    if n is None and i % k:  # an iterable source of unknown length left a window open
        optimizer_step()
        state.step += 1
    return True


def _skipped(tr: Trainer, state: TrainState, index: int) -> None:
    state.nonfinite_skipped += 1
    if state.nonfinite_skipped > NONFINITE_SKIP_LIMIT:
        raise TrainwellError(
            f"more than {NONFINITE_SKIP_LIMIT} batches had a non-finite loss (last: epoch "
            f"{state.epoch + 1}, batch {index}){_last_good(tr)}; lower the learning rate, check the data for "
            "nan/inf, or clip gradients", exit_code=1)


def _last_good(tr: Trainer) -> str:
    last = tr._last_checkpoint
    return (f"; the last good checkpoint is {last}" if last is not None
            else "; no checkpoint was written before it")


def check_finite(tr: Trainer, state: TrainState) -> list[float]:
    """Read the pending losses (one host sync); raise naming the first non-finite one."""
    # One stack, then one cast: stacking promotes mixed dtypes losslessly, so each value is the
    # float32 it would be cast to alone.
    values = torch.stack(tr._pending_losses).float().tolist()
    first = state.batch - len(values)
    for j, v in enumerate(values):
        if not math.isfinite(v):
            index = first + j
            step = state.epoch_start_step + index // tr.accumulate + 1
            raise TrainwellError(
                f"non-finite loss ({v}) at optimizer step {step} (epoch {state.epoch + 1}, "
                f"batch {index}){_last_good(tr)}; lower the learning rate, check the data for "
                "nan/inf, clip gradients, or pass nonfinite='skip'", exit_code=1)
    return values


def flush(tr: Trainer, state: TrainState) -> None:
    """Read the pending losses (one host sync) into the running sums."""
    losses, sizes = tr._pending_losses, tr._pending_sizes
    if not losses:
        return
    values = check_finite(tr, state)
    total = sum(map(operator.mul, values, sizes))  # no Python frame per value
    count = sum(sizes)
    state.log_loss_sum += total
    state.log_loss_count += count
    state.epoch_loss_sum += total
    state.epoch_loss_count += count
    losses.clear()
    sizes.clear()
    if tr._pending_extras:
        _flush_extras(tr, state)


def _flush_extras(tr: Trainer, state: TrainState) -> None:
    """Add the pending step scalars to the log and epoch sums (read in the same host sync
    as the losses' interval: one ``tolist``)."""
    pending = tr._pending_extras
    values = torch.stack([v.float().reshape(()) for d, _ in pending for v in d.values()]).tolist()
    it = iter(values)
    for named, bs in pending:
        for name in named:
            v = next(it)
            for sums in (state.log_extras, state.epoch_extras):
                total = sums.setdefault(name, [0.0, 0])
                total[0] += v * bs
                total[1] += bs
    pending.clear()


def _means(sums: dict[str, list]) -> dict[str, float]:
    return {f"train_{name}": s / n if n else math.nan for name, (s, n) in sums.items()}


def log(tr: Trainer, state: TrainState) -> None:
    """Emit a log record: {step, epoch, train_loss, lr, samples_per_s}."""
    flush(tr, state)
    now = time.perf_counter()
    elapsed = max(now - tr._log_time, 1e-9)
    n = tr._windows.num_batches
    record = {
        "step": float(state.step),
        "epoch": float(state.epoch + (state.batch / n if n else 0.0)),
        "train_loss": state.log_loss_sum / state.log_loss_count if state.log_loss_count else math.nan,
        "lr": float(tr.optimizer.param_groups[0]["lr"]),
        "samples_per_s": state.log_samples / elapsed,
        **_means(state.log_extras),
    }
    state.log_loss_sum, state.log_loss_count, state.log_samples = 0.0, 0, 0
    state.log_extras = {}
    tr._log_time = now
    tr._callbacks.fire("on_log", tr, state, record)
    agree_stop(tr)


def agree_stop(tr: Trainer) -> None:
    """Under DDP: stop when any rank asked to (all ranks reach this point after the same step)."""
    if tr._dist is not None and not tr._stop:
        tr._stop = tr._dist.any(tr._stop_requested)


def end_epoch(tr: Trainer, state: TrainState, val_source: Any, started: float) -> dict[str, Any]:
    """Validate, record, step per-epoch schedulers, track the best, checkpoint."""
    flush(tr, state)
    loss_sum, loss_count = state.epoch_loss_sum, state.epoch_loss_count
    if tr._dist is not None:  # every rank's samples, so all ranks monitor the same value
        both = tr._dist.sum(torch.tensor([loss_sum, loss_count], dtype=torch.float64)).tolist()
        loss_sum, loss_count = both[0], int(both[1])
    record: dict[str, Any] = {
        "epoch": state.epoch + 1,
        "step": state.step,
        "train_loss": loss_sum / loss_count if loss_count else math.nan,
        **_means(state.epoch_extras),
    }
    if val_source is not None:
        try:
            values = tr._evaluate_source(val_source)
        except Exception:
            _keep_epoch(tr)
            raise
        for name, value in values.items():
            record[f"val_{name}"] = value
    record["lr"] = float(tr.optimizer.param_groups[0]["lr"])
    record["time_s"] = time.perf_counter() - started
    # Per-epoch schedulers step after the epoch's optimizer steps (and are fed
    # the monitored metric when they are ReduceLROnPlateau).
    tr._schedule.epoch_end(record, tr._monitor)
    improved = _track_best(tr, state, record)
    state.history.append(record)
    state.epoch += 1
    state.batch = 0
    state.epoch_start_step = state.step
    state.epoch_loss_sum, state.epoch_loss_count = 0.0, 0
    state.epoch_extras = {}
    if tr.early_stopping_patience is not None and state.bad_epochs >= tr.early_stopping_patience:
        tr._stop = True
    agree_stop(tr)
    tr._save_checkpoint(best=improved)
    tr._callbacks.fire("on_epoch_end", tr, state, record)
    return record


def _keep_epoch(tr: Trainer) -> None:
    """Validation failed after an epoch of training: checkpoint the trained epoch first, so a
    resume validates it again instead of training it again (one process; under DDP the
    other ranks may be inside a collective)."""
    if tr._dist is None and tr.run_dir is not None:
        tr._save_checkpoint()


def _track_best(tr: Trainer, state: TrainState, record: dict[str, Any]) -> bool:
    value = record.get(tr._monitor)
    if value is None or not math.isfinite(value):
        state.bad_epochs += 1
        return False
    better = state.best is None or (value < state.best if tr.mode == "min" else value > state.best)
    if better:
        state.best, state.best_epoch, state.bad_epochs = value, record["epoch"], 0
    else:
        state.bad_epochs += 1
    return better


def run(tr: Trainer, state: TrainState, train_source: Any, val_source: Any) -> None:
    """Train epochs until ``max_epochs``, ``max_steps``, early stopping or a stop request."""
    while state.epoch < tr.max_epochs and not tr._stop:
        started = time.perf_counter()
        if train_epoch(tr, state, train_source, tr._windows):
            end_epoch(tr, state, val_source, started)
        else:
            tr._save_checkpoint()  # stopped inside an epoch: keep the exact position
