import pytest

from trainwell.errors import TrainwellError
from trainwell.memory.activations import TransformerShape, layer_terms
from trainwell.memory.estimate import estimate_memory
from trainwell.memory.optimizers import OPTIMIZERS, get_optimizer
from trainwell.memory.precision import get_precision


def test_one_billion_adamw_fp32_is_exactly_16_gb():
    report = estimate_memory("1B", "adamw", "32")
    assert report.total_bytes == 16_000_000_000
    assert (report.weights_bytes, report.gradients_bytes, report.optimizer_state_bytes) == (4e9, 4e9, 8e9)
    assert report.activations_bytes is None and not report.activations_included
    assert any("activations are NOT included" in note for note in report.notes)


@pytest.mark.parametrize("precision, per_param", [
    ("32", (4, 4, 8, 0)), ("bf16-mixed", (4, 4, 8, 0)), ("16-mixed", (4, 4, 8, 0)),
    ("bf16-true", (2, 2, 4, 0)), ("16-true", (2, 2, 4, 0)), ("bf16-master", (2, 2, 8, 4)), ("16-master", (2, 2, 8, 4))])
def test_rows_per_precision(precision, per_param):
    r = estimate_memory(1000, "adam", precision)
    assert (r.weights_bytes, r.gradients_bytes, r.optimizer_state_bytes, r.master_weights_bytes) == \
        tuple(1000 * b for b in per_param)


@pytest.mark.parametrize("name, per_param", [("sgd", 0), ("sgd-momentum", 4), ("adamw-amsgrad", 12), ("adagrad", 4),
                                             ("rmsprop", 4), ("rmsprop-centered", 8), ("rmsprop-momentum", 8)])
def test_dense_optimizer_state(name, per_param):
    assert estimate_memory("1M", name).optimizer_state_bytes == per_param * 10**6


