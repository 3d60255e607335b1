"""Resume continues bit-exactly; damaged checkpoints fail clearly and leave the previous usable."""


import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from trainwell.errors import TrainwellError
from trainwell.fit import checkpoint as ckpt
from trainwell.fit.trainer import Trainer

from tiny import C, D, N, make_data, make_model


def make_trainer(model, run_dir, **kw):
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=3, batch_size=6, accumulate=3,
                clip_grad_norm=0.5, progress=False, device="cpu", run_dir=run_dir,
                scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 1, gamma=0.7),
                metrics={"acc": "accuracy"}, log_every=2)
    args.update(kw)
    return Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-2), **args)


def stop_after(trainer, model, micro_batches):
    """Ask the trainer to stop after ``micro_batches`` training forwards."""
    calls = {"n": 0}

    def hook(module, inputs):
        if module.training:
            calls["n"] += 1
            if calls["n"] == micro_batches:
                trainer.request_stop()

    return model.register_forward_pre_hook(hook)


def strip_time(history):
    return [{k: v for k, v in r.items() if k != "time_s"} for r in history]


@pytest.mark.parametrize("stop_at", [15, 13])  # epoch 2: mid-window (15) and window end (13 -> 10+3)
def test_resume_mid_epoch_equals_uninterrupted_run(tmp_path, stop_at):
    data = make_data()
    full_model = make_model()
    full = make_trainer(full_model, tmp_path / "full").fit(data, val_data=data)

    model = make_model()
    trainer = make_trainer(model, tmp_path / "cut")
    handle = stop_after(trainer, model, stop_at)
    cut = trainer.fit(data, val_data=data)
    handle.remove()
    assert len(cut.history) == 1 and cut.last_checkpoint is not None
    saved = ckpt.load_checkpoint(cut.last_checkpoint)
    assert saved["state"]["epoch"] == 1 and saved["state"]["batch"] == stop_at - 10
    assert (saved["window_grads"] is not None) == (stop_at == 15)

    resumed_model = make_model(seed=99)  # different init: everything must come from the file
    resumed = make_trainer(resumed_model, tmp_path / "cut").fit(
        data, val_data=data, resume=tmp_path / "cut")
    for key, value in full_model.state_dict().items():
        assert torch.equal(resumed_model.state_dict()[key], value), key
    assert strip_time(resumed.history) == strip_time(full.history)


def test_resume_after_max_steps_with_dataloader(tmp_path):
    x, y = make_data()
    loader = DataLoader(TensorDataset(x, y), batch_size=6, shuffle=True)
    full_model = make_model()
    make_trainer(full_model, None, max_epochs=2).fit(loader)
    model = make_model()
    make_trainer(model, tmp_path, max_epochs=2, max_steps=6).fit(loader)  # epoch 2, batch 5
    resumed = make_model(seed=5)
    make_trainer(resumed, tmp_path, max_epochs=2).fit(loader, resume=tmp_path)
    for key, value in full_model.state_dict().items():
        assert torch.equal(resumed.state_dict()[key], value), key


def _run_with_checkpoints(tmp_path):
    model = make_model()
    result = make_trainer(model, tmp_path, max_epochs=2, checkpoint_every=1, keep_last=3).fit(
        make_data())
    files = ckpt.step_files(tmp_path / "checkpoints")
    assert [f.name for f in files] == ["step-00000006.ckpt", "step-00000007.ckpt",
                                       "step-00000008.ckpt"]  # keep_last=3 pruned the rest
    assert result.last_checkpoint == files[-1]
    return files


@pytest.mark.parametrize("damage", ["corrupt", "truncate"])
def test_damaged_checkpoint_names_file_and_previous_good(tmp_path, damage):
    files = _run_with_checkpoints(tmp_path)
    raw = files[-1].read_bytes()
    if damage == "corrupt":
        pos = len(raw) // 2
        files[-1].write_bytes(raw[:pos] + bytes([raw[pos] ^ 0xFF]) + raw[pos + 1:])
    else:
        files[-1].write_bytes(raw[:len(raw) - 100])
    with pytest.raises(TrainwellError) as err:
        make_trainer(make_model(), tmp_path, max_epochs=3).fit(make_data(), resume=tmp_path)
    message = str(err.value)
    assert str(files[-1]) in message and str(files[-2]) in message
    assert ("truncated" if damage == "truncate" else "checksum") in message
    # the previous one is intact and resumes
    assert ckpt.load_checkpoint(files[-2])["state"]["step"] == 7
    result = make_trainer(make_model(), tmp_path, max_epochs=3).fit(make_data(), resume=files[-2])
    assert result.state.step == 12


