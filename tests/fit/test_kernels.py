"""Optimizers built from a name run the fused step where torch has it, else foreach; a user's own
optimizer is left as it is."""

import pytest
import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.fit import factories
from trainwell.fit.config import OptimizerConfig
from trainwell.fit.kernels import FOR_LOOP, FOREACH, FUSED, build_fastest, describe, implementation
from trainwell.fit.trainer import Trainer


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "Adagrad"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_torch_runs_the_fused_step_on_the_cpu(name, dtype):
    """The fact kernels.py relies on (torch 2.13, CPU): fused=True builds and steps, and moves
    the weights as the for-loop step does (to rounding)."""
    weights = []
    for fused in (True, False):
        p = nn.Parameter(torch.linspace(-1, 1, 7, dtype=dtype))
        opt = getattr(torch.optim, name)([p], lr=0.1, fused=fused)
        for _ in range(3):
            p.grad = torch.cos(p.detach() * 3)
            opt.step()
        assert implementation(opt) == (FUSED if fused else FOR_LOOP)
        weights.append(p.detach().double())
    assert not torch.equal(weights[0], torch.linspace(-1, 1, 7, dtype=torch.float64))
    tolerance = 1e-2 if dtype is torch.bfloat16 else 1e-5
    assert torch.allclose(weights[0], weights[1], atol=tolerance)


def test_by_name_fused_where_torch_accepts_it_else_foreach_and_explicit_choices_kept():
    params = list(mlp().parameters())
    assert implementation(factories.optimizer_factory(OptimizerConfig("AdamW", {"lr": 1e-3}))(params)) == FUSED
    assert implementation(factories.optimizer_factory(OptimizerConfig("RMSprop", {}))(params)) == FOREACH
    assert implementation(build_fastest(torch.optim.AdamW, params, {"foreach": False})) == FOR_LOOP
    assert implementation(build_fastest(torch.optim.AdamW, params, {"fused": False, "foreach": True})) == FOREACH
    assert implementation(torch.optim.AdamW(params)) == FOR_LOOP  # torch's own default here
    complex_param = [nn.Parameter(torch.zeros(3, dtype=torch.complex64))]  # fused refuses complex
    assert implementation(build_fastest(torch.optim.Adam, complex_param, {})) == FOREACH
    with pytest.raises(ValueError, match="learning rate"):  # its own errors stay the user's
        build_fastest(torch.optim.SGD, params, {"lr": -1.0})


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")  # Adagrad's sparse step
@pytest.mark.parametrize("name", ["SGD", "Adagrad"])
def test_sparse_gradients_keep_sgd_and_adagrad_off_the_fused_step(name):
    """Their fused step refuses sparse gradients at the first step (torch 2.13), not when built."""
    model = nn.Sequential(nn.Embedding(10, 4, sparse=True), nn.Linear(4, 2))
    factory = factories.optimizer_factory(OptimizerConfig(name, {"lr": 0.1}), model=model)
    opt = factory(list(model.parameters()))
    assert implementation(opt) == FOREACH
    model(torch.tensor([1, 2])).sum().backward()
    opt.step()
    with pytest.raises(RuntimeError, match="sparse"):
        fused = getattr(torch.optim, name)(model.parameters(), lr=0.1, fused=True)
        model(torch.tensor([1, 2])).sum().backward()
        fused.step()


def test_trainer_takes_an_optimizer_by_name_built_as_the_cli_builds_it():
    x, y = torch.randn(40, 5, generator=torch.Generator().manual_seed(1)), torch.arange(40) % 3
    by_name, own = mlp(), mlp()
    trainer = Trainer(by_name, "adamw", optimizer_args={"lr": 1e-2, "weight_decay": 0.1},
                      loss=nn.CrossEntropyLoss(), max_epochs=2, batch_size=8, progress=False, device="cpu")
    trainer.fit((x, y))
    assert type(trainer.optimizer) is torch.optim.AdamW and describe(trainer.optimizer) == "AdamW, fused step"
    Trainer(own, lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1, fused=True),
            loss=nn.CrossEntropyLoss(), max_epochs=2, batch_size=8, progress=False, device="cpu").fit((x, y))
    for key, value in own.state_dict().items():
        assert torch.equal(by_name.state_dict()[key], value), key
    model = mlp()
    user = torch.optim.AdamW(model.parameters())  # a user's own optimizer is not rebuilt
    assert Trainer(model, user, device="cpu").optimizer is user and implementation(user) == FOR_LOOP


@pytest.mark.parametrize("optimizer, args, words", [
    ("adamx", None, "optimizer 'adamx' is not in torch.optim (did you mean 'Adamax'?)"),
    ("sgd", {"lrate": 0.1}, "optimizer_args['lrate']: unknown argument of optimizer SGD"),
    ("sgd", {"lr": -1.0}, "optimizer_args['lr']: optimizer SGD refuses it: Invalid learning rate"),
    ("sgd", [0.1], "optimizer_args is a list; pass a dict"),
    (lambda p: torch.optim.SGD(p, lr=0.1), {"lr": 0.1}, "optimizer_args goes with an optimizer given by name"),
])
def test_a_bad_name_or_argument_is_one_line_naming_it(optimizer, args, words):
    with pytest.raises(TrainwellError) as error:
        Trainer(mlp(), optimizer, optimizer_args=args, device="cpu")
    assert words in str(error.value) and "\n" not in str(error.value)
