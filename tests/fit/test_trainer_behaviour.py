"""Trainer behaviour: evaluation mode, metrics, batches, non-finite losses, host syncs."""

import dataclasses
import warnings

import pytest
import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.fit.callbacks import Callback
from trainwell.fit.freeze import freeze, trainable_parameters
from trainwell.fit.trainer import Trainer

N, D, C = 30, 4, 3


def data(n=N):
    g = torch.Generator().manual_seed(0)
    return torch.randn(n, D, generator=g), torch.randint(0, C, (n,), generator=g)


def sgd(p):
    return torch.optim.SGD(p, lr=0.1)


def trainer(model, **kw):
    args = dict(loss=nn.CrossEntropyLoss(), max_epochs=2, batch_size=8, progress=False,
                device="cpu")
    args.update(kw)
    return Trainer(model, args.pop("optimizer", sgd), **args)


class Spy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(D, C)
        self.seen = []

    def forward(self, x):
        self.seen.append((self.training, torch.is_inference_mode_enabled(), x.shape[0]))
        return self.lin(x)


def test_validation_runs_in_eval_and_inference_mode_and_train_mode_returns():
    model = Spy()
    trainer(model, max_epochs=2).fit(data(), val_data=data(10))
    train = [s for s in model.seen if s[0]]
    val = [s for s in model.seen if not s[0]]
    assert all(not inf for _, inf, _ in train) and len(train) == 8
    # First the one-batch probe before the first step, then each epoch's 8 + 2 samples.
    assert all(inf for _, inf, _ in val) and [b for *_, b in val] == [8, 8, 2, 8, 2]
    assert model.seen[0][0] is False and model.seen[1][0] is True  # the probe ran first
    assert model.training


def test_metrics_are_weighted_by_batch_size_and_accept_any_kind():
    class MeanPred:  # torchmetrics-like
        def reset(self):
            self.total, self.n = 0.0, 0

        def update(self, out, target):
            self.total += out.sum().item()
            self.n += out.numel()

        def compute(self):
            return torch.tensor(self.total / self.n)

    model = nn.Linear(D, C)
    x, y = data(11)
    t = trainer(model, batch_size=4, metrics={"accuracy": "accuracy",
                                              "top": lambda o, t: o.max(-1).values.mean(),
                                              "mean": MeanPred()})
    got = t.evaluate((x, y))
    with torch.no_grad():
        out = model(x)
    assert got["loss"] == pytest.approx(nn.functional.cross_entropy(out, y).item(), rel=1e-6)
    assert got["accuracy"] == pytest.approx((out.argmax(-1) == y).float().mean().item())
    assert got["top"] == pytest.approx(out.max(-1).values.mean().item(), rel=1e-6)
    assert got["mean"] == pytest.approx(out.mean().item(), rel=1e-5)


def test_no_host_sync_per_step(monkeypatch):
    calls = {"item": 0, "tolist": 0, "bool": 0}
    for name, key in (("item", "item"), ("tolist", "tolist"), ("__bool__", "bool")):
        original = getattr(torch.Tensor, name)

        def counted(self, *a, _o=original, _k=key, **k):
            calls[_k] += 1
            return _o(self, *a, **k)

        monkeypatch.setattr(torch.Tensor, name, counted)
    x, y = torch.randn(200, D), torch.randint(0, C, (200,))
    trainer(nn.Linear(D, C), max_epochs=1, batch_size=8, log_every=10,
            clip_grad_norm=1.0).fit((x, y))
    # 25 steps: one read at steps 10 and 20, one at the epoch end; nothing per step
    assert calls == {"item": 0, "tolist": 3, "bool": 0}


def test_nonfinite_loss_raise_names_step_and_batch():
    x, y = data(40)
    x[17] = float("nan")
    perm = torch.randperm(40, generator=torch.Generator().manual_seed(0))
    batch = int((perm == 17).nonzero()) // 8
    with pytest.raises(TrainwellError) as err:
        trainer(nn.Linear(D, C), accumulate=2).fit((x, y))
    assert f"at optimizer step {batch // 2 + 1} (epoch 1, batch {batch})" in str(err.value)


def test_nonfinite_skip_counts_and_gives_up_after_the_limit():
    x, y = data(40)
    x[3] = float("inf")
    t = trainer(nn.Linear(D, C), nonfinite="skip", max_epochs=3)
    result = t.fit((x, y))
    assert result.state.nonfinite_skipped == 3  # once per epoch
    assert torch.isfinite(t.model.weight).all()
    x[:] = float("nan")
    with pytest.raises(TrainwellError, match="more than 10 batches had a non-finite loss"):
        trainer(nn.Linear(D, C), nonfinite="skip", max_epochs=3).fit((x, y))


@dataclasses.dataclass
class Batch:
    features: torch.Tensor
    labels: torch.Tensor


class HFOutput:
    def __init__(self, loss, logits):
        self.loss, self.logits = loss, logits


class HFModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(D, C)

    def forward(self, features, labels=None):
        logits = self.lin(features)
        loss = None if labels is None else nn.functional.cross_entropy(logits, labels)
        return HFOutput(loss, logits)


