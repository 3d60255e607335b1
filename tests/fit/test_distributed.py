"""DDP and FSDP2 on the CPU (gloo, 2 processes under torchrun): parity with 1 process,
resume across world sizes and strategies, a failing rank ends the job, `trainwell fit
--nproc`, and `trainwell fit --nnodes 2` as two "machines" of one process each on this
one (c10d rendezvous on localhost). Plus the data sharding and one-process groups,
in-process.

Tolerance: 2 processes x batch 4 and 1 process x batch 8 see the same samples in the
same global batches; only the order of the gradient sums differs (all-reduce of two
half-batch means vs one mean), so the weights agree to allclose(atol=1e-6, rtol=0)
after 12 AdamW steps (measured: max abs diff ~3e-8).

Every process is started through procs.run: a hang fails the test and leaves no worker.
"""

import os
import socket
import sys
import time
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from trainwell.cli import main
from trainwell.errors import TrainwellError
from trainwell.fit import checkpoint as ckpt
from trainwell.fit.data import make_source
from trainwell.fit.distributed import fsdp_blocks, setup, shard_train_order
from trainwell.fit.launch import Nodes, child_environment, torchrun_command, worker_argv
from trainwell.fit.machines import check_visible
from trainwell.fit.trainer import Trainer

WORKER = Path(__file__).with_name("ddp_worker.py")
import ddp_worker as w  # noqa: E402
import procs  # noqa: E402

ATOL = 1e-6


def torchrun(scenario, *args, timeout=120):
    env = dict(child_environment(), OMP_NUM_THREADS="1")
    command = torchrun_command(2, [str(WORKER), scenario, *map(str, args)])
    return procs.run(command, timeout, env=env)


def assert_close(a, b):
    for key, value in a.items():
        assert torch.allclose(value, b[key], atol=ATOL, rtol=0), (key, (value - b[key]).abs().max())


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_two_processes_match_one_and_checkpoints_resume_in_one_and_two(tmp_path, strategy):
    done = torchrun("train", tmp_path, strategy)
    assert done.returncode == 0, done.stderr[-3000:]
    train_data, val_data = w.make_data()
    one = w.make_model()
    history = w.make_trainer(one, w.PER_RANK_BATCH * 2).fit(train_data, val_data).history

    straight = torch.load(tmp_path / "straight.pt", weights_only=True)
    assert_close(one.state_dict(), straight["weights"])
    for mine, theirs in zip(history, straight["history"]):  # validation reduced over ranks
        assert mine["val_acc"] == theirs["val_acc"]
        assert mine["val_loss"] == pytest.approx(theirs["val_loss"], abs=1e-6)
        assert mine["train_loss"] == pytest.approx(theirs["train_loss"], abs=1e-6)

    resumed = torch.load(tmp_path / "resumed.pt", weights_only=True)
    for rank, refused in enumerate(resumed["refused"]):  # rank 0 decided, both raised
        assert refused.startswith(f"rank {rank}: run_dir=") and "already holds a run" in refused
    resumed_in_two = resumed["weights"]
    for key, value in straight["weights"].items():  # same world size: bitwise
        assert torch.equal(resumed_in_two[key], value), key

    files = ckpt.step_files(tmp_path / "run" / "checkpoints")
    assert files[0].name == "step-00000006.ckpt"  # written once, by rank 0
    assert not list((tmp_path / "run" / "checkpoints").glob(".*tmp*"))
    resumed_in_one = w.make_model()
    w.make_trainer(resumed_in_one, w.PER_RANK_BATCH * 2).fit(train_data, val_data,
                                                              resume=files[0])
    assert_close(one.state_dict(), resumed_in_one.state_dict())


def test_a_rank_that_raises_ends_the_job_with_its_message():
    done = torchrun("raise", timeout=90)  # a hang would time out and fail
    assert done.returncode != 0
    assert "rank 1 failed on purpose at its 3rd batch" in done.stderr + done.stdout


