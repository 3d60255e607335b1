"""Batch moving, data order, index skipping and the padding collate."""

import dataclasses
from collections import namedtuple

import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset

from trainwell.fit.data import LoaderSource, TensorSource, batch_size_of, move_to, pad_collate

META = torch.device("meta")


@dataclasses.dataclass
class Pair:
    x: torch.Tensor
    note: str


def test_move_to_is_recursive_and_keeps_types():
    Point = namedtuple("Point", "a b")
    batch = {"ids": torch.zeros(2, 3), "parts": [torch.ones(2), (torch.ones(1), "s")],
             "pt": Point(torch.ones(2), 3), "dc": Pair(torch.ones(2), "n")}
    moved = move_to(batch, META)
    assert moved["ids"].device == META and moved["parts"][0].device == META
    assert moved["parts"][1][0].device == META and moved["parts"][1][1] == "s"
    assert isinstance(moved["pt"], Point) and moved["pt"].a.device == META and moved["pt"].b == 3
    assert isinstance(moved["dc"], Pair) and moved["dc"].x.device == META and moved["dc"].note == "n"
    assert batch["ids"].device.type == "cpu"  # the input is not modified
    assert batch_size_of(batch) == 2 and batch_size_of(Pair(torch.ones(5), "")) == 5


def test_tensor_source_order_is_a_seeded_permutation_per_epoch():
    x = torch.arange(10).float()
    src = TensorSource((x, x * 2), batch_size=4, device=torch.device("cpu"), shuffle=True, seed=3)
    epoch0 = torch.cat([b[0] for b in src.epoch(0)])
    assert sorted(epoch0.tolist()) == list(range(10))
    expected = torch.randperm(10, generator=torch.Generator().manual_seed(3))
    assert torch.equal(epoch0, x[expected])
    assert not torch.equal(epoch0, torch.cat([b[0] for b in src.epoch(1)]))
    tail = torch.cat([b[0] for b in src.epoch(0, start=1)])
    assert torch.equal(tail, epoch0[4:])
    assert [len(b[0]) for b in src.epoch(0)] == [4, 4, 2] and src.last_batch_size == 2
    assert all(torch.equal(b[1], b[0] * 2) for b in src.epoch(0))


class Counting(Dataset):
    def __init__(self, n):
        self.n, self.read = n, []

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.read.append(i)
        return torch.tensor([float(i)]), torch.tensor(i)


def test_loader_resume_skips_indices_without_reading_them():
    ds = Counting(20)
    loader = DataLoader(ds, batch_size=3, shuffle=True)
    src = LoaderSource(loader, torch.device("cpu"), seed=0)
    order = [i for b in src.batches(2) for i in b]
    ds.read.clear()
    got = [int(v) for xb, _ in src.epoch(2, start=4) for v in xb.flatten()]
    assert got == order[12:]
    assert ds.read == order[12:]  # the first 4 batches were never read


def test_loader_source_leaves_the_loader_and_the_global_rng_alone():
    ds = TensorDataset(torch.arange(12).float())
    loader = DataLoader(ds, batch_size=5, shuffle=True)
    sampler, batch_sampler = loader.sampler, loader.batch_sampler
    src = LoaderSource(loader, torch.device("cpu"), seed=1)
    state = torch.get_rng_state()
    batches = [b[0].tolist() for b in src.epoch(0)]
    assert torch.equal(torch.get_rng_state(), state)
    assert loader.sampler is sampler and loader.batch_sampler is batch_sampler
    assert [len(b) for b in batches] == [5, 5, 2]
    assert batches == [[float(i) for i in b] for b in src.batches(0)]
    assert len(list(loader)) == 3  # the user's loader still works as before