def test_dict_dataclass_and_model_loss_batches():
    from torch.utils.data import DataLoader

    x, y = data()
    rows = [{"features": a, "labels": b} for a, b in zip(x, y)]
    dict_loader = DataLoader(rows, batch_size=8)
    result = Trainer(HFModel(), sgd, max_epochs=2, progress=False, device="cpu").fit(
        dict_loader, val_data=dict_loader)  # loss from outputs.loss
    assert result.history[-1]["val_loss"] > 0
    dc_loader = DataLoader(list(zip(x, y)), batch_size=8,
                           collate_fn=lambda s: Batch(torch.stack([a for a, _ in s]),
                                                      torch.stack([b for _, b in s])))

    class Keyword(nn.Module):  # dataclass fields arrive as keywords, "labels" is the target
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(D, C)

        def forward(self, features):
            return self.lin(features)

    result = trainer(Keyword()).fit(dc_loader, val_data=dc_loader)
    assert len(result.history) == 2 and result.history[-1]["val_loss"] > 0


def test_step_function_and_predict():
    model = nn.Linear(D, C)
    x, y = data()

    def step(m, batch):
        xb, yb = batch
        return {"loss": nn.functional.cross_entropy(m(xb), yb) + 0 * m.weight.sum()}

    t = Trainer(model, sgd, step=step, max_epochs=2, progress=False, device="cpu")
    result = t.fit((x, y), val_data=(x, y))
    assert result.history[-1]["val_loss"] == pytest.approx(t.evaluate((x, y))["loss"])
    preds = t.predict(x)
    assert preds.device.type == "cpu" and preds.shape == (N, C) and not preds.requires_grad
    assert torch.equal(preds, t.predict((x, y)))


def test_optimizer_factory_runs_after_placement_with_trainable_params_only():
    events = []

    class Logged(nn.Sequential):
        def _apply(self, fn, *a, **k):
            events.append("placed")
            return super()._apply(fn, *a, **k)

    model = Logged(nn.Linear(D, 8), nn.ReLU(), nn.Linear(8, C))
    freeze(model[0])

    def factory(params):
        events.append("optimizer")
        assert [id(p) for p in params] == [id(p) for p in trainable_parameters(model)]
        return torch.optim.SGD(params, lr=0.1)

    frozen = model[0].weight.detach().clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trainer(model, optimizer=factory).fit(data())
    assert events[0] == "placed" and events[-1] == "optimizer"
    assert torch.equal(model[0].weight, frozen) and model[0].weight.grad is None


def test_callbacks_run_in_order_and_request_stop_ends_the_run():
    seen = []

    class Stopper(Callback):
        def on_fit_start(self, trainer, state):
            seen.append("start")

        def on_step_end(self, trainer, state):
            seen.append(state.step)
            if state.step == 5:
                trainer.request_stop()

        def on_log(self, trainer, state, record):
            seen.append(sorted(record))

        def on_fit_end(self, trainer, result):
            seen.append("end")

    result = trainer(nn.Linear(D, C), log_every=2, max_epochs=5, callbacks=[Stopper()]).fit(data())
    keys = sorted(["step", "epoch", "train_loss", "lr", "samples_per_s"])
    assert seen == ["start", 1, 2, keys, 3, 4, keys, 5, "end"]
    assert result.state.step == 5 and len(result.history) == 1


def test_bad_arguments_are_one_line_errors():
    for kw, match in [({"accumulate": 0}, "accumulate=0 must be a positive integer"),
                      ({"mode": "up"}, "mode='up'"),
                      ({"nonfinite": "ignore"}, "nonfinite='ignore'"),
                      ({"scheduler_interval": "batch",
                        "scheduler": lambda o: torch.optim.lr_scheduler.StepLR(o, 1)},
                       "scheduler_interval='batch'"),
                      ({"metrics": {"f1": "f1"}}, "'f1' is not a built-in metric")]:
        with pytest.raises(TrainwellError, match=match):
            trainer(nn.Linear(D, C), **kw)
    with pytest.raises(TrainwellError, match="monitor='val_f1' is not in the epoch records"):
        trainer(nn.Linear(D, C), monitor="val_f1").fit(data(), val_data=data())
    with pytest.raises(TrainwellError, match="train_data is a str"):
        trainer(nn.Linear(D, C)).fit("data.csv")


def test_deterministic_mode_is_restored_and_seed_repeats_runs():
    runs = []
    for _ in range(2):
        torch.manual_seed(1)
        model = nn.Sequential(nn.Linear(D, 8), nn.Dropout(0.5), nn.Linear(8, C))
        trainer(model, deterministic=True, seed=4).fit(data())
        runs.append(model[0].weight.detach().clone())
    assert torch.equal(runs[0], runs[1])
    assert not torch.are_deterministic_algorithms_enabled()


def test_compile_gives_the_same_weights():
    """Lightly: the "eager" backend runs TorchDynamo's capture without Inductor's code
    generation, which took 59 s for a Linear model on this 2-core machine."""
    runs = []
    for compile in (False, {"backend": "eager"}):
        torch.manual_seed(0)
        model = nn.Linear(D, C)
        trainer(model, compile=compile).fit(data(), val_data=data())
        runs.append(model.weight.detach().clone())
    assert torch.equal(runs[0], runs[1])


def test_a_submodule_the_user_put_in_eval_mode_stays_there():
    model = nn.Sequential(nn.Linear(D, 8), nn.BatchNorm1d(8), nn.Linear(8, C))
    model[1].eval()  # a frozen-statistics BatchNorm
    trainer(model).fit(data(), val_data=data())
    assert model.training and model[0].training and not model[1].training
    frozen = nn.Sequential(nn.Linear(D, C)).eval()
    trainer(frozen).fit(data())
    assert frozen.training  # a model left wholly in eval mode is put in train mode
