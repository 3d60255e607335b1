"""Preflight: each risky setup gives one clear line before the first step."""

import warnings

import pytest
import torch
from torch import nn
from torch.optim import lr_scheduler as S
from torch.utils.data import DataLoader, TensorDataset

from trainwell.errors import TrainwellError
from trainwell.fit.preflight import PreflightWarning
from trainwell.fit.trainer import Trainer

X, Y = torch.randn(40, 3), torch.randint(0, 2, (40,))


def sgd(p):
    return torch.optim.SGD(p, lr=0.1)


def run(model=None, optimizer=sgd, data=(X, Y), **kw):
    model = model or nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=2, batch_size=4, progress=False,
                device="cpu")
    args.update(kw)
    if optimizer == "partial":
        optimizer = torch.optim.SGD(model[0].parameters(), lr=0.1)
    resume = args.pop("resume", None)
    return Trainer(model, optimizer, **args).fit(data, resume=resume)


def one_warning(match, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(**kw)
    mine = [w for w in caught if issubclass(w.category, PreflightWarning)]
    assert len(mine) == 1, [str(w.message) for w in mine]
    assert "\n" not in str(mine[0].message)
    assert match in str(mine[0].message), str(mine[0].message)


def test_clean_setup_has_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(scheduler=lambda o: S.OneCycleLR(o, max_lr=1, total_steps=20),
            scheduler_interval="step")


def test_trainable_parameters_in_no_optimizer():
    one_warning("2 trainable parameter(s) are in no optimizer group and will not train: 2.weight, "
                "2.bias", optimizer="partial")


def test_optimizer_holding_foreign_tensors_is_an_error():
    other = nn.Linear(3, 2)
    with pytest.raises(TrainwellError, match="not parameters of the model"):
        run(optimizer=torch.optim.SGD(other.parameters(), lr=0.1))


def test_onecycle_too_short_is_an_error_and_too_long_a_warning():
    with pytest.raises(TrainwellError, match="total_steps=10 but the run plans 20"):
        run(scheduler=lambda o: S.OneCycleLR(o, max_lr=1, total_steps=10),
            scheduler_interval="step")
    one_warning("total_steps=30 but the run plans 20",
                scheduler=lambda o: S.OneCycleLR(o, max_lr=1, total_steps=30),
                scheduler_interval="step")


def test_onecycle_counts_optimizer_steps_not_batches():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # 10 batches, accumulate 3 -> 4 steps per epoch, 8 in all
        run(scheduler=lambda o: S.OneCycleLR(o, max_lr=1, total_steps=8),
            scheduler_interval="step", accumulate=3)


def test_cosine_horizon_mismatch():
    one_warning("T_max=20 but the run has 2 epochs",
                scheduler=lambda o: S.CosineAnnealingLR(o, T_max=20))


def test_accumulate_larger_than_epoch():
    one_warning("accumulate=16 is larger than an epoch (10 batches)", accumulate=16)


def test_drop_last_with_accumulation():
    loader = DataLoader(TensorDataset(X, Y), batch_size=6, drop_last=True)
    one_warning("drop_last=True with accumulate=2", data=loader, accumulate=2)


def test_batchnorm1d_with_a_last_batch_of_one_is_an_error():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    with pytest.raises(TrainwellError, match=r"BatchNorm layer '1' \(BatchNorm1d\) will see the "
                                             "last batch of each epoch with 1 sample"):
        run(model=model, batch_size=3)  # 40 = 13 * 3 + 1


def test_batchnorm2d_with_a_batch_of_one_warns():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(8, 2))
    data = (torch.randn(9, 1, 4, 4), torch.randint(0, 2, (9,)))
    one_warning("will see the last batch of each epoch with 1 sample", model=model, data=data)


def test_scheduler_for_another_optimizer_is_an_error():
    other = torch.optim.SGD(nn.Linear(3, 2).parameters(), lr=0.1)
    with pytest.raises(TrainwellError, match="built for another optimizer"):
        run(scheduler=S.StepLR(other, 1))


def test_resuming_a_onecycle_run_for_longer_is_an_error(tmp_path):
    def onecycle(total):
        return lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=total)

    run(max_epochs=1, scheduler=onecycle(10), scheduler_interval="step", run_dir=tmp_path)
    run(max_epochs=1, scheduler=onecycle(10), scheduler_interval="step", run_dir=tmp_path,
        resume=tmp_path)  # the same length resumes (nothing left to do)
    with pytest.raises(TrainwellError, match="total_steps=10 but this run plans 20 optimizer "
                                             "steps, and a one-cycle schedule cannot be extended"):
        # The new OneCycleLR is long enough; the checkpoint's state puts back total_steps=10.
        run(max_epochs=2, scheduler=onecycle(20), scheduler_interval="step", run_dir=tmp_path,
            resume=tmp_path)
