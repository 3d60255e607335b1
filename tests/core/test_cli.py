"""The `trainwell` dispatcher: subcommands, exit codes, one-line errors."""

from trainwell.cli import main


def test_no_subcommand_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_rule_page_by_code_and_by_name(capsys):
    assert main(["rule", "TW101"]) == 0
    by_code = capsys.readouterr().out
    assert by_code.startswith("# TW101")
    assert main(["rule", "zero-grad-missing"]) == 0
    assert capsys.readouterr().out == by_code


def test_rule_all_lists_every_code(capsys):
    from trainwell.catalog import CATALOG

    assert main(["rule", "--all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(CATALOG)


def test_unknown_rule_is_one_line_error(capsys):
    assert main(["rule", "TW999"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("trainwell: error: unknown rule 'TW999'") and "\n" not in err


def test_public_functions_survive_importing_their_packages():
    """`trainwell.check` / `trainwell.watch` stay the functions after their packages load."""
    import trainwell
    import trainwell.lint.runner  # noqa: F401
    import trainwell.runtime.watcher  # noqa: F401

    assert callable(trainwell.check) and trainwell.check.__module__ == "trainwell.lint.runner"
    assert trainwell.watch.__module__ == "trainwell.runtime.watcher"
    assert [f.code for f in trainwell.check("import torch\nx = torch.load('a', weights_only=False)\n")] == ["TW502"]
