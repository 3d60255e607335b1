"""Follow the processes a watched script starts: each runs under its own watch and writes to the run directory.

``multiprocessing``'s ``BaseProcess.start`` is the one door every started
process goes through (``torch.multiprocessing.spawn`` / ``start_processes``
too, whatever the start method): there the process's target is wrapped in a
``FollowedTarget``. Under ``spawn``/``forkserver`` the wrapper is pickled
to the child and imports trainwell there; under ``fork`` the child inherits
the parent's installed hooks, which the wrapper removes before it installs
the child's own. Only targets the user wrote (and torch's spawn wrapper
around them) are followed: DataLoader workers and pool workers are not
training ranks and stay unwatched.
"""

from __future__ import annotations

import functools
import multiprocessing.process as mp_process
import sys
import tempfile
from typing import Any

from trainwell.runtime.hooks import Handle, Patch, remove_all
from trainwell.runtime.location import is_user_code
from trainwell.runtime.ranks import RankLog
from trainwell.runtime.session import Session, sampled


def followed(target: Any) -> bool:
    """Whether a process running ``target`` is a rank to watch: the user's own function, or torch's spawn wrapper."""
    if target is None:
        return False
    if getattr(target, "__module__", None) == "torch.multiprocessing.spawn" and getattr(target, "__name__", "") == "_wrap":
        return True
    function = target.func if isinstance(target, functools.partial) else target
    code = getattr(function, "__code__", None)
    return code is not None and is_user_code(code)


class Family:
    """This process's place in a run of many: its log in the run directory, and the door to the processes it starts.

    A top process (``directory`` None) makes the run directory when it starts its
    first followed process; until then it runs exactly as a single watch does.
    """

    def __init__(self, session: Session, codes: set[str], echo: Any, directory: str | None = None,
                 index: int | None = None) -> None:
        self.session, self.codes, self.echo = session, codes, echo
        self.directory = directory
        self.made_directory = False
        self.log: RankLog | None = None
        self.handles: list[Handle] = []
        if directory is not None:
            self._open(RankLog(directory, echo, index))

    def install(self, owner: Any) -> list[Handle]:
        """Wrap ``BaseProcess.start``; ``owner`` is the active watch (a forked child carries it over)."""
        original = mp_process.BaseProcess.start

        @functools.wraps(original)
        def start(process: Any) -> None:
            if followed(getattr(process, "_target", None)) and not isinstance(process._target, FollowedTarget):
                index = process._args[1] if getattr(process._target, "__name__", "") == "_wrap" else None
                process._target = FollowedTarget(process._target, self.run_directory(), sorted(self.codes), index,
                                                 owner)
            return original(process)

        return [Patch(mp_process.BaseProcess, "start", start)]

    def run_directory(self) -> str:
        """The run directory, made now (and this process's findings so far copied in) when it is the first child."""
        if self.directory is None:
            self.directory = tempfile.mkdtemp(prefix="trainwell-run-")
            self.made_directory = True
            log = RankLog(self.directory, self.echo)
            for finding in self.session.result():
                log.seen(finding)
            self._open(log)
        return self.directory

    def _open(self, log: RankLog) -> None:
        self.log = log
        self.session.sink = log.found

    def on_step_post(self, optimizer: Any) -> None:
        if self.log is not None and sampled(self.session.step):
            self.log.progress(self.session.step, self.session.hand_steps)

    def close(self, faults: list[str]) -> None:
        if self.log is not None:
            self.log.close(self.session.result(), self.session.step, self.session.hand_steps, faults)


class FollowedTarget:
    """A child process's target, run under a watch of its own that writes to the run directory."""

    def __init__(self, target: Any, directory: str, codes: list[str], index: int | None, inherited: Any) -> None:
        self.target, self.directory, self.codes, self.index = target, directory, codes, index
        self.inherited = inherited  # the parent's active watch: reaches the child only through fork

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "inherited": None}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from trainwell.runtime.location import hide_checker_frames
        from trainwell.runtime.run import ActiveWatch

        if self.inherited is not None:  # fork: the parent's hooks came along; this process gets its own
            remove_all(self.inherited.handles)
        active = ActiveWatch(set(self.codes), sys.stderr, record=False, directory=self.directory, index=self.index)
        try:
            result = self.target(*args, **kwargs)
        except BaseException as error:
            replacement = active.close(error)
            hide_checker_frames(error)
            if replacement is not None:
                raise replacement from error
            raise
        active.close(None)
        return result
