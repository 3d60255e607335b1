"""`trainwell fit --nproc N`: run the same command in N processes under torchrun.

torchrun (``python -m torch.distributed.run``) sets RANK, WORLD_SIZE, LOCAL_RANK
and the rendezvous address for each process; the Trainer then picks DDP up from
that environment (see distributed.py). ``--standalone`` finds a free port, so
two runs on one machine do not collide.

Several machines (``--nnodes N --node-rank R --rdzv-endpoint HOST:PORT``): the
same command runs on each, and their torchruns meet through the c10d
rendezvous at HOST:PORT. Node 0 hosts it (``is_host``, rather than torchrun's
guess from host names, which on one machine makes every node try); the
rendezvous, not R, orders the nodes, so global rank 0 may run on any of them
(what else differs on several machines: machines.py).

When workers fail, the user reads ONE summary: each failing worker writes its
one-line error into a folder the launcher made (``record_failure``) instead of
printing it, torchrun's own report (``ChildFailedError``, elastic logs) is kept
quiet, and the launcher prints the first failure by time. No torch import in
the launcher process: it only waits for its children.
"""

from __future__ import annotations

import dataclasses
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


# The flags that say how a command is launched: each worker runs the command without them.
LAUNCH_FLAGS = ("--nproc", "--nnodes", "--node-rank", "--rdzv-endpoint")


@dataclasses.dataclass(frozen=True)
class Nodes:
    """Several machines: how many, this one's index, and where they meet."""

    count: int
    rank: int
    endpoint: str  # HOST:PORT of node 0 (torchrun's c10d rendezvous)


def torchrun_command(nproc: int, program: Sequence[str], nodes: Nodes | None = None) -> list[str]:
    """The command line that runs ``program`` (``["-m", "trainwell", "fit", ...]`` or
    ``["script.py", ...]``) in ``nproc`` processes on this machine (of ``nodes``)."""
    return [sys.executable, "-m", "torch.distributed.run", *_torchrun_args(nproc, program, nodes)]


def agent_command(nproc: int, program: Sequence[str], nodes: Nodes | None = None) -> list[str]:
    """``torchrun_command`` through this module's agent: torchrun without its own failure report."""
    return [sys.executable, "-m", "trainwell.fit.launch", *_torchrun_args(nproc, program, nodes)]


def _torchrun_args(nproc: int, program: Sequence[str], nodes: Nodes | None) -> list[str]:
    if isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1:
        raise TrainwellError(f"--nproc {nproc!r}: must be a positive integer (processes on this machine)")
    if nodes is None:
        return ["--standalone", f"--nproc-per-node={nproc}", *program]
    # torchrun reads --node-rank only for its static rendezvous; under c10d it says
    # who hosts the rendezvous store (and so where --rdzv-endpoint must point).
    return [f"--nnodes={nodes.count}", f"--nproc-per-node={nproc}", "--rdzv-backend=c10d",
            f"--rdzv-endpoint={nodes.endpoint}", f"--rdzv-conf=is_host={int(nodes.rank == 0)}",
            *program]


def worker_argv(argv: Sequence[str], command: str) -> list[str]:
    """``argv`` from ``command`` on, without the launch flags (``--nproc N``, ``--nnodes N``, ...):
    what each worker runs. argparse took abbreviations (``--npro 2``): they go too."""
    argv = list(argv)
    rest = argv[argv.index(command) + 1:]
    kept: list[str] = []
    skip = False
    for item in rest:
        name, equals, _ = item.partition("=")
        launch_flag = len(name) > 2 and any(flag.startswith(name) for flag in LAUNCH_FLAGS)
        if skip:
            skip = False
        elif launch_flag:
            skip = not equals  # "--nproc 2": its value goes too; "--nproc=2" is one item
        else:
            kept.append(item)
    return ["-m", "trainwell", command, *kept]


def child_environment() -> dict[str, str]:
    """This environment without a surrounding launcher's rank variables."""
    env = dict(os.environ)
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", FAILURES):
        env.pop(key, None)
    return env


