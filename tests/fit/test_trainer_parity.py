"""The engine's main test: the Trainer equals the correct hand-written loop, bitwise."""

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from trainwell.fit.trainer import Trainer

N, D, C = 80, 6, 3


def make_model() -> nn.Module:
    torch.manual_seed(123)
    return nn.Sequential(nn.Linear(D, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, C))


def make_data():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(N, D, generator=g)
    y = torch.randint(0, C, (N,), generator=g)
    return x, y


def make_opt(kind):
    if kind == "sgd":
        return lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-3)
    return lambda p: torch.optim.AdamW(p, lr=1e-2)


def make_sched(kind):
    if kind == "step-epoch":
        return lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5), "epoch"
    if kind == "lambda-step":
        return lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda s: min(1.0, (s + 1) / 5)), "step"
    return None, "epoch"


def reference(model, opt_factory, sched_factory, interval, x, y, epochs, bs, k, clip, seed=0,
              loader=None):
    """The correct plain-PyTorch loop, written out by hand."""
    opt = opt_factory([p for p in model.parameters() if p.requires_grad])
    sched = sched_factory(opt) if sched_factory else None
    torch.manual_seed(seed)
    nb = math.ceil(len(x) / bs)
    model.train()
    for epoch in range(epochs):
        perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed + epoch))
        for i in range(nb):
            if loader is None:
                idx = perm[i * bs:(i + 1) * bs]
                xb, yb = x[idx], y[idx]
            else:
                idx = perm.tolist()[i * bs:(i + 1) * bs]
                xb, yb = loader.collate_fn([loader.dataset[j] for j in idx])
            window = min(k, nb - (i - i % k))
            loss = F.cross_entropy(model(xb), yb) / window
            loss.backward()
            if (i + 1) % k == 0 or i + 1 == nb:
                if clip is not None:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                opt.step()
                if sched is not None and interval == "step":
                    sched.step()
                opt.zero_grad(set_to_none=True)
        if sched is not None and interval == "epoch":
            sched.step()
    return model.state_dict()


def assert_bitwise(a, b):
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


@pytest.mark.parametrize("opt,k,clip,sched,bs", [
    ("sgd", 1, None, None, 16),
    ("sgd", 3, 0.5, "step-epoch", 8),      # 10 batches: windows 3,3,3,1
    ("adam", 4, 0.1, "lambda-step", 8),    # 10 batches: windows 4,4,2
    ("adam", 1, 1.0, "lambda-step", 7),    # last batch of 3 samples
])
def test_trainer_equals_hand_written_loop(opt, k, clip, sched, bs):
    x, y = make_data()
    base = make_model()
    sched_factory, interval = make_sched(sched)
    expected = reference(copy.deepcopy(base), make_opt(opt), sched_factory, interval,
                         x, y, epochs=3, bs=bs, k=k, clip=clip)
    model = copy.deepcopy(base)
    Trainer(model, make_opt(opt), loss=nn.CrossEntropyLoss(), scheduler=sched_factory,
            scheduler_interval=interval, max_epochs=3, batch_size=bs, accumulate=k,
            clip_grad_norm=clip, progress=False, device="cpu").fit((x, y))
    assert_bitwise(model.state_dict(), expected)


def test_dataloader_path_equals_hand_written_loop():
    x, y = make_data()
    base = make_model()
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    sched_factory, interval = make_sched("step-epoch")
    expected = reference(copy.deepcopy(base), make_opt("sgd"), sched_factory, interval,
                         x, y, epochs=2, bs=8, k=3, clip=0.5, loader=loader)
    model = copy.deepcopy(base)
    Trainer(model, make_opt("sgd"), loss=nn.CrossEntropyLoss(), scheduler=sched_factory,
            max_epochs=2, accumulate=3, clip_grad_norm=0.5, progress=False,
            device="cpu").fit(loader)
    assert_bitwise(model.state_dict(), expected)


def test_accumulation_matches_one_larger_batch():
    x, y = make_data()
    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(D, 16), nn.Tanh(), nn.Linear(16, C))  # no dropout
    small, big = copy.deepcopy(base), copy.deepcopy(base)
    common = dict(loss=nn.CrossEntropyLoss(), max_epochs=2, progress=False, device="cpu")
    Trainer(small, lambda p: torch.optim.SGD(p, lr=0.5), batch_size=5, accumulate=4,
            **common).fit((x, y))
    Trainer(big, lambda p: torch.optim.SGD(p, lr=0.5), batch_size=20, **common).fit((x, y))
    for a, b in zip(small.parameters(), big.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert not torch.equal(small[0].weight, base[0].weight)


def test_partial_window_is_divided_by_its_real_size():
    from trainwell.fit.accumulate import Windows

    w = Windows(4, 10)
    assert [w.divisor(i) for i in range(10)] == [4] * 8 + [2, 2]
    assert [Windows(3, 9).divisor(i) for i in range(9)] == [3] * 9
