"""The analytic mode agrees with the model mode (a real step) to within 2%.

MLP: weights + gradients + optimizer state (the formula knows no MLP activations;
8-bit Adam keeps fp32 state for tensors under 4096 elements, which the count-only
analytic mode cannot see, so the MLP is wide).
Small GPT (pre-LN, fused QKV, GELU, tied head, no dropout): also activations,
every term of activations.py, eager and flash attention, fp32 and pure bf16.
Under autocast only flash attention is compared: CPU autocast runs softmax in
bf16 where CUDA autocast (what the formula models) keeps it fp32.
"""

import pytest
import torch

from trainwell.memory.estimate import estimate_memory
from trainwell.memory.measure import measure_memory


def static_rows(report) -> int:
    return report.weights_bytes + report.gradients_bytes + report.optimizer_state_bytes + report.master_weights_bytes


@pytest.mark.parametrize("optimizer", ["adamw", "sgd-momentum", "rmsprop", "adam8bit", "adafactor"])
def test_mlp_weights_gradients_state(tiny, optimizer):
    model = tiny.make_mlp(512)  # wide enough that 8-bit state applies (bitsandbytes: tensors >= 4096 elements)
    measured = measure_memory(model, torch.randn(8, 20), optimizer, what_if=False)
    estimated = estimate_memory(sum(p.numel() for p in model.parameters()), optimizer, "32")
    assert static_rows(estimated) == pytest.approx(static_rows(measured), rel=0.02)


@pytest.mark.parametrize("precision, flash", [("32", False), ("32", True), ("bf16-true", False),
                                              ("bf16-true", True), ("bf16-mixed", True)])
def test_small_transformer(tiny, precision, flash):
    g = tiny.GPT
    measured = measure_memory(tiny.make_gpt(flash), tiny.make_gpt_batch(), "adamw", precision=precision,
                              what_if=False)
    estimated = estimate_memory(None, "adamw", precision, batch=g["batch"], seq=g["seq"], hidden=g["hidden"],
                                layers=g["layers"], heads=g["heads"], vocab=g["vocab"], dropout=False,
                                attention="flash" if flash else "eager")
    assert estimated.params == measured.params
    assert static_rows(estimated) == pytest.approx(static_rows(measured), rel=0.02)
    assert estimated.activations_bytes == pytest.approx(measured.activations_bytes, rel=0.02)
    if precision == "32":  # fp32: the formula is exact up to cross-entropy's 4-byte total_weight scalar
        assert abs(estimated.activations_bytes - measured.activations_bytes) <= 4
    assert estimated.total_bytes == pytest.approx(measured.total_bytes, rel=0.02)
