"""Several optimizers: the Trainer's per-optimizer step against a hand-written loop, AMP
scalers, schedulers, checkpoints and the one-line errors (issue 19)."""

import random

import numpy as np
import pytest
import torch
from torch import nn

from trainwell import Trainer
from trainwell.errors import TrainwellError
from trainwell.fit.checkpoint import load_checkpoint

N, Z = 48, 3


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.generator = nn.Sequential(nn.Linear(Z, 8), nn.ReLU(), nn.Linear(8, 2))
        self.discriminator = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Dropout(0.2),
                                           nn.Linear(8, 1))


def gan_step(model, batch, optimize):
    (x,) = batch
    bce = nn.functional.binary_cross_entropy_with_logits
    fake = model.generator(torch.randn(len(x), Z))
    real_score, fake_score = model.discriminator(x), model.discriminator(fake.detach())
    d_loss = bce(real_score, torch.ones_like(real_score)) + bce(fake_score, torch.zeros_like(fake_score))
    optimize("discriminator", d_loss)
    score = model.discriminator(fake)
    g_loss = bce(score, torch.ones_like(score))
    optimize("generator", g_loss)
    return {"d_loss": d_loss, "g_loss": g_loss}


def data():
    return torch.randn(N, 2, generator=torch.Generator().manual_seed(2)) + 1.0


def adam(params):
    return torch.optim.Adam(params, lr=1e-2, betas=(0.5, 0.999))


def make(**kw):
    args = dict(step=gan_step, max_epochs=2, batch_size=8, progress=False, device="cpu",
                clip_grad_norm=0.5)
    args.update(kw)
    return Trainer(GAN(), {"generator": adam, "discriminator": adam}, **args)


def test_two_optimizers_match_the_hand_written_loop_bitwise():
    trainer = make(scheduler={"generator": lambda o: torch.optim.lr_scheduler.StepLR(o, 3)},
                   scheduler_interval="step")
    result = trainer.fit(data())

    model = GAN()
    opts = {"generator": adam(model.generator.parameters()),
            "discriminator": adam(model.discriminator.parameters())}
    sched = torch.optim.lr_scheduler.StepLR(opts["generator"], 3)

    def optimize(name, loss):  # the correct order, written out
        opt = opts[name]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for g in opt.param_groups for p in g["params"]], 0.5)
        opt.step()
        if name == "generator":
            sched.step()
        opt.zero_grad(set_to_none=True)

    random.seed(0), np.random.seed(0), torch.manual_seed(0)  # what fit() seeds
    x = data()
    for epoch in range(2):
        perm = torch.randperm(N, generator=torch.Generator().manual_seed(epoch))
        for a in range(0, N, 8):
            gan_step(model, (x[perm[a:a + 8]],), optimize)
    for (name, a), b in zip(trainer.model.state_dict().items(), model.state_dict().values()):
        assert torch.equal(a, b), name
    assert trainer.optimizer.optimizers["generator"].param_groups[0]["lr"] == sched.get_last_lr()[0]
    assert {"train_loss", "train_d_loss", "train_g_loss"} <= set(result.history[-1])
    record = result.history[-1]
    assert record["train_loss"] == pytest.approx(record["train_d_loss"] + record["train_g_loss"])


def test_16_mixed_keeps_a_scaler_per_optimizer_and_resumes_bitwise(tmp_path):
    straight = make(precision="16-mixed", max_epochs=3, run_dir=tmp_path / "a", checkpoint_every=4)
    straight.fit(data())
    middle = tmp_path / "a" / "checkpoints" / "step-00000016.ckpt"  # mid-epoch 3
    saved = load_checkpoint(middle)
    assert set(saved["precision"]) == {"generator", "discriminator"}
    assert all("scale" in s["scaler"] for s in saved["precision"].values())
    assert set(saved["optimizer"]) == {"generator", "discriminator"}
    resumed = make(precision="16-mixed", max_epochs=3, run_dir=tmp_path / "b", checkpoint_every=4)
    resumed.fit(data(), resume=middle)
    for (name, a), b in zip(straight.model.state_dict().items(), resumed.model.state_dict().values()):
        assert torch.equal(a, b), name
    for name in ("generator", "discriminator"):
        a = straight.precision.precisions[name].scaler.state_dict()
        assert a == resumed.precision.precisions[name].scaler.state_dict()


@pytest.mark.parametrize("kwargs,message", [
    (dict(step=None), "several optimizers need step=callable(model, batch, optimize) that calls "
                      "optimize(name, loss) once per optimizer (see docs/trainer.md)"),
    (dict(accumulate=2), "several optimizers do not support accumulate=2: each optimize() call "
                         "steps; train them in one process with accumulate=1 and nonfinite='raise'"),
    (dict(scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 3)),
     "with several optimizers, pass scheduler= as a dict keyed like optimizer= (generator, "
     "discriminator), e.g. {'generator': lambda opt: StepLR(opt, 10)}"),
])
def test_what_several_optimizers_need_is_one_line(kwargs, message):
    with pytest.raises(TrainwellError) as e:
        make(**kwargs)
    assert str(e.value) == message


def test_a_factory_must_be_named_after_a_submodule():
    with pytest.raises(TrainwellError) as e:
        Trainer(GAN(), {"gen": adam, "discriminator": adam}, step=gan_step)
    assert str(e.value) == (
        "optimizer 'gen' is a factory, so its name must be a submodule of the model (its "
        "children: generator, discriminator); name it after one, or pass a built optimizer")


def test_an_unknown_name_in_optimize_and_validation_without_eval_step_fail_before_a_step():
    def wrong(model, batch, optimize):
        optimize("critic", model.discriminator(batch[0]).mean())

    with pytest.raises(TrainwellError, match=r"^optimize\('critic', loss\): no optimizer is named "
                                             r"'critic'; the optimizers are generator, discriminator$"):
        make(step=wrong).fit(data())
    trainer = make()
    with pytest.raises(TrainwellError, match="^evaluation with several optimizers needs eval_step="):
        trainer.fit(data(), val_data=data())
    assert trainer.state.step == 0
    scored = make(eval_step=lambda m, b: m.discriminator(b[0]).mean()).fit(data(), val_data=data())
    assert "val_loss" in scored.history[-1]
