"""Data code in another file of the checked tree: a loader factory and its collate_fn, a corpus class, a data module
returning a tuple. The training script's findings depend on reading them (TW108, TW305, TW403)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from trainwell.lint.runner import run

DATA = '''
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


def get_data(pairs):
    special_symbols = {"<unk>": 0, "<pad>": 1}

    def _collate_fn(batch):
        src = pad_sequence([torch.tensor(s) for s, _ in batch], padding_value=special_symbols["<pad>"])
        tgt = pad_sequence([torch.tensor(t) for _, t in batch], padding_value=special_symbols["<pad>"])
        return src, tgt

    return DataLoader(pairs, batch_size=2, shuffle=True, collate_fn=_collate_fn), special_symbols


def collate(samples):
    return torch.stack([x for x, _ in samples]), torch.tensor([y for _, y in samples])


def get_loader(samples):
    loader = DataLoader(samples, batch_size=2, shuffle=True, collate_fn=collate)
    return loader


class Corpus:
    def __init__(self, words):
        self.vocab = {w: i for i, w in enumerate(sorted(set(words)))}
        self.train = self.tokenize(words)

    def tokenize(self, words):
        return torch.tensor([self.vocab[w] for w in words]).long()
'''

TRANSLATE = '''
import torch
from torch import nn
from data import get_data

pairs = [([3, 4, 5], [4, 5]), ([6], [7, 8, 9])]
train_dl, special_symbols = get_data(pairs)
model = nn.Embedding(10, 10)
loss_fn = nn.CrossEntropyLoss({ignore})
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for src, tgt in train_dl:
        logits = model(tgt[:-1])
        loss = loss_fn(logits.reshape(-1, 10), tgt[1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
'''

CLASSIFY = '''
import torch
from torch import nn
from data import get_loader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
loader = get_loader([(torch.randn(4), 1), (torch.randn(4), 0)])
model = nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in loader:
        {move}
        loss = nn.functional.cross_entropy(model(x), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
'''

LANGUAGE_MODEL = '''
import torch
from torch import nn
from data import Corpus

corpus = Corpus("a b a c b a".split())
model = nn.Sequential(nn.Embedding(3, 4), nn.Linear(4, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ids = corpus.train
for i in range(3):
    output = model(ids[i:i + 2])
    loss = nn.functional.cross_entropy({output}, ids[i + 1:i + 3]).requires_grad_()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''


def _tree(tmp_path: Path, main: str) -> Path:
    (tmp_path / "data.py").write_text(textwrap.dedent(DATA))
    (tmp_path / "main.py").write_text(textwrap.dedent(main))
    return tmp_path


def _found(root: Path, code: str) -> list[tuple[str, int]]:
    return [(Path(f.path).name, f.line) for f in run([root]).findings if f.code == code]


def test_targets_padded_by_the_collate_fn_of_a_data_module(tmp_path):
    root = _tree(tmp_path, TRANSLATE.replace("{ignore}", ""))
    assert _found(root, "TW305") == [("main.py", 14)]


def test_targets_padded_by_a_data_module_and_ignored_are_clean(tmp_path):
    root = _tree(tmp_path, TRANSLATE.replace("{ignore}", "ignore_index=1"))
    assert _found(root, "TW305") == []


def test_a_batch_of_a_loader_factory_left_on_the_cpu(tmp_path):
    root = _tree(tmp_path, CLASSIFY.replace("{move}", "pass"))
    assert _found(root, "TW403") == [("main.py", 13)]


def test_a_batch_of_a_loader_factory_moved_is_clean(tmp_path):
    root = _tree(tmp_path, CLASSIFY.replace("{move}", "x = x.to(device)"))
    assert _found(root, "TW403") == []


def test_targets_kept_by_a_corpus_object_of_another_file_are_data(tmp_path):
    root = _tree(tmp_path, LANGUAGE_MODEL.replace("{output}", "output.detach()"))
    assert _found(root, "TW108") == [("main.py", 14)]


def test_a_loss_on_live_outputs_with_corpus_targets_is_clean(tmp_path):
    root = _tree(tmp_path, LANGUAGE_MODEL.replace("{output}", "output"))
    assert _found(root, "TW108") == []
