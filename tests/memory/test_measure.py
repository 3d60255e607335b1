import copy

import pytest
import torch
from torch import nn

from trainwell.errors import TrainwellError
from trainwell.memory.measure import measure_memory
from trainwell.memory.optimizers import get_optimizer

TORCH_OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd-momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p),
    "adamw-amsgrad": lambda p: torch.optim.AdamW(p, amsgrad=True),
    "adagrad": lambda p: torch.optim.Adagrad(p),
    "rmsprop-centered": lambda p: torch.optim.RMSprop(p, centered=True),
    "adafactor": lambda p: torch.optim.Adafactor(p),
}


def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


@pytest.mark.parametrize("name", sorted(TORCH_OPTIMIZERS))
def test_counts_equal_the_real_tensors_after_a_real_step(tiny, name):
    model, x = tiny.make_mlp(), torch.randn(8, 20)
    report = measure_memory(model, x, name, what_if=False)
    assert report.what_if == []
    # an independent training step on a copy, with the optimizer built the usual way
    twin = copy.deepcopy(model)
    optimizer = TORCH_OPTIMIZERS[name](twin.parameters())
    twin(x).sum().backward()
    optimizer.step()
    params = list(twin.parameters())
    assert report.weights_bytes == sum(nbytes(p) for p in params)
    assert report.buffers_bytes == sum(nbytes(b) for b in twin.buffers()) > 0
    assert report.gradients_bytes == sum(nbytes(p.grad) for p in params)
    state = sum(nbytes(v) for s in optimizer.state.values() for v in s.values() if isinstance(v, torch.Tensor))
    assert report.optimizer_state_bytes == state
    # and the per-shape formulas of optimizers.py agree with torch's real state
    spec = get_optimizer(name)
    formula = sum(spec.state_bytes(tuple(p.shape), 4) + spec.step_counter_bytes for p in params)
    assert formula == state


def test_the_model_comes_back_unchanged(tiny):
    model = tiny.make_mlp().eval()
    model[0].weight.grad = torch.ones_like(model[0].weight)
    before = copy.deepcopy(model.state_dict())
    measure_memory(model, torch.randn(8, 20), "adamw", freeze=["2."])
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not model.training
    assert torch.equal(model[0].weight.grad, torch.ones_like(model[0].weight))
    assert model[2].weight.grad is None and all(p.requires_grad for p in model.parameters())


