"""`trainwell verify-resume`: does stopping and resuming YOUR run give the same weights?

Takes the run config of `trainwell fit --config` (or ``--model``/``--data``
factories; neither: the bundled digits run), trains the run straight and
stopped at ``--stop-at`` + resumed, and compares the final model and optimizer
states bitwise. The run is as long as the config says (``--steps`` checks a
shorter one). Exit 0 when exact, 1 when not (naming the first differing
tensor). No torch import at module level.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from trainwell.errors import TrainwellError, interface_words

# verify_resume's argument names that are flags here.
_ARGUMENTS = ("steps", "stop_at", "workdir")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="YAML", help="the run config of `trainwell fit --config`")
    parser.add_argument("--model", metavar="MODULE:FN", help="model factory (overrides the config)")
    parser.add_argument("--data", metavar="MODULE:FN",
                        help="data factory returning (train, val) (overrides the config)")
    parser.add_argument("--steps", type=int, default=None, metavar="N",
                        help="optimizer steps of the whole run (default: the config's length, "
                             "from max_epochs and max_steps)")
    parser.add_argument("--stop-at", type=int, default=None, metavar="K",
                        help="stop the second run after K steps, then resume (default N//2+1)")
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: the config's)")
    parser.add_argument("--workdir", default=None, metavar="DIR",
                        help="keep the two run directories here (a new or empty folder; default: a "
                             "temporary folder)")
    parser.add_argument("--nproc", type=int, metavar="N",
                        help="check the run in N processes on this machine (under torchrun)")
    parser.add_argument("--strategy", choices=("auto", "ddp", "none"), default=None,
                        help="with --nproc: auto (DDP), ddp or none (default: the config's)")


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except TrainwellError as error:
        raise TrainwellError(interface_words(str(error), _ARGUMENTS), error.exit_code) from error


def _run(args: argparse.Namespace) -> int:
    from trainwell.fit import config as cfg
    from trainwell.fit.default import PRESET

    if args.steps is not None and args.steps < 2:
        raise TrainwellError(f"--steps {args.steps}: must be at least 2")
    if args.stop_at is not None and args.stop_at < 1:
        raise TrainwellError(f"--stop-at {args.stop_at}: must be at least 1")
    if args.workdir is not None and _rank() == 0:  # the other ranks find rank 0's runs there
        _check_workdir(Path(args.workdir))
    if args.nproc is not None:
        return _launch(args)
    user = cfg.read_yaml(args.config) if args.config else {}
    flags = {k: v for k, v in (("model", args.model), ("data", args.data),
                               ("device", args.device), ("strategy", args.strategy))
             if v is not None}
    named = "model" in user or "data" in user or "model" in flags or "data" in flags
    where = args.config or "command line"
    cfg.build(flags, cfg.FLAGS)
    config = cfg.build(cfg.merge({} if named else PRESET, user, flags), where)
    if (config.model is None) != (config.data is None):
        missing = "data" if config.data is None else "model"
        raise TrainwellError(f"{where}: '{missing}' is missing; give both model and data factories "
                             "(or neither, for the bundled default)")
    if config.strategy == "fsdp" and _world() > 1:
        raise TrainwellError(f"{where}: strategy fsdp: verify-resume compares whole states and "
                             "does not gather FSDP shards yet; check with --strategy ddp")
    from trainwell.fit.console import check_device
    from trainwell.fit.verify import verify_resume

    check_device(config.device, "--device" if args.device else f"{where}: device")
    if config.threads is not None:
        import torch

        torch.set_num_threads(config.threads)
    train_data, val_data = _data(config)
    steps = _steps(args.steps, config, train_data)
    # The run is `steps` long: schedules sized by the run (OneCycleLR) fit it.
    config = dataclasses.replace(config, max_steps=steps)
    report = verify_resume(_trainer_factory(config, train_data), train_data, steps, args.stop_at,
                           val_data, args.workdir)
    if _rank() == 0:  # every rank compared its own copy; rank 0 speaks for the run
        print(report.summary())
    return 0 if report.ok else 1


def _launch(args: argparse.Namespace) -> int:
    """Run this check in ``--nproc`` processes, all in one work folder (rank 0 writes the runs)."""
    import shutil
    import sys
    import tempfile

    from trainwell.fit.launch import launch, worker_argv

    if args.nproc < 1:
        raise TrainwellError(f"--nproc {args.nproc}: must be at least 1 (processes on this machine)")
    if args.device is not None:
        from trainwell.fit.console import check_device

        check_device(args.device, "--device")
    workdir = args.workdir or tempfile.mkdtemp(prefix="trainwell-verify-")
    argv = worker_argv(getattr(args, "_argv", sys.argv[1:]), "verify-resume")
    try:
        return launch(args.nproc, [*argv, "--workdir", workdir] if not args.workdir else argv)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def _rank() -> int:
    import os

    return int(os.environ.get("RANK", "0"))


def _world() -> int:
    import os

    return int(os.environ.get("WORLD_SIZE", "1"))


def _check_workdir(path: Path) -> None:
    """A folder the two runs can be made in, and not one holding an earlier check's runs."""
    if path.exists() and not path.is_dir():
        raise TrainwellError(f"--workdir {path}: is a file; give a new or empty folder")
    taken = [name for name in ("straight", "resumed") if (path / name).exists()]
    if taken:
        raise TrainwellError(f"--workdir {path}: already holds {taken[0]}/ from an earlier check; "
                             "give a new or empty folder")
    existing = next((p for p in path.parents if p.exists()), Path("."))
    if not existing.is_dir():
        raise TrainwellError(f"--workdir {path}: cannot be created: {existing} is a file")


def _steps(requested: int | None, config: Any, train_data: Any) -> int:
    """The run's length: the config's, or a shorter ``--steps``."""
    from trainwell.fit.command import horizon

    planned = horizon(config, train_data, "step")
    if requested is None:
        if planned < 2:
            raise TrainwellError(f"the run is {planned} optimizer step long: nothing to stop and "
                                 "resume; raise max_epochs (or give more data)")
        return planned
    if requested > planned:
        raise TrainwellError(f"--steps {requested}: the run is only {planned} optimizer steps "
                             f"long (max_epochs {config.max_epochs}"
                             f"{'' if config.max_steps is None else f', max_steps {config.max_steps}'}); "
                             f"pass --steps {planned} or less, or raise max_epochs")
    return requested


def _data(config: Any) -> tuple[Any, Any]:
    from trainwell.fit import factories

    data = factories.call_factory(config.data, "data")
    if not (isinstance(data, tuple) and len(data) == 2):
        raise TrainwellError(f"data factory {config.data!r} must return (train, val); val may be None")
    return data


def _trainer_factory(config: Any, train_data: Any) -> Any:
    """A fresh-Trainer factory for ``config`` (same seed each call)."""
    from trainwell.fit import factories
    from trainwell.fit.command import trainer_arguments
    from trainwell.fit.seeding import seed_everything
    from trainwell.fit.trainer import Trainer

    def make_trainer() -> Any:
        seed_everything(config.seed)  # the model's random init is part of the run
        model = factories.call_factory(config.model, "model")
        arguments = trainer_arguments(config, model, train_data)
        # Bitwise comparison needs deterministic kernels; no files beyond the two runs.
        # Several processes agree on a stop at log intervals: log every step, so the
        # interrupted run stops exactly at --stop-at.
        arguments.update(deterministic=True, keep_last=2, progress=False, log_every=1)
        return Trainer(**arguments)

    return make_trainer
