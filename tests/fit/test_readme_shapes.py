"""The README's text, Hugging Face-style and GAN snippets run as written, and resume bitwise."""

import re
from pathlib import Path

import torch

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def block(marker: str) -> str:
    return next(b for b in BLOCKS if marker in b)


def run(code: str, scope: dict) -> dict:
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    return scope


def until_fit(code: str, fit_line: str) -> str:
    """The snippet up to (not including) its ``fit`` line: the same setup, to resume instead."""
    return code[:code.index(fit_line)]


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), name


def test_the_text_snippet_trains_evaluates_predicts_and_resumes_bitwise(tmp_path, monkeypatch):
    text = block("pad_collate")
    monkeypatch.chdir(tmp_path)
    scope = run(text, {})
    result, trainer = scope["result"], scope["trainer"]
    assert result.history[-1]["val_accuracy"] > 0.9
    assert set(scope["scores"]) == {"loss", "accuracy"}
    assert scope["logits"].shape == (64, 2)
    middle = tmp_path / "runs" / "text" / "checkpoints" / "step-00000016.ckpt"  # after epoch 2

    (tmp_path / "again").mkdir()
    monkeypatch.chdir(tmp_path / "again")
    again = run(until_fit(text, "result = trainer.fit("), {})
    again["trainer"].fit(again["loader"](again["train"], shuffle=True),
                         val_data=again["loader"](again["val"]), resume=middle)
    same_weights(again["trainer"].model, trainer.model)


def test_the_hugging_face_snippet_predicts_logits_and_resumes_bitwise(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scope = run(block("HFStyle"), run(block("pad_collate"), {}))
    assert scope["hf_result"].history[-1]["val_accuracy"] > 0.9
    logits = scope["hf_logits"]
    assert isinstance(logits, torch.Tensor) and logits.shape == (64, 2)
    middle = tmp_path / "runs" / "hf" / "checkpoints" / "step-00000016.ckpt"

    (tmp_path / "again").mkdir()
    monkeypatch.chdir(tmp_path / "again")
    again = run(until_fit(block("HFStyle"), "hf_result = hf.fit("), run(block("pad_collate"), {}))
    with_labels, loader = again["with_labels"], again["loader"]
    again["hf"].fit(loader(with_labels(again["train"]), shuffle=True),
                    val_data=loader(with_labels(again["val"])), resume=middle)
    same_weights(again["hf"].model, scope["hf"].model)
