"""The constant evaluation: the values a name can take, and unknown wherever the file does not say."""

from __future__ import annotations

import ast
import textwrap

import pytest

from trainwell.lint.constants import always_one, values
from trainwell.lint.context import FileContext
from trainwell.lint.runner import run

TRAIN = '''
MAX_DEVICE_BATCH = 16


def train(settings, cli):
    batch_size = int(settings["batch_size"])
    k = 1
    if batch_size > MAX_DEVICE_BATCH and cli.distributed:
        k = batch_size // MAX_DEVICE_BATCH
        batch_size = MAX_DEVICE_BATCH
    return k
'''


def _k(source: str) -> frozenset[object] | None:
    """The values of the expression ``train`` returns."""
    source = textwrap.dedent(source)
    ctx = FileContext("t.py", source, ast.parse(source))
    returned = [n for n in ast.walk(ctx.functions["train"]) if isinstance(n, ast.Return)][-1]
    return values(ctx, returned.value)


def _main(body: str) -> str:
    return TRAIN + "\n\ndef main(cli):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def test_a_branch_the_constants_never_take_is_dead():
    assert _k(_main('settings = {"lr": 0.1, "batch_size": 16}\ntrain(settings, cli)\n')) == {1}


def test_a_taken_branch_gives_its_value():
    assert _k(_main('train({"batch_size": 64}, cli)\n')) == {1, 4}  # `cli.distributed` is unknown: both ways


def test_every_call_counts():
    assert _k(_main('train({"batch_size": 16}, cli)\ntrain({"batch_size": 16}, cli)\n')) == {1}
    assert _k(_main('train({"batch_size": 16}, cli)\ntrain({"batch_size": 64}, cli)\n')) == {1, 4}


@pytest.mark.parametrize("body", [
    'settings = {"batch_size": cli.batch_size}\ntrain(settings, cli)\n',  # from the command line
    'settings = vars(cli)\ntrain(settings, cli)\n',
    'settings = {"batch_size": 16}\nsettings.update(json.load(open("c.json")))\ntrain(settings, cli)\n',
    'settings = {"batch_size": 16}\nsettings["batch_size"] = cli.batch_size\ntrain(settings, cli)\n',
    'settings = {**defaults, "batch_size": 16}\ntrain(settings, cli)\n',
    'settings = {"batch_size": 16}\nalias = settings\ntrain(alias, cli)\n',
    'settings = {"batch_size": 16}\nfor _ in range(2):\n    train(settings, cli)\n',  # the call before may change it
    'train(settings=cli.settings, cli=cli)\n',
    'train(*cli.args)\n',
    'launch(train, {"batch_size": 16}, cli)\n',  # called where the file cannot see
])
def test_what_the_file_does_not_show_is_unknown(body):
    assert _k(_main(body)) is None


def test_no_call_at_all_is_unknown():
    assert _k(TRAIN) is None


def test_changes_after_the_read_do_not_matter():
    source = TRAIN.replace("    return k", '    tracker.log(settings)\n    settings["batch_size"] = 0\n    return k')
    assert _k(source + '\n\ntrain({"batch_size": 16}, None)\n') == {1}


def test_a_change_to_the_read_key_before_the_read_is_unknown():
    source = TRAIN.replace("    batch_size = int(", '    settings["batch_size"] = 64\n    batch_size = int(')
    assert _k(source + '\n\ntrain({"batch_size": 16}, None)\n') is None
    other_key = TRAIN.replace("    batch_size = int(", '    settings["epochs"] = 2\n    batch_size = int(')
    assert _k(other_key + '\n\ntrain({"batch_size": 16}, None)\n') == {1}


@pytest.mark.parametrize("change", [
    "MAX_DEVICE_BATCH = 8\n",  # assigned twice
    "int = lambda v: 64\n",  # not the builtin
    "def grow():\n    global MAX_DEVICE_BATCH\n    MAX_DEVICE_BATCH = 4\n",
])
def test_module_names_must_be_plain_constants(change):
    assert _k(TRAIN + "\n" + change + '\ntrain({"batch_size": 32}, None)\n') is None


def test_a_module_dict_is_known_only_while_nothing_in_the_file_changes_it():
    source = TRAIN.replace("settings[", "SETTINGS[") + '\nSETTINGS = {"batch_size": 16}\n\ntrain(None, None)\n'
    assert _k(source) == {1}
    assert _k(source + '\n\ndef main():\n    SETTINGS["batch_size"] = 64\n') is None
    assert _k(source + '\n\ndef main():\n    SETTINGS.update(batch_size=64)\n') is None
    assert _k(source + '\n\ndef main():\n    SETTINGS["epochs"] = 1\n') == {1}


def test_a_count_changed_in_a_loop_is_unknown():
    assert _k("def train():\n    k = 1\n    for _ in range(3):\n        k += 1\n    return k\n") is None


def test_an_assignment_in_a_loop_reaches_the_loop_head():
    source = "def train():\n    k = 1\n    while True:\n        if k:\n            return k\n        k = 4\n"
    ctx = FileContext("t.py", source, ast.parse(source))
    read = ctx.functions["train"].body[1].body[0].body[0].value
    assert values(ctx, read) == {1, 4}


def test_always_one_wants_the_int_one():
    assert always_one(FileContext("t.py", "k = 1\nk\n", tree := ast.parse("k = 1\nk\n")), tree.body[1].value)
    for literal in ("True", "1.0", "2"):
        source = f"k = {literal}\nk\n"
        tree = ast.parse(source)
        assert not always_one(FileContext("t.py", source, tree), tree.body[1].value), literal


SCRIPT = TRAIN.replace("    return k", '''    import torch
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(40, 4), torch.randint(0, 2, (40,))), batch_size=4)
    for epoch in range(2):
        for i, (x, y) in enumerate(loader):
            torch.nn.functional.cross_entropy(model(x), y).backward()
            if (i + 1) % k == 0:
                opt.step()
                opt.zero_grad()''') + '''

def main():
    train({"batch_size": 16}, None)


if __name__ == "__main__":
    main()
'''


def test_a_caller_in_another_file_of_the_tree_makes_it_unknown(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "unrelated.py").write_text("import script\n\nscript.main()\n", encoding="utf-8")
    assert [f.code for f in run([tmp_path], select=["TW107", "TW115"]).findings] == []
    (tmp_path / "launcher.py").write_text("import sys\nfrom script import train\n\ntrain(*sys.argv[1:])\n", encoding="utf-8")
    found = run([tmp_path], select=["TW107", "TW115"]).findings
    assert sorted((f.code, f.path.endswith("script.py")) for f in found) == [("TW107", True), ("TW115", True)]


def test_the_cache_key_of_a_file_covers_the_files_that_import_it(tmp_path):
    from trainwell.lint.dependencies import Dependencies

    script, launcher, lone = tmp_path / "script.py", tmp_path / "launcher.py", tmp_path / "lone.py"
    script.write_text(SCRIPT, encoding="utf-8")
    launcher.write_text("from script import main\n", encoding="utf-8")
    lone.write_text("x = 1\n", encoding="utf-8")
    files = [script, launcher, lone]
    before = Dependencies(files).digest(script)
    launcher.write_text("from script import main, train\n", encoding="utf-8")
    assert Dependencies(files).digest(script) != before
    after = Dependencies(files).digest(script)
    lone.write_text("x = 2\n", encoding="utf-8")
    assert Dependencies(files).digest(script) == after  # a file that does not import it is not part of its key
