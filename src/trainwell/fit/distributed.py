"""Many processes on PyTorch's own engine: torchrun's environment, DDP, sharded data.

Launched with ``torchrun --nproc-per-node N`` (or ``trainwell fit --nproc N``),
each process builds the same Trainer; this module turns that into one run:

- the process group comes from the environment torchrun sets (gloo on the
  CPU, nccl on CUDA, one GPU per local rank), and is destroyed after ``fit``
  when the Trainer created it;
- ``strategy="ddp"`` (the default under torchrun): the model is wrapped in
  ``DistributedDataParallel``; accumulation micro-steps run under ``no_sync``
  so gradients are all-reduced once per optimizer step;
- ``strategy="fsdp"``: PyTorch's FSDP2 (``fully_shard``) shards parameters,
  gradients and optimizer state across ranks, in place, before the optimizer
  factory sees the parameters. Each block (a child of an ``nn.ModuleList`` or
  ``nn.Sequential`` that holds parameters) is one unit, the root another.
  Gradients are reduce-scattered at every micro-step (FSDP's own advice:
  skipping the sync would keep whole unsharded gradients alive). Checkpoints
  hold full tensors (gathered to rank 0), so they resume under any strategy
  and world size. Evaluation runs as many forwards on every rank (short
  shards repeat their last batch, uncounted), since each forward gathers;
- ``batch_size`` is PER PROCESS: the global batch is ``batch_size * N``.
  Training data: every rank draws the same seeded permutation; global batch
  ``j`` is ``order[j*B*N:(j+1)*B*N]`` and rank ``r`` takes its ``r``-th of N
  equal chunks. The order is first padded to a multiple of N by repeating its
  start (as ``DistributedSampler`` does), so every rank has the same number
  of batches of the same sizes and the averaged gradient is the global batch
  mean: 1 process with batch ``B*N`` sees the very same batches.
  Evaluation data: rank ``r`` takes samples ``r::N`` (no padding); loss and
  metrics are summed with their sample counts across ranks, so the numbers
  are the exact means over the whole set;
- checkpoints (of the unwrapped module, so they resume in 1 or N processes),
  logs and the progress bar are rank 0's. Ranks agree on everything read
  from disk: rank 0 alone decides (which checkpoint to resume, whether the run
  directory may be used) and broadcasts the answer or its error, so no rank
  acts on a different view of a folder another rank is writing; every rank
  then checks the file it loads has the checksum rank 0 read. A checkpoint
  write ends with an agreement: no rank goes on until rank 0's file is in
  place (or all raise its error); a stop request (SIGTERM/SIGINT,
  ``request_stop``) is agreed across ranks at the next log interval or epoch
  end, so every rank stops after the same step;
- several machines: the same, with a shared run directory (see machines.py).
"""

from __future__ import annotations

import atexit
import math
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.fit.config import STRATEGIES
from trainwell.fit.step import StepRunner

T = TypeVar("T")


