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


def test_the_gan_snippet_trains_two_optimizers_logs_both_losses_and_resumes_bitwise(tmp_path, monkeypatch):
    gan_code = block("optimize(\"generator\"")
    monkeypatch.chdir(tmp_path)
    scope = run(gan_code, {})
    history = scope["gan_result"].history
    assert len(history) == 40 and {"train_d_loss", "train_g_loss"} <= set(history[-1])
    assert (scope["samples"].mean(0) - torch.tensor([2.0, -1.0])).abs().max() < 0.5
    steps = (tmp_path / "runs" / "gan" / "steps.csv").read_text().splitlines()[0].split(",")
    assert {"train_d_loss", "train_g_loss"} <= set(steps)
    checkpoints = tmp_path / "runs" / "gan" / "checkpoints"
    from trainwell.fit.checkpoint import load_checkpoint

    payload = load_checkpoint(checkpoints / "step-00000304.ckpt")  # after epoch 38
    assert set(payload["optimizer"]) == {"generator", "discriminator"}

    (tmp_path / "again").mkdir()
    monkeypatch.chdir(tmp_path / "again")
    again = run(until_fit(gan_code, "gan_result = gan.fit("), {})
    resumed = again["gan"].fit(again["real"], resume=checkpoints / "step-00000304.ckpt")
    same_weights(again["gan"].model, scope["gan"].model)
    for name, opt in scope["gan"].optimizer.optimizers.items():
        a, b = opt.state_dict()["state"], again["gan"].optimizer.optimizers[name].state_dict()["state"]
        assert all(torch.equal(a[i]["exp_avg"], b[i]["exp_avg"]) for i in a), name
    assert resumed.history[-1] == {**history[-1], "time_s": resumed.history[-1]["time_s"]}
