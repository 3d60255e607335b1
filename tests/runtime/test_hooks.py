"""After watch() exits, PyTorch is exactly as it was: every patch undone, every global hook removed."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
import torch.nn.utils
import torch.nn.utils.clip_grad
import torch.optim.lr_scheduler as lr_scheduler
import torch.serialization
import torch.utils.data.dataloader as dataloader
from torch import nn
from torch.nn.modules import module as module_hooks
from torch.optim import optimizer as optimizer_hooks

from trainwell.runtime.watcher import watch


def snapshot() -> dict[str, object]:
    """Every callable the watcher may patch and every global hook registry, by identity and content."""
    state: dict[str, object] = {
        "autograd.backward": torch.autograd.backward,
        "torch.load": torch.load,
        "serialization.load": torch.serialization.load,
        "torch.save": torch.save,
        "serialization.save": torch.serialization.save,
        # only our own entry: torch may import sympy (which adds filters) on first use
        "warnings.filters": [f for f in warnings.filters if f[1] is not None and "lr_scheduler" in f[1].pattern],
    }
    for cls in (torch.optim.Optimizer, nn.Module, dataloader.DataLoader, dataloader._BaseDataLoaderIter, torch.amp.GradScaler):
        for name in ("zero_grad", "train", "__call__", "__init__", "__iter__", "__next__", "scale", "unscale_", "update"):
            state[f"{cls.__name__}.{name}"] = cls.__dict__.get(name)
    for cls in vars(lr_scheduler).values():
        if isinstance(cls, type) and issubclass(cls, lr_scheduler.LRScheduler):
            state[f"{cls.__name__}.step"] = cls.__dict__.get("step")
    for name in ("item", "tolist", "numpy", "cpu", "__repr__"):
        state[f"Tensor.{name}"] = torch.Tensor.__dict__.get(name)
    for module in (torch.nn.utils, torch.nn.utils.clip_grad):
        for name in ("clip_grad_norm_", "clip_grad_value_"):
            state[f"{module.__name__}.{name}"] = getattr(module, name)
    for name in ("cross_entropy", "nll_loss", "binary_cross_entropy_with_logits"):
        state[f"F.{name}"] = getattr(F, name)
    for registry in ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks"):
        state[registry] = dict(getattr(optimizer_hooks, registry))
    for registry in ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                     "_global_forward_hooks_always_called", "_global_forward_hooks_with_kwargs"):
        state[registry] = dict(getattr(module_hooks, registry))
    return state


def train_a_little() -> None:
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = lr_scheduler.StepLR(optimizer, 1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4)
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
    model.eval()


def test_everything_installed_is_removed() -> None:
    before = snapshot()
    with watch(select=["ALL", "TW503"]):
        during = snapshot()
        train_a_little()
    assert snapshot() == before
    assert during != before  # the watcher did install something: the comparison can fail


def test_removed_after_an_exception_in_the_block() -> None:
    before = snapshot()
    with pytest.raises(ZeroDivisionError):
        with watch():
            train_a_little()
            1 / 0
    assert snapshot() == before


def test_nested_watches_restore_in_order() -> None:
    before = snapshot()
    with watch() as outer:
        with watch() as inner:
            train_a_little()
        train_a_little()
    assert snapshot() == before
    assert inner.steps == outer.steps == 2  # steps: the most any one optimizer took