def independent_saved_bytes(model: nn.Module, call) -> int:
    """What a saved-tensor hook of our own sees: distinct storages, parameters left out."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(t):
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params:
            seen[ptr] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = call()
    loss.backward()
    return sum(seen.values())


def test_saved_activations_equal_an_independent_hook(tiny):
    model, batch = tiny.make_gpt(), tiny.make_gpt_batch()
    report = measure_memory(model, batch, "sgd", what_if=False)
    assert report.activations_bytes == independent_saved_bytes(model, lambda: model(*batch))
    top = report.top_layers
    assert top and top == sorted(top, key=lambda layer: -layer.activation_bytes)
    every = measure_memory(model, batch, "sgd", top=100, what_if=False).top_layers
    assert {layer.type for layer in every} >= {"GELU", "Linear", "Block", "LayerNorm"}
    assert sum(layer.activation_bytes for layer in every) == report.activations_bytes


def test_a_view_keeps_its_whole_storage():
    class Halves(nn.Module):
        def forward(self, x):
            return torch.sigmoid(x[:, :2]).sum()  # sigmoid saves its output; the input slice is a view

    x = torch.randn(4, 6, requires_grad=True)
    report = measure_memory(Halves(), x, "sgd")
    assert report.activations_bytes == 4 * 2 * 4  # sigmoid's output, a fresh 4x2 tensor
    assert report.weights_bytes == 0


def test_freeze_what_if_is_remeasured(tiny):
    model = tiny.make_mlp()
    report = measure_memory(model, torch.randn(8, 20), "adam", freeze=["0."])
    row = next(w for w in report.what_if if w.name == "freeze 0.")
    first = model[0].weight.numel() + model[0].bias.numel()
    saved_input = 8 * 20 * 4  # the frozen first layer no longer keeps its input for the weight gradient
    assert row.saving_bytes == first * 4 + first * 8 + 2 * 4 + saved_input
    with pytest.raises(TrainwellError, match="matches no trainable parameter; top-level names: 0, 2"):
        measure_memory(model, torch.randn(8, 20), "adam", freeze=["encoder"])


def test_what_ifs_of_model_mode(tiny):
    model, batch = tiny.make_gpt(), tiny.make_gpt_batch()
    report = measure_memory(model, batch, "adamw")
    rows = {w.name: w for w in report.what_if}
    assert set(rows) >= {"bf16 autocast", "gradient accumulation x4", "activation checkpointing", "LoRA rank 16",
                         "8-bit AdamW (bitsandbytes)", "FSDP over 8 GPUs"}
    assert rows["gradient accumulation x4"].total_bytes == report.total_bytes - report.activations_bytes \
        + report.activations_bytes // 4
    assert 0 < rows["activation checkpointing"].saving_bytes < report.activations_bytes
    for row in rows.values():
        assert row.saving_bytes == report.total_bytes - row.total_bytes
        assert row.saving_percent == pytest.approx(100 * row.saving_bytes / report.total_bytes, abs=0.01)


def test_sharding_in_model_mode(tiny):
    one = measure_memory(tiny.make_mlp(), torch.randn(8, 20), "adamw")
    four = measure_memory(tiny.make_mlp(), torch.randn(8, 20), "adamw", gpus=4, stage=2)
    assert four.weights_bytes == one.weights_bytes
    assert four.gradients_bytes == -(-one.gradients_bytes // 4)
    assert four.optimizer_state_bytes == -(-one.optimizer_state_bytes // 4)


def test_loss_function_and_errors(tiny):
    model = tiny.make_mlp()
    x = torch.randn(8, 20)
    with_loss = measure_memory(model, x, "sgd", loss_fn=lambda out, batch: out.pow(2).mean(), what_if=False)
    plain = measure_memory(model, x, "sgd", what_if=False)
    assert with_loss.activations_bytes == plain.activations_bytes + 8 * 5 * 4  # pow keeps its input
    with pytest.raises(TrainwellError, match="the loss function raised KeyError"):
        measure_memory(model, x, "sgd", loss_fn=lambda out, batch: {}["y"])
    with pytest.raises(TrainwellError, match=r"forward raised RuntimeError on the sample \(tensor \(8, 3\) float32\)"):
        measure_memory(model, torch.randn(8, 3), "sgd")
    with pytest.raises(TrainwellError, match="nothing to backpropagate"):
        measure_memory(nn.Identity(), x, "sgd")
    with pytest.raises(TrainwellError, match="analytic-only"):
        measure_memory(model, x, "adamw", precision="bf16-master")


def test_a_users_optimizer_instance_class_or_factory(tiny):
    model, x = tiny.make_mlp(), torch.randn(8, 20)
    instance = torch.optim.AdamW(model.parameters(), lr=0.1, amsgrad=True)
    by_instance = measure_memory(model, x, instance, what_if=False)
    assert by_instance.optimizer_state_bytes == \
        measure_memory(model, x, "adamw-amsgrad", what_if=False).optimizer_state_bytes
    assert not instance.state  # the user's optimizer itself is not stepped
    assert measure_memory(model, x, torch.optim.Adagrad, what_if=False).optimizer_state_bytes == \
        measure_memory(model, x, "adagrad", what_if=False).optimizer_state_bytes
    momentum = measure_memory(model, x, lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9))
    assert momentum.optimizer_state_bytes == sum(nbytes(p) for p in model.parameters())
    lora = next(w for w in momentum.what_if if w.name.startswith("LoRA"))
    assert lora.total_bytes > 0
    with pytest.raises(TrainwellError, match="building the optimizer <lambda> raised ValueError"):
        measure_memory(model, x, lambda params: torch.optim.SGD(params, lr=-1.0))


def test_no_hook_is_left_behind_even_when_the_forward_fails(tiny):
    model = tiny.make_mlp()
    measure_memory(model, torch.randn(8, 20), "sgd", what_if=False)
    with pytest.raises(TrainwellError):
        measure_memory(model, torch.randn(8, 3), "sgd")
    for module in model.modules():
        assert not module._forward_hooks and not module._forward_pre_hooks
    assert torch._C._autograd._top_saved_tensors_default_hooks(False) is None
