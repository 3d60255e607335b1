"""Mixed precision on CPU: autocast dtypes, loss scaling, skipped steps."""

import pytest
import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.fit.callbacks import Callback
from trainwell.fit.precision import make_precision
from trainwell.fit.trainer import Trainer


def data(n=64, d=4, c=3):
    g = torch.Generator().manual_seed(0)
    return torch.randn(n, d, generator=g), torch.randint(0, c, (n,), generator=g)


class DtypeSpy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.dtypes = set()

    def forward(self, x):
        out = self.lin(x)
        self.dtypes.add(out.dtype)
        return out


@pytest.mark.parametrize("precision,dtype", [("32", torch.float32), ("bf16-mixed", torch.bfloat16),
                                             ("16-mixed", torch.float16)])
def test_autocast_dtype_and_training_improves(precision, dtype):
    torch.manual_seed(0)
    model = DtypeSpy()
    x, y = data()
    trainer = Trainer(model, lambda p: torch.optim.SGD(p, lr=0.5), loss=nn.CrossEntropyLoss(),
                      precision=precision, max_epochs=8, batch_size=16, progress=False,
                      device="cpu")
    before = trainer.evaluate((x, y))["loss"]
    result = trainer.fit((x, y))
    assert model.dtypes == {dtype}
    assert model.lin.weight.dtype == torch.float32  # master weights stay fp32
    assert result.history[-1]["train_loss"] < before


class InfGrad(torch.autograd.Function):
    """Identity whose backward returns inf when ``armed``."""

    armed = False

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * float("inf") if InfGrad.armed else grad


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return InfGrad.apply(self.lin(x))


class Recorder(Callback):
    def __init__(self, model, arm_at):
        self.model, self.arm_at, self.weights, self.lrs = model, arm_at, [], []

    def on_step_end(self, trainer, state):
        self.weights.append(self.model.lin.weight.detach().clone())
        self.lrs.append(trainer.optimizer.param_groups[0]["lr"])
        InfGrad.armed = state.step + 1 == self.arm_at  # the next step's gradient is inf


def test_fp16_inf_gradient_step_is_skipped_and_scheduler_does_not_advance():
    torch.manual_seed(0)
    model = Net()
    x, y = data()
    rec = Recorder(model, arm_at=2)
    trainer = Trainer(model, lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(),
                      scheduler=lambda o: torch.optim.lr_scheduler.LambdaLR(o, lambda s: 1 / (s + 1)),
                      scheduler_interval="step", precision="16-mixed", max_epochs=1,
                      batch_size=16, progress=False, device="cpu", callbacks=[rec])
    try:
        trainer.fit((x, y))
    finally:
        InfGrad.armed = False
    assert len(rec.weights) == 4
    assert torch.equal(rec.weights[1], rec.weights[0])       # step 2 skipped
    assert not torch.equal(rec.weights[2], rec.weights[1])   # step 3 trained
    assert trainer.scheduler.last_epoch == 3                  # 4 steps, 1 skipped
    assert rec.lrs == [0.1 / 2, 0.1 / 2, 0.1 / 3, 0.1 / 4]
    assert trainer.precision.scaler.get_scale() == 65536.0 / 2


def test_fp16_clips_the_unscaled_gradient():
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    seen = []
    trainer = Trainer(model, lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(),
                      precision="16-mixed", clip_grad_norm=1e-3, max_epochs=1, batch_size=16,
                      progress=False, device="cpu")
    trainer.optimizer.register_step_pre_hook(lambda o, a, k: seen.append(
        torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))))
    trainer.fit(data())
    assert len(seen) == 4
    for norm in seen:  # clipped after unscaling: the optimizer sees exactly the clip norm
        torch.testing.assert_close(norm, torch.tensor(1e-3), rtol=1e-3, atol=0)


def test_unknown_precision_is_one_clear_error():
    with pytest.raises(TrainwellError, match="precision='fp8'.*'32', 'bf16-mixed', '16-mixed'"):
        make_precision("fp8", torch.device("cpu"))
