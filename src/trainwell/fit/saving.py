"""A Trainer's checkpoint: what it holds, writing it, and reading it back.

Under DDP/FSDP the ranks agree on both: a write ends only when rank 0's file
is in place (every rank raising if it failed), and a resume loads the file rank
0 chose, checked against the checksum rank 0 read (see distributed.py).
Reading changes memory only: nothing is written until every check has passed.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from trainwell.errors import TrainwellError
from trainwell.fit import checkpoint as ckpt
from trainwell.fit import distributed, loop, preflight
from trainwell.fit.accumulate import restore_window_grads, window_grads
from trainwell.fit.machines import check_visible, several_machines
from trainwell.fit.seeding import capture_rng

if TYPE_CHECKING:
    from trainwell.fit.trainer import Trainer


def payload(tr: Trainer) -> dict[str, Any]:
    """Everything a resume needs (under FSDP a collective: every rank calls; rank 0 gets it)."""
    state = tr.state
    mid_window = state.batch % tr.accumulate != 0
    return {
        "format": 1,
        "model": tr.model_state_dict(),
        "optimizer": (distributed.full_optimizer_state(tr.model, tr.optimizer)
                      if tr._fsdp else tr.optimizer.state_dict()),
        "scheduler": tr._schedule.state_dict(),
        "precision": tr.precision.state_dict(),
        "state": state.state_dict(),
        "rng": capture_rng(),
        # In-flight gradients of an unfinished accumulation window.
        # (Under DDP/FSDP ranks stop only after a step: never mid-window.)
        "window_grads": window_grads(tr._runner.params) if mid_window else None,
        "pending_losses": (torch.stack([v.float() for v in tr._pending_losses]).cpu()
                           if tr._pending_losses else None),
        "pending_sizes": list(tr._pending_sizes),
        "pending_extras": [({k: v.cpu() for k, v in named.items()}, bs)
                           for named, bs in tr._pending_extras],
        # The GLOBAL batch: a run of 2 processes x 32 continues exactly in 1 x 64.
        "data": {"seed": tr.seed, "batch_size": tr.batch_size * tr._world,
                 "accumulate": tr.accumulate, "num_batches": tr._windows.num_batches},
    }


def save(tr: Trainer, best: bool = False) -> None:
    """Write a step checkpoint (and best.ckpt), agreed by every rank; no-op without run_dir."""
    if tr.run_dir is None:
        return

    def check() -> None:
        if tr._pending_losses and tr.nonfinite == "raise":
            # A non-finite loss not yet read must stop the run BEFORE its weights
            # are saved: otherwise keep_last would prune the good checkpoints away.
            # One host sync per checkpoint (saving syncs anyway).
            loop.check_finite(tr, tr.state)

    on_every_rank(tr, check)  # a nan on any rank stops all
    # Under FSDP gathering the payload is a collective: every rank takes part.
    state = payload(tr) if tr._folder is not None or tr._fsdp else None

    def write() -> None:
        if tr._folder is None:
            return  # a rank other than 0: rank 0 writes
        tr._last_checkpoint = tr._folder.save(state, tr.state.step)
        if best:
            tr._best_checkpoint = tr._folder.save_best(state)

    # Under DDP/FSDP no rank goes on before rank 0's file is in place (and pruned):
    # a rank that left earlier could read the folder while it changes.
    on_every_rank(tr, write)
    if not tr._saved and tr._dist is not None and several_machines():
        # A run's first checkpoint, on several machines: each must see rank 0's file,
        # or a resume would not find it there (a run directory on a local disk).
        # Failing, the run ends as one that wrote no checkpoint.
        path = tr._dist.from_rank0(lambda: tr._last_checkpoint)
        on_every_rank(tr, lambda: check_visible(path))
    tr._saved = True


def _exact_batch(saved: dict[str, Any], world: int) -> str:
    """The batch_size that continues a checkpoint exactly in ``world`` processes, when one does."""
    batch = saved.get("batch_size")
    if not isinstance(batch, int):
        return ""
    if batch % world:
        return (f"; its global batch of {batch} does not split over {world} processes: resume "
                f"in a number of processes that divides {batch}")
    each = "" if world == 1 else " per process"
    return (f"; its global batch is {batch} (batch_size x processes): pass batch_size="
            f"{batch // world}{each} to continue exactly in {world} process"
            + ("es" if world > 1 else ""))


def on_every_rank(tr: Trainer, action: Callable[[], Any]) -> Any:
    """``action()``; under DDP/FSDP on every rank, all raising when one fails."""
    return action() if tr._dist is None else tr._dist.agree(action)


def restore(tr: Trainer, resume: str | Path) -> dict[str, Any]:
    """Load everything from the checkpoint into memory (nothing is written); the saved RNG."""

    def newest() -> tuple[Path, str | None]:
        found = ckpt.resolve_resume(resume)
        return found, ckpt.digest(found)

    # Rank 0 picks the file and every rank loads that one, checked against rank 0's
    # checksum: ranks looking on their own could each find a different newest file.
    path, sha = newest() if tr._dist is None else tr._dist.from_rank0(newest)

    def read() -> dict[str, Any]:
        if tr._dist is not None and not tr._dist.is_main and several_machines():
            check_visible(path, wait_s=0)  # written long ago
        found = ckpt.load_checkpoint(path, sha)
        ckpt.check_model_compatible(tr.model, found["model"], path)
        return found

    data = on_every_rank(tr, read)
    if tr._fsdp:  # every rank read the file; each keeps its shard
        distributed.load_full_model_state(tr.model, data["model"])
    else:
        tr.model.load_state_dict(data["model"])
    loaders: dict[str, Callable[[Any], Any]] = {
        "optimizer": (functools.partial(distributed.load_full_optimizer_state, tr.model,
                                        tr.optimizer)
                      if tr._fsdp else tr.optimizer.load_state_dict),
        "scheduler": tr._schedule.load_state_dict,
        "precision": tr.precision.load_state_dict,
    }
    for name, load in loaders.items():
        try:
            load(data[name])
        except (ValueError, KeyError, TypeError, RuntimeError) as e:
            raise TrainwellError(
                f"checkpoint {path}: its {name} state does not fit this run's {name} "
                f"({str(e).splitlines()[0]}); resume with the same {name} settings",
                exit_code=1) from e
    tr.state.load_state_dict(data["state"])
    if data.get("window_grads") is not None:
        put_back = distributed.restore_sharded_grads if tr._fsdp else restore_window_grads
        put_back(tr._runner.params, data["window_grads"])
    if data.get("pending_losses") is not None:
        tr._pending_losses.extend(data["pending_losses"].to(tr.device).unbind())
        tr._pending_sizes.extend(data["pending_sizes"])
    for named, bs in data.get("pending_extras") or ():
        tr._pending_extras.append(({k: v.to(tr.device) for k, v in named.items()}, bs))
    saved = data.get("data", {})
    now = {"seed": tr.seed, "batch_size": tr.batch_size * tr._world,
           "accumulate": tr.accumulate,
           "num_batches": tr._windows.num_batches}
    changed = [f"{k} {saved[k]} -> {now[k]}" for k in now if k in saved and saved[k] != now[k]]
    if changed:
        warnings.warn(f"resuming {path} with a different data order ({', '.join(changed)}): "
                      "the run will not continue exactly"
                      + (_exact_batch(saved, tr._world)
                         if saved.get("batch_size") != now["batch_size"] else ""),
                      preflight.PreflightWarning, stacklevel=3)
    tr._last_checkpoint = path
    best = path.parent / f"best{ckpt.SUFFIX}"
    tr._best_checkpoint = best if best.is_file() else None
    return data["rng"]
