"""Hand-written updates are steps: ``p -= lr * p.grad`` under no_grad (version
counters) and ``p.data.add_`` (values), with the gradients cleared by an
event, by hand or not at all."""

from __future__ import annotations

import sys

import pytest
import torch
from torch import nn

from trainwell.runtime.watcher import watch

STEPS = 8


def model_and_data() -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)), torch.randn(32, 4), torch.randn(32, 1)


def d2l_style(clear: str, params_of=lambda model: list(model.parameters())) -> int:
    """SGD in the d2l book's shape; returns the line of backward()."""
    model, x, y = model_and_data()
    line = sys._getframe().f_lineno + 5
    for i in range(STEPS):
        if clear == "zero_grad(set_to_none=False) between":
            model.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x[i::STEPS]), y[i::STEPS])
        loss.backward()
        if clear == "zero_grad(set_to_none=False) between":
            model.zero_grad(set_to_none=False)  # wipes the gradients the update below applies
        with torch.no_grad():
            for param in params_of(model):
                param -= 0.1 * param.grad
                if clear == "by hand after":
                    param.grad.zero_()  # no event: seen only through the gradient's version
                elif clear == "to None after":
                    param.grad = None
        if clear == "zero_grad after":
            model.zero_grad()
    return line


@pytest.mark.parametrize("clear", ["by hand after", "to None after", "zero_grad after"])
def test_correct_hand_written_sgd_counts_its_steps_and_reports_nothing(clear: str) -> None:
    with watch() as w:
        d2l_style(clear)
    assert (w.findings, w.faults, w.steps, w.hand_steps) == ([], [], STEPS, STEPS)


def test_gradients_never_cleared_is_tw101_at_the_backward_and_step_2() -> None:
    with watch() as w:
        line = d2l_style("never")
    assert [(f.code, f.line, f.step, f.count) for f in w.findings] == [("TW101", line, 2, STEPS - 1)]


def test_zero_grad_between_backward_and_update_is_tw102_from_step_1() -> None:
    with watch() as w:
        d2l_style("zero_grad(set_to_none=False) between")
    [finding] = w.findings
    assert (finding.code, finding.step) == ("TW102", 1) and "hand-written update" in finding.message


def test_parameters_the_update_leaves_out_are_tw603() -> None:
    with watch() as w:
        d2l_style("zero_grad after", params_of=lambda model: list(model[2].parameters()))
    [finding] = w.findings
    assert finding.code == "TW603" and "Sequential.0.weight, Sequential.0.bias" in finding.message
    assert w.steps == STEPS


def test_data_updates_are_steps_and_an_optimizer_run_has_none() -> None:
    model, x, y = model_and_data()
    with watch() as w:
        for i in range(STEPS):
            model.zero_grad()
            nn.functional.mse_loss(model(x[i::STEPS]), y[i::STEPS]).backward()
            for param in model.parameters():
                param.data.add_(param.grad, alpha=-0.1)
    assert (w.findings, w.steps, w.hand_steps) == ([], STEPS, STEPS)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch() as w:
        for i in range(STEPS):
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x[i::STEPS]), y[i::STEPS]).backward()
            optimizer.step()
            for param in model.parameters():
                param.data.clamp_(-1, 1)  # WGAN-style clipping after the step is no step of its own
    assert (w.findings, w.steps, w.hand_steps) == ([], STEPS, 0)


def test_a_script_that_only_computes_gradients_has_no_step() -> None:
    model, x, y = model_and_data()
    with watch() as w:
        for i in range(4):  # saliency: gradients for inspection, parameters untouched
            model.zero_grad()
            nn.functional.mse_loss(model(x[i::4]), y[i::4]).backward()
    assert (w.findings, w.steps) == ([], 0)
