"""TW502 unsafe-torch-load: a ``torch.load`` that unpickles arbitrary objects.

That is ``weights_only=False``, or a bare call where this PyTorch's default
still unpickles (before 2.6, or with TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD set).
A round trip is left alone: a file (path or file object) that the same
function wrote with ``torch.save`` before it loads it (a test of pickling)
carries nothing untrusted. A file that other code wrote stands for what
another run wrote, and is reported.
"""

from __future__ import annotations

import os
import sys
from types import CodeType
from typing import Any

import torch

from trainwell.runtime.location import is_user_code, user_location
from trainwell.runtime.probes import Probe
from trainwell.runtime.session import OCCURRENCES


def _default_unpickles() -> bool:
    version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2] if part.isdigit())
    forced = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "").lower() in ("1", "true", "y", "yes")
    return version < (2, 6) or forced


class UnsafeTorchLoad(Probe):
    codes = ("TW502",)
    counts = OCCURRENCES

    def __init__(self, session: Any) -> None:
        super().__init__(session)
        # what torch.save wrote -> the user function that wrote it
        self.saved_paths: dict[str, CodeType | None] = {}
        self.saved_files: dict[int, tuple[Any, CodeType | None]] = {}  # id -> (file object, kept so ids stay unique)

    def on_save(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        target, writer = _target(args, kwargs, "f", 1), _user_code()
        if isinstance(target, (str, os.PathLike)):
            self.saved_paths[os.path.abspath(os.fspath(target))] = writer
        elif target is not None:
            self.saved_files[id(target)] = (target, writer)

    def on_load(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        source, reader = _target(args, kwargs, "f", 0), _user_code()
        if isinstance(source, (str, os.PathLike)):
            if self.saved_paths.get(os.path.abspath(os.fspath(source)), False) is reader:
                return  # a round trip inside one function
        elif source is not None and self.saved_files.get(id(source), (None, False)) == (source, reader):
            return
        weights_only = kwargs.get("weights_only")
        if weights_only is False or (weights_only is None and _default_unpickles()):
            self.session.report(
                "TW502",
                "torch.load unpickles this file (weights_only is off): loading an untrusted checkpoint runs its code",
                user_location(),
                hint="pass weights_only=True (and save plain state_dicts), or use safetensors",
                step=self.session.step,  # steps completed: 0 reads "before training"
            )


def _target(args: tuple[Any, ...], kwargs: dict[str, Any], name: str, position: int) -> Any:
    return kwargs[name] if name in kwargs else args[position] if len(args) > position else None


def _user_code() -> CodeType | None:
    frame = sys._getframe(1)
    while frame is not None and not is_user_code(frame.f_code):
        frame = frame.f_back  # type: ignore[assignment]
    return frame.f_code if frame is not None else None
