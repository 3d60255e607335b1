"""The default process group as the cross-rank probes see it: its key-value store, this rank, the world size.

Cross-rank checks (TW111, TW114) post to the store and read the other ranks' posts without waiting
(``check``), never through a collective: a probe must not add a synchronisation the script did not have.
"""

from __future__ import annotations

from typing import Any


def default_group() -> tuple[Any, int, int]:
    """(the default group's store, this rank, the world size); (None, 0, 1) outside a process group."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return None, 0, 1
    try:
        from torch.distributed.distributed_c10d import _get_default_store

        return _get_default_store(), dist.get_rank(), dist.get_world_size()
    except Exception:  # noqa: BLE001 - a group without a store we can reach
        return None, dist.get_rank(), dist.get_world_size()
