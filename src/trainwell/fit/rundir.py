"""A run directory belongs to one run: started empty, continued by resume, or replaced on request.

Two runs in one folder mix silently: a second run overwrites some checkpoints,
keeps others, appends to the first run's metrics, and a later resume picks up
the wrong one. So a folder that already holds a run is used only to continue
it (``resume`` inside it) or to replace it (``overwrite``: its files are
removed first). A folder with files trainwell did not write is never emptied.

Checking reads only; nothing is created before the run is known to be able to
start, and a run that fails before its first checkpoint removes what it made.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from trainwell.errors import TrainwellError

# What a run writes at its top level (loggers and curves included).
RUN_ENTRIES = ("checkpoints", "config.yaml", "metrics.csv", "steps.csv", "curves.png",
               "tensorboard", "mlflow.db")
NEW, RESUME, REPLACE = "new", "resume", "replace"


_FLAGS = {"run_dir": "--run-dir", "resume": "--resume"}


def _say(cli: bool, key: str, value: object = None) -> str:
    """An argument as the user typed it: ``--run-dir out`` in the CLI, ``run_dir='out'`` in Python."""
    if key == "overwrite":
        return "--overwrite" if cli else "overwrite=True"
    if cli:
        return _FLAGS[key] if value is None else f"{_FLAGS[key]} {value}"
    return key if value is None else f"{key}={str(value)!r}"


def run_dir_of(resume: str | Path) -> Path | None:
    """The run directory a resume source belongs to (a run folder, or ``X/checkpoints/f.ckpt``)."""
    path = Path(resume)
    if path.is_dir():
        return path
    if path.parent.name == "checkpoints":
        return path.parent.parent
    return None


def continues(run_dir: Path, resume: str | Path | None) -> bool:
    """Whether resuming from ``resume`` continues the run in ``run_dir`` (rather than starting one)."""
    if resume is None:
        return False
    source = run_dir_of(resume)
    return source is not None and source.resolve() == Path(run_dir).resolve()


def claim(run_dir: Path, resume: str | Path | None, overwrite: bool, cli: bool = False) -> str:
    """How this run may use ``run_dir``: NEW, RESUME or REPLACE; a TrainwellError if it may not.

    Reads the folder only. ``cli`` words the error with flags instead of arguments.
    """
    run_dir = Path(run_dir)
    where = _say(cli, "run_dir", run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise TrainwellError(f"{where} is a file, not a directory; pass a directory for the run")
    resuming = continues(run_dir, resume)
    if resuming and overwrite:
        raise TrainwellError(f"{_say(cli, 'overwrite')} would delete the run that "
                             f"{_say(cli, 'resume', resume)} continues; pass one of them")
    if resuming:
        return RESUME
    entries = sorted(p.name for p in run_dir.iterdir()) if run_dir.is_dir() else []
    if not entries:
        return NEW
    ours = [n + ("/" if (run_dir / n).is_dir() else "") for n in entries if n in RUN_ENTRIES]
    others = [n for n in entries if n not in RUN_ENTRIES]
    if others:
        what = "holds a run and files" if ours else "is not empty: it holds files"
        raise TrainwellError(f"{where} {what} that trainwell did not write and will not delete "
                             f"({_few(others)}); pass an empty or new {_say(cli, 'run_dir')}")
    if overwrite:
        return REPLACE
    again = _say(cli, "resume", run_dir) + ("" if cli else " to fit()")
    raise TrainwellError(
        f"{where} already holds a run ({_few(ours)}); pass {again} to continue it, "
        f"{_say(cli, 'overwrite')} to replace it, or another {_say(cli, 'run_dir')}")


def prepare(run_dir: Path, how: str) -> Path | None:
    """Make ``run_dir`` ready (REPLACE: the old run's files removed first).

    Returns the topmost folder created here (None if ``run_dir`` existed), so
    that a run failing before its first checkpoint can remove it again.
    """
    run_dir = Path(run_dir)
    if how == REPLACE:
        for name in RUN_ENTRIES:
            entry = run_dir / name
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            elif entry.exists() or entry.is_symlink():
                entry.unlink()
    created = None
    for folder in [run_dir, *run_dir.parents]:
        if folder.exists():
            break
        created = folder
    run_dir.mkdir(parents=True, exist_ok=True)
    return created


def discard(run_dir: Path, created: Path | None) -> None:
    """Remove what a run that failed before its first checkpoint wrote into ``run_dir``."""
    if created is not None:
        shutil.rmtree(created, ignore_errors=True)
        return
    for name in RUN_ENTRIES:
        entry = Path(run_dir) / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.exists() or entry.is_symlink():
            entry.unlink(missing_ok=True)


def _few(names: list[str], n: int = 4) -> str:
    shown = ", ".join(names[:n])
    return shown + (f", +{len(names) - n} more" if len(names) > n else "")
