"""Run a test's subprocess in a session of its own; on timeout kill all of it: no orphans.

torchrun starts each worker in a new session, so killing torchrun's process
group would leave the workers running (a hung worker also ignores SIGTERM: it
sits in a collective). The descendants are found by parentage before anything
is killed, then each one's process group gets SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
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


def run_together(commands: list[list[str]], timeout: float, **kwargs) -> list[subprocess.CompletedProcess]:
    """``run`` for commands that must run at once (the machines of one job): all end within
    ``timeout``, or every process any of them started is killed."""
    with contextlib.ExitStack() as stack:  # files, not pipes: none waits on a full pipe
        files = [(stack.enter_context(tempfile.TemporaryFile("w+")),
                  stack.enter_context(tempfile.TemporaryFile("w+"))) for _ in commands]
        started = [subprocess.Popen(command, stdout=out, stderr=err, text=True,
                                    start_new_session=True, **kwargs)
                   for command, (out, err) in zip(commands, files)]
        deadline, timed_out = time.monotonic() + timeout, False
        try:
            for proc in started:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            for proc in started:
                if proc.poll() is None:  # an ended (reaped) one's pid may be another's now
                    kill_all(proc.pid)
        done = []
        for proc, command, (out, err) in zip(started, commands, files):
            proc.wait()
            out.seek(0)
            err.seek(0)
            done.append(subprocess.CompletedProcess(command, proc.returncode, out.read(), err.read()))
    if timed_out:
        stderr = "\n".join(d.stderr[-1500:] for d in done)
        pytest.fail(f"{len(commands)} commands: no end after {timeout} s; every process they "
                    f"started was killed. stderr ends:\n{stderr}")
    return done
