"""`trainwell.watch()` as a context manager and a decorator: findings as objects,
results unchanged by watching, errors re-raised with the user's line."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import trainwell
from trainwell.errors import TrainwellError
from trainwell.runtime.watcher import watch


def train(steps: int = 6, zero_grad: bool = True) -> nn.Module:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Dropout(0.2), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=steps)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(8 * steps, 6), torch.randint(0, 3, (8 * steps,))),
        batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0),
    )
    model.train()
    for x, y in loader:
        if zero_grad:
            optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()  # the line TW101 points at
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
    model.eval()
    with torch.no_grad():
        model(torch.randn(4, 6))
    return model


BACKWARD_LINE = next(n for n, text in enumerate(open(__file__), 1) if text.rstrip().endswith("# the line TW101 points at"))


def test_correct_training_reports_nothing_and_gives_bitwise_equal_weights() -> None:
    plain = train().state_dict()
    with trainwell.watch() as w:
        watched = train().state_dict()
    assert w.findings == [] and w.faults == [] and w.steps == 6
    assert plain.keys() == watched.keys()
    assert all(torch.equal(plain[k], watched[k]) for k in plain)


def test_findings_are_objects_with_step_and_count() -> None:
    with watch() as w:
        train(zero_grad=False)
    [finding] = w.findings
    assert (finding.code, finding.name, finding.line) == ("TW101", "zero-grad-missing", BACKWARD_LINE)
    assert finding.path == __file__
    assert finding.step == 2 and finding.count == 5  # stale gradients applied at steps 2..6


def test_decorator_form_watches_each_call_anew() -> None:
    w = trainwell.watch()
    decorated = w(train)
    decorated(zero_grad=False)
    assert [f.code for f in w.findings] == ["TW101"]
    decorated()
    assert w.findings == []


def test_strict_raises_after_the_block_and_select_ignore_filter() -> None:
    with pytest.raises(TrainwellError) as raised:
        with watch(strict=True):
            train(zero_grad=False)
    assert raised.value.exit_code == 1 and "TW101" in str(raised.value)
    with watch(ignore=["TW1"], strict=True) as w:
        train(zero_grad=False)
    assert w.findings == []


def test_unknown_code_is_a_one_line_error() -> None:
    with pytest.raises(TrainwellError, match="unknown rule code or prefix 'TW999'"):
        watch(select=["TW999"])


class _Shift(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(3, device="meta"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bias + x


def test_device_mismatch_is_raised_again_naming_tensor_devices_and_line() -> None:
    model = _Shift()
    batch = {"x": torch.randn(2, 3)}
    with pytest.raises(RuntimeError) as raised:
        with watch() as w:
            model(batch["x"])  # the forward call with the un-moved tensor
    line = next(n for n, text in enumerate(open(__file__), 1) if text.rstrip().endswith("# the forward call with the un-moved tensor"))
    message = str(raised.value)
    assert f"test_watch_api.py:{line}" in message and "`batch['x']` on cpu" in message and "model `model` on meta" in message
    assert isinstance(raised.value.__cause__, RuntimeError) and "device" in str(raised.value.__cause__)
    assert [(f.code, f.line) for f in w.findings] == [("TW403", line)]


def test_other_errors_pass_through_unchanged() -> None:
    error = ValueError("boom")
    with pytest.raises(ValueError) as raised:
        with watch():
            raise error
    assert raised.value is error


def test_a_finding_before_the_first_step_reads_before_training() -> None:
    import io

    from trainwell.runtime.summary import render_table

    buffer = io.BytesIO()
    torch.save({"w": torch.zeros(2)}, buffer)
    buffer.seek(0)
    echo = io.StringIO()
    with watch(echo=echo) as w:
        torch.load(buffer, weights_only=False)
        train()
    [finding] = w.findings
    assert (finding.code, finding.step) == ("TW502", 0)
    assert "TW502 unsafe-torch-load (before training)" in echo.getvalue()
    assert " before training " in render_table(w.findings, w.steps)


def test_loading_back_what_this_run_saved_is_not_tw502(tmp_path) -> None:
    import io

    buffer, path = io.BytesIO(), tmp_path / "model.pt"
    with watch(select=["TW502"]) as w:
        torch.save(nn.Linear(2, 2), buffer)
        torch.save(nn.Linear(2, 2), path)
        buffer.seek(0)
        torch.load(buffer, weights_only=False)  # a round trip: nothing untrusted
        torch.load(str(path), weights_only=False)
        torch.load(io.BytesIO(buffer.getvalue()), weights_only=False)  # noqa: TW502 -- on purpose: bytes of unknown origin
    assert [f.code for f in w.findings] == ["TW502"] and w.findings[0].count == 1