def test_eight_bit_adam_is_two_bytes_plus_block_constants():
    spec = get_optimizer("adamw8bit")
    assert spec.state_bytes((4096, 4096), 4) == 2 * 4096 * 4096 + 2 * 4 * (4096 * 4096 // 2048)
    assert spec.state_bytes((100,), 4) == 8 * 100  # under 4096 elements: fp32 state
    assert spec.state_bytes((2049 * 2,), 4) == 2 * 4098 + 2 * 4 * 3  # partial last block


def test_adafactor_factors_matrices_and_keeps_vectors():
    spec = get_optimizer("adafactor")
    assert spec.state_bytes((300, 200), 4) == (300 + 200) * 4
    assert spec.state_bytes((5, 300, 200), 4) == (5 * 300 + 5 * 200) * 4
    assert spec.state_bytes((77,), 4) == 77 * 4


def test_sixteen_bit_layer_matches_korthikanti():
    """With 16-bit activations and dropout, one layer is s*b*h*(34 + 5*a*s/h) plus our LayerNorm statistics."""
    s, b, h, a = 128, 4, 256, 8
    shape = TransformerShape(batch=b, seq=s, hidden=h, layers=1, heads=a, ffn=4 * h, dropout=True)
    terms = layer_terms(shape, get_precision("bf16-true"))
    stats = terms.pop("layernorm mean/rstd")
    assert stats == 2 * 2 * s * b * 4
    assert sum(terms.values()) == s * b * h * 34 + 5 * a * s * s * b


def test_activations_and_what_ifs_with_a_shape():
    base = dict(batch=8, seq=1024, hidden=1024, layers=4, heads=16, vocab=1000)
    r = estimate_memory("100M", "adamw", "32", **base)
    assert r.activations_bytes == sum(r.activation_terms.values()) > 0
    assert r.total_bytes == r.weights_bytes + r.gradients_bytes + r.optimizer_state_bytes + r.activations_bytes
    rows = {w.name: w for w in r.what_if}
    assert rows["gradient accumulation x4"].total_bytes == estimate_memory("100M", **{**base, "batch": 2}).total_bytes
    assert 0 < rows["activation checkpointing"].saving_percent < 100
    assert rows["bf16 autocast"].saving_bytes > 0
    lora = rows["LoRA rank 16"]
    extra = 16 * 4 * ((3 * 1024 + 1024) + (1024 + 1024) + 2 * (4096 + 1024))
    assert lora.total_bytes == r.total_bytes - r.gradients_bytes - r.optimizer_state_bytes + extra * (4 + 4 + 8)
    assert rows["FSDP over 8 GPUs"].total_bytes == \
        (r.weights_bytes + r.gradients_bytes + r.optimizer_state_bytes) // 8 + r.activations_bytes
    assert rows["8-bit AdamW (bitsandbytes)"].saving_percent > 0
    flash = estimate_memory("100M", "adamw", "32", attention="flash", **base)
    assert flash.activations_bytes < r.activations_bytes


@pytest.mark.parametrize("stage, sharded", [(0, ()), (1, ("state", "master")), (2, ("state", "master", "grads")),
                                            (3, ("state", "master", "grads", "weights"))])
def test_zero_stages(stage, sharded):
    full = estimate_memory("8B", "adamw", "bf16-master")
    r = estimate_memory("8B", "adamw", "bf16-master", gpus=8, stage=stage)
    pairs = {"weights": (r.weights_bytes, full.weights_bytes), "grads": (r.gradients_bytes, full.gradients_bytes),
             "state": (r.optimizer_state_bytes, full.optimizer_state_bytes),
             "master": (r.master_weights_bytes, full.master_weights_bytes)}
    for row, (got, whole) in pairs.items():
        assert got == (whole // 8 if row in sharded else whole), row
    assert r.total_all_gpus_bytes == 8 * r.total_bytes


def test_freeze_what_if_removes_gradients_and_state():
    r = estimate_memory("1B", "adamw", "32", freeze="250M")
    row = next(w for w in r.what_if if w.name.startswith("freeze"))
    assert row.saving_bytes == 250_000_000 * 12


def test_default_heads_follow_a_64_wide_head():
    wide = estimate_memory("1B", hidden=4096, layers=2, batch=1, seq=8)
    odd = estimate_memory("1B", hidden=200, layers=2, batch=1, seq=8)
    assert wide.activation_terms["softmax output"] == 2 * (4096 // 64) * 8 * 8 * 1 * 4
    assert any("one attention head assumed" in note for note in odd.notes)


def test_params_derived_from_shape():
    r = estimate_memory(None, hidden=64, layers=2, vocab=100)
    assert r.params == 2 * (12 * 64 * 64 + 13 * 64) + 2 * 64 + 100 * 64


@pytest.mark.parametrize("kwargs, message", [
    (dict(params="1B", optimizer="lion"), "unknown optimizer 'lion'; choose one of: sgd"),
    (dict(params="1B", precision="fp8"), "unknown precision"),
    (dict(params="1B", hidden=100, layers=2, heads=3), "not divisible by --heads"),
    (dict(params="1B", batch=-1, seq=8, hidden=64, layers=2), "--batch must be a positive"),
    (dict(params="1B", batch=2, seq=8), "give --hidden and --layers"),
    (dict(params="1B", hidden=64, layers=2, batch=2), "missing --seq"),
    (dict(params=None), "--params"),
    (dict(params="1B", gpus=0), "--shard"),
    (dict(params="1B", freeze="2B"), "--freeze"),
    (dict(params="0"), "positive"),
    (dict(params="1B", accumulate=0), "--accumulate must be at least 1"),
])
def test_bad_input_is_one_line(kwargs, message):
    with pytest.raises(TrainwellError, match=message.replace("(", r"\(")) as error:
        estimate_memory(**kwargs)
    assert "\n" not in str(error.value)


def test_every_optimizer_has_a_name_and_layout():
    assert {spec.layout for spec in OPTIMIZERS.values()} == {"dense", "8bit", "factored"}
