"""TW503 on a machine without a GPU: the probe's rule, fed the events a CUDA run produces,
and the patched tensor methods leaving CPU tensors alone."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import torch

from trainwell.runtime.probes.host_sync_in_loop import HostSyncInLoop
from trainwell.runtime.session import Session
from trainwell.runtime.watcher import watch

CUDA_TENSOR = SimpleNamespace(is_cuda=True)


def run_steps(probe: HostSyncInLoop, steps: int, every: int) -> int:
    line = sys._getframe().f_lineno + 4
    for step in range(steps):
        probe.session.step = step
        if step % every == 0:
            probe.on_host_read(CUDA_TENSOR, "item")  # the syncing call
    return line


def test_a_sync_at_every_step_is_reported_at_its_line() -> None:
    probe = HostSyncInLoop(Session({"TW503"}))
    line = run_steps(probe, steps=8, every=1)
    [finding] = probe.session.result()
    assert (finding.code, finding.line, finding.step) == ("TW503", line, 5)
    assert ".item()" in finding.message


def test_a_sync_inside_a_logging_block_is_not() -> None:
    probe = HostSyncInLoop(Session({"TW503"}))
    run_steps(probe, steps=40, every=10)
    assert probe.session.result() == []


def test_cpu_tensors_never_count_and_values_are_unchanged() -> None:
    loss = torch.tensor(1.5)
    with watch(select=["TW503"]) as w:
        for _ in range(10):
            assert loss.item() == 1.5 and loss.tolist() == 1.5 and repr(loss) == "tensor(1.5000)"
    assert w.findings == []
