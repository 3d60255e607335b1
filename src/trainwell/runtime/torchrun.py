"""Ranks that torchrun starts: `trainwell run --nproc N SCRIPT` and `torchrun ... -m trainwell run SCRIPT`.

``--nproc N`` is the documented way: this process makes the run directory,
starts torchrun (``--standalone``, N processes on this machine) with every
rank running ``trainwell run SCRIPT`` and writing there, waits, and prints
the one merged report. A rank started that way prints findings as they are
first seen (once per bug over all ranks) and no report of its own.

Started by a plain ``torchrun ... -m trainwell run SCRIPT``, the ranks of one
node share a directory named after torchrun's run id and agent, and local
rank 0 prints the node's report once the others have ended (each node its
own report: the ranks of different machines share no folder).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence

from trainwell.runtime.ranks import RUN_DIR_ENV, MergedRun, merge, read_processes

_GATHER_TIMEOUT_S = 60.0  # local rank 0 waits this long at most for the node's other ranks to end


def launch_ranks(nproc: int, argv: Sequence[str]) -> tuple[int, MergedRun]:
    """Run ``trainwell run`` (``argv`` from its ``run``, with ``--nproc``) in ``nproc`` ranks; (exit code, merged run)."""
    from trainwell.fit.launch import agent_command, child_environment, wait, worker_argv

    command = agent_command(nproc, worker_argv(argv, "run"))
    env = child_environment()
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // nproc)))
    directory = tempfile.mkdtemp(prefix="trainwell-run-")
    env[RUN_DIR_ENV] = directory
    try:
        code = wait(subprocess.Popen(command, env=env))  # a failing rank prints its own traceback
        return code, merge(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def torchrun_directory() -> str | None:
    """Under a plain torchrun with several local ranks: the folder this node's ranks share; else None."""
    if os.environ.get(RUN_DIR_ENV) or "TORCHELASTIC_RUN_ID" not in os.environ:
        return None
    if _local_world() < 2:
        return None
    # every local rank has the same agent as parent: the id stays unique when run ids repeat ("none")
    name = f"trainwell-run-{os.environ['TORCHELASTIC_RUN_ID']}-{os.getppid()}"
    directory = os.path.join(tempfile.gettempdir(), name)
    os.makedirs(directory, exist_ok=True)
    return directory


def reports_for_node() -> bool:
    """Whether this rank prints the node's report (local rank 0)."""
    return os.environ.get("LOCAL_RANK", "0") == "0"


def gather(directory: str) -> MergedRun:
    """Wait until every local rank has ended (or died), then merge their findings and remove the folder."""
    deadline = time.monotonic() + _GATHER_TIMEOUT_S
    expected = _local_world()
    while time.monotonic() < deadline:
        processes = read_processes(directory)
        if len(processes) >= expected and all(p.ended or not _alive(p.pid) for p in processes):
            break
        time.sleep(0.1)
    try:
        return merge(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _local_world() -> int:
    value = os.environ.get("LOCAL_WORLD_SIZE", "1")
    return int(value) if value.isdigit() else 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
