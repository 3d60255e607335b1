"""The PyTorch facts the rule pages cite (numbers from ../shared/pytorch-facts.md), checked on the
installed torch: if PyTorch changes one of them, a page (and maybe a rule) must change too."""
# trainwell: noqa: TW101, TW108, TW109, TW202, TW205, TW301, TW303, TW304, TW305, TW501 -- each test commits the bug whose fact it checks

from __future__ import annotations

import copy
import inspect
import io
import warnings

import pytest
import torch
from torch import nn
from torch.nn import functional as F


def small_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def test_fact_01_to_and_casts_keep_parameter_identity():
    model = small_model()
    before = [id(p) for p in model.parameters()]
    model.to("cpu").half().double().to(torch.float32)
    assert [id(p) for p in model.parameters()] == before
    model.to_empty(device="cpu")
    assert [id(p) for p in model.parameters()] == before


def test_fact_01b_meta_device_conversions_replace_parameters():
    """Not in the lore: moving to or from the meta device creates new Parameter objects (torch 2.13)."""
    model = small_model()
    weight = model[0].weight
    model.to("meta")
    assert model[0].weight is not weight
    meta_weight = model[0].weight
    model.to_empty(device="cpu")
    assert model[0].weight is not meta_weight


def test_fact_02_load_state_dict_assign_replaces_parameters():
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    state = copy.deepcopy(model.state_dict())
    model.load_state_dict(state)
    assert model[0].weight is optimizer.param_groups[0]["params"][0]
    model.load_state_dict(state, assign=True)
    assert model[0].weight is not optimizer.param_groups[0]["params"][0]


def test_fact_03_adagrad_builds_state_at_construction_and_casts_leave_it_behind():
    model = small_model()
    optimizer = torch.optim.Adagrad(model.parameters())
    assert optimizer.state[model[0].weight]["sum"].dtype == torch.float32
    model.double()
    model(torch.randn(3, 4, dtype=torch.float64)).sum().backward()
    optimizer.step()  # silently runs with float32 state for float64 parameters
    assert model[0].weight.dtype == torch.float64
    assert optimizer.state[model[0].weight]["sum"].dtype == torch.float32
    assert len(torch.optim.Adam(small_model().parameters()).state) == 0  # Adam is lazy


def test_fact_04_global_hooks_exist():
    from torch.autograd import graph
    from torch.nn.modules import module
    from torch.optim import optimizer

    for hook in (optimizer.register_optimizer_step_pre_hook, optimizer.register_optimizer_step_post_hook,
                 module.register_module_forward_pre_hook, module.register_module_forward_hook,
                 module.register_module_full_backward_hook, graph.register_multi_grad_hook):
        assert callable(hook)
    assert inspect.isclass(graph.saved_tensors_hooks)


def test_fact_05_lrscheduler_is_the_base_of_every_scheduler():
    from torch.optim import lr_scheduler

    assert lr_scheduler._LRScheduler is lr_scheduler.LRScheduler or issubclass(lr_scheduler._LRScheduler, lr_scheduler.LRScheduler)
    for cls in (lr_scheduler.StepLR, lr_scheduler.OneCycleLR, lr_scheduler.LambdaLR, lr_scheduler.ReduceLROnPlateau):
        assert issubclass(cls, lr_scheduler.LRScheduler)


def test_fact_06_cpu_grad_scaler_is_enabled_and_scales():
    scaler = torch.amp.GradScaler("cpu")
    assert scaler.is_enabled()
    assert scaler.scale(torch.tensor(1.0)).item() == scaler.get_scale() > 1


def test_fact_07_torch_load_weights_only_defaults_to_none_meaning_true():
    assert inspect.signature(torch.load).parameters["weights_only"].default is None
    buffer = io.BytesIO()
    torch.save({"obj": io.StringIO("x")}, buffer)  # not an allow-listed type
    buffer.seek(0)
    with pytest.raises(Exception, match="weights_only"):
        torch.load(buffer)
    buffer.seek(0)
    assert torch.load(buffer, weights_only=False)["obj"].getvalue() == "x"


