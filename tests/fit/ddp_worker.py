"""Run under torchrun by test_distributed.py: one Trainer per process, gloo on the CPU.

``python -m torch.distributed.run --nproc-per-node 2 ddp_worker.py SCENARIO OUT [STRATEGY]``
- ``train``: a straight run, a run stopped at step 6 (a checkpoint), and its resume
  in 2 processes, under STRATEGY (ddp or fsdp); rank 0 saves the final weights of
  both to OUT. Rank 0 writes the step-6 checkpoint slowly (0.5 s): a rank that
  looked for the newest checkpoint on its own would find step 4 meanwhile. Then a
  new run in the same run directory: both ranks must raise rank 0's refusal.
- ``raise``: rank 1 raises at its 3rd training forward; the job must end, not hang.
- ``skip``: under ``nonfinite="skip"``, rank 1's loss is nan at its 3rd and 8th
  training forwards (the 8th closes a window); both ranks must skip those batches
  (DDP, then FSDP) and finish with the same finite weights. Then rank 1 fails
  inside an agreement (a checkpoint write): both ranks must raise.
"""

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from trainwell.errors import TrainwellError  # noqa: E402
from trainwell.fit import checkpoint as ckpt  # noqa: E402
from trainwell.fit.trainer import Trainer  # noqa: E402

N, D, C = 60, 5, 3
PER_RANK_BATCH = 4


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(D, 16), nn.Tanh(), nn.Linear(16, C))


def make_data():
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(N, D, generator=g), torch.randint(0, C, (N,), generator=g)
    return (x, y), (x[:25], y[:25])


def make_trainer(model, batch_size, **kw):
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=3, batch_size=batch_size, accumulate=2,
                device="cpu", progress=False, metrics={"acc": "accuracy"}, log_every=2,
                scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 1, 0.8))
    args.update(kw)
    return Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-2), **args)


def slow_step_6(save):
    def slowly(path, payload):
        if path.name == "step-00000006.ckpt":
            time.sleep(0.5)
        return save(path, payload)

    return slowly


def train(out: str, strategy: str) -> None:
    torch.set_num_threads(1)
    ckpt.save_checkpoint = slow_step_6(ckpt.save_checkpoint)
    train_data, val_data = make_data()
    rank = int(os.environ["RANK"])
    trainer = make_trainer(make_model(), PER_RANK_BATCH, strategy=strategy)
    result = trainer.fit(train_data, val_data)
    weights = trainer.model_state_dict()  # under FSDP: gathered to rank 0
    if rank == 0:
        torch.save({"weights": weights, "history": result.history},
                   os.path.join(out, "straight.pt"))
    run_dir = os.path.join(out, "run")
    make_trainer(make_model(), PER_RANK_BATCH, run_dir=run_dir, max_steps=6,
                 strategy=strategy).fit(train_data, val_data)
    resumed = make_trainer(make_model(), PER_RANK_BATCH, run_dir=run_dir, strategy=strategy)
    resumed.fit(train_data, val_data, resume=run_dir)
    weights = resumed.model_state_dict()
    try:  # a new run in the used folder: every rank gets rank 0's refusal (none trains on)
        make_trainer(make_model(), PER_RANK_BATCH, run_dir=run_dir, strategy=strategy).fit(
            train_data, val_data)
        refused = None
    except TrainwellError as error:
        refused = f"rank {rank}: {error}"
    refusals = [None, None]
    torch.distributed.all_gather_object(refusals, refused)
    if rank == 0:
        torch.save({"weights": weights, "refused": refusals}, os.path.join(out, "resumed.pt"))
    trainer.close()


def fail() -> None:
    train_data, _ = make_data()
    model = make_model()
    calls = {"n": 0}

    def hook(module, inputs):
        calls["n"] += 1
        if calls["n"] == 3 and int(os.environ["RANK"]) == 1:
            raise TrainwellError("rank 1 failed on purpose at its 3rd batch")

    model.register_forward_pre_hook(hook)
    make_trainer(model, PER_RANK_BATCH, max_epochs=50).fit(train_data)


def skip(out: str) -> None:
    torch.set_num_threads(1)
    train_data, _ = make_data()
    rank = int(os.environ["RANK"])
    found = {}
    for strategy in ("ddp", "fsdp"):
        model = make_model()
        calls = {"n": 0}

        def poison(module, inputs, output):
            calls["n"] += module.training
            if rank == 1 and calls["n"] in (3, 8):
                return output * float("nan")
            return output

        model.register_forward_hook(poison)
        trainer = make_trainer(model, PER_RANK_BATCH, nonfinite="skip", strategy=strategy)
        result = trainer.fit(train_data)
        weights = trainer.model_state_dict()
        if strategy == "ddp":  # every rank holds all weights: gather rank 1's to compare
            flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
            gathered = [torch.zeros_like(flat) for _ in range(2)]
            torch.distributed.all_gather(gathered, flat)
            same = torch.equal(gathered[0], gathered[1])
        else:
            same = True  # one sharded copy of the weights
        if rank == 0:
            found[strategy] = {"skipped": result.state.nonfinite_skipped, "same": same,
                               "finite": all(bool(v.isfinite().all()) for v in weights.values())}
        if strategy == "fsdp":
            found["agree"] = agreed_failure(trainer._dist, rank)
            trainer.close()
    if rank == 0:
        torch.save(found, os.path.join(out, "skip.pt"))


def agreed_failure(group, rank: int) -> list:
    """What each rank raises when rank 1 fails inside ``agree`` (e.g. a checkpoint write)."""
    def write() -> None:
        if rank == 1:
            raise OSError("No space left on device")

    try:
        group.agree(write)
        raised = "nothing"
    except Exception as error:  # noqa: BLE001 - recorded for the test
        raised = f"{type(error).__name__}: {error}"
    both = [None, None]
    torch.distributed.all_gather_object(both, raised)
    return both


if __name__ == "__main__":
    {"train": lambda: train(sys.argv[2], sys.argv[3]), "raise": fail,
     "skip": lambda: skip(sys.argv[2])}[sys.argv[1]]()
