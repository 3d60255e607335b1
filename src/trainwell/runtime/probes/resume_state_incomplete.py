"""TW112 resume-state-incomplete: a checkpoint holds the training state, and the run goes on
without it.

When ``torch.load`` reads a checkpoint, the probe reads it too (weights only,
memory-mapped for a file, from the same position for an open stream) and
notes what training state it holds: an optimizer state with moments (its
parameter count), a scheduler's position, a GradScaler's scale. Then, at the
first step after the load:

- an optimizer of the same parameter count that keeps state (Adam and kin,
  SGD with momentum) stepping with empty state has restarted its moments;
- a scheduler still at ``last_epoch`` 0 when it first steps after the load,
  while the checkpoint saved a later position, has restarted its schedule;
- a GradScaler scaling at its initial scale while the checkpoint saved another.

Reported once, at the end of the run, on the ``torch.load`` line. A stateless
optimizer (plain SGD), a new optimizer over other parameters (fine-tuning) and
state restored in any way (the optimizer has state at its first step) are
silent.
"""

from __future__ import annotations

import io
import os
from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_STATEFUL = ("Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop", "SparseAdam",
             "Adafactor", "LBFGS")
_MAX_DEPTH = 3


def held_state(obj: Any, depth: int = 0) -> dict[str, Any]:
    """What training state a loaded checkpoint holds: optimizer parameter count, scheduler position, scaler scale."""
    found: dict[str, Any] = {}
    if not isinstance(obj, dict) or depth > _MAX_DEPTH:
        return found
    if isinstance(obj.get("state"), dict) and isinstance(obj.get("param_groups"), list) and obj["state"]:
        found["optimizer"] = sum(len(g.get("params", [])) for g in obj["param_groups"] if isinstance(g, dict))
    elif isinstance(obj.get("last_epoch"), int) and obj["last_epoch"] > 0 and "base_lrs" in obj:
        found["scheduler"] = obj["last_epoch"]
    elif "scale" in obj and "growth_factor" in obj:
        found["scaler"] = float(obj["scale"])
    else:
        for value in obj.values():
            for key, held in held_state(value, depth + 1).items():
                found.setdefault(key, held)
    return found


def _keeps_state(optimizer: torch.optim.Optimizer) -> bool:
    if type(optimizer).__name__ in _STATEFUL:
        return True
    return any(group.get("momentum", 0) for group in optimizer.param_groups)


class ResumeStateIncomplete(Probe):
    codes = ("TW112",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.reading = False
        self.loaded: tuple[dict[str, Any], Location | None, int] | None = None  # (held, where, step at the load)
        self.lost: list[str] = []
        self.seen_step = self.seen_scheduler = self.seen_scaler = False

    def on_load(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self.reading:
            return  # our own read
        source = args[0] if args else kwargs.get("f")
        held = self._read(source)
        if held:
            self.loaded = (held, user_location(), self.session.step)
            self.seen_step = self.seen_scheduler = self.seen_scaler = False

    def _read(self, source: Any) -> dict[str, Any]:
        self.reading = True
        try:
            if isinstance(source, (str, os.PathLike)):
                return held_state(torch.load(source, map_location="cpu", weights_only=True, mmap=True))
            if isinstance(source, io.IOBase) and source.seekable():
                position = source.tell()
                try:
                    return held_state(torch.load(source, map_location="cpu", weights_only=True))
                finally:
                    source.seek(position)
        except Exception:  # noqa: BLE001 - a file we cannot read safely is not judged
            return {}
        finally:
            self.reading = False
        return {}

    def on_step_pre(self, optimizer: torch.optim.Optimizer, closure: Any) -> None:
        if self.loaded is None or self.seen_step:
            return
        self.seen_step = True
        held = self.loaded[0]
        count = sum(len(group["params"]) for group in optimizer.param_groups)
        if held.get("optimizer") == count and _keeps_state(optimizer) and not optimizer.state:
            self.lost.append(f"{type(optimizer).__name__} steps with empty state (its moments restarted from zero; the "
                             f"checkpoint holds them for its {count} parameters)")

    def on_scheduler_step(self, scheduler: Any) -> None:
        if self.loaded is None or self.seen_scheduler or "scheduler" not in self.loaded[0]:
            return
        self.seen_scheduler = True
        if getattr(scheduler, "last_epoch", None) == 0:  # (seen before its step: a fresh scheduler is at 0)
            self.lost.append(f"{type(scheduler).__name__} restarted at step 0 (the checkpoint saved it at "
                             f"{self.loaded[0]['scheduler']})")

    def on_scaler_scale(self, scaler: Any, loss: Any, scaled: Any) -> None:
        if self.loaded is None or self.seen_scaler or "scaler" not in self.loaded[0] or not scaler.is_enabled():
            return
        self.seen_scaler = True
        current, saved = scaler.get_scale(), self.loaded[0]["scaler"]
        if current == getattr(scaler, "_init_scale", None) and saved != current:
            self.lost.append(f"GradScaler restarted at its initial scale {current:g} (the checkpoint saved {saved:g})")

    def on_finish(self) -> None:
        if self.loaded is None or not self.lost:
            return
        self.session.report(
            "TW112",
            f"the run goes on from this checkpoint without its training state: {'; '.join(self.lost)}",
            self.loaded[1],
            hint="load every object's state when resuming: optimizer.load_state_dict(...), "
                 "scheduler.load_state_dict(...), scaler.load_state_dict(...)",
            step=self.loaded[2] + 1,
        )