def test_fact_08_log_softmax_before_cross_entropy_is_harmless_softmax_is_not():
    torch.manual_seed(0)
    x, y = torch.randn(6, 5) * 3, torch.randint(0, 5, (6,))
    assert torch.allclose(F.cross_entropy(F.log_softmax(x, 1), y), F.cross_entropy(x, y), atol=1e-6)
    assert not torch.allclose(F.cross_entropy(F.softmax(x, 1), y), F.cross_entropy(x, y), atol=1e-3)
    logits = x.clone().requires_grad_()
    F.cross_entropy(F.softmax(logits, 1), y).backward()
    plain = x.clone().requires_grad_()
    F.cross_entropy(plain, y).backward()
    assert logits.grad.norm() < plain.grad.norm()  # TW301: the gradient flattens


def test_fact_08b_sigmoid_before_bce_with_logits_changes_the_loss():
    torch.manual_seed(0)
    z, t = torch.randn(8) * 3, (torch.rand(8) > 0.5).float()
    assert not torch.allclose(F.binary_cross_entropy_with_logits(torch.sigmoid(z), t), F.binary_cross_entropy_with_logits(z, t))
    assert torch.allclose(F.binary_cross_entropy(torch.sigmoid(z), t), F.binary_cross_entropy_with_logits(z, t), atol=1e-5)


def test_fact_09_scheduler_before_optimizer_step_warns():
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler.step()
    assert any("lr_scheduler.step()` before `optimizer.step()" in str(w.message) for w in caught)


def test_fact_10_zero_grad_sets_grads_to_none_by_default():
    assert inspect.signature(torch.optim.Optimizer.zero_grad).parameters["set_to_none"].default is True
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    model(torch.randn(2, 4)).sum().backward()
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_fact_11_module_requires_grad_attribute_freezes_nothing():
    model = small_model()
    model.requires_grad = False
    assert all(p.requires_grad for p in model.parameters())
    model(torch.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())


def test_fact_12_clipping_without_gradients_returns_zero_silently():
    model = small_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    assert norm.item() == 0.0


def test_fact_12b_clip_grad_value_without_any_gradient_raises():
    """Not in the lore: clip_grad_value_ (foreach path, the default) raises when no parameter has a
    gradient, so clipping values before the first backward fails loudly; clip_grad_norm_ does not."""
    model = small_model()
    with pytest.raises(RuntimeError):
        nn.utils.clip_grad_value_(model.parameters(), 0.1)
    model(torch.randn(2, 4)).sum().backward()
    nn.utils.clip_grad_value_(model.parameters(), 0.1)
    assert all(p.grad.abs().max() <= 0.1 for p in model.parameters())


def test_fact_13_cpu_autocast_runs_bfloat16_and_float16():
    layer = nn.Linear(4, 2)
    for dtype in (torch.bfloat16, torch.float16):
        with torch.autocast("cpu", dtype=dtype):
            assert layer(torch.randn(3, 4)).dtype == dtype
    assert layer.weight.dtype == torch.float32


def test_fact_14_adam_implementation_flags_default_to_none():
    for cls in (torch.optim.Adam, torch.optim.AdamW):
        params = inspect.signature(cls).parameters
        assert params["foreach"].default is None and params["fused"].default is None


def test_fact_15_adam_is_nearly_invariant_to_a_constant_gradient_scale():
    def run(scale, opt_cls):
        model = small_model()
        optimizer = opt_cls(model.parameters(), lr=0.01)
        for _ in range(3):
            optimizer.zero_grad()
            (scale * model(torch.ones(2, 4)).pow(2).sum()).backward()
            optimizer.step()
        return torch.cat([p.detach().flatten() for p in model.parameters()])

    assert torch.allclose(run(1.0, torch.optim.Adam), run(4.0, torch.optim.Adam), atol=1e-5)
    assert not torch.allclose(run(1.0, torch.optim.SGD), run(4.0, torch.optim.SGD), atol=1e-3)


