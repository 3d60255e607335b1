"""One batch rule for every phase, the phase hooks, and failing before the epoch (issue 19)."""

import dataclasses

import pytest
import torch
from torch import nn

from trainwell import Trainer
from trainwell.errors import TrainwellError
from trainwell.fit.batch import Route


def sgd(params):
    return torch.optim.SGD(params, lr=0.1)


class Tokens(nn.Module):
    """forward(input_ids, attention_mask): a text model that asks for two of the keys."""

    def __init__(self):
        super().__init__()
        self.embed, self.head = nn.Embedding(10, 4), nn.Linear(4, 2)
        self.calls = 0

    def forward(self, input_ids, attention_mask):
        self.calls += 1
        mask = attention_mask.unsqueeze(-1).float()
        return self.head((self.embed(input_ids) * mask).sum(1) / mask.sum(1))


class TakesAll(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = None

    def forward(self, **batch):
        self.seen = sorted(batch)
        return batch["input_ids"].float()


def text_batch(n=4, target="label"):
    ids = torch.randint(0, 10, (n, 5))
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids),
            "lengths": torch.full((n,), 5), target: torch.randint(0, 2, (n,))}


def text_data(n=16, target="label"):
    return [{k: v[i] for k, v in text_batch(n, target).items()} for i in range(n)]


def loader(data):
    return torch.utils.data.DataLoader(data, batch_size=4)


def test_route_passes_only_the_keys_forward_accepts_and_names_the_target():
    batch = text_batch()
    args, kwargs, target = Route(Tokens(), has_loss_fn=True).split(batch)
    assert args == () and sorted(kwargs) == ["attention_mask", "input_ids"]
    assert target is batch["label"]


def test_a_kwargs_forward_gets_every_key_and_without_loss_the_target_too():
    model = TakesAll()
    _, kwargs, target = Route(model, has_loss_fn=False).split(text_batch(target="labels"))
    assert sorted(kwargs) == ["attention_mask", "input_ids", "labels", "lengths"]
    assert target is kwargs["labels"]  # metrics get the target the model's loss used


def test_a_dataclass_batch_is_routed_as_its_fields():
    @dataclasses.dataclass
    class Batch:
        input_ids: torch.Tensor
        attention_mask: torch.Tensor
        y: torch.Tensor

    b = text_batch()
    args, kwargs, target = Route(Tokens(), True).split(Batch(b["input_ids"], b["attention_mask"], b["label"]))
    assert sorted(kwargs) == ["attention_mask", "input_ids"] and target is b["label"]


def test_a_key_forward_needs_that_the_batch_lacks_is_one_line():
    batch = {"ids": torch.zeros(2, 3, dtype=torch.long), "mask": torch.ones(2, 3), "label": torch.zeros(2)}
    with pytest.raises(TrainwellError) as e:
        Route(Tokens(), True).split(batch)
    assert str(e.value) == (
        "the model's forward(input_ids, attention_mask) needs input_ids, attention_mask, but the "
        "batch's keys are ids, mask; rename the key in the dataset or collate function, or pass "
        "step=callable(model, batch)")


def test_pad_collate_extras_do_not_reach_a_forward_without_them_in_any_phase():
    from trainwell.fit.data import pad_collate

    data = [{"input_ids": torch.randint(0, 10, (2 + i % 3,)), "label": i % 2} for i in range(12)]
    make = lambda: torch.utils.data.DataLoader(data, batch_size=4, collate_fn=pad_collate)  # noqa: E731
    trainer = Trainer(Tokens(), sgd, loss=nn.CrossEntropyLoss(), metrics=["accuracy"], max_epochs=1,
                      progress=False, device="cpu")
    record = trainer.fit(make(), val_data=make()).history[-1]
    assert 0.0 <= record["val_accuracy"] <= 1.0
    assert set(trainer.evaluate(make())) == {"loss", "accuracy"}
    assert trainer.predict(make()).shape == (12, 2)


