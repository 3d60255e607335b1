"""Code runs top to bottom: a model moved to a device by a later cell (or a later module-level line) was not on
that device when an earlier loop ran (TW403 needs the move before the forward)."""

from __future__ import annotations

from pathlib import Path

import nbformat

from trainwell.lint.runner import run

SETUP = '''import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4, shuffle=True)
'''
LOOP = '''for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
'''
HELPER = '''def train(net, data):
    for x, y in data:
        optimizer.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        optimizer.step()
'''
MOVE = '''device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model.to(device)
'''


def _codes(path: Path) -> list[str]:
    return [f.code for f in run([path]).findings]


def _notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(text) for text in cells]
    nbformat.write(nb, str(path))
    return path


def test_a_later_cell_s_move_never_reaches_an_earlier_cell_s_loop(tmp_path):
    assert "TW403" not in _codes(_notebook(tmp_path / "train.ipynb", SETUP, LOOP, MOVE))


def test_an_earlier_cell_s_move_reaches_the_loop(tmp_path):
    assert "TW403" in _codes(_notebook(tmp_path / "train.ipynb", SETUP, MOVE, LOOP))


def test_a_script_moving_the_model_after_its_loop_is_not_reported(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SETUP + LOOP + MOVE)
    assert "TW403" not in _codes(path)


def test_a_helper_called_after_the_move_sees_it_one_called_before_does_not(tmp_path):
    after, before = tmp_path / "after.py", tmp_path / "before.py"
    after.write_text(SETUP + HELPER + MOVE + "train(model, loader)\n")
    before.write_text(SETUP + HELPER + "train(model, loader)\n" + MOVE)
    assert ("TW403" in _codes(after), "TW403" in _codes(before)) == (True, False)
