"""A DataLoader over in-memory tensors is cut by index: bitwise the batches, weights and RNG
of iterating it, for every sampler the Trainer replays; anything else keeps the loader."""

import pytest
import torch
from torch import nn
from torch.utils.data import (DataLoader, Dataset, Subset, TensorDataset, WeightedRandomSampler,
                              default_collate)

from trainwell.fit import data as data_mod
from trainwell.fit.callbacks import Callback
from trainwell.fit.data import LoaderSource, in_memory
from trainwell.fit.trainer import Trainer

CPU = torch.device("cpu")


def tensors(n=50):
    g = torch.Generator().manual_seed(7)
    return torch.randn(n, 6, generator=g), torch.randint(0, 3, (n,), generator=g)


def model():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3))


LOADERS = {
    "shuffled": lambda ds: DataLoader(ds, batch_size=8, shuffle=True),
    "in order": lambda ds: DataLoader(ds, batch_size=8),
    "seeded generator": lambda ds: DataLoader(ds, batch_size=8, shuffle=True,
                                              generator=torch.Generator().manual_seed(5)),
    "drop_last": lambda ds: DataLoader(ds, batch_size=8, shuffle=True, drop_last=True),
    "weighted sampler": lambda ds: DataLoader(ds, batch_size=8, sampler=WeightedRandomSampler(
        torch.linspace(0.1, 1.0, len(ds)), num_samples=len(ds) + 3)),
    "subset": lambda ds: DataLoader(Subset(ds, list(range(45, 2, -2))), batch_size=4, shuffle=True),
    "nested subset": lambda ds: DataLoader(Subset(Subset(ds, torch.arange(40)), [3, 1, 4, 1, 5, 9, 2, 6]),
                                           batch_size=3),
    "batch sampler": lambda ds: DataLoader(ds, batch_sampler=[[0, 5, 9], [2], [49, 48, 1, 0]]),
}


def run(loader, slow, monkeypatch, epochs=3, **kw):
    """Train on ``loader`` (the fast path, or the private DataLoader when ``slow``); the
    weights and the global RNG state after each epoch."""
    with monkeypatch.context() as patch:
        if slow:
            patch.setattr(data_mod, "in_memory", lambda loader: None)
        m = model()
        rng = []

        class Record(Callback):
            def on_epoch_end(self, trainer, state, record):
                rng.append(torch.get_rng_state())

        Trainer(m, lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), loss=nn.CrossEntropyLoss(),
                max_epochs=epochs, progress=False, device="cpu", callbacks=[Record()], **kw).fit(loader)
    return m.state_dict(), rng


@pytest.mark.parametrize("kind", list(LOADERS))
def test_weights_and_rng_are_bitwise_those_of_iterating_the_loader(kind, monkeypatch):
    ds = TensorDataset(*tensors())
    assert LoaderSource(LOADERS[kind](ds), CPU, seed=0)._memory is not None  # the fast path runs
    fast, fast_rng = run(LOADERS[kind](ds), False, monkeypatch)
    slow, slow_rng = run(LOADERS[kind](ds), True, monkeypatch)
    for key in slow:
        assert torch.equal(fast[key], slow[key]), key
    assert len(fast_rng) == 3 and all(torch.equal(a, b) for a, b in zip(fast_rng, slow_rng))
    assert not torch.equal(fast["0.weight"], model().state_dict()["0.weight"])  # it trained


@pytest.mark.parametrize("kind", list(LOADERS))
def test_each_batch_is_what_default_collate_makes_of_the_same_indices(kind):
    ds = TensorDataset(*tensors())
    loader = LOADERS[kind](ds)
    src = LoaderSource(loader, CPU, seed=3)
    for epoch in (0, 1):
        expected = [default_collate([loader.dataset[i] for i in b]) for b in src.batches(epoch)]
        got = list(src.epoch(epoch))
        assert len(got) == len(expected) == src.num_batches
        for a, b in zip(got, expected):
            assert type(a) is type(b) is list and len(a) == len(b) == 2
            assert all(x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y) for x, y in zip(a, b))
        assert [torch.equal(a[0], b[0]) for a, b in zip(src.epoch(epoch, start=2), got[2:])] == \
            [True] * (len(got) - 2)  # a resume cuts the same tail