def test_pad_collate_pads_to_longest_with_lengths_and_mask():
    batch = pad_collate([(torch.tensor([1, 2, 3]), 0), (torch.tensor([4]), 1)])
    assert batch["inputs"].tolist() == [[1, 2, 3], [4, 0, 0]]
    assert batch["lengths"].tolist() == [3, 1]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert batch["labels"].tolist() == [0, 1]
    d = pad_collate([{"input_ids": [5, 6], "label": 1}, {"input_ids": [7, 8, 9], "label": 0}],
                    padding_value=-1)
    assert d["input_ids"].tolist() == [[5, 6, -1], [7, 8, 9]]
    assert d["label"].tolist() == [1, 0] and d["attention_mask"].sum().item() == 5


def test_pad_collate_in_a_dataloader_trains():
    from torch import nn

    from trainwell.fit.trainer import Trainer

    seqs = [(torch.randint(1, 9, (n,)), n % 2) for n in [3, 5, 2, 7, 4, 6]]

    class Bag(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.out = nn.Embedding(10, 4), nn.Linear(4, 2)

        def forward(self, inputs, attention_mask, lengths):
            h = (self.emb(inputs) * attention_mask[..., None]).sum(1) / lengths[:, None]
            return self.out(h)

    loader = DataLoader(seqs, batch_size=4, collate_fn=pad_collate)
    result = Trainer(Bag(), lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(),
                     max_epochs=2, progress=False, device="cpu").fit(loader, val_data=loader)
    assert len(result.history) == 2 and result.history[-1]["val_loss"] > 0


def test_a_bare_dataset_gets_a_default_loader_and_trains():
    from torch import nn

    from trainwell.fit.data import default_loader, make_source
    from trainwell.fit.trainer import Trainer

    ds = Counting(24)
    src = make_source(ds, 5, torch.device("cpu"), shuffle=True, seed=0)
    assert isinstance(src, LoaderSource) and src.num_batches == 5
    cuda = default_loader(ds, 5, torch.device("cuda"), shuffle=False, num_workers=None)
    assert cuda.pin_memory and cuda.num_workers >= 1 and cuda.persistent_workers
    result = Trainer(nn.Linear(1, 24), lambda p: torch.optim.SGD(p, lr=0.01),
                     loss=nn.CrossEntropyLoss(), max_epochs=1, batch_size=5, progress=False,
                     device="cpu").fit(ds)
    assert result.state.samples == 24


def test_iterable_dataset_trains_and_closes_the_last_window():
    from torch import nn
    from torch.utils.data import IterableDataset

    from trainwell.fit.trainer import Trainer

    class Stream(IterableDataset):
        def __iter__(self):
            g = torch.Generator().manual_seed(0)
            for _ in range(22):
                yield torch.randn(3, generator=g), torch.randint(0, 2, (), generator=g)

    result = Trainer(nn.Linear(3, 2), lambda p: torch.optim.SGD(p, lr=0.1),
                     loss=nn.CrossEntropyLoss(), max_epochs=2, accumulate=2, progress=False,
                     device="cpu").fit(DataLoader(Stream(), batch_size=4))
    assert result.state.step == 2 * 3  # 6 batches per epoch: windows 2, 2, 2
    assert result.state.samples == 44


def test_a_custom_sampler_is_replayed_from_the_seed_and_told_the_epoch():
    from torch.utils.data import Sampler

    class Shuffled(Sampler):
        def __init__(self, n):
            self.n, self.epochs = n, []

        def set_epoch(self, epoch):
            self.epochs.append(epoch)

        def __iter__(self):
            return iter(torch.randperm(self.n).tolist())  # the global RNG

        def __len__(self):
            return self.n

    sampler = Shuffled(10)
    src = LoaderSource(DataLoader(TensorDataset(torch.arange(10)), batch_size=4, sampler=sampler),
                       torch.device("cpu"), seed=2)
    state = torch.get_rng_state()
    first, again = src.batches(1), src.batches(1)
    assert first == again and sampler.epochs == [1, 1]
    assert torch.equal(torch.get_rng_state(), state)
