"""One run, many processes: where each watched process of a `trainwell run` writes its findings, and the
merge of them into one report.

Every watched process (the script's own, each rank that torchrun,
``torch.multiprocessing.spawn`` or ``multiprocessing`` starts) appends JSON
lines to its own file in the run's directory: a line per finding when it is
first seen (so a rank that crashes or is killed loses nothing found until
then), and a last line with every finding's count and the step count when
its watch ends. The first process to see a bug echoes it (an ``O_EXCL``
marker file per bug decides, no lock and no collective); the run's top
process merges the files: one finding per bug, with the ranks that saw it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from trainwell.diagnostic import Finding

RUN_DIR_ENV = "TRAINWELL_RUN_DIR"  # set by the run's top process for the processes it starts


def _dist_rank() -> int | None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        try:
            return dist.get_rank()
        except Exception:  # noqa: BLE001 - a group being torn down
            return None
    return None


def _dist_world() -> int:
    import torch.distributed as dist

    try:
        return dist.get_world_size()
    except Exception:  # noqa: BLE001
        return 1


class RankLog:
    """This process's file in the run directory; the session's sink for new findings.

    ``index`` is the process's place among its siblings when its starter says
    so (``torch.multiprocessing.spawn``'s process index); the rank it reports is
    the process group's rank once one exists, else ``RANK`` from the
    environment (torchrun), else ``index``.
    """

    def __init__(self, directory: str, echo: TextIO | None, index: int | None = None, name: str | None = None) -> None:
        self.directory = directory
        self.echo = echo
        self.name = name or ("main" if index is None else f"process {index}")
        env_rank = os.environ.get("RANK")
        self.rank: int | None = int(env_rank) if env_rank and env_rank.isdigit() else index
        self.from_group = False
        self.many = index is not None or os.environ.get("WORLD_SIZE", "1") not in ("", "0", "1")  # echo names the rank
        self.path = os.path.join(directory, f"{os.getpid()}-{time.monotonic_ns()}.jsonl")
        self._write({"kind": "start", "pid": os.getpid(), "name": self.name, "rank": self.rank})

    def note_rank(self) -> None:
        """Take the process group's rank while a group exists (it may be destroyed before the end)."""
        if not self.from_group:
            rank = _dist_rank()
            if rank is not None:
                self.rank, self.from_group = rank, True
                self.many = self.many or _dist_world() > 1

    def progress(self, steps: int, hand_steps: int) -> None:
        """The step count so far (written on sampled steps: a rank that leaves by ``os._exit`` still counts)."""
        self.note_rank()
        self._write({"kind": "steps", "rank": self.rank, "steps": steps, "hand_steps": hand_steps})

    def found(self, finding: Finding) -> None:
        """A new finding in this process: written now; echoed when no other process echoed it first."""
        self.note_rank()
        self._write({"kind": "finding", "rank": self.rank, "finding": _dump(finding)})
        if self.echo is not None and self._first_sight(finding):
            from trainwell.runtime.session import echo_finding

            echo_finding(finding, self.echo, f"{self.label}: " if self.many else "")

    @property
    def label(self) -> str:
        return self.name if self.rank is None else f"rank {self.rank}"

    def seen(self, finding: Finding) -> None:
        """Record a finding this process already echoed before it started writing here."""
        self._write({"kind": "finding", "rank": self.rank, "finding": _dump(finding)})
        self._first_sight(finding)

    def close(self, findings: list[Finding], steps: int, hand_steps: int, faults: list[str]) -> None:
        self.note_rank()
        self._write({"kind": "end", "rank": self.rank, "steps": steps, "hand_steps": hand_steps, "faults": faults,
                     "findings": [_dump(f) for f in findings]})

    def _first_sight(self, finding: Finding) -> bool:
        key = hashlib.sha1(f"{finding.code}|{finding.path}|{finding.line}".encode()).hexdigest()[:20]
        try:
            os.close(os.open(os.path.join(self.directory, f"{key}.seen"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        except OSError:
            return True
        return True

    def _write(self, record: dict[str, Any]) -> None:
        try:  # one write per line, appended and flushed: a kill between lines loses no line already written
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
        except OSError as error:
            print(f"trainwell: cannot write to the run directory {self.directory!r}: {error.strerror}", file=sys.stderr)


_KEYS = ("code", "message", "path", "line", "hint", "step", "count")


def _dump(finding: Finding) -> dict[str, Any]:
    return {**{key: getattr(finding, key) for key in _KEYS}, "count_of": finding.extra.get("count_of")}


@dataclass
class Process:
    """What one watched process left in the run directory."""

    name: str
    rank: int | None
    pid: int
    ended: bool = False
    steps: int = 0
    hand_steps: int = 0
    faults: list[str] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name if self.rank is None else f"rank {self.rank}"


@dataclass
class MergedRun:
    """The run's one report: its findings (``extra["ranks"]``: who saw each), steps, and processes."""

    findings: list[Finding]
    steps: int
    hand_steps: int
    faults: list[str]
    processes: list[Process]

    @property
    def complete(self) -> bool:
        """Whether every process ended its watch (one that crashed or left by ``os._exit`` counted only sampled steps)."""
        return all(p.ended for p in self.processes)

    @property
    def ranks(self) -> list[str]:
        """The labels of the processes that trained, when more than one process was watched."""
        return [p.label for p in self.processes] if len(self.processes) > 1 else []


def read_processes(directory: str) -> list[Process]:
    """Every process file in ``directory``; a line cut short by a kill is skipped."""
    processes = []
    for entry in sorted(os.listdir(directory)):
        if not entry.endswith(".jsonl"):
            continue
        process: Process | None = None
        partial: list[dict[str, Any]] = []
        with open(os.path.join(directory, entry), encoding="utf-8") as handle:
            for text in handle:
                try:
                    record = json.loads(text)
                except ValueError:
                    continue
                if record["kind"] == "start":
                    process = Process(record["name"], record["rank"], record["pid"])
                elif process is None:
                    continue
                elif record["kind"] == "finding":
                    process.rank = record["rank"] if record["rank"] is not None else process.rank
                    partial.append(record["finding"])
                elif record["kind"] == "steps" and not process.ended:
                    process.rank = record["rank"] if record["rank"] is not None else process.rank
                    process.steps, process.hand_steps = record["steps"], record["hand_steps"]
                elif record["kind"] == "end":
                    process.rank = record["rank"] if record["rank"] is not None else process.rank
                    process.ended, process.steps, process.hand_steps = True, record["steps"], record["hand_steps"]
                    process.faults, process.findings = record["faults"], record["findings"]
        if process is not None:
            if not process.ended:
                process.findings = partial  # killed or crashed: what it wrote as found, each counted once
            processes.append(process)
    return sorted(processes, key=lambda p: (p.rank is None, p.rank if p.rank is not None else 0, p.pid))


def merge(directory: str) -> MergedRun:
    """One finding per bug (code, file, line) over every process: the first step, the summed count, the ranks."""
    everyone = read_processes(directory)
    # a launcher that only starts the ranks (mp.spawn's parent, torchrun's) is not one of the run's ranks
    processes = [p for p in everyone if p.steps or p.findings] or everyone[:1]
    merged: dict[tuple[str, str, int], Finding] = {}
    for process in processes:
        for item in process.findings:
            key = (item["code"], item["path"], item["line"])
            finding = merged.get(key)
            if finding is None:
                finding = Finding(item["code"], item["message"], item["path"], item["line"], hint=item["hint"],
                                  step=item["step"], count=0)
                finding.extra.update(count_of=item["count_of"], ranks=[])
                merged[key] = finding
            finding.count += item["count"]
            if item["step"] is not None and (finding.step is None or item["step"] < finding.step):
                finding.step = item["step"]
            if process.label not in finding.extra["ranks"]:
                finding.extra["ranks"].append(process.label)
    findings = sorted(merged.values(), key=lambda f: (f.step or 0, f.path, f.line, f.code))
    faults = [f"{p.label}: {fault}" if len(processes) > 1 else fault for p in processes for fault in p.faults]
    steps = max((p.steps for p in processes), default=0)
    hand_steps = max((p.hand_steps for p in processes), default=0)
    return MergedRun(findings, steps, hand_steps, faults, processes)


def ranks_text(labels: list[str]) -> str:
    """"on ranks 0 and 1", "on rank 1", "in main and process 2"."""
    ranks = [label.removeprefix("rank ") for label in labels if label.startswith("rank ")]
    if len(ranks) == len(labels):
        return f"on rank{'s' if len(ranks) > 1 else ''} {_and(ranks)}"
    return f"in {_and(labels)}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
