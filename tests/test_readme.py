"""The README is true: its Python examples run as written, its configs and commands parse."""

import re
import shlex
from pathlib import Path

import pytest
import yaml

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TEXT, flags=re.S)


def test_the_trainer_example_runs_as_written(tmp_path, monkeypatch):
    example = next(b for b in blocks("python") if "Trainer(" in b)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(example, "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    result, trainer = scope["result"], scope["trainer"]
    assert result.history and result.best["val_accuracy"] > 0.9  # a run that ends well
    assert result.stopped_early and len(result.history) < 30
    assert (tmp_path / "runs" / "mlp" / "checkpoints").is_dir()
    assert trainer.predict(scope["x_test"]).shape == (len(scope["x_test"]), 10)


def test_the_watch_example_runs_around_a_training_function():
    import torch
    from torch import nn

    example = next(b for b in blocks("python") if "trainwell.watch()" in b)

    def train():  # the reader's own loop, in the example's place; a correct one
        model = nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
        for _ in range(3):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()

    scope = {"train": train}
    exec(compile(example, "README.md", "exec"), scope)  # noqa: S102
    assert scope["w"].findings == []


def test_the_run_config_example_is_a_valid_config():
    from trainwell.fit import config as cfg

    example = next(b for b in blocks("yaml") if "model:" in b)
    config = cfg.build(yaml.safe_load(example), "README run.yaml")
    assert config.model == "mymod:make_model" and config.precision == "bf16-mixed"


def commands() -> list[list[str]]:
    """Every `trainwell ...` line of the README's shell blocks, as argv."""
    out = []
    for block in blocks("bash") + blocks("console"):
        for line in block.splitlines():
            line = line.removeprefix("$ ").split("#")[0].strip()
            if line.startswith("trainwell ") and "|" not in line:  # `json|sarif|github`: a choice
                out.append(shlex.split(line)[1:])
            elif "&& trainwell " in line:
                out.append(shlex.split(line.rpartition("&& trainwell ")[2]))
    return out


@pytest.mark.parametrize("argv", commands(), ids=" ".join)
def test_every_command_line_in_the_readme_parses(argv):
    """Flags the README shows exist (a renamed flag would fail here), without running anything."""
    from trainwell.cli import _available_subcommands, build_parser

    build_parser(_available_subcommands()).parse_args(argv)



def test_the_rule_table_is_the_catalog():
    """The README lists every code of the catalog, as `trainwell rule --all --markdown` prints them."""
    from trainwell.catalog.command import markdown_table

    found = re.search(r"<!-- the rule table: .*? -->\n(.*?)<!-- end of the rule table -->", TEXT, flags=re.S)
    assert found, "the README lost its rule table markers"
    assert found.group(1) == markdown_table(), "the README's rule table is stale: paste `trainwell rule --all --markdown` between its markers"
