"""Files checked in worker processes (``trainwell check --jobs N``), results in the order given.

The runner reads every file and answers what the cache holds; the files left
go to N processes. Where the platform can fork (Linux), each worker starts as
a copy of the runner: the project index built once, the rules imported once,
nothing re-read or pickled on the way in. Elsewhere (spawn) the fixed
arguments are pickled once per worker. Results come back in the order the
files were given, so the report is byte for byte the one-process report.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from trainwell.errors import TrainwellError

# Fewer files than this per worker: the pool's start (a fork and an import per worker) costs
# more than it saves, so they are checked in this process.
MIN_FILES_PER_JOB = 4
# The cyclic collector's thresholds while the language server checks edits: a file's syntax tree and facts are freed by reference
# counting when its check ends, so the default (a young collection every 700 new objects, which walks them) mostly
# finds nothing, and each full collection walks every object alive (about 9% of a check's time on the eight-repository
# benchmark, measured with these thresholds against the defaults).
_THRESHOLDS = (20_000, 20, 20)

_task: tuple[Callable[..., Any], tuple[Any, ...]] | None = None  # in a worker: the function and its fixed arguments


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def map_in_order(fn: Callable[..., Any], fixed: tuple[Any, ...], items: Sequence[tuple[Any, ...]], jobs: int) -> list[Any]:
    """``[fn(*fixed, *item) for item in items]``, on up to ``jobs`` processes."""
    with collections_between_items():
        return _map(fn, fixed, items, jobs)


@contextlib.contextmanager
def collections_between_items() -> Iterator[None]:
    """No automatic collection while the items are worked on; after each one, its garbage cycles are collected and
    what it leaves alive (the parses kept for importers, the results) is frozen, never walked again. The collector
    otherwise walks a file's syntax tree once as a young object and again as a middle-aged one (about 9% of a
    check's time on the eight-repository benchmark); this walks only what one item left, once."""
    enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect cycles less often (the language server's whole life: each edit's facts are freed when the next
    check starts); the objects alive before (the imported modules) are never walked. A long-lived process freezes
    nothing else: an index dropped on a save would stay frozen, never collected (``check`` uses
    :func:`collections_between_items`)."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _map(fn: Callable[..., Any], fixed: tuple[Any, ...], items: Sequence[tuple[Any, ...]], jobs: int) -> list[Any]:
    workers = min(jobs, len(items) // MIN_FILES_PER_JOB)
    if workers <= 1:
        return [_settled(fn, fixed, item) for item in items]
    # imported here: a check of a few files (pre-commit, an editor's save) never starts a pool, nor pays for its import
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method), initializer=_start,
                                 initargs=(fn, fixed)) as pool:
            # small chunks: one large file must not leave the other workers idle at the end
            return list(pool.map(_call, items, chunksize=max(1, min(8, len(items) // (workers * 16)))))
    except BrokenProcessPool:  # a worker was killed (out of memory, a crash in a C extension)
        raise TrainwellError("a checker process died while checking files; rerun with --jobs 1 to see on which "
                             "file (and please report it)", exit_code=1) from None


def _start(fn: Callable[..., Any], fixed: tuple[Any, ...]) -> None:
    global _task
    _task = (fn, fixed)
    gc.disable()  # a spawned worker starts with the collector on (a forked one inherits the runner's settings)
    gc.freeze()


def _call(item: tuple[Any, ...]) -> Any:
    fn, fixed = _task  # type: ignore[misc]
    return _settled(fn, fixed, item)


def _settled(fn: Callable[..., Any], fixed: tuple[Any, ...], item: tuple[Any, ...]) -> Any:
    """``fn(*fixed, *item)``, then the item's garbage cycles collected and what stays alive frozen (see
    :func:`collections_between_items`)."""
    try:
        return fn(*fixed, *item)
    finally:
        gc.collect(1)
        gc.freeze()
