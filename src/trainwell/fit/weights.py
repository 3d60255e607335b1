"""Trained weights out of trainwell: a run's checkpoint as safetensors, and loading them back.

A trainwell checkpoint is not a ``torch.load`` file: it starts with a text
header line (its checksum) and holds the whole training state. ``trainwell
export`` (or ``export_run``) writes the model's weights alone as safetensors,
a format that carries no code; ``load_weights`` reads that file, or a
checkpoint directly, into a model of plain PyTorch.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.fit import checkpoint as ckpt


def run_checkpoint(run: str | os.PathLike, which: str | None = None) -> Path:
    """The checkpoint to export from ``run`` (a run directory or a .ckpt file).

    ``which``: "best" (``checkpoints/best.ckpt``), "last" (the newest step
    checkpoint) or None (best when the run has one, else last).
    """
    path = Path(run)
    if path.is_file():
        if which is not None:
            raise TrainwellError(f"{path} is a checkpoint file; --best/--last choose within a run "
                                 "directory: pass the run directory, or the file alone")
        return path
    if not path.is_dir():
        raise TrainwellError(f"{path}: no such run directory or checkpoint file")
    best = path / "checkpoints" / f"best{ckpt.SUFFIX}"
    if which == "best" or (which is None and best.is_file()):
        if not best.is_file():
            raise TrainwellError(f"{path} has no best checkpoint ({best}: the monitored value was "
                                 "never recorded, e.g. a run without validation); use --last")
        return best
    return ckpt.resolve_resume(path)


def export_run(run: str | os.PathLike, out: str | os.PathLike,
               which: str | None = None) -> tuple[Path, dict[str, Any]]:
    """Write the model weights of ``run``'s checkpoint to ``out`` as safetensors.

    Returns the checkpoint read and its training state (epoch, step).
    """
    source = run_checkpoint(run, which)
    data = ckpt.load_checkpoint(source)
    ckpt.export_state(_unshared(data["model"]), out)
    return source, data.get("state", {})


def _unshared(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Tied weights (one storage under two names) as separate tensors: safetensors refuses
    shared storage, and loading them back re-ties nothing that was not tied by the model."""
    seen: set[tuple[int, int]] = set()
    out = {}
    for name, tensor in state.items():
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset())
        out[name] = tensor.clone() if key in seen else tensor
        seen.add(key)
    return out


def load_weights(path: str | os.PathLike, model: nn.Module) -> nn.Module:
    """Load weights into ``model``: a safetensors file (``trainwell export``) or a trainwell
    checkpoint (``.ckpt``, read verified and with ``weights_only=True``). Returns the model.

    Example:
        >>> model = load_weights("model.safetensors", MyModel())  # doctest: +SKIP
    """
    path = Path(path)
    if not path.is_file():
        raise TrainwellError(f"load_weights: {path} does not exist; pass a .safetensors file "
                             "(trainwell export RUN_DIR -o model.safetensors) or a .ckpt file")
    if ckpt.digest(path) is not None:
        state = ckpt.load_checkpoint(path)["model"]
    else:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            state = load_file(str(path))
        except SafetensorError as e:
            raise TrainwellError(f"load_weights: {path} is neither a safetensors file nor a trainwell "
                                 f"checkpoint ({str(e).splitlines()[0]})") from None
    ckpt.check_model_compatible(model, state, path, "weights file",
                                "build the model the weights were trained with")
    model.load_state_dict(state)
    return model
