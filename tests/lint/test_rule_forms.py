"""Rule forms that span files of a project (single-file forms live in tests/cases/TW*/)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from trainwell.lint.runner import check_source, run

DISCRIMINATOR = '''
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self, ngpu):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1){last})

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output.view(-1, 1).squeeze(1)
'''

GAN = '''
import torch
import torch.nn as nn
from models import *

netD = Discriminator(1).to("cpu")
criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)
for epoch in range(2):
    for i in range(4):
        netD.zero_grad()
        output = netD(torch.randn(8, 4)).view(-1)
        errD = criterion(output, torch.ones(8))
        errD.backward()
        optimizerD.step()
'''


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    return root


def _found(root: Path, code: str) -> list[tuple[str, int]]:
    return [(Path(f.path).name, f.line) for f in run([root]).findings if f.code == code]


def test_tw301_discriminator_of_another_file_ending_in_sigmoid(tmp_path):
    root = _write(tmp_path, {"models.py": DISCRIMINATOR.format(last=", nn.Sigmoid()"), "gan.py": GAN})
    assert _found(root, "TW301") == [("gan.py", 13)]


def test_tw301_discriminator_of_another_file_ending_in_a_linear_layer(tmp_path):
    root = _write(tmp_path, {"models.py": DISCRIMINATOR.format(last=""), "gan.py": GAN})
    assert _found(root, "TW301") == []


DATA = '''
import torch
from torch.utils.data import DataLoader, TensorDataset


def get_loaders(batch_size):
    train = TensorDataset(torch.randn(30, 8), torch.randint(0, 2, (30,)))
    train_loader = DataLoader(train, batch_size=batch_size, shuffle=True{drop})
    return train_loader, DataLoader(train, batch_size=batch_size)
'''

METERS = '''
class Averager:
    def __init__(self):
        self.n, self.v = 0, 0.0

    def add(self, x):
        self.v += x
        self.n += 1

    def item(self):
        return self.v / self.n
'''

TRAIN = '''
import torch
from torch import nn
from data import get_loaders
from meters import Averager

train_loader, val_loader = get_loaders(8)
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    total = 0.0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(total / len(train_loader))
    meter = Averager()
    with torch.no_grad():
        for x, y in val_loader:
            meter.add(nn.functional.cross_entropy(model(x), y).item())
    print(meter.item())
'''


def test_tw302_loader_and_averager_of_other_files(tmp_path):
    root = _write(tmp_path, {"data.py": DATA.format(drop=""), "meters.py": METERS, "train.py": TRAIN})
    assert _found(root, "TW302") == [("train.py", 18), ("train.py", 22)]


def test_tw302_full_batches_of_a_loader_of_another_file(tmp_path):
    root = _write(tmp_path, {"data.py": DATA.format(drop=", drop_last=True"), "meters.py": METERS, "train.py": TRAIN})
    assert _found(root, "TW302") == [("train.py", 22)]  # the validation loader keeps its short last batch


VOLATILE = '''
import torch
from torch import nn
from torch.autograd import Variable

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(3, 4), torch.randint(0, 2, (3,))) for _ in range(4)]
for epoch in range(2):
    for x, y in data:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    for x, y in data:
        x = Variable(x, volatile={flag})
        out = model(x)
'''


def test_tw203_says_volatile_does_nothing_since_0_4():
    findings, _ = check_source(textwrap.dedent(VOLATILE.format(flag="True")), "v.py", {"TW203"})
    assert [f.line for f in findings] == [16]
    assert "no effect since PyTorch 0.4" in findings[0].message
    findings, _ = check_source(textwrap.dedent(VOLATILE.format(flag="False")), "v.py", {"TW203"})
    assert [f.line for f in findings] == [16] and "volatile" not in findings[0].message


def test_volatile_turns_nothing_off_on_installed_torch():
    """The fact the TW203 message states: `Variable(x, volatile=True)` only warns; the output still has a graph."""
    import warnings

    import torch
    from torch.autograd import Variable

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = torch.nn.Linear(2, 1)(Variable(torch.randn(3, 2), volatile=True))
    assert out.requires_grad and out.grad_fn is not None
    assert any("volatile" in str(w.message) for w in caught)


ADAPTER_TEST = '''
import torch
from torch import nn


def test_outputs_change():
    model = nn.Linear(4, 2)
    x = torch.randn(3, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    for _ in range(3):
        optimizer.zero_grad()
        model(x).pow(2).sum().backward()
        optimizer.step()
    after = model(x)
    assert torch.isfinite(after).all()
    outputs = [model(row) for row in x]
    assert len(outputs) == 3
'''


def test_tw203_one_forward_in_a_pytest_test_is_no_validation_pass():
    """A ``test_*`` function of a test module checks one output; the same code in a script runs inference. Repeated
    forwards (a comprehension) are reported in both."""
    source = textwrap.dedent(ADAPTER_TEST)
    for path, lines in (("tests/test_adapter.py", [16]), ("adapter_test.py", [16]), ("check_adapter.py", [14, 16])):
        findings, _ = check_source(source, path, {"TW203"})
        assert [f.line for f in findings] == lines, path
