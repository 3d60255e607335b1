"""Run a test's subprocess in a session of its own; on timeout kill all of it: no orphans.

torchrun starts each worker in a new session, so killing torchrun's process
group would leave the workers running (a hung worker also ignores SIGTERM: it
sits in a collective). The descendants are found by parentage before anything
is killed, then each one's process group gets SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, from /proc (Linux)."""
    found: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended meanwhile
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the name may hold spaces
        found.setdefault(parent, []).append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    """Every process started, directly or not, by ``pid``."""
    children, out, todo = _children(), [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_all(pid: int) -> None:
    """SIGKILL ``pid``, everything it started, and their process groups (never ours)."""
    mine = os.getpgrp()
    for victim in [pid, *descendants(pid)]:
        try:
            group = os.getpgid(victim)
            if group != mine:
                os.killpg(group, signal.SIGKILL)
            else:
                os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run(command: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run(command, capture_output=True, text=True)``, killing the whole tree on timeout."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_all(proc.pid)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(command[-3:])}: no end after {timeout} s; every process it "
                    f"started was killed. stderr ends:\n{err[-3000:]}")
    return subprocess.CompletedProcess(command, proc.returncode, out, err)