def test_fact_16_scaler_step_unscales_grads_in_place():
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    scaler = torch.amp.GradScaler("cpu")
    loss = model(torch.ones(2, 4)).sum()
    reference = torch.autograd.grad(loss, model[0].weight, retain_graph=True)[0]
    scaler.scale(loss).backward()
    assert torch.allclose(model[0].weight.grad, reference * scaler.get_scale())
    scaler.step(optimizer)
    assert torch.allclose(model[0].weight.grad, reference)
    # A second backward without zero_grad adds freshly scaled gradients to these unscaled ones;
    # the next step divides the sum by the scale again, so the stale part nearly vanishes.
    scaler.update()
    scaler.scale(model(torch.ones(2, 4)).sum()).backward()
    scaler.step(optimizer)
    assert torch.allclose(model[0].weight.grad, reference * (1 + 1 / scaler.get_scale()), rtol=1e-4)


def test_fact_17_parameters_without_grad_are_skipped_even_by_weight_decay():
    model = small_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.5)
    frozen = model[0].weight.detach().clone()
    model[0].requires_grad_(False)
    model(torch.randn(2, 4)).sum().backward()
    optimizer.step()
    assert torch.equal(model[0].weight, frozen)
    assert not torch.equal(model[2].weight.grad, torch.zeros_like(model[2].weight))


def test_eval_mode_does_not_stop_gradients_or_updates():
    """TW205: .eval() switches Dropout/BatchNorm behaviour only; weights still learn."""
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model[0].eval()
    before = model[0].weight.detach().clone()
    model(torch.randn(4, 4)).sum().backward()
    optimizer.step()
    assert model[0].weight.requires_grad and not torch.equal(before, model[0].weight)
    model.eval()
    assert not any(m.training for m in model.modules())  # eval() recurses into every submodule


def test_no_grad_outputs_carry_no_graph_but_grad_mode_outputs_do():
    """TW203 / TW204: a forward with autograd on keeps a graph; .item() / .detach() drop it."""
    model = small_model()
    out = model(torch.randn(2, 4))
    assert out.grad_fn is not None and out.detach().grad_fn is None
    with torch.no_grad():
        assert model(torch.randn(2, 4)).grad_fn is None
    with torch.inference_mode():
        assert not model(torch.randn(2, 4)).requires_grad
    assert isinstance(out.sum().item(), float)
    total = 0.0
    total += out.sum()
    assert total.grad_fn is not None  # `total += loss` keeps the graph alive


def test_detached_or_rewrapped_losses_reach_no_parameter():
    """TW108: backward() through .detach(), .data or torch.tensor(x.item()) gives the model nothing."""
    model = small_model()
    out = model(torch.randn(2, 4))
    with pytest.raises(RuntimeError, match="does not require grad"):
        out.detach().sum().backward()
    torch.tensor(out.sum().item(), requires_grad=True).backward()
    F.mse_loss(out.data, torch.zeros(2, 2)).requires_grad_().backward()
    assert all(p.grad is None for p in model.parameters())


def test_dropout_differs_between_train_and_eval_mode():
    """TW201 / TW202: in train mode Dropout zeroes and rescales activations."""
    torch.manual_seed(0)
    drop = nn.Dropout(0.5)
    x = torch.ones(1000)
    assert torch.equal(drop.eval()(x), x)
    y = drop.train()(x)
    assert set(y.unique().tolist()) == {0.0, 2.0}


def test_nll_loss_takes_whatever_it_is_given():
    """TW303: NLLLoss is -input[target]; only log-probabilities make it a likelihood."""
    torch.manual_seed(0)
    x, y = torch.randn(5, 3), torch.randint(0, 3, (5,))
    assert torch.allclose(F.nll_loss(x, y), -x[torch.arange(5), y].mean())
    assert torch.allclose(F.nll_loss(F.log_softmax(x, 1), y), F.cross_entropy(x, y))
    assert F.nll_loss(F.softmax(x, 1), y).item() < 0  # a "loss" below zero