def test_ranks_agree_to_skip_a_batch_whose_loss_is_nan_on_one_of_them(tmp_path):
    done = torchrun("skip", tmp_path)  # one rank skipping alone would hang: timeout fails
    assert done.returncode == 0, done.stderr[-3000:]
    found = torch.load(tmp_path / "skip.pt", weights_only=True)
    for strategy in ("ddp", "fsdp"):
        assert found[strategy] == {"skipped": 2, "same": True, "finite": True}, strategy
    assert found["agree"] == ["TrainwellError: rank 1: OSError: No space left on device",
                              "OSError: No space left on device"]  # none left waiting


@pytest.mark.parametrize("n,world,batch", [(60, 2, 4), (61, 2, 4), (7, 3, 2), (2, 4, 3)])
def test_shards_split_each_global_batch_into_equal_chunks(n, world, batch):
    order = torch.randperm(n, generator=torch.Generator().manual_seed(n))
    shards = [shard_train_order(order, batch, r, world) for r in range(world)]
    assert len({s.numel() for s in shards}) == 1  # every rank: as many samples
    total = shards[0].numel() * world
    padded = order.repeat(total // n + 1)[:total]
    start = 0
    for a in range(0, shards[0].numel(), batch):  # global batch = the ranks' chunks in order
        chunks = [s[a:a + batch] for s in shards]
        size = sum(c.numel() for c in chunks)
        assert torch.equal(torch.cat(chunks), padded[start:start + size])
        start += size
    assert set(torch.cat(shards).tolist()) == set(range(n))


def test_sources_shard_tensors_and_loaders_alike():
    x, y = torch.arange(30.0)[:, None], torch.arange(30)
    seen = {"tensor": [], "loader": [], "eval": []}
    for rank in range(2):
        t = make_source((x, y), 4, torch.device("cpu"), True, 0, shard=(rank, 2))
        batches = list(t.epoch(1))
        assert len(batches) == t.num_batches == 4 and batches[-1][0].shape[0] == t.last_batch_size
        seen["tensor"].append(torch.cat([b[1] for b in batches]))
        loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True)
        source = make_source(loader, 4, torch.device("cpu"), True, 0, shard=(rank, 2))
        assert source.num_batches == 4
        seen["loader"].append(torch.cat([b[1] for b in source.epoch(1)]))
        e = make_source((x, y), 4, torch.device("cpu"), False, 0, shard=(rank, 2))
        seen["eval"].append(torch.cat([b[1] for b in e.epoch(0)]))
    assert torch.equal(seen["tensor"][0], seen["loader"][0])  # one permutation, both paths
    assert sorted(torch.cat(seen["tensor"]).tolist()) == list(range(30))
    assert sorted(torch.cat(seen["eval"]).tolist()) == list(range(30))  # eval: no padding


def test_strategy_errors_are_one_line(monkeypatch):
    for key in ("WORLD_SIZE", "MASTER_ADDR"):
        monkeypatch.delenv(key, raising=False)
    assert setup("auto", None) == (None, None)
    with pytest.raises(TrainwellError, match="launch with `torchrun --nproc-per-node N"):
        setup("ddp", torch.device("cpu"))
    with pytest.raises(TrainwellError, match="strategy='fsdp' needs a process group"):
        setup("fsdp", None)
    with pytest.raises(TrainwellError, match="strategy='zero3' is not known; use one of auto"):
        setup("zero3", None)


@pytest.fixture
def one_process_group():
    import torch.distributed as dist

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_ddp_in_one_process_equals_plain_and_agrees_on_stops(one_process_group, tmp_path):
    train_data, val_data = w.make_data()
    plain = w.make_model()
    w.make_trainer(plain, 6, accumulate=3, strategy="none").fit(train_data, val_data)
    wrapped = w.make_model()
    trainer = w.make_trainer(wrapped, 6, accumulate=3, strategy="ddp")
    assert type(trainer._runner).__name__ == "DDPStepRunner"
    trainer.fit(train_data, val_data)  # no_sync on micro-steps 1-2 of each window
    for key, value in plain.state_dict().items():
        assert torch.equal(wrapped.state_dict()[key], value), key

    model = w.make_model()
    trainer = w.make_trainer(model, 6, accumulate=2, log_every=4, run_dir=tmp_path,
                             strategy="ddp")
    calls = {"n": 0}

    def stop_at_fifth(module, inputs):
        calls["n"] += module.training
        if calls["n"] == 5:
            trainer.request_stop()  # mid-window of step 3: ranks agree at the step-4 log

    model.register_forward_pre_hook(stop_at_fifth)
    result = trainer.fit(train_data)
    assert result.state.step == 4 and calls["n"] == 8
    saved = ckpt.load_checkpoint(result.last_checkpoint)
    assert saved["state"]["step"] == 4 and saved["window_grads"] is None