def test_not_a_checkpoint_and_missing(tmp_path):
    bad = tmp_path / "x.ckpt"
    bad.write_bytes(b"hello")
    with pytest.raises(TrainwellError, match="not a trainwell checkpoint"):
        ckpt.load_checkpoint(bad)
    with pytest.raises(TrainwellError, match="no checkpoint found"):
        ckpt.resolve_resume(tmp_path / "nothing")


def test_ranks_see_a_checkpoint_that_changed_since_rank_0_read_it(tmp_path):
    files = _run_with_checkpoints(tmp_path)
    sha = ckpt.digest(files[-1])
    assert ckpt.load_checkpoint(files[-1], sha)["state"]["step"] == 8
    with pytest.raises(TrainwellError, match=r"changed while the ranks read it .* rank 0 read "
                                             r"0{12}\); the previous good checkpoint is .*step-00000007"):
        ckpt.load_checkpoint(files[-1], "0" * 64)
    assert ckpt.digest(tmp_path / "nothing.ckpt") is None


def test_incompatible_model_names_keys_and_shapes(tmp_path):
    make_trainer(make_model(), tmp_path, max_epochs=1).fit(make_data())
    other = nn.Sequential(nn.Linear(D, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, C),
                          nn.Linear(C, C))
    with pytest.raises(TrainwellError) as err:
        make_trainer(other, tmp_path, max_epochs=2).fit(make_data(), resume=tmp_path)
    message = str(err.value)
    assert "unexpected" not in message and "missing keys 4.weight, 4.bias" in message
    assert "0.weight (12, 5) vs model (8, 5)" in message


def test_checkpoint_loads_with_weights_only_and_has_everything(tmp_path):
    import io

    result = make_trainer(make_model(), tmp_path, max_epochs=1,
                          precision="16-mixed").fit(make_data())
    raw = result.last_checkpoint.read_bytes()
    payload = raw.partition(b"\n")[2]
    data = torch.load(io.BytesIO(payload), weights_only=True)
    assert {"model", "optimizer", "scheduler", "precision", "state", "rng"} <= set(data)
    assert {"python", "numpy", "torch"} <= set(data["rng"])
    assert "scaler" in data["precision"]
    assert data["state"]["epoch"] == 1 and data["state"]["step"] == 4


def test_best_checkpoint_and_early_stopping(tmp_path):
    x, y = make_data()
    noise = (torch.randn(N, D), torch.randint(0, C, (N,)))  # validation unrelated to training
    model = make_model()
    result = make_trainer(model, tmp_path, max_epochs=30, early_stopping_patience=2,
                          scheduler=None).fit((x, y), val_data=noise)
    values = [r["val_loss"] for r in result.history]
    best = min(range(len(values)), key=values.__getitem__)
    assert result.best == result.history[best]
    assert len(result.history) == best + 3  # stopped after 2 epochs without improvement
    assert ckpt.load_checkpoint(result.best_checkpoint)["state"]["best"] == values[best]


def test_export_weights_safetensors(tmp_path):
    from safetensors.torch import load_file

    model = make_model()
    trainer = make_trainer(model, None, max_epochs=1)
    trainer.fit(make_data())
    path = trainer.export_weights(tmp_path / "w.safetensors")
    loaded = load_file(str(path))
    for key, value in model.state_dict().items():
        assert torch.equal(loaded[key], value)


def test_ctrl_c_saves_an_exact_checkpoint(tmp_path):
    import os
    import signal

    data = make_data()
    full_model = make_model()
    make_trainer(full_model, None).fit(data)

    model = make_model()
    calls = {"n": 0}

    def interrupt(module, inputs):
        if module.training:
            calls["n"] += 1
            if calls["n"] == 14:
                os.kill(os.getpid(), signal.SIGINT)

    handle = model.register_forward_pre_hook(interrupt)
    before = signal.getsignal(signal.SIGINT)
    cut = make_trainer(model, tmp_path).fit(data)
    handle.remove()
    assert cut.interrupted and signal.getsignal(signal.SIGINT) is before
    assert ckpt.load_checkpoint(cut.last_checkpoint)["state"]["batch"] == 4  # mid-window
    resumed = make_model(seed=7)
    make_trainer(resumed, tmp_path).fit(data, resume=cut.last_checkpoint)
    for key, value in full_model.state_dict().items():
        assert torch.equal(resumed.state_dict()[key], value), key


def test_incompatible_optimizer_is_a_clear_error(tmp_path):
    make_trainer(make_model(), tmp_path, max_epochs=1).fit(make_data())
    model = make_model()
    groups = [{"params": list(model[0].parameters())}, {"params": list(model[3].parameters())}]
    trainer = Trainer(model, torch.optim.AdamW(groups, lr=1e-2), loss=nn.CrossEntropyLoss(),
                      max_epochs=2, batch_size=6, progress=False, device="cpu", run_dir=tmp_path)
    with pytest.raises(TrainwellError, match="its optimizer state does not fit"):
        trainer.fit(make_data(), resume=tmp_path)
