import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from trainwell.cli import main

TINY = str(Path(__file__).with_name("tiny_models.py"))


def run(capsys, *argv):
    code = main(["memory", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_one_billion_table(capsys):
    code, out, _ = run(capsys, "--params", "1B", "--optimizer", "adamw", "--precision", "32")
    assert code == 0
    assert "14.9 GiB (16.0 GB)" in out and "not included" in out and "What if" in out


def test_json_has_total_and_one_field_per_row(capsys):
    code, out, _ = run(capsys, "--params", "7B", "--precision", "bf16-mixed", "--batch", "8", "--seq", "512",
                       "--hidden", "4096", "--layers", "32", "--heads", "32", "--shard", "8", "--json")
    data = json.loads(out)
    assert code == 0
    rows = ("weights_bytes", "buffers_bytes", "gradients_bytes", "optimizer_state_bytes", "master_weights_bytes",
            "activations_bytes")
    assert data["total_bytes"] == sum(data[row] for row in rows)
    assert data["gpus"] == 8 and data["stage"] == 3 and data["total_all_gpus_bytes"] == 8 * data["total_bytes"]
    assert {w["name"] for w in data["what_if"]} >= {"gradient accumulation x4", "activation checkpointing"}
    assert all({"total_bytes", "saving_bytes", "saving_percent"} <= set(w) for w in data["what_if"])


def test_model_mode_from_a_file(capsys, tmp_path, monkeypatch):
    (tmp_path / "netdef.py").write_text("import torch\n\n\ndef build():\n"
                                        "    return torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU())\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "--model", "netdef:build", "--input-shape", "5,6", "--optimizer", "sgd", "--json")
    data = json.loads(out)
    assert code == 0 and data["mode"] == "measure"
    assert data["weights_bytes"] == (6 * 4 + 4) * 4 and data["gradients_bytes"] == data["weights_bytes"]
    assert data["optimizer_state_bytes"] == 0
    assert data["activations_bytes"] == 5 * 6 * 4 + 5 * 4 * 4  # Linear keeps its input, ReLU its output


def test_model_mode_with_sample_factory_and_freeze(capsys):
    code, out, _ = run(capsys, "--model", f"{TINY}:make_gpt", "--sample", f"{TINY}:make_gpt_batch",
                       "--freeze", "embed", "--top", "3")
    assert code == 0
    assert "Top layers by activation memory" in out and "freeze embed" in out and "LoRA rank 16" in out


@pytest.mark.parametrize("argv, message", [
    (["--params", "7B", "--optimizer", "lion"], "unknown optimizer 'lion'; choose one of: sgd, sgd-momentum"),
    ([], "give --params N"),
    (["--params", "1B", "--model", "x:y"], "either --params"),
    (["--params", "1B", "--hidden", "100", "--heads", "3", "--layers", "2"], "not divisible"),
    (["--params", "1B", "--batch", "-4", "--seq", "8", "--hidden", "64", "--layers", "2"], "--batch -4: must be at least 1"),
    (["--params", "1B", "--input-shape", "3,4"], "--input-shape needs --model"),
    (["--model", f"{TINY}:make_broken", "--input-shape", "3,4"],
     "--model factory '.*make_broken' raised ValueError: no weights file"),
    (["--model", "no_such_module_xyz:build", "--input-shape", "3,4"], "cannot import 'no_such_module_xyz'"),
    (["--model", f"{TINY}:nothing", "--input-shape", "3,4"], "has no attribute 'nothing'"),
    (["--model", "build", "--input-shape", "3,4"], "MODULE:FUNCTION"),
    (["--model", f"{TINY}:make_mlp"], "give one sample"),
    (["--model", f"{TINY}:make_mlp", "--input-shape", "3,x"], "--input-shape expects integers"),
    (["--model", f"{TINY}:make_mlp", "--input-shape", "3,4"], "forward raised RuntimeError"),
    (["--model", f"{TINY}:make_mlp", "--input-shape", "3,20", "--hidden", "8"], "--hidden is for the analytic"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("trainwell: error: ") and err.count("\n") == 1
    assert re.search(message, err), err


def test_analytic_mode_never_imports_torch():
    """The one subprocess test: `trainwell memory --params` must not pay for `import torch`."""
    code = ("import sys; from trainwell.cli import main; rc = main(['memory', '--params', '7B', '--json']); "
            "assert 'torch' not in sys.modules, 'torch imported'; sys.exit(rc)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["total_bytes"] == 7_000_000_000 * 16