def test_fsdp_in_one_process_equals_plain_and_resumes_a_one_process_mid_window_stop(
        one_process_group, tmp_path):
    train_data, val_data = w.make_data()
    plain = w.make_model()
    w.make_trainer(plain, 6, accumulate=3, clip_grad_norm=0.5, strategy="none").fit(
        train_data, val_data)
    trainer = w.make_trainer(w.make_model(), 6, accumulate=3, clip_grad_norm=0.5,
                             strategy="fsdp")
    assert type(next(trainer.model.parameters())).__name__ == "DTensor"  # really sharded
    trainer.fit(train_data, val_data)
    whole = trainer.model_state_dict()
    for key, value in plain.state_dict().items():
        assert torch.equal(whole[key], value), key
    exported = trainer.export_weights(tmp_path / "w.safetensors")
    from safetensors.torch import load_file
    assert torch.equal(load_file(exported)["0.weight"], plain.state_dict()["0.weight"])

    # A single-process run stopped mid-window (in-flight gradients saved) resumes sharded.
    reference = w.make_model()
    w.make_trainer(reference, 6, accumulate=3, strategy="none").fit(train_data, val_data)
    model = w.make_model()
    stopper = w.make_trainer(model, 6, accumulate=3, strategy="none", run_dir=tmp_path / "run")
    calls = {"n": 0}

    def stop_at_fifth(module, inputs):
        calls["n"] += module.training
        if calls["n"] == 5:
            stopper.request_stop()

    model.register_forward_pre_hook(stop_at_fifth)
    stopped = stopper.fit(train_data, val_data)
    assert ckpt.load_checkpoint(stopped.last_checkpoint)["window_grads"] is not None
    resumed = w.make_trainer(w.make_model(), 6, accumulate=3, strategy="fsdp")
    resumed.fit(train_data, val_data, resume=stopped.last_checkpoint)
    whole = resumed.model_state_dict()
    for key, value in reference.state_dict().items():
        assert torch.equal(whole[key], value), key


def test_fsdp_needs_an_optimizer_factory(one_process_group):
    model = w.make_model()
    with pytest.raises(TrainwellError, match="strategy='fsdp' replaces the model's parameters"):
        Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), strategy="fsdp")


def test_fsdp_blocks_are_container_children_with_parameters():
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(5, 4)
            self.layers = nn.ModuleList([nn.Sequential(nn.Linear(4, 4), nn.ReLU())
                                         for _ in range(3)])
            self.head = nn.Sequential(nn.Linear(4, 2), nn.Dropout())

    net = Net()
    assert fsdp_blocks(net) == [*net.layers, net.head[0]]  # not ReLU/Dropout, not inside blocks


def test_fit_nproc_trains_in_two_processes_into_one_run_directory(tmp_path):
    run_dir = tmp_path / "run"
    done = procs.run(
        [sys.executable, "-m", "trainwell", "fit", "--nproc", "2", "--max-epochs", "1",
         "--threads", "1", "--no-progress", "--no-curves",
         "--run-dir", str(run_dir)], 180, env=child_environment())
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("best val_acc") == 1  # rank 0 speaks for the run
    rows = (run_dir / "metrics.csv").read_text().splitlines()
    assert len(rows) == 2  # header + epoch 1, written once
    assert [f.name for f in ckpt.step_files(run_dir / "checkpoints")]