class HFStyle(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Tokens()

    def forward(self, input_ids, attention_mask, labels=None):
        logits = self.body(input_ids, attention_mask)
        loss = None if labels is None else nn.functional.cross_entropy(logits, labels)
        return {"logits": logits, "loss": loss}


def test_a_hugging_face_style_model_gets_metrics_on_its_logits_and_predicts_logits():
    data = text_data(16, target="labels")
    trainer = Trainer(HFStyle(), sgd, metrics=["accuracy"], max_epochs=1, progress=False,
                      device="cpu")
    record = trainer.fit(loader(data), val_data=loader(data)).history[-1]
    logits = trainer.predict(loader(data))
    assert isinstance(logits, torch.Tensor) and logits.shape == (16, 2)
    labels = torch.stack([d["labels"] for d in data])
    expected = (logits.argmax(-1) == labels).float().mean().item()
    assert record["val_accuracy"] == pytest.approx(expected)
    # Prediction leaves the target out: data without labels predicts too.
    unlabeled = [{k: v for k, v in d.items() if k != "labels"} for d in data]
    assert torch.equal(trainer.predict(loader(unlabeled)), logits)


def test_a_missing_target_fails_before_the_first_step_naming_the_keys():
    model = HFStyle()
    before = [p.detach().clone() for p in model.parameters()]
    val = [{k: v for k, v in d.items() if k != "labels"} for d in text_data(8, "labels")]
    trainer = Trainer(model, sgd, metrics=["accuracy"], max_epochs=3, progress=False, device="cpu")
    with pytest.raises(TrainwellError) as e:
        trainer.fit(loader(text_data(8, "labels")), val_data=loader(val))
    assert str(e.value) == (
        "the model returned dict without a loss, but the batch has no target (the "
        "batch's keys are input_ids, attention_mask, lengths); name the target one of labels, "
        "label, y, target, or return {'loss', 'outputs', 'target'} from step=/eval_step=")
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))  # no step ran
    assert trainer.state.step == 0


def test_a_validation_mismatch_fails_in_the_probe_before_any_training_step():
    model = Tokens()
    bad_metric_calls = []

    def broken(outputs, target):
        bad_metric_calls.append(model.calls)
        raise ValueError("metric does not fit")

    trainer = Trainer(model, sgd, loss=nn.CrossEntropyLoss(), metrics={"m": broken},
                      max_epochs=2, progress=False, device="cpu")
    with pytest.raises(ValueError, match="metric does not fit"):
        trainer.fit(loader(text_data(16)), val_data=loader(text_data(8)))
    assert bad_metric_calls == [1]  # one validation forward, no training forward before it


def test_eval_step_and_predict_step_hooks_are_used_in_their_phases():
    calls = []

    def step(model, batch):
        calls.append("step")
        return nn.functional.cross_entropy(model(batch["input_ids"], batch["attention_mask"]), batch["label"])

    def eval_step(model, batch):
        calls.append("eval")
        out = model(batch["input_ids"], batch["attention_mask"])
        return {"loss": nn.functional.cross_entropy(out, batch["label"]), "outputs": out,
                "target": batch["label"]}

    def predict_step(model, batch):
        calls.append("predict")
        return model(batch["input_ids"], batch["attention_mask"]).softmax(-1)

    model = Tokens()
    trainer = Trainer(model, sgd, step=step, eval_step=eval_step, predict_step=predict_step,
                      metrics=["accuracy"], max_epochs=1, progress=False, device="cpu")
    trainer.fit(loader(text_data(8)), val_data=loader(text_data(8)))
    assert calls == ["eval", "step", "step", "eval", "eval"]  # probe, 2 steps, 2 val batches
    assert model.calls == 5  # the hook's outputs served the metrics: no second forward
    probs = trainer.predict(loader(text_data(8)))
    assert calls[-2:] == ["predict", "predict"] and torch.allclose(probs.sum(-1), torch.ones(8))


def test_a_step_dict_without_loss_is_one_line():
    trainer = Trainer(Tokens(), sgd, step=lambda m, b: {"total": torch.zeros(())}, max_epochs=1,
                      progress=False, device="cpu")
    with pytest.raises(TrainwellError, match=r"^step= returned a dict with keys total and no 'loss'"):
        trainer.fit(loader(text_data(8)))


