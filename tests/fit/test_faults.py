"""Faults in one process: signals, code-carrying checkpoints, non-finite losses, stale files."""

import hashlib
import io
import os
import signal
import threading

import pytest
import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.fit import checkpoint as ckpt
from trainwell.fit.trainer import Trainer

from tiny import C, D, make_data, make_model


def make_trainer(model, run_dir, **kw):
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=3, batch_size=6, accumulate=2,
                progress=False, device="cpu", run_dir=run_dir, log_every=50)
    args.update(kw)
    return Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-2), **args)


def signal_at(model, micro_batch, signum):
    calls = {"n": 0}

    def hook(module, inputs):
        if module.training:
            calls["n"] += 1
            if calls["n"] == micro_batch:
                os.kill(os.getpid(), signum)

    return model.register_forward_pre_hook(hook)


def test_sigterm_finishes_the_batch_checkpoints_says_so_and_restores_handlers(tmp_path, capsys):
    data = make_data()
    full = make_model()
    make_trainer(full, None).fit(data)

    def mine(signum, frame):
        raise AssertionError("the user's handler must not run during fit")

    before = {s: signal.signal(s, mine) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        model = make_model()
        handle = signal_at(model, 13, signal.SIGTERM)
        cut = make_trainer(model, tmp_path).fit(data)
        handle.remove()
        assert signal.getsignal(signal.SIGTERM) is mine and signal.getsignal(signal.SIGINT) is mine
    finally:
        for s, h in before.items():
            signal.signal(s, h)
    assert cut.interrupted and cut.state.step == 6 and cut.state.batch == 3  # epoch 2, mid-window
    err = capsys.readouterr().err
    assert "SIGTERM: stopping after this batch" in err
    assert f"checkpoint {cut.last_checkpoint}" in err and f"--resume {tmp_path}" in err
    resumed = make_model(seed=9)
    make_trainer(resumed, tmp_path).fit(data, resume=tmp_path)
    for key, value in full.state_dict().items():
        assert torch.equal(resumed.state_dict()[key], value), key


def test_no_handlers_outside_the_main_thread(tmp_path):
    seen = {}

    class Probe(nn.Linear):
        def forward(self, x):
            seen["handler"] = signal.getsignal(signal.SIGTERM)
            return super().forward(x)

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=lambda: make_trainer(Probe(D, C), None, max_epochs=1)
                              .fit(make_data()))
    thread.start()
    thread.join()
    assert seen["handler"] is before


class _RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):  # unpickling would create the marker file
        return (os.system, (f"touch {self.marker}",))


def test_a_checkpoint_that_would_run_code_is_refused_in_one_line(tmp_path):
    marker = tmp_path / "pwned"
    buf = io.BytesIO()
    torch.save({"model": {"w": torch.zeros(2)}, "x": _RunsCode(marker)}, buf)
    body = buf.getvalue()
    path = tmp_path / "checkpoints" / "step-00000001.ckpt"
    path.parent.mkdir()
    header = ckpt.MAGIC + f" sha256={hashlib.sha256(body).hexdigest()} size={len(body)}\n".encode()
    path.write_bytes(header + body)  # a valid header and checksum: only weights_only stands guard
    assert ckpt.is_good(path)
    with pytest.raises(TrainwellError) as err:
        make_trainer(make_model(), tmp_path).fit(make_data(), resume=tmp_path)
    message = str(err.value)
    assert not marker.exists()
    assert "\n" not in message and str(path) in message
    assert "would run code" in message and "system" in message and "weights_only" in message


def test_nonfinite_raise_stops_before_saving_bad_weights_and_names_the_last_good(tmp_path):
    model = make_model()
    calls = {"n": 0}

    def poison(module, inputs, output):  # the 15th micro-batch: epoch 2, batch 4 -> step 8
        calls["n"] += module.training
        return output * float("nan") if calls["n"] == 15 and module.training else output

    model.register_forward_hook(poison)
    with pytest.raises(TrainwellError) as err:
        make_trainer(model, tmp_path, checkpoint_every=1, keep_last=2).fit(make_data())
    files = ckpt.step_files(tmp_path / "checkpoints")
    assert [f.name for f in files] == ["step-00000006.ckpt", "step-00000007.ckpt"]
    message = str(err.value)
    assert "at optimizer step 8 (epoch 2, batch 4)" in message
    assert f"the last good checkpoint is {files[-1]}" in message
    for f in files:  # keep_last never pruned the good ones in favour of nan weights
        weights = ckpt.load_checkpoint(f)["model"]
        assert all(torch.isfinite(v).all() for v in weights.values())


def test_nonfinite_skip_limit_names_the_last_good_checkpoint(tmp_path):
    x, y = make_data()
    x[:] = float("nan")
    with pytest.raises(TrainwellError,
                       match=r"\(last: epoch 2, batch 0\); the last good checkpoint is .*step-00000005"):
        make_trainer(make_model(), tmp_path, nonfinite="skip").fit((x, y))


def test_stale_temp_files_go_and_pruning_keeps_the_newest(tmp_path):
    folder = tmp_path / "checkpoints"
    make_trainer(make_model(), tmp_path, max_epochs=1, checkpoint_every=1,
                 keep_last=2).fit(make_data())
    stale = folder / ".step-00000003.ckpt.tmp-999999"  # a writer killed mid-write
    stale.write_bytes(b"half a checkpoint")
    result = make_trainer(make_model(), tmp_path, max_epochs=2, checkpoint_every=1,
                          keep_last=2).fit(make_data(), resume=tmp_path)
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["best.ckpt", "step-00000009.ckpt", "step-00000010.ckpt"]
    assert result.last_checkpoint == folder / "step-00000010.ckpt"
    assert all(ckpt.is_good(folder / n) for n in names)
