"""Check that a training setup resumes exactly: the test users otherwise run by accident.

Train ``steps`` optimizer steps straight; train again, stop after ``stop_at``
steps (as a SIGTERM would: ``request_stop`` at the end of the step, a
checkpoint written), resume from that run directory in a fresh Trainer and
finish. The two final model and optimizer states must be bitwise equal; the
report names the first tensor that is not, with its largest difference.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

from trainwell.errors import TrainwellError
from trainwell.fit.callbacks import Callback


@dataclasses.dataclass
class Difference:
    """The first tensor that differs between the straight and the resumed run."""

    name: str
    max_abs_diff: float
    detail: str = ""


@dataclasses.dataclass
class ResumeReport:
    """What ``verify_resume`` found."""

    steps: int
    stop_at: int
    compared: int  # tensors compared (model + optimizer state)
    first_difference: Difference | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.first_difference is None

    def summary(self) -> str:
        how = f"{self.steps} steps straight vs {self.stop_at} + {self.steps - self.stop_at} resumed"
        if self.ok:
            return (f"resume is exact: {how}; {self.compared} tensors (model and optimizer "
                    f"state) bitwise equal ({self.seconds:.1f} s)")
        d = self.first_difference
        return (f"resume is NOT exact: {how}; first difference in {d.name}: "
                f"{d.detail or f'max abs diff {d.max_abs_diff:.3g}'}")


class _StopAt(Callback):
    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, trainer: Any, state: Any) -> None:
        if state.step == self.step:
            trainer.request_stop()


def verify_resume(make_trainer: Callable[[], Any], train_data: Any, steps: int,
                  stop_at: int | None = None, val_data: Any = None,
                  workdir: str | Path | None = None) -> ResumeReport:
    """Train ``steps`` straight and ``stop_at`` + resume; compare the final states bitwise.

    Args:
        make_trainer: builds a FRESH Trainer (new model, optimizer, scheduler,
            same seed) on each call; its run_dir and max_steps are overridden.
        train_data, val_data: as for ``Trainer.fit``.
        steps: optimizer steps of the whole run.
        stop_at: where the interrupted run stops (default: steps // 2 + 1).
        workdir: where the two run directories go (default: a temporary folder).

    Example:
        >>> report = verify_resume(lambda: Trainer(make_model(), opt, loss=nn.MSELoss(),
        ...                        progress=False), (x, y), steps=20, stop_at=7)
        >>> report.ok
        True
    """
    stop_at = steps // 2 + 1 if stop_at is None else stop_at
    if not 0 < stop_at < steps:
        raise TrainwellError(f"stop_at={stop_at}: must be between 1 and {steps - 1} (steps - 1)")
    started = time.perf_counter()
    with _folder(workdir) as root:
        straight = _run(make_trainer, root / "straight", steps, None, train_data, val_data)
        cut = _run(make_trainer, root / "resumed", steps, stop_at, train_data, val_data)
        if cut.state.step != stop_at:
            raise TrainwellError(
                f"the interrupted run ended at step {cut.state.step}, before stop_at={stop_at} "
                f"(early stopping, or fewer batches than steps needs); pass "
                f"stop_at={max(1, cut.state.step - 1)} or less")
        resumed = _run(make_trainer, root / "resumed", steps, None, train_data, val_data,
                       resume=root / "resumed")
        ran = straight.state.step
        if resumed.state.step != ran:
            first: Difference | None = Difference(
                "state.step", abs(resumed.state.step - ran),
                f"the straight run made {ran} steps, the resumed one {resumed.state.step}")
            compared = 0
        else:
            first, compared = first_difference(_states(straight.trainer), _states(resumed.trainer))
    return ResumeReport(steps=ran, stop_at=stop_at, compared=compared,
                        first_difference=first, seconds=time.perf_counter() - started)


@dataclasses.dataclass
class _Done:
    trainer: Any
    state: Any


def _run(make_trainer: Callable[[], Any], run_dir: Path, steps: int, stop_at: int | None,
         train_data: Any, val_data: Any, resume: Path | None = None) -> _Done:
    trainer = make_trainer()
    trainer.run_dir = run_dir
    trainer.max_steps = steps
    if stop_at is not None:
        trainer.callbacks = [*trainer.callbacks, _StopAt(stop_at)]
    result = trainer.fit(train_data, val_data, resume=resume)
    return _Done(trainer, result.state)


@contextlib.contextmanager
def _folder(workdir: str | Path | None) -> Iterator[Path]:
    if workdir is not None:
        Path(workdir).mkdir(parents=True, exist_ok=True)
        yield Path(workdir)
        return
    with tempfile.TemporaryDirectory(prefix="trainwell-verify-") as tmp:
        yield Path(tmp)


def _states(trainer: Any) -> Iterator[tuple[str, Any]]:
    """(name, value) of every model tensor, then of the optimizer state."""
    for name, value in trainer.model.state_dict().items():
        yield f"model.{name}", value
    yield from _flatten("optimizer", trainer.optimizer.state_dict())


def _flatten(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _flatten(f"{prefix}.{key}", item)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _flatten(f"{prefix}.{i}", item)
    else:
        yield prefix, value


def first_difference(a: Iterator[tuple[str, Any]], b: Iterator[tuple[str, Any]]
                     ) -> tuple[Difference | None, int]:
    """The first entry of two named state streams that is not bitwise equal, and the count."""
    left, right = dict(a), dict(b)
    for name in sorted(left.keys() ^ right.keys()):
        if name not in left or name not in right:
            return Difference(name, float("nan"), "present in only one run"), 0
    compared = 0
    for name, x in left.items():
        y = right[name]
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            compared += 1
            if x.dtype != y.dtype or x.shape != y.shape:
                return Difference(name, float("nan"),
                                  f"{x.dtype}{tuple(x.shape)} vs {y.dtype}{tuple(y.shape)}"), compared
            if not torch.equal(x, y):
                diff = (x.double() - y.double()).abs()
                return Difference(name, float(diff.max())), compared
        elif x != y and not (x != x and y != y):  # plain values; nan equals nan here
            return Difference(name, float("nan"), f"{x!r} vs {y!r}"), compared
    return None, compared
