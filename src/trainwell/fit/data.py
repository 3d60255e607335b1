"""Batches: where they come from, in which order, and how they reach the device.

Two sources share one interface (``num_batches``, ``epoch(epoch, start)``):

- ``TensorSource``: in-memory tensors kept on the device; one permutation per
  epoch and index slicing, no per-sample collate (the fast path).
- ``LoaderSource``: a user's DataLoader, never mutated. Its order for an epoch
  is computed up front as lists of indices and fed to a private DataLoader
  through a batch sampler, so a resume skips *indices* and never reads the
  already-seen batches again. When the loader only stacks rows of in-memory
  tensors (a ``TensorDataset`` or a ``Subset`` of one, the default collate, no
  workers), each batch is cut from the tensors by index in one operation
  instead: the same indices, the same values, the same list the collate returns.

Both draw their randomness from a dedicated ``torch.Generator`` seeded from
``seed + epoch``: the global RNG (dropout, augmentations) is left to the model,
which makes a resumed run replay the same random numbers.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import torch
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
)

from trainwell.errors import TrainwellError
from trainwell.fit.batch import TARGET_KEYS


def move_to(batch: Any, device: torch.device, non_blocking: bool = False) -> Any:
    """Move every tensor inside ``batch`` (tensors, tuples, lists, dicts, dataclasses)."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, Mapping):
        moved = {k: move_to(v, device, non_blocking) for k, v in batch.items()}
        return moved if type(batch) is dict else type(batch)(moved)
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # namedtuple
        return type(batch)(*(move_to(v, device, non_blocking) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to(v, device, non_blocking) for v in batch)
    if dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        return dataclasses.replace(batch, **{
            f.name: move_to(getattr(batch, f.name), device, non_blocking)
            for f in dataclasses.fields(batch) if f.init
        })
    return batch


def batch_size_of(batch: Any) -> int:
    """The leading dimension of the first tensor found in ``batch`` (1 if none)."""
    if isinstance(batch, torch.Tensor):
        return batch.shape[0] if batch.dim() else 1
    if isinstance(batch, Mapping):
        values: Any = batch.values()
    elif isinstance(batch, (list, tuple)):
        values = batch
    elif dataclasses.is_dataclass(batch):
        values = [getattr(batch, f.name) for f in dataclasses.fields(batch)]
    else:
        return 1
    for v in values:
        if isinstance(v, (torch.Tensor, Mapping, list, tuple)) or dataclasses.is_dataclass(v):
            return batch_size_of(v)
    return 1


def first_size(batch: Sequence[torch.Tensor]) -> int:
    """The batch size of a batch that is a sequence of tensors (what the fast paths yield)."""
    return batch[0].shape[0]


class TensorSource:
    """Batches sliced from tensors that live on the training device."""

    size_of = staticmethod(first_size)

    def __init__(self, tensors: Sequence[torch.Tensor], batch_size: int, device: torch.device,
                 shuffle: bool, seed: int, shard: tuple[int, int] | None = None) -> None:
        n = tensors[0].shape[0]
        for t in tensors:
            if t.shape[0] != n:
                raise TrainwellError(
                    f"data tensors have different lengths ({n} and {t.shape[0]}); "
                    "inputs and targets must have one row per sample"
                )
        self.tensors = tuple(t.to(device) for t in tensors)
        self.num_samples = n
        self.batch_size = int(batch_size)
        self.device = device
        self.shuffle = shuffle
        self.seed = seed
        self.num_batches = math.ceil(n / self.batch_size)
        self.drop_last = False
        self.last_batch_size = n - (self.num_batches - 1) * self.batch_size
        self.shard = shard  # (rank, world size): this process's share (see distributed.py)
        if shard is not None:
            from trainwell.fit.distributed import shard_sizes

            self.shard_samples, self.num_batches, self.last_batch_size = shard_sizes(
                n, self.batch_size, shard[1], shuffle, shard[0])

    def order(self, epoch: int) -> torch.Tensor | None:
        """The sample order of ``epoch``: a permutation seeded by ``seed + epoch``."""
        if not self.shuffle:
            return None
        gen = torch.Generator().manual_seed(self.seed + epoch)
        return torch.randperm(self.num_samples, generator=gen).to(self.device)

    def _sharded_order(self, epoch: int) -> torch.Tensor:
        from trainwell.fit.distributed import shard_train_order

        rank, world = self.shard
        if not self.shuffle:
            return torch.arange(rank, self.num_samples, world, device=self.device)
        return shard_train_order(self.order(epoch), self.batch_size, rank, world)

    def epoch(self, epoch: int, start: int = 0) -> Iterator[tuple[torch.Tensor, ...]]:
        """Yield the batches of ``epoch`` from batch index ``start`` on."""
        tensors, bs, n = self.tensors, self.batch_size, self.num_samples
        if self.shard is None:
            perm = self.order(epoch)
        else:
            perm = self._sharded_order(epoch)
            n = perm.numel()
        if len(tensors) == 2:  # (inputs, targets): the common case, without a generator expression
            x, y = tensors
            if perm is None:
                for a in range(start * bs, n, bs):
                    yield x[a:a + bs], y[a:a + bs]
            else:
                for a in range(start * bs, n, bs):
                    idx = perm[a:a + bs]
                    yield x.index_select(0, idx), y.index_select(0, idx)
        elif perm is None:
            for a in range(start * bs, n, bs):
                yield tuple(t[a:a + bs] for t in tensors)
        else:
            for a in range(start * bs, n, bs):
                idx = perm[a:a + bs]
                yield tuple(t.index_select(0, idx) for t in tensors)


class _EpochBatches:
    """A batch sampler whose batches are set before each epoch (main process)."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


class LoaderSource:
    """Batches from a user's DataLoader, in a resumable order."""

    def __init__(self, loader: DataLoader, device: torch.device, seed: int,
                 shard: tuple[int, int] | None = None, train: bool = True) -> None:
        self.loader = loader
        self.shard = shard
        self.train = train
        self.device = device
        self.seed = seed
        self.non_blocking = device.type == "cuda"
        self.move = device.type != "cpu"
        self.iterable = isinstance(loader.dataset, IterableDataset)
        self.batch_size = loader.batch_size
        self.drop_last = bool(loader.drop_last)
        try:
            self.num_batches: int | None = len(loader)
        except TypeError:
            self.num_batches = None
        self.last_batch_size = self._last_batch_size()
        if shard is not None and not self.iterable:
            self.num_batches = len(self.batches(0))  # this rank's share
            self.last_batch_size = None
        self._memory = in_memory(loader)
        self.size_of = first_size if self._memory is not None else batch_size_of
        if self.iterable or self._memory is not None:
            self._private = None
            return
        self._sampler = _EpochBatches()
        self._generator = torch.Generator()
        workers = loader.num_workers
        self._private = DataLoader(
            loader.dataset,
            batch_sampler=self._sampler,
            num_workers=workers,
            collate_fn=loader.collate_fn,
            pin_memory=loader.pin_memory or device.type == "cuda",
            timeout=loader.timeout,
            worker_init_fn=loader.worker_init_fn,
            multiprocessing_context=loader.multiprocessing_context if workers else None,
            generator=self._generator,
            prefetch_factor=loader.prefetch_factor if workers else None,
            persistent_workers=loader.persistent_workers and workers > 0,
        )

    def _last_batch_size(self) -> int | None:
        if self.iterable or self.batch_size is None or self.drop_last:
            return None
        try:
            n = len(self.loader.dataset)  # type: ignore[arg-type]
        except TypeError:
            return None
        return n - (math.ceil(n / self.batch_size) - 1) * self.batch_size if n else None

    def batches(self, epoch: int) -> list[list[int]]:
        """This process's index batches of ``epoch``, computed without touching the global RNG."""
        out = self._global_batches(epoch)
        if self.shard is None or self._presharded():
            return out
        from trainwell.fit.distributed import shard_train_order

        rank, world = self.shard
        if not self.train:  # evaluation: whole batches round-robin (counts are reduced)
            return out[rank::world]
        bs = self.loader.batch_size
        if bs is None:  # a custom batch sampler: whole batches round-robin, equal counts
            each = len(out) // world
            return out[rank:each * world:world]
        order = torch.tensor([i for b in out for i in b], dtype=torch.long)
        mine = shard_train_order(order, bs, rank, world, self.drop_last).tolist()
        return [mine[i:i + bs] for i in range(0, len(mine), bs)]

    def _presharded(self) -> bool:
        from torch.utils.data import DistributedSampler

        return isinstance(self.loader.sampler, DistributedSampler)

    def _plain_order(self, epoch: int) -> torch.Tensor | None:
        """The sample order of a plain ``BatchSampler`` over a ``RandomSampler`` (a permutation
        seeded by ``seed + epoch``) or a ``SequentialSampler``; None for any other sampler."""
        loader = self.loader
        if type(loader.batch_sampler) is not BatchSampler or loader.batch_size is None:
            return None
        sampler, n = loader.sampler, len(loader.dataset)  # type: ignore[arg-type]
        if type(sampler) is RandomSampler and not sampler.replacement and sampler.num_samples == n:
            return torch.randperm(n, generator=torch.Generator().manual_seed(self.seed + epoch))
        if type(sampler) is SequentialSampler:
            return torch.arange(n)
        return None

    def _global_batches(self, epoch: int) -> list[list[int]]:
        loader, seed = self.loader, self.seed + epoch
        sampler = loader.sampler
        if type(loader.batch_sampler) is BatchSampler and loader.batch_size is not None:
            plain = self._plain_order(epoch)
            if plain is not None:
                order = plain.tolist()
            else:
                if callable(getattr(sampler, "set_epoch", None)):
                    sampler.set_epoch(epoch)  # DistributedSampler and kin: a new order per epoch
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(seed)
                    order = list(iter(sampler))
            bs = loader.batch_size
            out = [order[i:i + bs] for i in range(0, len(order), bs)]
            if loader.drop_last and out and len(out[-1]) < bs:
                out.pop()
            return out
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return [list(b) for b in loader.batch_sampler]

    def _index_batches(self, epoch: int, start: int) -> Iterator[torch.Tensor]:
        """The tensor rows of each batch of ``epoch`` from ``start`` on, in the loader's order."""
        rows = self._memory[1]
        order = self._plain_order(epoch) if self.shard is None else None
        if order is not None:  # one tensor for the epoch: no lists of ints per batch
            bs, n = self.loader.batch_size, order.numel()
            order = order if rows is None else rows.index_select(0, order)
            stop = n - n % bs if self.drop_last else n
            return (order[a:a + bs] for a in range(start * bs, stop, bs))
        batches = self.batches(epoch)[start:]
        flat = torch.tensor([i for b in batches for i in b], dtype=torch.long)
        flat = flat if rows is None else rows.index_select(0, flat)
        return iter(flat.split([len(b) for b in batches]))

    def _cut(self, epoch: int, start: int) -> Iterator[list[torch.Tensor]]:
        """The loader's batches cut from its tensors: ``index_select`` copies the rows that
        ``default_collate`` would have stacked, into the list it would have returned."""
        tensors = self._memory[0]
        for rows in self._index_batches(epoch, start):  # a tensor kept on a GPU takes its rows there
            yield [t.index_select(0, rows if t.device.type == "cpu" else rows.to(t.device)) for t in tensors]

    def epoch(self, epoch: int, start: int = 0) -> Iterator[Any]:
        """Yield the batches of ``epoch`` from batch index ``start`` on, on the device."""
        if self._memory is not None:
            it: Iterator[Any] = self._cut(epoch, start)
        elif self._private is None:
            it = _iter_quiet(self.loader)
            for _ in range(start):  # an IterableDataset has no indices to skip
                next(it, None)
        else:
            self._sampler.batches = self.batches(epoch)[start:]
            self._generator.manual_seed(self.seed + epoch)  # worker seeds, not the global RNG
            it = iter(self._private)
        if not self.move:
            yield from it
            return
        for batch in it:
            yield move_to(batch, self.device, self.non_blocking)


def in_memory(loader: DataLoader) -> tuple[tuple[torch.Tensor, ...], torch.Tensor | None] | None:
    """The tensors a loader's batches can be cut from, and the tensor row of each dataset index
    (None: the index itself); None when its batches need the loader.

    Only a ``TensorDataset`` (or ``Subset`` of one, nested or not) of plain contiguous
    tensors, batched by ``default_collate`` in this process: there a batch is exactly
    ``torch.stack`` of the indexed rows. A subclass may override ``__getitem__``, a
    custom collate may do anything, and workers run user code: they keep the loader.
    """
    if loader.num_workers or loader.collate_fn is not default_collate or loader.batch_sampler is None:
        return None  # (no batch sampler: samples one by one, not collated)
    dataset, rows = loader.dataset, None
    while type(dataset) is Subset:
        indices = torch.as_tensor(dataset.indices)
        if indices.dim() != 1 or indices.dtype in (torch.bool, torch.uint8) or indices.is_floating_point() \
                or not _in_range(rows, len(indices)):
            return None
        indices = indices.long()
        rows = indices if rows is None else indices.index_select(0, rows)
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or not _in_range(rows, len(dataset)) or not all(
            type(t) is torch.Tensor and t.layout == torch.strided and t.is_contiguous() for t in dataset.tensors):
        return None
    return tuple(dataset.tensors), rows


def _in_range(rows: torch.Tensor | None, n: int) -> bool:
    """Whether every index is in ``[0, n)``: a negative or too large one is left to the loader's own indexing."""
    return rows is None or not rows.numel() or (int(rows.min()) >= 0 and int(rows.max()) < n)


def _iter_quiet(loader: DataLoader) -> Iterator[Any]:
    """``iter(loader)`` without consuming the global RNG (it draws worker seeds)."""
    with torch.random.fork_rng(devices=[]):
        return iter(loader)


def default_loader(dataset: Dataset, batch_size: int, device: torch.device, shuffle: bool,
                   num_workers: int | None = None) -> DataLoader:
    """A DataLoader with the defaults the Trainer uses for a bare Dataset.

    Workers: none when training on the CPU (they would compete with the model
    for the same cores), else up to 4; pinned memory on CUDA (the copies are
    then ``non_blocking``); persistent workers, so each epoch does not respawn them.
    """
    if num_workers is None:
        num_workers = 0 if device.type == "cpu" else min(4, max(1, (os.cpu_count() or 2) // 2))
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, num_workers=num_workers,
                      pin_memory=device.type == "cuda", persistent_workers=num_workers > 0)


def make_source(data: Any, batch_size: int, device: torch.device, shuffle: bool, seed: int,
                what: str = "train_data", num_workers: int | None = None,
                shard: tuple[int, int] | None = None) -> TensorSource | LoaderSource:
    """Wrap ``data`` (DataLoader, (X, y) tensors, TensorDataset, Dataset) as a batch source.

    ``shard``: (rank, world size) under DDP; ``shuffle`` marks training data.
    """
    if isinstance(data, DataLoader):
        return LoaderSource(data, device, seed, shard, train=shuffle)
    if isinstance(data, TensorDataset):
        return TensorSource(data.tensors, batch_size, device, shuffle, seed, shard)
    if isinstance(data, torch.Tensor):
        return TensorSource((data,), batch_size, device, shuffle, seed, shard)
    if isinstance(data, (tuple, list)) and data and all(isinstance(t, torch.Tensor) for t in data):
        return TensorSource(tuple(data), batch_size, device, shuffle, seed, shard)
    if isinstance(data, Dataset) and hasattr(data, "__len__"):
        return LoaderSource(default_loader(data, batch_size, device, shuffle, num_workers),
                            device, seed, shard, train=shuffle)
    raise TrainwellError(
        f"{what} is a {type(data).__name__}; pass a DataLoader, a Dataset, a TensorDataset or "
        "a tuple (X, y) of tensors"
    )


# CrossEntropyLoss and NLLLoss ignore this target by default: padded target positions get it,
# so they never count as a real class (TW305). Inputs keep ``padding_value``.
IGNORE_INDEX = -100


def pad_collate(samples: Sequence[Any], padding_value: float = 0,
                key: str | None = None) -> dict[str, torch.Tensor]:
    """Collate variable-length sequences by padding to the longest one in the batch.

    Each sample is a tensor ``(length, ...)``, a tuple ``(sequence, target)`` or a
    dict whose ``key`` (default ``"input_ids"``) entry is the sequence. Returns a
    dict with ``inputs`` (or ``key``), ``lengths``, ``attention_mask`` (1 = real
    token) and, when present, ``labels`` or any other dict entry: stacked, or,
    when it is a sequence as long as the input, padded. Padded targets
    (``labels``, ``label``, ``y``, ``target``) get ``IGNORE_INDEX`` (-100), the
    value cross-entropy ignores by default; other entries get 0.

    Example:
        >>> b = pad_collate([torch.tensor([1, 2, 3]), torch.tensor([4])])
        >>> b["inputs"].tolist(), b["lengths"].tolist()
        ([[1, 2, 3], [4, 0, 0]], [3, 1])
        >>> pad_collate([(torch.tensor([1, 2]), torch.tensor([5, 6])), (torch.tensor([3]), torch.tensor([7]))])["labels"].tolist()
        [[5, 6], [7, -100]]
    """
    if not samples:
        raise TrainwellError("pad_collate got an empty batch")
    first = samples[0]
    if isinstance(first, Mapping):
        key = key or "input_ids"
        seqs = [torch.as_tensor(s[key]) for s in samples]
        out = _pad(seqs, padding_value, key)
        for name in first:
            if name != key:
                out[name] = _per_sample(name, [torch.as_tensor(s[name]) for s in samples], seqs)
        return out
    if isinstance(first, (tuple, list)):
        seqs = [torch.as_tensor(s[0]) for s in samples]
        out = _pad(seqs, padding_value, key or "inputs")
        if len(first) > 1:
            out["labels"] = _per_sample("labels", [torch.as_tensor(s[1]) for s in samples], seqs)
        return out
    return _pad([torch.as_tensor(s) for s in samples], padding_value, key or "inputs")


def _per_sample(name: str, values: list[torch.Tensor], seqs: list[torch.Tensor]) -> torch.Tensor:
    """Stack one entry of every sample; pad it when it is per token and the lengths differ."""
    per_token = all(v.dim() and v.shape[0] == q.shape[0] for v, q in zip(values, seqs))
    if per_token and len({v.shape[0] for v in values}) > 1:
        fill = IGNORE_INDEX if name in TARGET_KEYS else 0
        return torch.nn.utils.rnn.pad_sequence(values, batch_first=True, padding_value=fill)
    return torch.stack(values)


def _pad(seqs: list[torch.Tensor], padding_value: float, name: str) -> dict[str, torch.Tensor]:
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.long)
    padded = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=padding_value)
    mask = (torch.arange(padded.shape[1])[None, :] < lengths[:, None]).long()
    return {name: padded, "lengths": lengths, "attention_mask": mask}
