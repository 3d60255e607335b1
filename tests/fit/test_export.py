"""`trainwell export` and `trainwell.load_weights`: a run's weights usable with plain PyTorch."""

import pytest
import torch
from safetensors.torch import load_file
from torch import nn

import trainwell
from trainwell.cli import main
from trainwell.errors import TrainwellError
from tiny import make_data, make_model


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("export") / "run"
    x, y = make_data()
    trainer = trainwell.Trainer(make_model(), lambda p: torch.optim.AdamW(p, lr=1e-2),
                                loss=nn.CrossEntropyLoss(), max_epochs=3, batch_size=6,
                                run_dir=run_dir, progress=False, device="cpu", monitor="train_loss")
    trainer.fit((x, y))
    return run_dir, trainer


def checkpoint_model(path):
    from trainwell.fit.checkpoint import load_checkpoint

    return load_checkpoint(path)["model"]


def test_export_writes_the_best_weights_by_default_and_the_last_on_request(run, tmp_path, capsys):
    run_dir, trainer = run
    assert main(["export", str(run_dir), "-o", str(tmp_path / "best.safetensors")]) == 0
    best = checkpoint_model(run_dir / "checkpoints" / "best.ckpt")
    exported = load_file(str(tmp_path / "best.safetensors"))
    assert exported.keys() == best.keys() and all(torch.equal(exported[k], best[k]) for k in best)
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {tmp_path / 'best.safetensors'} (") and "best.ckpt (epoch " in out
    assert main(["export", str(run_dir), "--last", "-o", str(tmp_path / "last.safetensors")]) == 0
    last = load_file(str(tmp_path / "last.safetensors"))
    assert all(torch.equal(last[k], v) for k, v in trainer.model.state_dict().items())


def test_load_weights_reads_an_export_or_a_checkpoint_into_a_plain_model(run, tmp_path):
    run_dir, trainer = run
    main(["export", str(run_dir), "--last", "-o", str(tmp_path / "m.safetensors")])
    for source in (tmp_path / "m.safetensors", sorted((run_dir / "checkpoints").glob("step-*"))[-1]):
        model = trainwell.load_weights(source, make_model(seed=7))
        assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(),
                                                    trainer.model.state_dict().values()))


def test_load_weights_into_another_model_or_from_another_file_is_one_line(run, tmp_path):
    run_dir, _ = run
    main(["export", str(run_dir), "-o", str(tmp_path / "m.safetensors")])
    with pytest.raises(TrainwellError, match=r"^weights file .*m\.safetensors does not fit this "
                                             r"model: missing keys weight, bias; unexpected keys "
                                             r"0\.bias, 0\.weight, 3\.bias, 3\.weight; build the model "
                                             r"the weights were trained with$"):
        trainwell.load_weights(tmp_path / "m.safetensors", nn.Linear(5, 3))
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(TrainwellError, match=r"notes\.txt is neither a safetensors file nor a "
                                             r"trainwell checkpoint"):
        trainwell.load_weights(tmp_path / "notes.txt", make_model())


def test_export_of_a_run_without_a_best_checkpoint_or_of_nothing_is_one_line(run, tmp_path, capsys):
    run_dir, _ = run
    (tmp_path / "nobest" / "checkpoints").mkdir(parents=True)
    step = sorted((run_dir / "checkpoints").glob("step-*"))[-1]
    (tmp_path / "nobest" / "checkpoints" / step.name).write_bytes(step.read_bytes())
    assert main(["export", str(tmp_path / "nobest"), "--best", "-o", str(tmp_path / "x.st")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and (
        f"{tmp_path / 'nobest'} has no best checkpoint ({tmp_path / 'nobest' / 'checkpoints' / 'best.ckpt'}"
        ": the monitored value was never recorded, e.g. a run without validation); use --last") in err
    assert main(["export", str(tmp_path / "nobest"), "-o", str(tmp_path / "x.st")]) == 0  # falls back to last
    assert main(["export", str(tmp_path / "missing"), "-o", str(tmp_path / "x.st")]) == 2
    assert f"{tmp_path / 'missing'}: no such run directory or checkpoint file" in capsys.readouterr().err


def test_tied_weights_export_and_load_back():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(7, 4)
            self.head = nn.Linear(4, 7, bias=False)
            self.head.weight = self.embed.weight

    from trainwell.fit.weights import _unshared
    from trainwell.fit.checkpoint import export_state

    import os
    import tempfile

    model = Tied()
    with tempfile.TemporaryDirectory() as d:
        path = export_state(_unshared(model.state_dict()), os.path.join(d, "t.safetensors"))
        fresh = trainwell.load_weights(path, Tied())
    assert torch.equal(fresh.embed.weight, model.embed.weight) and fresh.head.weight is fresh.embed.weight