def test_dataloader_default_order_is_sequential():
    """TW401: without shuffle or a sampler, every epoch sees the same order."""
    from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

    data = list(range(10))
    assert isinstance(DataLoader(data).sampler, SequentialSampler)
    assert isinstance(DataLoader(data, shuffle=True).sampler, RandomSampler)
    assert [b.tolist() for b in DataLoader(data, batch_size=5)] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


def test_module_without_super_init_fails_on_first_use():
    """TW501: nn.Module.__init__ sets up the registries every attribute assignment and call needs."""

    class NoInit(nn.Module):
        def __init__(self):
            self.scale = 2.0

    class NoInitLayer(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__"):
        NoInitLayer()
    with pytest.raises(AttributeError):
        NoInit()(torch.ones(1))


def test_ragged_last_batch_counts_as_a_batch():
    """TW302: len(loader) counts the short last batch; drop_last removes it."""
    from torch.utils.data import DataLoader

    data = list(range(30))
    sizes = [len(b) for b in DataLoader(data, batch_size=8)]
    assert sizes == [8, 8, 8, 6] and len(DataLoader(data, batch_size=8)) == 4
    assert [len(b) for b in DataLoader(data, batch_size=8, drop_last=True)] == [8, 8, 8]


def test_steplr_counts_calls_not_epochs():
    """TW106: StepLR decays every step_size calls of step(), whatever a call stands for."""
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.1)
    for _ in range(469):  # one MNIST epoch at batch size 128, stepped per batch
        optimizer.step()
        scheduler.step()
    assert scheduler.get_last_lr()[0] == pytest.approx(0.1 ** 46)


def test_batchnorm_updates_running_stats_under_no_grad_in_train_mode():
    """TW202: no_grad does not change the mode; validation data leaks into running statistics."""
    bn = nn.BatchNorm1d(3)
    with torch.no_grad():
        bn(torch.randn(8, 3) + 5)
    assert bn.training and bn.running_mean.min() > 0.1
    before = bn.running_mean.clone()
    bn.eval()
    bn(torch.randn(8, 3) + 5)
    assert torch.equal(bn.running_mean, before)


def test_index_write_of_a_live_tensor_chains_its_graph():
    """TW602: bank[idx] = emb gives the bank a grad_fn that keeps the step's graph reachable."""
    model = small_model()
    bank = torch.zeros(4, 2)
    bank[:2] = model(torch.randn(2, 4))
    assert bank.grad_fn is not None and type(bank.grad_fn).__name__.startswith("CopySlices")
    clean = torch.zeros(4, 2)
    clean[:2] = model(torch.randn(2, 4)).detach()
    assert clean.grad_fn is None


def test_nan_input_poisons_loss_and_gradients_silently():
    """TW601: one NaN feature makes the loss and the gradients NaN; the optimizer applies them."""
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 4)
    x[1, 2] = float("nan")
    loss = F.cross_entropy(model(x), torch.tensor([0, 1, 0, 1]))
    loss.backward()
    optimizer.step()
    assert torch.isnan(loss) and torch.isnan(model[0].weight).any()


def test_dataloader_worker_defaults():
    """TW404: the default loads in the main process; workers prefetch two batches each."""
    from torch.utils.data import DataLoader

    assert DataLoader(list(range(4))).num_workers == 0
    assert DataLoader(list(range(4)), num_workers=2).prefetch_factor == 2


def test_tensor_to_returns_a_copy_module_to_moves_in_place():
    """TW403: `x.to(device)` must be assigned; `model.to(device)` need not be."""
    x = torch.randn(2)
    assert x.to(torch.float64) is not x and x.dtype == torch.float32
    model = small_model()
    assert model.to(torch.float64) is model and model[0].weight.dtype == torch.float64


