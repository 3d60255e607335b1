"""Checkpoints: written atomically, verified by checksum, loaded safely.

File layout: one header line ``TRAINWELL-CHECKPOINT 1 sha256=<hex> size=<bytes>``
followed by the ``torch.save`` payload. Writing goes to a temporary file in
the same directory, flushed and fsync'ed, then ``os.replace``d over the final
name, so a crash leaves either the old file or the new one, never half of
one. Loading checks the size (truncation) and the hash (corruption) before
``torch.load(weights_only=True)`` sees a byte, so nothing in a checkpoint can
run code.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
from pathlib import Path
from typing import Any

import torch
from torch import nn

from trainwell.errors import TrainwellError

MAGIC = b"TRAINWELL-CHECKPOINT 1"
SUFFIX = ".ckpt"
_STEP_FILE = re.compile(r"^step-(\d+)\.ckpt$")


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, whole."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    try:  # make the rename itself durable
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save_checkpoint(path: Path, payload: dict[str, Any]) -> Path:
    """Serialize ``payload`` with a checksum header and write it atomically."""
    buf = io.BytesIO()
    torch.save(payload, buf)
    body = buf.getvalue()
    header = MAGIC + f" sha256={hashlib.sha256(body).hexdigest()} size={len(body)}\n".encode()
    write_atomic(Path(path), header + body)
    return Path(path)


def _problem(path: Path) -> tuple[str | None, bytes, str]:
    """Why the file at ``path`` is not a good checkpoint (None if it is), its payload and sha256."""
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        return f"cannot be read ({e.strerror})", b"", ""
    head, _, body = raw.partition(b"\n")
    m = re.fullmatch(rb"TRAINWELL-CHECKPOINT 1 sha256=([0-9a-f]{64}) size=(\d+)", head)
    if not raw.startswith(MAGIC) or m is None:
        return "is not a trainwell checkpoint (bad header)", b"", ""
    if len(body) != int(m.group(2)):
        return f"is truncated ({len(body)} of {int(m.group(2))} bytes)", b"", ""
    sha = hashlib.sha256(body).hexdigest()
    if sha != m.group(1).decode():
        return "is corrupt (checksum mismatch)", b"", sha
    return None, body, sha


def digest(path: Path) -> str | None:
    """The sha256 a checkpoint's header declares (None for a file that is not one).

    Reads only the header line: what ranks compare to know they load the same file.
    """
    try:
        with open(path, "rb") as f:
            head = f.readline(200)
    except OSError:
        return None
    m = re.match(rb"TRAINWELL-CHECKPOINT 1 sha256=([0-9a-f]{64}) ", head)
    return m.group(1).decode() if m else None


def is_good(path: Path) -> bool:
    """Whether ``path`` holds a whole, uncorrupted checkpoint."""
    return _problem(path)[0] is None


def load_checkpoint(path: Path, expected: str | None = None) -> dict[str, Any]:
    """Verify and load a checkpoint (``weights_only=True``, tensors on the CPU).

    ``expected``: the sha256 another rank read in the same file's header; a
    different one means the file changed between the two reads.
    Raises TrainwellError naming the file and the previous good checkpoint
    next to it, when there is one.
    """
    path = Path(path)
    if not path.is_file():
        raise TrainwellError(f"checkpoint {path} does not exist")
    problem, body, sha = _problem(path)
    if problem is None and expected is not None and sha != expected:
        problem = f"changed while the ranks read it (sha256 {sha[:12]}, rank 0 read {expected[:12]})"
    if problem is not None:
        previous = previous_good(path)
        hint = (f"; the previous good checkpoint is {previous}: resume from it"
                if previous else "; no earlier good checkpoint was found next to it")
        raise TrainwellError(f"checkpoint {path} {problem}{hint}", exit_code=1)
    try:
        return torch.load(io.BytesIO(body), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        # weights_only refused an object that would run code when unpickled.
        found = re.search(r"(?:unsupported|Unsupported) (?:GLOBAL|global:?) ?([\w.]+)", str(e))
        what = f" ({found.group(1)})" if found else ""
        raise TrainwellError(
            f"checkpoint {path} holds an object that would run code when loaded{what}; "
            "trainwell loads checkpoints with weights_only=True and refuses it: load only "
            "checkpoints you wrote, or re-save the state as tensors", exit_code=1) from None


def step_files(folder: Path) -> list[Path]:
    """The ``step-N.ckpt`` files of ``folder``, oldest first."""
    if not Path(folder).is_dir():
        return []
    found = [(int(m.group(1)), p) for p in Path(folder).iterdir()
             if (m := _STEP_FILE.match(p.name))]
    return [p for _, p in sorted(found)]


def previous_good(path: Path) -> Path | None:
    """The newest good step checkpoint older than ``path`` in the same folder."""
    files = step_files(path.parent)
    older = files[:files.index(path)] if path in files else files
    for candidate in reversed(older):
        if candidate != path and is_good(candidate):
            return candidate
    return None


def resolve_resume(resume: str | os.PathLike) -> Path:
    """The checkpoint to resume from: a file, or the newest in a run directory."""
    path = Path(resume)
    if path.is_file():
        return path
    for folder in (path / "checkpoints", path):
        files = step_files(folder)
        if files:
            return files[-1]
    raise TrainwellError(
        f"resume={str(resume)!r}: no checkpoint found (expected a .ckpt file or a run "
        "directory with checkpoints/step-N.ckpt)"
    )


def check_model_compatible(model: nn.Module, state: dict[str, torch.Tensor], source: Path,
                           what: str = "checkpoint",
                           fix: str = "resume with the same model definition") -> None:
    """Raise TrainwellError naming missing/unexpected keys and shape mismatches."""
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    shapes = [f"{k} {tuple(state[k].shape)} vs model {tuple(own[k].shape)}"
              for k in own if k in state and hasattr(state[k], "shape")
              and tuple(state[k].shape) != tuple(own[k].shape)]
    parts = []
    if missing:
        parts.append(f"missing keys {_few(missing)}")
    if unexpected:
        parts.append(f"unexpected keys {_few(unexpected)}")
    if shapes:
        parts.append(f"shape mismatch {_few(shapes)}")
    if parts:
        raise TrainwellError(
            f"{what} {source} does not fit this model: {'; '.join(parts)}; {fix}", exit_code=1)


def _few(items: list[str], n: int = 5) -> str:
    shown = ", ".join(items[:n])
    return shown + (f" (+{len(items) - n} more)" if len(items) > n else "")


class CheckpointFolder:
    """``run_dir/checkpoints``: step-N.ckpt files, best.ckpt, keep-last-k pruning."""

    def __init__(self, run_dir: Path, keep_last: int | None) -> None:
        self.folder = Path(run_dir) / "checkpoints"
        self.keep_last = keep_last

    def save(self, payload: dict[str, Any], step: int) -> Path:
        path = save_checkpoint(self.folder / f"step-{step:08d}{SUFFIX}", payload)
        self._prune()  # only after the new file is safely in place
        return path

    def save_best(self, payload: dict[str, Any]) -> Path:
        return save_checkpoint(self.folder / f"best{SUFFIX}", payload)

    def _prune(self) -> None:
        # Temporary files of a writer that was killed mid-write (never a good file).
        own = f".tmp-{os.getpid()}"
        for stale in self.folder.glob(".*.tmp-*"):
            if not stale.name.endswith(own):
                stale.unlink(missing_ok=True)
        if not self.keep_last or self.keep_last < 1:
            return
        for old in step_files(self.folder)[:-self.keep_last]:
            old.unlink(missing_ok=True)


def export_weights(model: nn.Module, path: str | os.PathLike) -> Path:
    """Write the model's weights (only) as safetensors: a format that cannot carry code."""
    from safetensors.torch import save_model

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_model(model, str(path))
    return path


def export_state(state: dict[str, torch.Tensor], path: str | os.PathLike) -> Path:
    """Write a whole state dict (e.g. gathered from FSDP shards) as safetensors."""
    from safetensors.torch import save_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in state.items()}, str(path))
    return path
