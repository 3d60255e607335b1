"""`trainwell fit --nproc N`: run the same command in N processes under torchrun.

torchrun (``python -m torch.distributed.run``) sets RANK, WORLD_SIZE, LOCAL_RANK
and the rendezvous address for each process; the Trainer then picks DDP up from
that environment (see distributed.py). ``--standalone`` finds a free port, so
two runs on one machine do not collide.

When workers fail, the user reads ONE summary: each failing worker writes its
one-line error into a folder the launcher made (``record_failure``) instead of
printing it, torchrun's own report (``ChildFailedError``, elastic logs) is kept
quiet, and the launcher prints the first failure by time. No torch import in
the launcher process: it only waits for its children.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from trainwell.errors import TrainwellError

FAILURES = "TRAINWELL_FAILURE_DIR"  # where the workers of one launch leave their errors


def torchrun_command(nproc: int, program: Sequence[str]) -> list[str]:
    """The command line that runs ``program`` (``["-m", "trainwell", "fit", ...]`` or
    ``["script.py", ...]``) in ``nproc`` processes on this machine."""
    return [sys.executable, "-m", "torch.distributed.run", *_torchrun_args(nproc, program)]


def agent_command(nproc: int, program: Sequence[str]) -> list[str]:
    """``torchrun_command`` through this module's agent: torchrun without its own failure report."""
    return [sys.executable, "-m", "trainwell.fit.launch", *_torchrun_args(nproc, program)]


def _torchrun_args(nproc: int, program: Sequence[str]) -> list[str]:
    if isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1:
        raise TrainwellError(f"--nproc {nproc!r}: must be a positive integer (processes on this machine)")
    return ["--standalone", f"--nproc-per-node={nproc}", *program]


def worker_argv(argv: Sequence[str], command: str) -> list[str]:
    """``argv`` from ``command`` on, without ``--nproc N``: what each worker runs."""
    argv = list(argv)
    rest = argv[argv.index(command) + 1:]
    kept: list[str] = []
    skip = False
    for item in rest:
        if skip:
            skip = False
        elif item == "--nproc":
            skip = True
        elif not item.startswith("--nproc="):
            kept.append(item)
    return ["-m", "trainwell", command, *kept]


def child_environment() -> dict[str, str]:
    """This environment without a surrounding launcher's rank variables."""
    env = dict(os.environ)
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", FAILURES):
        env.pop(key, None)
    return env


def launch(nproc: int, program: Sequence[str]) -> int:
    """Run ``program`` under torchrun with ``nproc`` processes; the first failure, if any,
    becomes one ``TrainwellError`` with that worker's exit code."""
    if "WORLD_SIZE" in os.environ and "TORCHELASTIC_RUN_ID" in os.environ:
        raise TrainwellError("--nproc given inside a torchrun process; drop --nproc (torchrun "
                             "already started the processes)")
    command = agent_command(nproc, program)
    env = child_environment()
    # Share the cores out (torchrun would pin each worker to 1 thread, with a banner).
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // nproc)))
    with tempfile.TemporaryDirectory(prefix="trainwell-failures-") as failures:
        env[FAILURES] = failures
        code = wait(subprocess.Popen(command, env=env))
        first = first_failure(Path(failures))
    if first is not None:
        rank, worker_code, message = first
        raise TrainwellError(f"rank {rank} of {nproc}: {message}", exit_code=worker_code)
    if code not in (0, 130, 143):  # 130/143: stopped by a signal, the run said so itself
        raise TrainwellError(f"--nproc {nproc}: a worker process ended with exit code {code} "
                             "before reporting an error (killed? out of memory?)", exit_code=1)
    return code


def wait(proc: subprocess.Popen[bytes]) -> int:
    """The launched agent's exit code; SIGTERM passed on, Ctrl-C waited through."""
    # SIGTERM to this launcher goes on to torchrun, which passes it to every worker:
    # each finishes its step, the ranks agree, rank 0 checkpoints. (Ctrl-C reaches
    # all of them already: they share the terminal's process group.)
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: proc.send_signal(signum))
    try:
        while True:
            try:
                return proc.wait()
            except KeyboardInterrupt:
                continue  # the workers got the same SIGINT; wait for their checkpoint
    finally:
        signal.signal(signal.SIGTERM, previous)


def record_failure(message: str, code: int) -> bool:
    """In a worker of ``launch``: leave the error for the launcher (True), else False."""
    folder, rank = os.environ.get(FAILURES), os.environ.get("RANK")
    if not folder or rank is None or not Path(folder).is_dir():
        return False
    final = Path(folder) / f"{time.time_ns():020d}-rank{rank}"
    partial = final.with_suffix(".partial")
    try:
        partial.write_text(f"{code}\n{message}")
        partial.rename(final)  # the launcher never reads half a message
    except OSError:
        return False
    return True


def first_failure(folder: Path) -> tuple[int, int, str] | None:
    """(rank, exit code, message) of the earliest failure recorded in ``folder``."""
    records = sorted(p for p in folder.iterdir() if not p.name.endswith(".partial"))
    if not records:
        return None
    code, _, message = records[0].read_text().partition("\n")
    return int(records[0].name.rpartition("-rank")[2]), int(code), message


def _quiet_torchrun(argv: list[str]) -> int:
    """torchrun, minus its own failure report: the workers' errors are the launcher's to print."""
    import logging

    logging.disable(logging.CRITICAL)  # this agent process only; the workers log as usual
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    try:
        run(parse_args(argv))
    except ChildFailedError as error:
        code = error.get_first_failure()[1].exitcode
        return 128 - code if code < 0 else code  # -9: killed by SIGKILL -> 137, as a shell says
    except SignalException as error:
        return 128 + int(error.sigval)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(_quiet_torchrun(sys.argv[1:]))
