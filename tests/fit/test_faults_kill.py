"""SIGKILL at random moments, some inside checkpoint writes: the run still ends bitwise exact.

One training run (240 optimizer steps, a checkpoint after every step, keep_last=2)
is killed at least 20 times; each time it is resumed from its run directory.
After every kill every ``.ckpt`` in the folder must load, and the newest step
checkpoint must exist once one was ever written. The final model and optimizer
state must equal an uninterrupted run's bitwise. Kill times come from a seeded
``random.Random``; each delay is drawn around (remaining steps / remaining kills)
at the speed the uninterrupted run measured, so kills spread over the whole run
on a fast or a slow machine. Processes are forked from a zygote that imported
torch once (see fault_zygote.py).
"""

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import torch

from trainwell.fit import checkpoint as ckpt
from trainwell.fit.verify import first_difference

ZYGOTE = Path(__file__).with_name("fault_zygote.py")
KILLS = 22
IN_WRITE_SHARE = 0.5  # of the kills, this share waits for a temporary checkpoint file
EPOCHS = 30
STEPS = EPOCHS * 8  # see fault_zygote.py


class Zygote:
    def __init__(self) -> None:
        env = dict(os.environ, OMP_NUM_THREADS="1", TW_EPOCHS=str(EPOCHS))
        # Its own session: the watchdog kills the zygote and its forked children together.
        self.proc = subprocess.Popen([sys.executable, str(ZYGOTE)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env,
                                     start_new_session=True)
        self.watchdog = threading.Timer(150, self.kill)  # a hang fails, never blocks
        self.watchdog.start()

    def start(self, run_dir: Path, stall: int = 0) -> int:
        self.proc.stdin.write(f"run {run_dir} {stall}\n")
        self.proc.stdin.flush()
        kind, pid = self.proc.stdout.readline().split()
        assert kind == "pid"
        return int(pid)

    def wait(self, pid: int) -> int:
        line = self.proc.stdout.readline().split()
        assert line[:2] == ["exit", str(pid)], line
        return int(line[2])

    def close(self) -> None:
        self.watchdog.cancel()
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_for_stall(folder: Path, pid: int, deadline: float) -> None:
    """Until a temporary file of ``pid`` stays 30 ms: the stalled write (a normal one takes ~3 ms)."""
    own = f".tmp-{pid}"
    while time.perf_counter() < deadline:
        try:
            names = {e.name for e in os.scandir(folder) if e.name.endswith(own)}
        except FileNotFoundError:
            names = set()
        if names:
            time.sleep(0.03)
            if names & {e.name for e in os.scandir(folder)}:
                return


def check_loadable(run_dir: Path, ever_saved: bool) -> bool:
    """Every .ckpt loads; once a step checkpoint existed, a newest one still does."""
    folder = run_dir / "checkpoints"
    files = sorted(folder.glob("*.ckpt")) if folder.is_dir() else []
    for f in files:
        ckpt.load_checkpoint(f)  # raises on a truncated, corrupt or unsafe file
    steps = ckpt.step_files(folder)
    assert steps or not ever_saved, "the run directory lost its latest checkpoint"
    if steps:
        assert ckpt.resolve_resume(run_dir) == steps[-1]
    return bool(steps)


def final_state(run_dir: Path) -> dict:
    return ckpt.load_checkpoint(ckpt.resolve_resume(run_dir))


def test_sigkill_at_random_moments_resumes_bitwise(tmp_path):
    rng = random.Random(1202)
    zygote = Zygote()
    try:
        pid = zygote.start(tmp_path / "straight")
        started = time.perf_counter()
        while not ckpt.step_files(tmp_path / "straight" / "checkpoints"):
            time.sleep(0.001)
        startup = time.perf_counter() - started  # fork, build, first step and save
        assert zygote.wait(pid) == 0
        per_step = (time.perf_counter() - started - startup) / STEPS

        run_dir = tmp_path / "killed"
        kills = in_write = 0
        at: list[int] = []  # the newest checkpoint's step after each kill
        ever_saved = False
        while True:
            if kills >= KILLS:
                pid = zygote.start(run_dir)
                assert zygote.wait(pid) == 0
                break
            steps = ckpt.step_files(run_dir / "checkpoints")
            done = ckpt.load_checkpoint(steps[-1])["state"]["step"] if steps else 0
            budget = (STEPS - done) / (KILLS - kills + 1)  # in steps
            if rng.random() < IN_WRITE_SHARE:  # inside the n-th write (one write per step)
                pid = zygote.start(run_dir, stall=rng.randint(1, max(1, int(budget))))
                wait_for_stall(run_dir / "checkpoints", pid, time.perf_counter() + 10)
            else:
                pid = zygote.start(run_dir)
                time.sleep(startup + rng.uniform(0.2, 1.2) * budget * per_step)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # it ended already; the status below says how
                pass
            status = zygote.wait(pid)
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
                f"the run ended before kill {kills + 1} (status {status})")
            kills += 1
            in_write += any(run_dir.glob(f"checkpoints/.*.tmp-{pid}"))
            ever_saved = check_loadable(run_dir, ever_saved)
            steps = ckpt.step_files(run_dir / "checkpoints")
            at.append(ckpt.load_checkpoint(steps[-1])["state"]["step"] if steps else 0)
    finally:
        zygote.close()

    print(f"kills {kills}, in writes {in_write}, {per_step * 1000:.1f} ms per step, "
          f"startup {startup * 1000:.0f} ms, at {at}")
    assert kills >= 20 and in_write >= 3, (kills, in_write)
    # the kills interrupted a run that moved: spread over it, not piled at its start
    assert len(set(at)) >= 15 and max(at) >= STEPS // 2, at
    straight, resumed = final_state(tmp_path / "straight"), final_state(run_dir)
    assert resumed["state"]["step"] == straight["state"]["step"] == STEPS
    for part in ("model", "optimizer"):
        diff, compared = first_difference(iter(straight[part].items()) if part == "model"
                                          else _flat(straight[part]),
                                          iter(resumed[part].items()) if part == "model"
                                          else _flat(resumed[part]))
        assert diff is None and compared > 0, (part, diff)
    assert torch.equal(straight["rng"]["torch"], resumed["rng"]["torch"])


def _flat(state: dict):
    from trainwell.fit.verify import _flatten

    return _flatten("optimizer", state)
