"""`trainwell verify-resume`: does stopping and resuming YOUR run give the same weights?

Takes the run config of `trainwell fit --config` (or ``--model``/``--data``
factories; neither: the bundled digits run), trains ``--steps`` straight and
``--stop-at`` + resume, and compares the final model and optimizer states
bitwise. Exit 0 when exact, 1 when not (naming the first differing tensor).
No torch import at module level.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from trainwell.errors import TrainwellError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="YAML", help="the run config of `trainwell fit --config`")
    parser.add_argument("--model", metavar="MODULE:FN", help="model factory (overrides the config)")
    parser.add_argument("--data", metavar="MODULE:FN",
                        help="data factory returning (train, val) (overrides the config)")
    parser.add_argument("--steps", type=int, default=60, metavar="N",
                        help="optimizer steps of the whole run (default 60)")
    parser.add_argument("--stop-at", type=int, default=None, metavar="K",
                        help="stop the second run after K steps, then resume (default N//2+1)")
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: the config's)")
    parser.add_argument("--workdir", default=None, metavar="DIR",
                        help="keep the two run directories here (default: a temporary folder)")


def run(args: argparse.Namespace) -> int:
    from trainwell.fit import config as cfg
    from trainwell.fit.default import PRESET
    from trainwell.fit.verify import verify_resume

    if args.steps < 2:
        raise TrainwellError(f"--steps {args.steps}: must be at least 2")
    user = cfg.read_yaml(args.config) if args.config else {}
    flags = {k: v for k, v in (("model", args.model), ("data", args.data),
                               ("device", args.device)) if v is not None}
    named = "model" in user or "data" in user or "model" in flags or "data" in flags
    where = args.config or "command line"
    config = cfg.build(cfg.merge({} if named else PRESET, user, flags), where)
    if (config.model is None) != (config.data is None):
        missing = "data" if config.data is None else "model"
        raise TrainwellError(f"{where}: '{missing}' is missing; give both model and data factories "
                             "(or neither, for the bundled default)")
    # The run is --steps long: schedules sized by the run (OneCycleLR) fit it.
    config = dataclasses.replace(config, max_steps=args.steps)
    make_trainer, train_data, val_data = _factories(config)
    report = verify_resume(make_trainer, train_data, args.steps, args.stop_at, val_data,
                           args.workdir)
    print(report.summary())
    return 0 if report.ok else 1


def _factories(config: Any) -> tuple[Any, Any, Any]:
    """A fresh-Trainer factory for ``config`` (same seed each call), and the data."""
    import torch

    from trainwell.fit import config as cfg
    from trainwell.fit.command import trainer_arguments
    from trainwell.fit.seeding import seed_everything
    from trainwell.fit.trainer import Trainer

    if config.threads is not None:
        torch.set_num_threads(config.threads)
    data = cfg.call_factory(config.data, "data")
    if not (isinstance(data, tuple) and len(data) == 2):
        raise TrainwellError(f"data factory {config.data!r} must return (train, val); val may be None")
    train_data, val_data = data

    def make_trainer() -> Any:
        seed_everything(config.seed)  # the model's random init is part of the run
        model = cfg.call_factory(config.model, "model")
        arguments = trainer_arguments(config, model, train_data)
        # Bitwise comparison needs deterministic kernels; no files beyond the two runs.
        arguments.update(deterministic=True, keep_last=2, progress=False)
        return Trainer(**arguments)

    return make_trainer, train_data, val_data