class Distributed:
    """The process group this run trains in, and the few collective verbs it needs."""

    def __init__(self, device: torch.device, owns_group: bool, kind: str = "ddp") -> None:
        import torch.distributed as dist

        self.dist = dist
        self.kind = kind  # "ddp" or "fsdp"
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self.device = device
        self.owns_group = owns_group
        # gloo reduces CPU tensors, nccl CUDA tensors.
        self.comm_device = device if dist.get_backend() == "nccl" else torch.device("cpu")

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def shard(self) -> tuple[int, int]:
        return self.rank, self.world_size

    def wrap(self, model: nn.Module) -> nn.Module:
        from torch.nn.parallel import DistributedDataParallel

        ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=ids)

    def max(self, value: int) -> int:
        """The largest ``value`` over all ranks."""
        out = torch.tensor([value], device=self.comm_device)
        self.dist.all_reduce(out, op=self.dist.ReduceOp.MAX)
        return int(out.item())

    def sum(self, values: torch.Tensor) -> torch.Tensor:
        """The element-wise sum of ``values`` over all ranks."""
        out = values.to(self.comm_device)
        self.dist.all_reduce(out)
        return out.to(values.device)

    def any(self, flag: bool) -> bool:
        """Whether ``flag`` is true on any rank (one small all-reduce)."""
        return bool(self.sum(torch.tensor([float(flag)], device=self.comm_device)).item())

    def from_rank0(self, compute: Callable[[], T]) -> T:
        """Rank 0 runs ``compute`` (a read of the disk); every rank gets its result or its error."""
        box: list[Any] = [None]
        if self.is_main:
            try:
                box[0] = ("ok", compute())
            except TrainwellError as error:
                box[0] = ("error", (str(error), error.exit_code))
        self.dist.broadcast_object_list(box, src=0)
        kind, value = box[0]
        if kind == "error":
            raise TrainwellError(*value)
        return value

    def agree(self, action: Callable[[], T]) -> T:
        """Every rank runs ``action``; when one fails, all raise (none is left waiting).

        Also a barrier: no rank returns before every rank finished ``action``.
        """
        mine: tuple[str, int] | None = None
        result: Any = None
        failure: BaseException | None = None
        try:
            result = action()
        except Exception as error:  # noqa: BLE001 - reported to every rank below
            failure = error
            code = error.exit_code if isinstance(error, TrainwellError) else 1
            text = str(error) if isinstance(error, TrainwellError) else f"{type(error).__name__}: {error}"
            mine = (text, code)
        # The first failing rank (world_size: none): one small all-reduce when all is well.
        flag = torch.tensor([self.rank if failure is not None else self.world_size],
                            device=self.comm_device)
        self.dist.all_reduce(flag, op=self.dist.ReduceOp.MIN)
        first = int(flag.item())
        if first == self.world_size:
            return result
        box: list[Any] = [mine]
        self.dist.broadcast_object_list(box, src=first)  # the failing rank's message
        if first == self.rank:
            raise failure  # type: ignore[misc]
        text, code = box[0]
        raise TrainwellError(text if first == 0 else f"rank {first}: {text}", code)

    def average_gradients(self, params: list[nn.Parameter]) -> None:
        """All-reduce and average gradients DDP did not (a window closed under ``no_sync``)."""
        for p in params:
            if p.grad is not None:
                p.grad.copy_(self.sum(p.grad) / self.world_size)

    def close(self) -> None:
        if self.owns_group and self.dist.is_initialized():
            # gloo's worker threads drop their last reference to a finished collective's
            # tensors under the GIL. Tearing the group down (often in DDP's dealloc, GIL
            # held) joins those threads: right after a collective that can deadlock
            # (seen: rank 1 hung at exit). Sleeping hands them the GIL first.
            time.sleep(0.05)
            self.dist.destroy_process_group()


def launched_world_size() -> int:
    """N when this process was started by torchrun with N processes, else 1."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        return 1


def setup(strategy: str, device: torch.device | None) -> tuple[Distributed | None, torch.device | None]:
    """The process group for ``strategy`` ("auto": DDP when launched by torchrun with N > 1)."""
    if strategy not in STRATEGIES:
        raise TrainwellError(f"strategy={strategy!r} is not known; use one of {', '.join(STRATEGIES)}")
    import torch.distributed as dist

    initialized = dist.is_available() and dist.is_initialized()
    world = dist.get_world_size() if initialized else launched_world_size()
    if strategy == "none" or (strategy == "auto" and world <= 1):
        return None, device
    if not dist.is_available():
        raise TrainwellError(f"strategy={strategy!r} needs torch.distributed, which this PyTorch "
                             "build lacks")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available() and (device is None or device.type == "cuda")
    if device is None or (device.type == "cuda" and device.index is None):
        device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    owns = False
    if not initialized:
        if "MASTER_ADDR" not in os.environ:
            raise TrainwellError(
                f"strategy={strategy!r} needs a process group: launch with `torchrun --nproc-per-node N "
                "script.py` (or `trainwell fit --nproc N`), or call "
                "torch.distributed.init_process_group first")
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        owns = True
    group = Distributed(device, owns, "fsdp" if strategy == "fsdp" else "ddp")
    if owns:
        atexit.register(group.close)  # clean teardown even when fit raised
    return group, device


def shard_train_order(order: torch.Tensor, batch_size: int, rank: int, world: int,
                      drop_last: bool = False) -> torch.Tensor:
    """This rank's samples, in order, from the global epoch ``order`` (see the module doc)."""
    n = order.numel()
    total = math.ceil(n / world) * world
    if total > n:  # pad by repeating the start, so every rank gets as many samples
        order = order.repeat(math.ceil(total / n))[:total]
    group = batch_size * world
    full = total // group * group
    mine = order[:full].view(-1, world, batch_size)[:, rank].reshape(-1)
    tail = order[full:]
    if tail.numel() and not drop_last:
        each = tail.numel() // world
        mine = torch.cat([mine, tail[rank * each:(rank + 1) * each]])
    return mine


def shard_sizes(n: int, batch_size: int, world: int, train: bool, rank: int,
                drop_last: bool = False) -> tuple[int, int, int]:
    """(samples, batches, last batch size) of one rank's shard of ``n`` samples."""
    if train:
        per = math.ceil(n / world)
        batches = per // batch_size if drop_last else math.ceil(per / batch_size)
        if drop_last:
            per = batches * batch_size
    else:
        per = len(range(rank, n, world))
        batches = math.ceil(per / batch_size)
    last = per - (batches - 1) * batch_size if batches else 0
    return per, batches, last


