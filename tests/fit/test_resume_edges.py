"""Runs that tell their story: early stopping, resumes of stopped or finished runs, and the
batch arithmetic of a checkpoint from another number of processes (issue 19), exact messages."""

import warnings

import pytest
import torch
from torch import nn

from trainwell.fit.preflight import PreflightWarning
from trainwell.fit.trainer import FinishedRunWarning, Trainer
from tiny import make_data, make_model


def make(run_dir, **kw):
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=30, batch_size=6, run_dir=run_dir,
                progress=False, device="cpu", early_stopping_patience=2)
    args.update(kw)
    return Trainer(make_model(), lambda p: torch.optim.SGD(p, lr=0.5), **args)


def fit_stopping_early(run_dir, capsys):
    x, y = make_data()
    # Validation on shuffled labels: the val_loss cannot keep improving, early stopping ends it.
    y_val = y[torch.randperm(len(y), generator=torch.Generator().manual_seed(9))]
    result = make(run_dir).fit((x, y), val_data=(x, y_val))
    return result, capsys.readouterr().err, (x, y), (x, y_val)


def test_early_stopping_says_why_and_when(tmp_path, capsys):
    result, err, _, _ = fit_stopping_early(tmp_path / "run", capsys)
    state = result.state
    assert result.stopped_early and not result.already_finished and state.epoch < 30
    assert state.bad_epochs == 2 and state.epoch == state.best_epoch + 2
    assert err == (f"trainwell: early stopping after epoch {state.epoch}: val_loss did not improve "
                   f"for 2 epochs (early_stopping_patience=2); best {state.best:.4g} at epoch "
                   f"{state.best_epoch}; best checkpoint {tmp_path / 'run' / 'checkpoints' / 'best.ckpt'}\n")


def test_a_run_ending_at_max_epochs_did_not_stop_early(tmp_path, capsys):
    x, y = make_data()
    result = make(None, max_epochs=2).fit((x, y), val_data=(x, y))
    assert not result.stopped_early and capsys.readouterr().err == ""


def test_resuming_an_early_stopped_run_trains_nothing_and_says_so(tmp_path, capsys):
    run = tmp_path / "run"
    done, _, train, val = fit_stopping_early(run, capsys)
    epoch, step = done.state.epoch, done.state.step
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = make(run).fit(train, val_data=val, resume=run)
    [warning] = [w for w in caught if w.category is FinishedRunWarning]
    assert str(warning.message) == (
        f"resume={str(run)!r}: the run already finished (step {step}, after epoch {epoch}; stopped "
        "early: val_loss did not improve for 2 epochs; early_stopping_patience=2); nothing was "
        "trained or written; to train longer, pass early_stopping_patience=3 or more (or None)")
    assert again.already_finished and again.stopped_early and again.state.epoch == epoch
    longer = make(run, early_stopping_patience=None, max_epochs=epoch + 1).fit(train, val_data=val,
                                                                              resume=run)
    assert longer.state.epoch == epoch + 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"trainwell: resumed from {run / 'checkpoints' / f'step-{step:08d}.ckpt'} "
        f"(step {step}, after epoch {epoch})")


def test_the_finished_advice_uses_the_run_epoch_not_the_smaller_limit(tmp_path):
    x, y = make_data()
    make(tmp_path, max_epochs=4, early_stopping_patience=None).fit((x, y))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make(tmp_path, max_epochs=2, early_stopping_patience=None).fit((x, y), resume=tmp_path)
    [warning] = [w for w in caught if w.category is FinishedRunWarning]
    assert str(warning.message).endswith(
        "(step 40, after epoch 4; max_epochs=2); nothing was trained or written; to train longer, "
        "pass max_epochs=5 or more")


def test_another_global_batch_gives_the_batch_size_that_continues_exactly(tmp_path):
    x, y = make_data()
    make(tmp_path / "a", max_epochs=1, early_stopping_patience=None).fit((x, y))  # global batch 6
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make(tmp_path / "b", max_epochs=2, batch_size=3, early_stopping_patience=None).fit(
            (x, y), resume=tmp_path / "a")
    [warning] = [w for w in caught if w.category is PreflightWarning and "data order" in str(w.message)]
    ckpt = tmp_path / "a" / "checkpoints" / "step-00000010.ckpt"
    assert str(warning.message) == (
        f"resuming {ckpt} with a different data order (batch_size 6 -> 3, num_batches 10 -> 20): "
        "the run will not continue exactly; its global batch is 6 (batch_size x processes): pass "
        "batch_size=6 to continue exactly in 1 process")
