"""`trainwell.watch`: watch a block of training code (or a function) and
collect the silent bugs it commits, as `Finding` objects.

Example:
    >>> import trainwell
    >>> with trainwell.watch() as w:          # doctest: +SKIP
    ...     train(model, loader)
    >>> [f.code for f in w.findings]          # doctest: +SKIP
"""

from __future__ import annotations

from contextlib import ContextDecorator
from types import TracebackType
from typing import Any, TextIO

from trainwell.catalog import RUNTIME, enabled_codes, validate_patterns
from trainwell.diagnostic import Finding
from trainwell.errors import TrainwellError


class watch(ContextDecorator):  # noqa: N801 - used like a function: `with trainwell.watch():`
    """Watch training code run and report the catalog's runtime bug classes.

    Args:
        select: codes or prefixes to report (default: every default-enabled runtime code).
        ignore: codes or prefixes not to report.
        strict: raise `TrainwellError` (exit code 1) at the end of the block if anything was found.
        echo: a stream that gets each finding's first occurrence when it happens (None: silent).
        record: keep per-step learning rate, loss and gradient norm (for ``--plot``).
        follow: watch the processes the block starts too (``torch.multiprocessing.spawn``,
            ``multiprocessing.Process``): after the block, ``findings`` are merged over every
            process, one per bug, ``extra["ranks"]`` naming who saw it, and ``steps`` is the
            most any process made.

    After the block, ``findings`` holds the findings (first step seen, count;
    ``extra["count_of"]`` says whether the count is of every occurrence or of
    the sampled ones), ``steps`` the number of training steps (optimizer steps
    and hand-written updates of parameters under ``no_grad``), ``hand_steps``
    how many of them were hand-written, ``faults`` any internal probe error,
    ``ranks`` the labels of the processes that were watched (empty for one process).
    Used as a decorator, each call of the function is watched anew.

    Limit: a function imported by name *before* the block
    (``from torch.nn.utils import clip_grad_norm_``) keeps pointing at the
    original, so those calls are not seen; ``trainwell run`` installs its
    hooks before the script runs and has no such blind spot.
    """

    def __init__(
        self,
        select: list[str] | None = None,
        ignore: list[str] | None = None,
        strict: bool = False,
        echo: TextIO | None = None,
        record: bool = False,
        follow: bool = False,
    ) -> None:
        try:
            validate_patterns(list(select or []) + list(ignore or []))
        except ValueError as error:
            raise TrainwellError(str(error)) from None
        self.codes = enabled_codes(select, ignore, RUNTIME)
        self.strict = strict
        self.echo = echo
        self.record = record
        self.follow = follow
        self.directory: str | None = None  # a run directory made by another process (a torchrun rank's): not merged here
        self.ranks: list[str] = []
        self.complete = True  # False: some followed process ended without closing its watch (steps: a lower bound)
        self.findings: list[Finding] = []
        self.steps = 0
        self.hand_steps = 0
        self.faults: list[str] = []
        self.history: Any = None
        self._active: Any = None

    def __enter__(self) -> watch:
        from trainwell.runtime.run import ActiveWatch  # torch is imported here, not at `import trainwell`

        if self._active is not None:
            raise TrainwellError("this watch() is already active; nest a new trainwell.watch() instead")
        self._active = ActiveWatch(self.codes, self.echo, self.record, self.follow, self.directory)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        from trainwell.runtime.location import hide_checker_frames

        active, self._active = self._active, None
        replacement = active.close(exc)
        if exc is not None:
            hide_checker_frames(exc)
        self.findings, self.steps, self.faults, self.history = active.findings, active.steps, active.faults, active.history
        self.hand_steps = active.hand_steps
        family = active.family
        if family is not None and family.made_directory:
            self._merge(family.directory)
        if replacement is not None:
            raise replacement.with_traceback(tb) from exc
        if exc is None and self.strict and self.findings:
            codes = ", ".join(sorted({f.code for f in self.findings}))
            raise TrainwellError(f"{len(self.findings)} finding(s) ({codes}); see the messages above or watch().findings", exit_code=1)
        return False

    def _merge(self, directory: str) -> None:
        import shutil

        from trainwell.runtime.ranks import merge

        run = merge(directory)
        shutil.rmtree(directory, ignore_errors=True)
        self.findings, self.steps, self.hand_steps, self.faults = run.findings, run.steps, run.hand_steps, run.faults
        self.ranks, self.complete = run.ranks, run.complete
