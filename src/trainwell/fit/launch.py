"""`trainwell fit --nproc N`: run the same command in N processes under torchrun.

torchrun (``python -m torch.distributed.run``) sets RANK, WORLD_SIZE, LOCAL_RANK
and the rendezvous address for each process; the Trainer then picks DDP up from
that environment (see distributed.py). ``--standalone`` finds a free port, so
two runs on one machine do not collide. No torch import here: the launcher
process only waits for its children.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence

from trainwell.errors import TrainwellError


def torchrun_command(nproc: int, program: Sequence[str]) -> list[str]:
    """The command line that runs ``program`` (``["-m", "trainwell", "fit", ...]`` or
    ``["script.py", ...]``) in ``nproc`` processes on this machine."""
    if isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1:
        raise TrainwellError(f"--nproc {nproc!r}: must be a positive integer (processes on this machine)")
    return [sys.executable, "-m", "torch.distributed.run", "--standalone",
            f"--nproc-per-node={nproc}", *program]


def child_environment() -> dict[str, str]:
    """This environment without a surrounding launcher's rank variables."""
    env = dict(os.environ)
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID"):
        env.pop(key, None)
    return env


def launch(nproc: int, program: Sequence[str]) -> int:
    """Run ``program`` under torchrun with ``nproc`` processes; return torchrun's exit code."""
    if "WORLD_SIZE" in os.environ and "TORCHELASTIC_RUN_ID" in os.environ:
        raise TrainwellError("--nproc given inside a torchrun process; drop --nproc (torchrun "
                             "already started the processes)")
    env = child_environment()
    # Share the cores out (torchrun would pin each worker to 1 thread, with a banner).
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // nproc)))
    proc = subprocess.Popen(torchrun_command(nproc, program), env=env)
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