# -- TW110 / TW111 / TW112 / TW304 / TW305 / TW405 / TW406 --------------------------------------------------


def _ddp_sampler(rank: int = 0, **kwargs):
    from torch.utils.data import DistributedSampler, TensorDataset

    return DistributedSampler(TensorDataset(torch.arange(40)), num_replicas=2, rank=rank, **kwargs)


def test_distributed_sampler_repeats_its_order_until_set_epoch():
    """TW110: the permutation is seeded with seed + epoch, and only set_epoch changes epoch."""
    sampler = _ddp_sampler()
    first, second = list(sampler), list(sampler)
    assert first == second
    sampler.set_epoch(1)
    assert list(sampler) != first
    sampler.set_epoch(0)
    assert list(sampler) == first


def test_distributed_sampler_shuffles_by_default_and_shards_disjointly():
    """TW110 / TW111: shuffle defaults to True; the ranks' shards partition the dataset (40 items, 2 ranks)."""
    import inspect
    from torch.utils.data import DistributedSampler

    assert inspect.signature(DistributedSampler).parameters["shuffle"].default is True
    rank0, rank1 = list(_ddp_sampler(0)), list(_ddp_sampler(1))
    assert len(rank0) == len(rank1) == 20
    assert sorted(rank0 + rank1) == list(range(40))
    assert list(_ddp_sampler(0, shuffle=False)) == list(range(0, 40, 2))


def test_a_plain_dataloader_reads_everything_whatever_the_process_group():
    """TW111: without a sampler, a DataLoader yields every sample on every rank (it knows nothing of ranks)."""
    from torch.utils.data import DataLoader, TensorDataset

    loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, shuffle=True)
    assert sorted(torch.cat([b[0] for b in loader]).tolist()) == list(range(10))


def test_a_fresh_optimizer_and_scheduler_start_from_nothing():
    """TW112: a new Adam has empty state (its moments start at zero) and a new scheduler sits at step 0;
    load_state_dict brings back the moments and the schedule position."""
    model = small_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    for _ in range(3):
        optimizer.zero_grad()
        model(torch.randn(4, 4)).sum().backward()
        optimizer.step()
        scheduler.step()
    saved_opt, saved_sched = copy.deepcopy(optimizer.state_dict()), copy.deepcopy(scheduler.state_dict())
    fresh = torch.optim.Adam(model.parameters(), lr=0.1)
    fresh_sched = torch.optim.lr_scheduler.StepLR(fresh, step_size=1, gamma=0.5)
    assert len(fresh.state) == 0 and fresh_sched.last_epoch == 0 and fresh.param_groups[0]["lr"] == 0.1
    fresh.load_state_dict(saved_opt)
    fresh_sched.load_state_dict(saved_sched)
    assert int(fresh.state[model[0].weight]["step"]) == 3 and fresh_sched.last_epoch == 3
    assert torch.equal(fresh.state[model[0].weight]["exp_avg"], optimizer.state[model[0].weight]["exp_avg"])
    assert fresh_sched.get_last_lr() == [0.1 * 0.5**3]


def test_sgd_without_momentum_keeps_no_state():
    """TW112: plain SGD has nothing to lose on resume; with momentum it keeps a buffer per parameter."""
    for momentum, expected in ((0.0, None), (0.9, torch.Tensor)):
        model = small_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=momentum)
        model(torch.randn(2, 4)).sum().backward()
        optimizer.step()
        buffer = optimizer.state[model[0].weight].get("momentum_buffer")
        assert (buffer is None) if expected is None else isinstance(buffer, expected)


@pytest.mark.parametrize("loss", [nn.MSELoss(), nn.L1Loss(), nn.SmoothL1Loss(), nn.HuberLoss(),
                                  F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss])
