"""One active watch: the session, the probes, the bus and the installed hooks."""

from __future__ import annotations

from typing import Any, TextIO

from trainwell.runtime.children import Family
from trainwell.runtime.events import Bus
from trainwell.runtime.hand_updates import HandUpdates
from trainwell.runtime.hooks import install, remove_all
from trainwell.runtime.probes import discover
from trainwell.runtime.session import Session


class ActiveWatch:
    """Installed on construction; ``close()`` finishes the probes and removes every hook."""

    def __init__(self, codes: set[str], echo: TextIO | None, record: bool, follow: bool = False,
                 directory: str | None = None, index: int | None = None) -> None:
        """``follow``: watch the processes the code starts too (``trainwell run``), writing to ``directory``
        (made at the first child when None); ``index``: this process's place among its siblings."""
        classes = [cls for cls in discover() if codes & set(cls.codes)]
        self.session = Session(codes, echo, {code: cls.counts for cls in classes for code in cls.codes})
        self.family = Family(self.session, codes, echo, directory, index) if follow or directory else None
        self.probes = [cls(self.session) for cls in classes]
        self.recorder = None
        if record:
            from trainwell.runtime.plot import StepRecorder

            self.recorder = StepRecorder(self.session)
        hand_updates = HandUpdates(self.session)  # first: the step it reveals is counted before the event
        subscribers: list[Any] = [hand_updates, self.session, *self.probes]
        if self.family is not None:
            subscribers.append(self.family)
        if self.recorder is not None:
            subscribers.append(self.recorder)
        self.bus = Bus(subscribers)
        hand_updates.bus = self.bus
        self.handles = install(self.bus, quiet_scheduler_warning="TW105" in codes)
        if self.family is not None:
            self.handles += self.family.install(self)
        self.findings: list[Any] = []
        self.steps = 0
        self.hand_steps = 0
        self.faults: list[str] = []
        self.history: Any = None

    def close(self, error: BaseException | None) -> BaseException | None:
        """Finish the probes, remove the hooks; return an exception to raise instead of ``error``."""
        replacement = None
        try:
            if error is not None:
                for callback in list(self.bus.failure):  # type: ignore[attr-defined]
                    try:
                        replacement = callback(error) or replacement
                    except Exception as fault:  # noqa: BLE001
                        self.bus.failure.fault(callback, fault)  # type: ignore[attr-defined]
            for callback in list(self.bus.finish):  # type: ignore[attr-defined]
                try:
                    callback()
                except Exception as fault:  # noqa: BLE001
                    self.bus.finish.fault(callback, fault)  # type: ignore[attr-defined]
        finally:
            remove_all(self.handles)
        self.findings = self.session.result()
        self.steps = self.session.step
        self.hand_steps = self.session.hand_steps
        self.faults = list(self.bus.faults)
        if self.family is not None:
            self.family.close(self.faults)
        if self.recorder is not None:
            self.history = self.recorder.history()
        return replacement
