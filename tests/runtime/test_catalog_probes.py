"""The runtime evidence of the resume, many-process, loss and data probes (TW110, TW112, TW304,
TW305, TW405): what each finding says is what a user needs to act on, measured in the run.
(TW111 needs two ranks: see tests/fit/test_trainer_catalog.py's worker and test_data_not_sharded.)"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pad_sequence

from trainwell.runtime.watcher import watch


def _fit(loss_of, steps: int = 3, model: nn.Module | None = None, x: torch.Tensor | None = None) -> list:
    torch.manual_seed(0)
    model = model or nn.Linear(4, 1)
    x = torch.randn(8, 4) if x is None else x
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    with warnings.catch_warnings(), watch(select=["TW304", "TW305"]) as w:
        warnings.simplefilter("ignore")
        for _ in range(steps):
            optimizer.zero_grad()
            loss_of(model, x).backward()
            optimizer.step()
    return w.findings


@pytest.mark.parametrize("loss_of", [
    lambda m, x: nn.MSELoss()(m(x), x.sum(1)),
    lambda m, x: nn.HuberLoss()(m(x), x.sum(1)),
    lambda m, x: F.smooth_l1_loss(m(x), x.sum(1)),
    lambda m, x: F.l1_loss(m(x), x.sum(1)),
    lambda m, x: ((m(x) - x.sum(1)) ** 2).mean(),
    lambda m, x: (m(x) - x.sum(1)).abs().mean(),
    lambda m, x: F.mse_loss(m(x).squeeze(-1), x.sum(1, keepdim=True)),
], ids=["MSELoss", "HuberLoss", "smooth_l1", "l1", "hand-squared", "hand-abs", "squeezed-vs-keepdim"])
def test_tw304_names_both_shapes_and_the_grid(loss_of):
    (finding,) = _fit(loss_of)
    assert finding.code == "TW304" and "[8, 8]" in finding.message and "64 pairs instead of 8" in finding.message
    assert "[8, 1]" in finding.message or "[8]" in finding.message


@pytest.mark.parametrize("loss_of", [
    lambda m, x: nn.MSELoss()(m(x), x.sum(1, keepdim=True)),
    lambda m, x: ((m(x).squeeze(-1) - x.sum(1)) ** 2).mean(),
    lambda m, x: (torch.tensor([1.0, 2.0, 3.0]) * (m(x) - x[:, :3]) ** 2).mean(),  # a per-feature weight
    lambda m, x: ((m(x)[:, None, :] - m(x)[None, :, :]) ** 2).mean(),  # a deliberate pairwise grid
], ids=["same-shape", "squeezed", "per-feature-weight", "pairwise"])
def test_tw304_is_silent_on_equal_shapes_and_deliberate_broadcasts(loss_of):
    assert _fit(loss_of, model=nn.Linear(4, 3) if "x[:, :3]" in str(loss_of.__code__.co_consts) else None) == []


def _tagging(padding_value: int, ignore_index: int = -100, reduction: str = "mean") -> list:
    torch.manual_seed(0)
    lengths = [5, 2, 3, 1]
    tags = pad_sequence([torch.randint(1, 4, (n,)) for n in lengths], batch_first=True, padding_value=padding_value)
    model = nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 4))
    tokens = pad_sequence([torch.randint(1, 10, (n,)) for n in lengths], batch_first=True)
    criterion = nn.CrossEntropyLoss(ignore_index=ignore_index, reduction=reduction)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(select=["TW305"]) as w:
        for _ in range(3):
            optimizer.zero_grad()
            loss = criterion(model(tokens).view(-1, 4), tags.view(-1))
            (loss if reduction != "none" else loss.mean()).backward()
            optimizer.step()
    return w.findings


def test_tw305_names_the_pad_value_and_its_share():
    (finding,) = _tagging(padding_value=0)
    # 4 rows of 5: 0 + 3 + 2 + 4 padded positions = 9 of 20
    assert "padded with 0" in finding.message and "ignore_index=-100" in finding.message and "45%" in finding.message


@pytest.mark.parametrize("setup", [{"padding_value": -100}, {"padding_value": 0, "ignore_index": 0},
                                   {"padding_value": 0, "reduction": "none"}], ids=["pad-minus-100", "ignore-pad", "none"])
def test_tw305_is_silent_when_the_padding_is_ignored(setup):
    assert _tagging(**setup) == []


def test_tw305_reads_random_tokens_as_data_not_padding():
    """A language model on random tokens from a small vocabulary: rows often end with the same token by chance
    (half of these batches did, before the probe asked that the value occur only in the end runs)."""
    from trainwell.runtime.probes.padding_in_loss import padding

    generator = torch.Generator().manual_seed(0)
    batches = [torch.randint(0, 8, (4, 12), generator=generator) for _ in range(500)]
    assert [b for b in batches if padding(b) is not None] == []
    assert padding(torch.tensor([[5, 6, 7, 0, 0], [5, 6, 0, 0, 0], [5, 6, 7, 8, 9]])) == (0, 5 / 15)


def _distributed_epochs(set_epoch: bool, epochs: int = 3) -> list:
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    data = TensorDataset(torch.randn(24, 4), torch.randint(0, 2, (24,)))
    sampler = DistributedSampler(data, num_replicas=2, rank=0)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(select=["TW110"]) as w:
        for epoch in range(epochs):
            if set_epoch:
                sampler.set_epoch(epoch)
            for x, y in loader:
                optimizer.zero_grad()
                F.cross_entropy(model(x), y).backward()
                optimizer.step()
    return w.findings


def test_tw110_names_the_epoch_that_repeats_the_previous_order():
    (finding,) = _distributed_epochs(set_epoch=False)
    assert "epoch 1 (pass 2 over this loader)" in finding.message and "order of epoch 0" in finding.message
    assert "12 samples" in finding.message and finding.count == 2  # epochs 1 and 2 both repeat
    assert _distributed_epochs(set_epoch=True) == []


def _evaluate_twice(transform, views: int = 1, watched: bool = True) -> tuple[list, torch.Tensor]:
    """Two evaluation passes over a dataset with ``transform``; the findings and 3 numbers drawn after them."""
    import contextlib

    from torch.utils.data import DataLoader, Dataset

    class Rows(Dataset):
        def __init__(self):
            self.x, self.transform = torch.randn(12, 4), transform

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            return self.transform(self.x[i])

    torch.manual_seed(5)
    model = nn.Linear(4, 1)
    loader = DataLoader(Rows(), batch_size=6)
    w = watch(select=["TW405"]) if watched else contextlib.nullcontext()
    with w, torch.no_grad():
        for _ in range(2):
            for x in loader:
                for _ in range(views):
                    model(x)
    return (w.findings if watched else []), torch.rand(3)


class _Jitter:
    def __call__(self, x):
        return x + torch.randn_like(x)


def test_tw405_names_the_random_transform_and_leaves_the_run_s_random_state_alone():
    (finding,), after = _evaluate_twice(_Jitter())
    assert "`_Jitter`" in finding.message and "two reads of its first sample differ" in finding.message
    _, unwatched = _evaluate_twice(_Jitter(), watched=False)
    assert torch.equal(after, unwatched)  # the probe's reads drew from forked generators only


def test_tw405_is_silent_on_deterministic_transforms_and_test_time_augmentation():
    assert _evaluate_twice(lambda x: x * 2)[0] == []
    assert _evaluate_twice(_Jitter(), views=4)[0] == []


def _resume_run(restore: set[str], path=None) -> list:
    """Train 4 steps, save everything, rebuild as a new process would, restore ``restore``, train 3 more, watched."""
    import io

    def build():
        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.9)
        scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=1)
        return model, optimizer, scheduler, scaler

    def train(model, optimizer, scheduler, scaler, steps):
        for _ in range(steps):
            optimizer.zero_grad()
            scaler.scale(F.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 2, (8,)))).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()

    parts = build()
    train(*parts, 4)
    target = path if path is not None else io.BytesIO()
    torch.save({name: part.state_dict() for name, part in zip(("model", "optimizer", "scheduler", "scaler"), parts)}, target)
    if path is None:
        target.seek(0)
    parts = build()
    with watch(select=["TW112"]) as w:
        checkpoint = torch.load(target, weights_only=True)
        for name, part in zip(("model", "optimizer", "scheduler", "scaler"), parts):
            if name in restore:
                part.load_state_dict(checkpoint[name])
        train(*parts, 3)
    return w.findings


def test_tw112_names_each_state_that_restarted_at_the_first_step_after_the_load(tmp_path):
    (finding,) = _resume_run({"model"}, path=tmp_path / "last.pt")
    assert "Adam steps with empty state" in finding.message and "its 2 parameters" in finding.message
    assert "StepLR restarted at step 0 (the checkpoint saved it at 4)" in finding.message
    assert "GradScaler restarted at its initial scale 1024" in finding.message and finding.step == 1
    (only,) = _resume_run({"model", "optimizer", "scaler"})
    assert "StepLR" in only.message and "Adam" not in only.message and "GradScaler" not in only.message


def test_tw112_is_silent_when_everything_comes_back_and_for_a_new_optimizer():
    assert _resume_run({"model", "optimizer", "scheduler", "scaler"}) == []
    import io

    buffer = io.BytesIO()
    torch.save({"model": nn.Linear(4, 2).state_dict(), "epoch": 3}, buffer)  # weights only: fine-tuning
    buffer.seek(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with watch(select=["TW112"]) as w:
        model.load_state_dict(torch.load(buffer, weights_only=True)["model"])
        optimizer.zero_grad()
        model(torch.randn(2, 4)).sum().backward()
        optimizer.step()
    assert w.findings == []


def test_tw111_two_ranks_reading_the_same_whole_dataset_are_reported_with_the_sample_count(tmp_path):
    """TW111 on two real gloo ranks: a loader every rank reads whole is reported on both, with the count;
    a DistributedSampler and a Subset by rank are not."""
    import json
    import os
    import signal
    import socket
    import subprocess
    import sys
    from pathlib import Path

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    worker = Path(__file__).with_name("catalog_ranks.py")
    proc = subprocess.Popen([sys.executable, str(worker), str(tmp_path), str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the two ranks did not finish in 180 s; their process group was killed")
    assert proc.returncode == 0, err[-3000:]
    for rank in (0, 1):
        found = json.loads((tmp_path / f"rank{rank}.json").read_text())
        (message,) = found["whole"]
        assert "every one of the 2 ranks reads all 48 samples" in message and "96 reads for 48" in message
        assert found["sampler"] == [] and found["subset"] == []
