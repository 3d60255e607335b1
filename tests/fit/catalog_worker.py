"""A two-process gloo run for test_trainer_catalog.py, without torchrun (whose workers leave
its process group): ``python catalog_worker.py OUT PORT`` starts ranks 0 and 1 as its own
children, in its own process group, so the test can kill the whole run with one killpg.

Each rank: the Trainer trains 3 epochs on 40 samples whose first
feature is the sample's index, fed three ways (tensors, a shuffling DataLoader, a DataLoader
over a DistributedSampler the user never calls set_epoch on). The model records the indices
of every training batch; OUT/rank<R>.json holds, per feeding, the indices of each epoch.
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
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset  # noqa: E402

from trainwell.fit.callbacks import Callback  # noqa: E402
from trainwell.fit.trainer import Trainer  # noqa: E402

N, EPOCHS, BATCH = 40, 3, 4


class Recorder(nn.Module):
    """A linear classifier that notes which samples each training forward sees."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.linear = nn.Linear(3, 2)
        self.seen: list[int] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            self.seen.extend(x[:, 0].round().long().tolist())
        return self.linear(x)


class Epochs(Callback):
    """Cuts the recorded indices at each epoch's end."""

    def __init__(self, model: Recorder) -> None:
        self.model, self.epochs = model, []

    def on_epoch_end(self, trainer, state, record) -> None:
        self.epochs.append(self.model.seen)
        self.model.seen = []


def data() -> TensorDataset:
    g = torch.Generator().manual_seed(1)
    x = torch.cat([torch.arange(N, dtype=torch.float32)[:, None], torch.randn(N, 2, generator=g)], 1)
    return TensorDataset(x, (x[:, 1] > 0).long())


def feed(kind: str):
    dataset = data()
    if kind == "tensors":
        return dataset.tensors
    if kind == "loader":
        return DataLoader(dataset, batch_size=BATCH, shuffle=True)
    return DataLoader(dataset, batch_size=BATCH, sampler=DistributedSampler(dataset))  # no set_epoch anywhere


def main(out: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    found = {}
    for kind in ("tensors", "loader", "sampler"):
        model = Recorder()
        epochs = Epochs(model)
        Trainer(model, lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(), max_epochs=EPOCHS,
                batch_size=BATCH, device="cpu", progress=False, callbacks=[epochs], strategy="ddp").fit(feed(kind))
        found[kind] = epochs.epochs
    Path(out, f"rank{dist.get_rank()}.json").write_text(json.dumps(found))
    dist.barrier()
    # Leave without tearing gloo down: under load its teardown can abort ("terminate called without an active
    # exception") after the work is done and written; the test reads the files, the exit code must not lie.
    os._exit(0)


def launch(out: str, port: str) -> int:
    """Start both ranks (they inherit this process group) and wait; non-zero if either failed."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, WORLD_SIZE="2", OMP_NUM_THREADS="1")
    ranks = [subprocess.Popen([sys.executable, __file__, out], env=dict(env, RANK=str(r), LOCAL_RANK=str(r)))
             for r in (0, 1)]
    return max(abs(p.wait()) for p in ranks)


if __name__ == "__main__":
    sys.exit(launch(*sys.argv[1:]) if len(sys.argv) == 3 else main(sys.argv[1]))
