"""TW403 device-mismatch: PyTorch's "not on the same device" error, raised again
with the user's line, the tensors of that line's frame and their devices.

Only the failure path runs: no per-step cost. The original error is kept
as ``__cause__``.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from trainwell.runtime.location import traceback_user_frame
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import OCCURRENCES, display_path

_MISMATCH = re.compile(r"same device|expected device|different from other tensors on", re.IGNORECASE)
_MAX_NAMES = 6


def _tensors_in(frame_locals: dict[str, Any]) -> list[tuple[str, torch.device]]:
    """Tensors among a frame's variables (and one level into dicts, lists, tuples), with their devices."""
    found: list[tuple[str, torch.device]] = []
    for name, value in frame_locals.items():
        if isinstance(value, torch.Tensor):
            found.append((name, value.device))
        elif isinstance(value, dict):
            found += [(f"{name}[{k!r}]", v.device) for k, v in value.items() if isinstance(v, torch.Tensor)]
        elif isinstance(value, (list, tuple)) and len(value) <= 8:
            found += [(f"{name}[{i}]", v.device) for i, v in enumerate(value) if isinstance(v, torch.Tensor)]
    return found


def _model_devices(frame_locals: dict[str, Any]) -> list[tuple[str, torch.device]]:
    found = []
    for name, value in frame_locals.items():
        if isinstance(value, torch.nn.Module):
            param = next(value.parameters(), None)
            if param is not None:
                found.append((name, param.device))
    return found


class DeviceMismatch(Probe):
    codes = ("TW403",)
    counts = OCCURRENCES

    def on_failure(self, error: BaseException) -> BaseException | None:
        if not isinstance(error, RuntimeError) or not _MISMATCH.search(str(error)):
            return None
        found = traceback_user_frame(error.__traceback__)
        where = (found[0].f_code.co_filename, found[1]) if found else None
        frame_locals = dict(found[0].f_locals) if found else {}
        models = _model_devices(frame_locals)
        model_devices = {device for _, device in models}
        tensors = _tensors_in(frame_locals)
        strays = [(n, d) for n, d in tensors if model_devices and d not in model_devices]
        shown = strays or tensors
        described = ", ".join(f"`{n}` on {d}" for n, d in shown[:_MAX_NAMES]) or "(no tensor variable found on that line's frame)"
        if models:
            described += "; " + ", ".join(f"model `{n}` on {d}" for n, d in models[:_MAX_NAMES])
        place = f"{display_path(where[0])}:{where[1]}" if where else "an unknown line"
        message = f"device mismatch at {place}: {described}. Move the batch and its labels to the model's device (x.to(device))"
        self.session.report("TW403", message, where, hint="move every input and target to the model's device before the forward call")
        return RuntimeError(message)