def test_elementwise_losses_warn_and_broadcast_n1_against_n(loss):
    """TW304: [N, 1] against [N] warns ("Using a target size ... different to the input size") and
    averages over the broadcast [N, N] grid."""
    pred, target = torch.randn(5, 1), torch.randn(5)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        value = loss(pred, target)
    assert any("different to the input size" in str(w.message) for w in seen)
    grid = loss(pred.expand(5, 5), target.expand(5, 5))
    assert torch.allclose(value, grid)


def test_hand_written_squared_error_broadcasts_without_a_word():
    """TW304: ((pred - y) ** 2).mean() with [N, 1] and [N] gives an [N, N] grid and no warning; the
    minimiser of the grid loss is the mean target, whatever the input."""
    pred, target = torch.randn(6, 1), torch.randn(6)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        diff = pred - target
        ((diff) ** 2).mean()
    assert diff.shape == (6, 6) and not seen
    best = torch.full((6, 1), float(target.mean()), requires_grad=True)
    ((best - target) ** 2).mean().backward()
    assert torch.allclose(best.grad, torch.zeros(6, 1), atol=1e-6)


def test_bce_losses_refuse_a_broadcast():
    """TW304: binary_cross_entropy(_with_logits) raise on [N, 1] against [N]: they need no rule."""
    with pytest.raises(ValueError):
        F.binary_cross_entropy_with_logits(torch.randn(4, 1), torch.rand(4))
    with pytest.raises(ValueError):
        F.binary_cross_entropy(torch.rand(4, 1), torch.rand(4))


def test_pad_sequence_pads_with_zero_and_cross_entropy_ignores_minus_100():
    """TW305: the defaults do not meet: pad_sequence pads with 0, CrossEntropyLoss/NLLLoss ignore -100,
    so zero-padded targets are scored as class 0."""
    import inspect
    from torch.nn.utils.rnn import pad_sequence

    padded = pad_sequence([torch.tensor([2, 3, 1]), torch.tensor([4])], batch_first=True)
    assert padded.tolist() == [[2, 3, 1], [4, 0, 0]]
    assert inspect.signature(pad_sequence).parameters["padding_value"].default == 0.0
    assert nn.CrossEntropyLoss().ignore_index == -100 and nn.NLLLoss().ignore_index == -100
    logits = torch.randn(6, 5)
    real = torch.tensor([2, 3, 1, 4])
    with_pad = F.cross_entropy(logits, padded.view(-1))
    ignored = F.cross_entropy(logits, pad_sequence([torch.tensor([2, 3, 1]), torch.tensor([4])], batch_first=True,
                                                   padding_value=-100).view(-1))
    assert torch.allclose(ignored, F.cross_entropy(logits[[0, 1, 2, 3]], real))
    assert not torch.allclose(with_pad, ignored)


def test_a_random_transform_draws_from_the_global_generator_on_every_read():
    """TW405: a transform that calls torch.rand gives a different sample on each read of the same index
    (eval mode and no_grad change nothing: they are about modules and autograd, not data)."""
    from torch.utils.data import DataLoader, Dataset

    class Flipping(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            x = torch.arange(4.0) + i
            return x.flip(0) if torch.rand(()) < 0.5 else x

    torch.manual_seed(0)
    with torch.no_grad():
        passes = [torch.cat(list(DataLoader(Flipping(), batch_size=4))) for _ in range(2)]
    assert not torch.equal(passes[0], passes[1])


def test_random_split_uses_the_global_generator_unless_given_one():
    """TW406: without generator= the split follows the global RNG (different per process unless seeded);
    a seeded generator gives the same split every time."""
    from torch.utils.data import random_split

    data = list(range(50))
    torch.manual_seed(1)
    a = random_split(data, [40, 10])[1].indices
    torch.manual_seed(2)
    b = random_split(data, [40, 10])[1].indices
    assert a != b
    seeded = [random_split(data, [40, 10], generator=torch.Generator().manual_seed(0))[1].indices for _ in range(2)]
    assert seeded[0] == seeded[1]
