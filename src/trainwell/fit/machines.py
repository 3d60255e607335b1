"""Several machines in one run: what holds only when the ranks do not share one machine.

``trainwell fit --nnodes`` (see launch.py) or a plain multi-node torchrun start
the ranks; the rest is as on one machine (see distributed.py), except:

- the run directory must be one folder every machine sees. After a run's first
  checkpoint every rank checks it sees rank 0's file (``check_visible``,
  waiting a while for a network filesystem), so a folder on a local disk fails
  then, on every rank, rather than at a resume on another machine;
- torchrun stops the ranks of a failing rank's machine only. The process group
  is made before the user's code runs (``connect_early``), so a rank that ends
  breaks the others' next collective at once (gloo: "Connection closed by
  peer"), which ``lost_rank`` turns into one line, instead of leaving them in
  ``init_process_group`` for half an hour.

No torch import at module level.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from trainwell.errors import TrainwellError

SHARED_WAIT_S = 120.0  # a shared filesystem (NFS) may show another machine's new file late


def several_machines() -> bool:
    """Whether this process is a rank of a torchrun job that spans several machines."""
    local, world = os.environ.get("LOCAL_WORLD_SIZE"), os.environ.get("WORLD_SIZE")
    return bool(local and world and local != world)


def connect_early(strategy: str, device: str | None) -> None:
    """On several machines: make the process group now, before the user's code runs."""
    if several_machines():
        import torch

        from trainwell.fit.distributed import setup

        setup(strategy, torch.device(device) if device else None)


def check_visible(path: Path, wait_s: float = SHARED_WAIT_S) -> None:
    """Wait until ``path``, a file rank 0 wrote, shows on this machine; else a TrainwellError."""
    deadline = time.monotonic() + wait_s
    while not path.is_file():
        if time.monotonic() >= deadline:
            import socket

            waited = f" after {wait_s:.0f} s" if wait_s else ""
            raise TrainwellError(
                f"{path}, rank 0's checkpoint, is not visible on {socket.gethostname()}{waited}: "
                "with several machines, run_dir (trainwell fit --run-dir) must be on a "
                "filesystem every machine shares", 1)
        time.sleep(min(0.5, wait_s / 4))


def lost_rank(error: BaseException) -> TrainwellError | None:
    """The one-line error for a collective that failed because another rank ended (gloo:
    "Connection closed by peer [10.0.0.2]:4321"), else None."""
    text = str(error)
    for words in ("closed by peer", "reset by peer", "Broken pipe"):
        at = text.find(words)
        if at >= 0:
            start = text.rfind("] ", 0, at)  # after gloo's "[.../pair.cc:553] "
            end = text.find(". ", at)
            seen = text[start + 2 if start >= 0 else 0:end if end >= 0 else None].strip()
            return TrainwellError(f"lost another rank ({seen}): it failed or was killed, and "
                                  "said why on its own machine", 1)
    return None
