"""A zygote for the SIGKILL test: imports torch once, then forks one training process per line.

Protocol on stdin/stdout, one line each:
  ``run <run_dir>``  -> ``pid <N>`` at once, then ``exit <N> <status>`` when that child ends.
The child resumes from ``run_dir`` when it holds a checkpoint, else starts fresh,
and trains to the end. ``TW_SLOW_FSYNC`` (seconds) widens the window in which a
checkpoint's temporary file exists (``TW_EPOCHS``: the run's length), so that kills land inside writes.
Forking (not a new interpreter per life) keeps each restart ~10 ms instead of
~3 s of ``import torch``; the zygote runs on one thread, so forking it is safe.
"""

import os
import stat
import sys
import tempfile
import time

os.environ["OMP_NUM_THREADS"] = "1"

import torch  # noqa: E402
from torch import nn  # noqa: E402

from trainwell.fit import checkpoint as ckpt  # noqa: E402
from trainwell.fit.trainer import Trainer  # noqa: E402

N, D, C = 64, 6, 3  # batch 4, accumulate 2 -> 8 optimizer steps per epoch
EPOCHS = int(os.environ.get("TW_EPOCHS", "30"))


def train(run_dir: str, stall: int, epochs: int = EPOCHS) -> None:
    torch.set_num_threads(1)
    if stall:
        real, writes = os.fsync, [0]

        def stalling_fsync(fd: int) -> None:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):  # the file, before its rename
                writes[0] += 1
                if writes[0] == stall:
                    time.sleep(5)
            real(fd)

        os.fsync = stalling_fsync
    # A life killed before its first checkpoint left a run with none: start it over.
    has = bool(ckpt.step_files(os.path.join(run_dir, "checkpoints")))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(D, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, C))
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(N, D, generator=g), torch.randint(0, C, (N,), generator=g)
    trainer = Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-2), loss=nn.CrossEntropyLoss(),
                      scheduler=lambda o: torch.optim.lr_scheduler.StepLR(o, 5, gamma=0.9),
                      max_epochs=epochs, batch_size=4, accumulate=2, device="cpu", seed=3,
                      deterministic=True, run_dir=run_dir, checkpoint_every=1, keep_last=2,
                      log_every=1000, progress=False, overwrite=not has)
    trainer.fit((x, y), val_data=(x[:16], y[:16]), resume=run_dir if has else None)


def main() -> None:
    # Warm up (first-call costs of autograd, AdamW, torch.save) once, before forking:
    # otherwise every life would spend its first few hundred ms there.
    with tempfile.TemporaryDirectory() as warm:
        train(warm, 0, epochs=1)
    for line in sys.stdin:
        command, run_dir, stall = line.split()
        if command != "run":
            continue
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                train(run_dir, int(stall))
            except BaseException as error:  # noqa: BLE001 - report and leave
                print(f"child error: {error!r}", file=sys.stderr, flush=True)
                code = 1
            os._exit(code)
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"exit {pid} {status}", flush=True)


if __name__ == "__main__":
    main()