def test_a_failure_after_a_checkpoint_keeps_the_run_dir_and_says_how_to_resume(tmp_path, capsys):
    class FailsLater(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.n = nn.Linear(3, 2), 0

        def forward(self, x):
            self.n += self.training
            if self.n == 7:  # in epoch 2, after epoch 1's checkpoint
                raise RuntimeError("boom")
            return self.lin(x)

    x, y = torch.randn(16, 3), torch.randint(0, 2, (16,))
    run = tmp_path / "run"
    trainer = Trainer(FailsLater(), sgd, loss=nn.CrossEntropyLoss(), max_epochs=3, batch_size=4,
                      run_dir=run, progress=False, device="cpu")
    with pytest.raises(RuntimeError, match="boom"):
        trainer.fit((x, y))
    assert (run / "checkpoints" / "step-00000004.ckpt").is_file()
    err = capsys.readouterr().err
    assert (f"trainwell: the run failed at step 6 (epoch 2); {run} keeps its checkpoints (last: "
            f"{run / 'checkpoints' / 'step-00000004.ckpt'}): fix the error and resume with "
            f"resume={str(run)!r} (trainwell fit --resume {run})") in err


def test_a_validation_failure_after_an_epoch_keeps_that_epoch_and_resumes_bitwise(tmp_path):
    from tiny import make_data, make_model

    x, y = make_data()
    state = {"fail": True, "calls": 0}

    def flaky(outputs, target):
        state["calls"] += 1
        if state["fail"] and state["calls"] == 4:  # probe, epoch 1 (2 batches), epoch 2's first
            raise RuntimeError("validation broke")
        return (outputs.argmax(-1) == target).float().mean()

    def make(run_dir):
        return Trainer(make_model(), lambda p: torch.optim.AdamW(p, lr=1e-2),
                       loss=nn.CrossEntropyLoss(), metrics={"acc": flaky}, max_epochs=3,
                       batch_size=6, run_dir=run_dir, progress=False, device="cpu")

    with pytest.raises(RuntimeError, match="validation broke"):
        make(tmp_path / "a").fit((x, y), val_data=(x[:12], y[:12]))
    # Epoch 2's training was kept: a checkpoint after its 10 steps, before its validation.
    kept = tmp_path / "a" / "checkpoints" / "step-00000020.ckpt"
    assert kept.is_file()
    state["fail"] = False
    again, fresh = make(tmp_path / "a"), make(tmp_path / "b")
    resumed = again.fit((x, y), val_data=(x[:12], y[:12]), resume=tmp_path / "a")
    straight = fresh.fit((x, y), val_data=(x[:12], y[:12]))
    assert [r["epoch"] for r in resumed.history] == [1, 2, 3]
    for a, b in zip(resumed.history, straight.history):
        assert {k: v for k, v in a.items() if k != "time_s"} == {k: v for k, v in b.items() if k != "time_s"}
    for (name, a), b in zip(again.model.state_dict().items(), fresh.model.state_dict().values()):
        assert torch.equal(a, b), name


def test_metrics_on_a_batch_without_target_is_one_line():
    x = torch.randn(8, 3)
    model = nn.Linear(3, 2)
    trainer = Trainer(model, sgd, step=lambda m, b: m(b[0]).pow(2).mean(), metrics=["accuracy"],
                      max_epochs=1, batch_size=4, progress=False, device="cpu")
    with pytest.raises(TrainwellError) as e:
        trainer.fit((x,), val_data=(x,))
    assert str(e.value) == (
        "metrics compare the model's output with a target, but the batch has no target (the batch "
        "is a 1-item tuple); make it (inputs, target), or return {'loss', 'outputs', 'target'} "
        "from step=/eval_step=")


def test_step_scalars_are_logged_and_a_resume_between_logs_keeps_them_exact(tmp_path):
    from tiny import make_data, make_model

    x, y = make_data()

    def step(model, batch):
        out = model(batch[0])
        return {"loss": nn.functional.cross_entropy(out, batch[1]),
                "acc": (out.argmax(-1) == batch[1]).float().mean(), "outputs": out}

    def make(run_dir, **kw):
        return Trainer(make_model(), lambda p: torch.optim.AdamW(p, lr=1e-2), step=step,
                       max_epochs=2, batch_size=6, run_dir=run_dir, progress=False, device="cpu",
                       checkpoint_every=3, log_every=4, **kw)

    straight = make(tmp_path / "a").fit((x, y))
    assert "train_acc" in straight.history[-1] and "train_outputs" not in straight.history[-1]
    header = (tmp_path / "a" / "steps.csv").read_text().splitlines()[0].split(",")
    assert "train_acc" in header
    # step 15: mid-epoch 2, and 3 steps after the last log record: pending scalars are saved
    resumed = make(tmp_path / "b").fit((x, y), resume=tmp_path / "a" / "checkpoints" / "step-00000015.ckpt")
    assert [r["train_acc"] for r in resumed.history] == [r["train_acc"] for r in straight.history]
    # The new run's steps.csv starts after step 15: its records for steps 16 and 20 match.
    def acc(run):
        return [r.split(",")[-1] for r in (tmp_path / run / "steps.csv").read_text().splitlines()[1:]]

    assert len(acc("b")) == 2 and acc("b") == acc("a")[-2:]
