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


def test_check_of_one_file_imports_only_what_it_runs(tmp_path):
    """`trainwell check` on the files of a commit (pre-commit, an editor's save) starts without the other subcommands'
    modules (the Trainer's YAML config and launcher), the process pool's and the gitignore library's: its start-up is most
    of its time there."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text("import torch\nfor x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    opt.step()\n")
    probe = ("import sys\nfrom trainwell.cli import main\ncode = main(['check', '--no-cache', sys.argv[1]])\n"
             "print(code, sorted(m for m in ('yaml', 'trainwell.fit.config', 'trainwell.fit.launch', 'multiprocessing', "
             "'concurrent.futures', 'pathspec', 'trainwell.runtime') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", probe, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "1 []"  # the missing zero_grad found, nothing else loaded