def test_tensors_on_another_device_are_cut_there_as_the_collate_stacks_them_there():
    # meta stands in for a GPU: the same code path, no values. It does not refuse a CPU index
    # as CUDA's index_select does, so this checks where batches land, not that refusal.
    meta = torch.device("meta")
    x, y = (t.to(meta) for t in tensors())
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    src = LoaderSource(loader, meta, seed=0)
    assert src._memory is not None
    expected = [default_collate([loader.dataset[i] for i in b]) for b in src.batches(0)]
    got = list(src.epoch(0))
    assert [[(t.device, t.shape, t.dtype) for t in b] for b in got] == \
        [[(t.device, t.shape, t.dtype) for t in b] for b in expected]


def test_a_batch_is_a_copy_so_an_inplace_model_cannot_change_the_data():
    x, y = tensors()
    before = x.clone()
    src = LoaderSource(DataLoader(TensorDataset(x, y), batch_size=50), CPU, seed=0)
    next(iter(src.epoch(0)))[0].mul_(0)
    assert torch.equal(x, before)


def test_resume_mid_epoch_on_the_fast_path_equals_the_loader_uninterrupted(tmp_path, monkeypatch):
    ds = TensorDataset(*tensors())
    whole, _ = run(LOADERS["shuffled"](ds), True, monkeypatch)  # the private DataLoader, no stop
    m = model()
    calls = {"n": 0}

    def make(mod):
        return Trainer(mod, lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), loss=nn.CrossEntropyLoss(),
                       max_epochs=3, progress=False, device="cpu", run_dir=tmp_path, accumulate=2)

    trainer = make(m)

    def hook(module, inputs):
        calls["n"] += 1
        if calls["n"] == 10:  # epoch 2 (7 batches per epoch), inside a window
            trainer.request_stop()

    handle = m.register_forward_pre_hook(hook)
    trainer.fit(LOADERS["shuffled"](ds))
    handle.remove()
    resumed = model()
    make(resumed).fit(LOADERS["shuffled"](ds), resume=tmp_path)
    again, _ = run(LOADERS["shuffled"](ds), True, monkeypatch, accumulate=2)
    for key, value in again.items():
        assert torch.equal(resumed.state_dict()[key], value), key
    assert not all(torch.equal(whole[k], again[k]) for k in whole)  # accumulate changed the run


class Rows(Dataset):
    def __init__(self, x):
        self.x = x

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]


class Doubled(TensorDataset):
    def __getitem__(self, i):
        return tuple(t[i] * 2 for t in self.tensors)


@pytest.mark.parametrize("make", [
    lambda x, y: DataLoader(TensorDataset(x, y), batch_size=4, collate_fn=lambda s: default_collate(s)),
    lambda x, y: DataLoader(TensorDataset(x, y), batch_size=4, num_workers=2),
    lambda x, y: DataLoader(Rows(x), batch_size=4),
    lambda x, y: DataLoader(Doubled(x, y), batch_size=4),
    lambda x, y: DataLoader(TensorDataset(x.t().contiguous().t(), y), batch_size=4),  # not contiguous
    lambda x, y: DataLoader(Subset(TensorDataset(x, y), [-1, 2]), batch_size=4),
    lambda x, y: DataLoader(TensorDataset(x, y), batch_size=None),  # one sample at a time
])
def test_anything_else_keeps_the_loader(make):
    loader = make(*tensors())
    assert in_memory(loader) is None
    src = LoaderSource(loader, CPU, seed=0)
    assert src._private is not None and src.size_of is data_mod.batch_size_of