# The model and data of ddp_worker.py through `trainwell fit`: 2 epochs of 4 steps (60
# samples, global batch 8, accumulate 2), a checkpoint mid-epoch 1 at step 3.
TINY = ["--model", f"{WORKER}:make_model", "--data", f"{WORKER}:make_data", "--accumulate", "2",
        "--max-epochs", "2", "--checkpoint-every", "3", "--keep-last", "none", "--no-progress",
        "--no-curves"]


def final_weights(run_dir):
    return ckpt.load_checkpoint(ckpt.step_files(run_dir / "checkpoints")[-1])["model"]


def test_fit_on_two_machines_matches_one_process_and_resumes_in_one(tmp_path):
    """Two launchers (one per "machine", one process each) meet at a c10d rendezvous on
    localhost; they train what 1 process does with the same global batch, and their
    mid-epoch checkpoint continues exactly in 1 process."""
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    two = tmp_path / "two"
    machines = [[sys.executable, "-m", "trainwell", "fit", "--nnodes", "2", "--node-rank", str(rank),
                 "--nproc", "1", "--rdzv-endpoint", f"localhost:{port}", *TINY, "--threads", "1",
                 "--batch-size", str(w.PER_RANK_BATCH), "--run-dir", str(two)] for rank in (0, 1)]
    done = procs.run_together(machines, 240, env=child_environment())
    for machine in done:
        assert machine.returncode == 0, machine.stderr[-3000:]
    assert sum(m.stdout.count("run directory:") for m in done) == 1  # global rank 0 speaks
    assert len((two / "metrics.csv").read_text().splitlines()) == 3  # header + 2 epochs, once
    assert "\nnnodes:" not in (two / "config.yaml").read_text()  # a resume picks its machines

    one, resumed = tmp_path / "one", tmp_path / "resumed"
    global_batch = str(w.PER_RANK_BATCH * 2)
    assert main(["fit", *TINY, "--batch-size", global_batch, "--run-dir", str(one)]) == 0
    assert main(["fit", "--resume", str(two / "checkpoints" / "step-00000003.ckpt"),
                 "--batch-size", global_batch, "--run-dir", str(resumed)]) == 0
    assert_close(final_weights(one), final_weights(two))
    assert_close(final_weights(one), final_weights(resumed))


def test_several_machines_launch_through_c10d_and_workers_run_without_launch_flags(tmp_path):
    program = ["-m", "trainwell", "fit"]
    assert torchrun_command(2, program)[3:] == ["--standalone", "--nproc-per-node=2", *program]
    assert torchrun_command(4, program, Nodes(3, 1, "head:29500"))[3:] == [
        "--nnodes=3", "--nproc-per-node=4", "--rdzv-backend=c10d", "--rdzv-endpoint=head:29500",
        "--rdzv-conf=is_host=0", *program]  # node 0 alone hosts the rendezvous store
    argv = ["fit", "--nnodes", "2", "--node-rank=1", "--rdzv-endpoint", "h:1", "--npro", "2",
            "--max-epochs", "3", "--nproc=4", "--run-dir", "r"]
    assert worker_argv(argv, "fit") == [*program, "--max-epochs", "3", "--run-dir", "r"]
    with pytest.raises(TrainwellError, match=r"^.*missing.ckpt, rank 0's checkpoint, is not "
                       r"visible on .* after 0 s: with several machines, run_dir"):
        check_visible(tmp_path / "missing.ckpt", wait_s=0.2)


def test_a_timeout_kills_workers_that_left_the_process_group_and_ignore_sigterm(tmp_path):
    """What torchrun does: each worker in a session of its own. None may outlive the test."""
    pid_file = tmp_path / "worker.pid"
    worker = ("import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
              f"open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)")
    launcher = ("import subprocess, sys, time; "
                f"subprocess.Popen([sys.executable, '-c', {worker!r}], start_new_session=True, "
                "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
                "time.sleep(60)")
    with pytest.raises(pytest.fail.Exception, match="no end after 3 s"):
        procs.run([sys.executable, "-c", launcher], 3)
    pid = int(pid_file.read_text())
    for _ in range(100):  # SIGKILL is delivered at once; reaping by init may take a moment
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                break  # killed, not yet reaped
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        raise AssertionError(f"worker {pid} outlived the timeout")