def launch(nproc: int, program: Sequence[str], nodes: Nodes | None = None) -> int:
    """Run ``program`` under torchrun with ``nproc`` processes (on each of ``nodes``); the
    first failure, if any, becomes one ``TrainwellError`` with that worker's exit code."""
    if "WORLD_SIZE" in os.environ and "TORCHELASTIC_RUN_ID" in os.environ:
        raise TrainwellError("--nproc given inside a torchrun process; drop --nproc (torchrun "
                             "already started the processes)")
    command = agent_command(nproc, program, nodes)
    env = child_environment()
    # Share the cores out (torchrun would pin each worker to 1 thread, with a banner).
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // nproc)))
    with tempfile.TemporaryDirectory(prefix="trainwell-failures-") as failures:
        env[FAILURES] = failures
        code = wait(subprocess.Popen(command, env=env))
        first = first_failure(Path(failures))
    if first is not None:
        rank, worker_code, message = first
        if rank is None:  # this machine's torchrun itself (the rendezvous): it says where
            raise TrainwellError(message, exit_code=worker_code)
        world = nproc * (nodes.count if nodes else 1)
        raise TrainwellError(f"rank {rank} of {world}: {message}", exit_code=worker_code)
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


def record_failure(message: str, code: int, agent: bool = False) -> bool:
    """In a worker of ``launch`` (or its torchrun, ``agent``): leave the error for the
    launcher (True), else False."""
    folder, rank = os.environ.get(FAILURES), os.environ.get("RANK")
    if not folder or (rank is None and not agent) or not Path(folder).is_dir():
        return False
    final = Path(folder) / f"{time.time_ns():020d}-{'agent' if agent else f'rank{rank}'}"
    partial = final.with_suffix(".partial")
    try:
        partial.write_text(f"{code}\n{message}")
        partial.rename(final)  # the launcher never reads half a message
    except OSError:
        return False
    return True


def first_failure(folder: Path) -> tuple[int | None, int, str] | None:
    """(rank, exit code, message) of the earliest failure recorded in ``folder``
    (rank None: the torchrun agent's own)."""
    records = sorted(p for p in folder.iterdir() if not p.name.endswith(".partial"))
    if not records:
        return None
    code, _, message = records[0].read_text().partition("\n")
    who = records[0].name.rpartition("-")[2]
    return (int(who[4:]) if who.startswith("rank") else None), int(code), message


def _quiet_torchrun(argv: list[str]) -> int:
    """torchrun, minus its own failure report: the workers' errors are the launcher's to print."""
    import logging

    logging.disable(logging.CRITICAL)  # this agent process only; the workers log as usual
    # Nor c10d's C++ log of each try to reach the rendezvous (read when torch loads; the
    # workers, which inherit this environment, keep their own level).
    level = os.environ.get("TORCH_CPP_LOG_LEVEL")
    os.environ["TORCH_CPP_LOG_LEVEL"] = "FATAL"
    import torch  # noqa: F401

    if level is None:
        del os.environ["TORCH_CPP_LOG_LEVEL"]
    else:
        os.environ["TORCH_CPP_LOG_LEVEL"] = level
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.elastic.rendezvous.api import RendezvousError
    from torch.distributed.run import parse_args, run

    args = parse_args(argv)
    try:
        run(args)
    except ChildFailedError as error:
        code = error.get_first_failure()[1].exitcode
        return 128 - code if code < 0 else code  # -9: killed by SIGKILL -> 137, as a shell says
    except SignalException as error:
        return 128 + int(error.sigval)
    except KeyboardInterrupt:
        return 130
    except RendezvousError as error:  # the machines never met, or lost their meeting point
        message = rendezvous_problem(error, args.rdzv_endpoint, args.nnodes,
                                     "is_host=1" in (args.rdzv_conf or ""))
        if not record_failure(message, 1, agent=True):
            print(f"trainwell: error: {message}", file=sys.stderr)
        return 1
    return 0


def rendezvous_problem(error: Exception, endpoint: str, nnodes: str, host: bool) -> str:
    """One line for a rendezvous that failed: what happened at ``endpoint`` and what to check."""
    from torch.distributed.elastic.rendezvous.api import (
        RendezvousConnectionError,
        RendezvousTimeoutError,
    )

    cause = str(error.__cause__ or error).strip().splitlines()
    why = f" ({cause[0]})" if cause else ""
    if isinstance(error, RendezvousTimeoutError):
        return (f"the rendezvous at {endpoint} timed out: not all {nnodes} machines joined; start "
                "the same command on each, with its own --node-rank (a machine that failed before "
                "joining printed its own error)")
    if isinstance(error, RendezvousConnectionError) and host:
        return (f"--node-rank 0 cannot host the rendezvous at {endpoint}{why}: run node 0 on that "
                "host, with a free port")
    if isinstance(error, RendezvousConnectionError):
        return (f"cannot reach the rendezvous at {endpoint}{why}: node 0 (--node-rank 0) hosts "
                "it; is it running on that host, with the port open to this machine? (if it "
                "ended, it printed why)")
    return f"the rendezvous at {endpoint} failed: {type(error).__name__}{why}"


if __name__ == "__main__":
    sys.exit(_quiet_torchrun(sys.argv[1:]))
