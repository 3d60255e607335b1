"""`memory --precision` speaks fit's names and Lightning's aliases; flash attention gets a row."""

import pytest

from trainwell.errors import TrainwellError
from trainwell.memory.estimate import estimate_memory
from trainwell.memory.precision import get_precision

LLM = dict(batch=4, seq=4096, hidden=4096, layers=32, heads=32)  # the README's 7B case


@pytest.mark.parametrize("name", ["32", "bf16-mixed", "16-mixed"])
def test_fit_names_are_memory_names(name):
    from trainwell.fit.precision import PRECISIONS as FIT

    assert name in FIT and get_precision(name).name == name


@pytest.mark.parametrize("alias, meaning", [("16", "16-mixed"), ("bf16", "bf16-mixed"), ("32-true", "32")])
def test_lightning_aliases_mean_what_lightning_means(alias, meaning):
    assert get_precision(alias) == get_precision(meaning)
    assert get_precision(meaning).autocast or meaning == "32"  # 16 and bf16 are AMP, not all-half


def test_fp16_is_refused_with_both_readings():
    with pytest.raises(TrainwellError) as e:
        get_precision("fp16")
    assert str(e.value) == (
        "precision 'fp16' is ambiguous: 16-mixed is autocast (what AMP users and Lightning's '16' "
        "mean), 16-true is every tensor in half, 16-master half weights with an fp32 master copy; "
        "pass one of them")
    with pytest.raises(TrainwellError, match="^precision 'bfloat16' is ambiguous: bf16-mixed is autocast"):
        get_precision("bfloat16")
    with pytest.raises(TrainwellError) as e:
        get_precision("fp8")
    assert str(e.value) == (
        "unknown precision 'fp8'; choose one of: 32, bf16-mixed, 16-mixed, bf16-true, 16-true, "
        "bf16-master, 16-master (Lightning's aliases: 16 = 16-mixed, bf16 = bf16-mixed, 32-true = 32)")


def test_eager_attention_is_stated_and_gets_a_flash_what_if_row():
    eager = estimate_memory("7B", "adamw", "bf16-mixed", **LLM)
    flash = estimate_memory("7B", "adamw", "bf16-mixed", attention="flash", **LLM)
    [row] = [w for w in eager.what_if if w.name == "flash attention (SDPA)"]
    assert row.total_bytes == flash.total_bytes
    assert eager.activations_bytes > 5 * flash.activations_bytes  # the s*s terms dominate at 4096
    assert any(n.startswith("attention: eager, softmax(QK^T)V as written") for n in eager.notes)
    assert any(n.startswith("attention: flash") for n in flash.notes)
    assert not [w for w in flash.what_if if "flash" in w.name]


def test_the_cli_reads_16_as_autocast(capsys):
    from trainwell.cli import main

    assert main(["memory", "--params", "1B", "--precision", "16"]) == 0
    out = capsys.readouterr().out
    assert "precision 16-mixed" in out
