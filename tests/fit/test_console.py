"""What a run prints: whole lines outside a terminal, a bar inside one, colour only where allowed."""

import io

import torch
from torch import nn

from trainwell.fit.console import ProgressBar, print_start
from trainwell.fit.trainer import Trainer
from trainwell.terminal import paint


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def train(bar):
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(40, 3, generator=g), torch.randint(0, 2, (40,), generator=g)
    Trainer(nn.Linear(3, 2), lambda p: torch.optim.SGD(p, lr=0.1), loss=nn.CrossEntropyLoss(),
            max_epochs=3, batch_size=8, log_every=1, progress=False, callbacks=[bar],
            device="cpu").fit((x, y), val_data=(x, y))


def test_outside_a_terminal_only_whole_lines_and_the_epoch_table():
    out = io.StringIO()
    train(ProgressBar(total_steps=15, file=out))
    text = out.getvalue()
    assert "\r" not in text and "\x1b" not in text  # no bar redraws, no escape codes
    lines = text.splitlines()
    assert len(lines) == 4  # the header and one row per epoch; no step lines in 1 s
    assert lines[0].split() == ["epoch", "step", "train_loss", "val_loss", "lr", "time_s"]
    assert [line.split()[:2] for line in lines[1:]] == [["1", "5"], ["2", "10"], ["3", "15"]]


def test_outside_a_terminal_a_long_epoch_gets_a_step_line(monkeypatch):
    from trainwell.fit import console

    monkeypatch.setattr(console, "HEARTBEAT_S", 0.0)  # every log record is "long ago"
    out = io.StringIO()
    train(ProgressBar(total_steps=15, file=out))
    steps = [line for line in out.getvalue().splitlines() if line.startswith("step ")]
    assert steps[0].startswith("step 1/15  loss ") and "samples_s" in steps[0]
    assert len(steps) == 15


def test_in_a_terminal_a_live_bar_redraws_in_place():
    out = FakeTerminal()
    bar = ProgressBar(total_steps=15, file=out)
    train(bar)
    assert bar.live and bar.bar.n == 15 and "\r" in out.getvalue()


def test_the_start_summary_says_size_device_plan_and_folder(tmp_path):
    out = io.StringIO()
    print_start((1200, 34), torch.device("cpu"), "bf16-mixed", 90, 32, 4, 2, tmp_path, file=out)
    lines = out.getvalue().splitlines()
    assert lines == [
        "parameters    1,234 (1,200 trainable, 34 frozen)",
        "device        cpu, precision bf16-mixed, 2 processes",
        "plan          90 optimizer steps, effective batch 256 (32 per batch x 2 processes x accumulate 4)",
        f"run directory {tmp_path}",
    ]


def test_colour_only_in_a_terminal_and_never_under_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert paint("x", "red", FakeTerminal()) == "\x1b[31mx\x1b[0m"
    assert paint("x", "red", io.StringIO()) == "x"
    monkeypatch.setenv("NO_COLOR", "1")
    assert paint("x", "red", FakeTerminal()) == "x"