class AgreedStepRunner(StepRunner):
    """A step runner whose ranks agree to skip a micro-batch (``nonfinite="skip"``).

    A rank that skipped its backward alone would leave the others waiting in
    the gradient collective: when any rank's loss is not finite, all skip it.
    """

    def __init__(self, *args: Any, group: Distributed, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.group = group

    def finite(self, loss: torch.Tensor) -> bool:
        return not self.group.any(not super().finite(loss))


class DDPStepRunner(AgreedStepRunner):
    """The step runner under DDP: micro-steps before a window's last run under ``no_sync``.

    ``position`` (set by the loop at each epoch start or resume) counts the
    micro-batches of the open window; the one that closes it all-reduces the
    whole accumulated gradient. A window closed without a synced backward
    (an iterable dataset's last, partial window, or a last micro-batch all
    ranks skipped) is averaged by hand.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.position = 0
        self.synced = True

    def micro(self, batch: Any, divisor: int) -> torch.Tensor | None:
        self.position += 1
        if self.position >= divisor:
            loss = super().micro(batch, divisor)
            self.synced = loss is not None  # a skipped batch ran no (synced) backward
            return loss
        self.synced = False
        with self.model.no_sync():  # keep this micro-step's gradient local
            return super().micro(batch, divisor)

    def optimizer_step(self) -> bool:
        if not self.synced:
            self.group.average_gradients(self.params)
        self.position = 0
        return super().optimizer_step()


# ------------------------------------------------------------------ FSDP2
def fsdp_blocks(model: nn.Module) -> list[nn.Module]:
    """The units FSDP shards one by one: children of containers that hold parameters."""
    blocks: list[nn.Module] = []

    def visit(module: nn.Module) -> None:
        container = isinstance(module, (nn.ModuleList, nn.Sequential))
        for child in module.children():
            if container and any(True for _ in child.parameters()):
                blocks.append(child)  # a block: shard it whole, do not look inside
            else:
                visit(child)

    visit(model)
    return blocks


def shard_model(model: nn.Module) -> None:
    """Apply FSDP2's ``fully_shard`` to each block, then to the root (children first)."""
    from torch.distributed.fsdp import fully_shard

    for block in fsdp_blocks(model):
        fully_shard(block)
    fully_shard(model)


def _full(to_rank0: bool) -> Any:
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    return StateDictOptions(full_state_dict=True, cpu_offload=to_rank0)


def full_model_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """A sharded model's weights as full CPU tensors on rank 0 ({} elsewhere): a collective."""
    from torch.distributed.checkpoint.state_dict import get_model_state_dict

    return get_model_state_dict(model, options=_full(True))


def load_full_model_state(model: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Load full weights (every rank read the same file) into a sharded model."""
    from torch.distributed.checkpoint.state_dict import set_model_state_dict

    set_model_state_dict(model, state, options=_full(False))


def _parameter_names(model: nn.Module, optimizer: torch.optim.Optimizer) -> list[str]:
    """The names of the optimizer's parameters, in its own order (its state_dict's ids)."""
    names = {id(p): name for name, p in model.named_parameters()}
    return [names[id(p)] for group in optimizer.param_groups for p in group["params"]]


def full_optimizer_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """A sharded optimizer's state as ``optimizer.state_dict()`` would give it unsharded.

    PyTorch's full state names parameters; it is renumbered here, so that an
    FSDP checkpoint resumes in a plain or DDP run and the other way round.
    """
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    full = get_optimizer_state_dict(model, optimizer, options=_full(True))
    if not full:
        return {}  # ranks other than 0
    index = {name: i for i, name in enumerate(_parameter_names(model, optimizer))}
    return {"state": {index[name]: value for name, value in full["state"].items()},
            "param_groups": [dict(g, params=[index[name] for name in g["params"]])
                             for g in full["param_groups"]]}


def load_full_optimizer_state(model: nn.Module, optimizer: torch.optim.Optimizer,
                              state: dict[str, Any]) -> None:
    """The inverse of ``full_optimizer_state``: shard a full, numbered state into ``optimizer``."""
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

    names = _parameter_names(model, optimizer)
    named = {"state": {names[i]: value for i, value in state["state"].items()},
             "param_groups": [dict(g, params=[names[i] for i in g["params"]])
                              for g in state["param_groups"]]}
    set_optimizer_state_dict(model, optimizer, named, options=_full(False))


def restore_sharded_grads(params: list[nn.Parameter], grads: list[Any]) -> None:
    """Put back whole gradients (of a checkpoint stopped mid-window) as this rank's shards.

    Ranks stop only after an optimizer step, so such a checkpoint comes from
    one process; here it resumes sharded."""
    from torch.distributed.tensor import distribute_tensor

    for p, g in zip(params, grads):
        p.grad = None if g is None else distribute_tensor(
            g.to(device=p.device, dtype=p.dtype), p.device_mesh, p.placements)
