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
- a GradScaler scaling at its initial scale while the checkpoint saved another;
- a checkpoint of a model-only resume (a state dict that covers every
  parameter of the stepping optimizer, and a position such as ``epoch`` > 0,
  but no optimizer saved) whose run then restarts a schedule (a scheduler
  still at 0 at its first step): the schedule, and a stateful optimizer
  stepping with empty state, restarted. Without a scheduler the same
  checkpoint may serve a fine-tuning with a new optimizer: silent.

Reported once, at the end of the run, on the ``torch.load`` line. A stateless
optimizer (plain SGD), a new optimizer over other parameters (fine-tuning) and
state restored in any way (the optimizer has state at its first step) are
silent, and so is a checkpoint without a position (pretrained weights) or
one that covers only part of the optimizer's parameters (a new head).
"""

from __future__ import annotations

import io
import os
from collections import Counter
from typing import Any

import torch

from trainwell.runtime.location import Location, user_location
from trainwell.runtime.probes import Probe

_STATEFUL = ("Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop", "SparseAdam",
             "Adafactor", "LBFGS")
_MAX_DEPTH = 3
# top-level keys that say where a saved run was: a checkpoint holding one of them (> 0) is a resume point
_POSITIONS = ("epoch", "step", "global_step", "iteration", "iter", "start_epoch", "epochs", "steps")


def held_state(obj: Any, depth: int = 0) -> dict[str, Any]:
    """What training state a loaded checkpoint holds: optimizer parameter count, scheduler position, scaler scale."""
    found: dict[str, Any] = {}
    if not isinstance(obj, dict) or depth > _MAX_DEPTH:
        return found
    if depth == 0:
        position = next((obj[k] for k in _POSITIONS if isinstance(obj.get(k), int) and not isinstance(obj.get(k), bool)
                         and obj[k] > 0), None)
        if position is not None:
            found["position"] = position
    if obj and all(isinstance(value, torch.Tensor) for value in obj.values()):
        found["model"] = sorted(tuple(value.shape) for value in obj.values())
    elif isinstance(obj.get("state"), dict) and isinstance(obj.get("param_groups"), list):
        found["optimizer saved"] = True  # even empty (saved before its first step): it is restored by design
        if obj["state"]:
            found["optimizer"] = sum(len(g.get("params", [])) for g in obj["param_groups"] if isinstance(g, dict))
    elif isinstance(obj.get("last_epoch"), int) and obj["last_epoch"] > 0 and "base_lrs" in obj:
        found["scheduler"] = obj["last_epoch"]
    elif "scale" in obj and "growth_factor" in obj:
        found["scaler"] = float(obj["scale"])
    else:
        for value in obj.values():
            for key, held in held_state(value, depth + 1).items():
                if key != "position":
                    found.setdefault(key, held)
    return found


def _keeps_state(optimizer: torch.optim.Optimizer) -> bool:
    if type(optimizer).__name__ in _STATEFUL:
        return True
    return any(group.get("momentum", 0) for group in optimizer.param_groups)


def _holds_all(shapes: list[tuple[int, ...]], optimizer: torch.optim.Optimizer) -> bool:
    """Whether a saved state dict with tensors of ``shapes`` covers every parameter ``optimizer`` holds (the
    whole model, not a backbone for a new head)."""
    left = Counter(shapes)
    for group in optimizer.param_groups:
        for param in group["params"]:
            shape = tuple(param.shape)
            if not left[shape]:
                return False
            left[shape] -= 1
    return bool(shapes)


class ResumeStateIncomplete(Probe):
    codes = ("TW112",)

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        self.reading = False
        self.loaded: tuple[dict[str, Any], Location | None, int] | None = None  # (held, where, step at the load)
        self.lost: list[str] = []
        self.seen_step = self.seen_scheduler = self.seen_scaler = False
        self.model_resumed = False  # the checkpoint held this optimizer's whole model and a position, no optimizer
        self.fresh_moments = ""  # what a model-only resume lost in the optimizer, said when the schedule restarts too

    def on_load(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self.reading:
            return  # our own read
        source = args[0] if args else kwargs.get("f")
        held = self._read(source)
        if held:
            self.loaded = (held, user_location(), self.session.step)
            self.seen_step = self.seen_scheduler = self.seen_scaler = self.model_resumed = False
            self.fresh_moments = ""

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
        elif "optimizer saved" not in held and "position" in held and _holds_all(held.get("model", []), optimizer):
            self.model_resumed = True  # a resume or a fine-tuning: a schedule restarted from 0 tells (below)
            if _keeps_state(optimizer) and not optimizer.state:
                self.fresh_moments = (f"{type(optimizer).__name__} steps with empty state (the checkpoint holds the "
                                      "model but no optimizer state: its moments restarted from zero)")

    def on_scheduler_step(self, scheduler: Any) -> None:
        if self.loaded is None or self.seen_scheduler:
            return
        held = self.loaded[0]
        if "scheduler" not in held and not self.model_resumed:
            return
        self.seen_scheduler = True
        if getattr(scheduler, "last_epoch", None) == 0:  # (seen before its step: a fresh scheduler is at 0)
            if "scheduler" in held:
                self.lost.append(f"{type(scheduler).__name__} restarted at step 0 (the checkpoint saved it at "
                                 f"{held['scheduler']})")
                return
            if self.fresh_moments:
                self.lost.append(self.fresh_moments)
            self.lost.append(f"{type(scheduler).__name__} restarted at step 0 while the checkpoint is at position "
                             f"{held['position']} and holds the model only")

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
