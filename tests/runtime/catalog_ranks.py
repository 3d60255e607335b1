"""Two gloo ranks of a hand-written DDP loop under trainwell.watch(), for test_catalog_probes.py.

``python catalog_ranks.py OUT PORT`` starts ranks 0 and 1 as its children (in its own process
group, so the test kills the whole run with one killpg); each rank trains three ways, watched:
``whole`` (a shuffling loader every rank reads whole), ``sampler`` (a DistributedSampler),
``subset`` (``Subset`` by rank), and writes OUT/rank<R>.json: the TW111 findings of each.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402
from torch.utils.data import DataLoader, DistributedSampler, Subset, TensorDataset  # noqa: E402

from trainwell.runtime.watcher import watch  # noqa: E402


def loader(kind: str, rank: int) -> DataLoader:
    g = torch.Generator().manual_seed(0)
    data = TensorDataset(torch.randn(48, 4, generator=g), torch.randint(0, 2, (48,), generator=g))
    if kind == "sampler":
        return DataLoader(data, batch_size=8, sampler=DistributedSampler(data))
    if kind == "subset":
        return DataLoader(Subset(data, range(rank, 48, 2)), batch_size=8, shuffle=True)
    return DataLoader(data, batch_size=8, shuffle=True)


def main(out: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, found = dist.get_rank(), {}
    for kind in ("whole", "sampler", "subset"):
        torch.manual_seed(0)
        model = DistributedDataParallel(nn.Linear(4, 2))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with watch(select=["TW111"]) as w:
            data = loader(kind, rank)
            for epoch in range(2):
                for x, y in data:
                    optimizer.zero_grad()
                    nn.functional.cross_entropy(model(x), y).backward()
                    optimizer.step()
        found[kind] = [f.message for f in w.findings if f.code == "TW111"]
        dist.barrier()
    Path(out, f"rank{rank}.json").write_text(json.dumps(found))
    dist.barrier()
    # Leave without tearing gloo down: under load its teardown can abort ("terminate called without an active
    # exception") after the work is done and written; the test reads the files, the exit code must not lie.
    os._exit(0)


def launch(out: str, port: str) -> int:
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, WORLD_SIZE="2", OMP_NUM_THREADS="1")
    ranks = [subprocess.Popen([sys.executable, __file__, out], env=dict(env, RANK=str(r), LOCAL_RANK=str(r)))
             for r in (0, 1)]
    return max(abs(p.wait()) for p in ranks)


if __name__ == "__main__":
    sys.exit(launch(*sys.argv[1:]) if len(sys.argv) == 3 else main(sys.argv[1]))
