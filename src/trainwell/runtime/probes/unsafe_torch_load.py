"""TW502 unsafe-torch-load: a ``torch.load`` that unpickles arbitrary objects.

That is ``weights_only=False``, or a bare call where this PyTorch's default
still unpickles (before 2.6, or with TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD set).
"""

from __future__ import annotations

import os
from typing import Any

import torch

from trainwell.runtime.location import user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import OCCURRENCES


def _default_unpickles() -> bool:
    version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2] if part.isdigit())
    forced = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "").lower() in ("1", "true", "y", "yes")
    return version < (2, 6) or forced


class UnsafeTorchLoad(Probe):
    codes = ("TW502",)
    counts = OCCURRENCES

    def on_load(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        weights_only = kwargs.get("weights_only")
        if weights_only is False or (weights_only is None and _default_unpickles()):
            self.session.report(
                "TW502",
                "torch.load unpickles this file (weights_only is off): loading an untrusted checkpoint runs its code",
                user_location(),
                hint="pass weights_only=True (and save plain state_dicts), or use safetensors",
                step=self.session.step,  # steps completed: 0 reads "before training"
            )
