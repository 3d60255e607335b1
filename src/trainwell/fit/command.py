"""`trainwell fit`: train the bundled default, or a model and data named in a YAML config.

Every config key has a flag (``max_epochs`` -> ``--max-epochs``); flags win over
the YAML file. ``--print-config`` shows the effective config and trains nothing.
No torch import at module level: ``trainwell --help`` stays instant.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
import typing
from pathlib import Path
from typing import Any

from trainwell.errors import TrainwellError, UserCodeError, interface_words
from trainwell.fit import config as cfg
from trainwell.fit import factories
from trainwell.fit.flags import Origins, machines, resolve
from trainwell.fit.launch import Nodes

RUNS_FOLDER = Path("trainwell-runs")
# Python argument names that are flags here: Trainer messages name them as flags.
_ARGUMENTS = (*cfg.field_names(), "resume", "scheduler_interval")
# Keys set by their own flags below, not by the generated ones.
_SPECIAL = {"optimizer", "scheduler", "metrics", "loggers"}
_HELP = {
    "model": "model factory 'module:function' returning an nn.Module (default: the bundled digits MLP)",
    "data": "data factory 'module:function' returning (train, val): (X, y) tensors or DataLoaders",
    "loss": "a torch.nn loss class name, or 'module:function' (default CrossEntropyLoss)",
    "run_dir": "run directory (default: a new folder under ./trainwell-runs/)",
    "curves": "write curves.png (loss, metrics, learning rate) at the end",
    "threads": "CPU threads for PyTorch (torch.set_num_threads; default: PyTorch's choice)",
    "max_epochs": "training epochs",
    "batch_size": "training batch size when the data are tensors",
    "precision": "32, bf16-mixed (autocast) or 16-mixed (autocast + GradScaler)",
    "seed": "seed of the model's init and the data order",
    "deterministic": "PyTorch's deterministic algorithms",
    "compile": "torch.compile the model",
    "mode": "min or max: which way the monitor improves",
    "nonfinite": "on a nan/inf loss: raise, or skip the batch",
    "progress": "progress bar and per-epoch table on stderr",
    "max_steps": "stop after this many optimizer steps",
    "eval_batch_size": "validation batch size (default: batch size)",
    "accumulate": "micro-batches per optimizer step",
    "clip_grad_norm": "clip the gradient norm to this value",
    "checkpoint_every": "also checkpoint every N optimizer steps (always at each epoch end)",
    "keep_last": "checkpoints kept (none: all)",
    "monitor": "epoch-record key for the best checkpoint and early stopping, e.g. val_loss",
    "early_stopping_patience": "stop after N epochs without improvement of the monitor",
    "log_every": "optimizer steps between log records (one host sync each)",
    "num_workers": "DataLoader workers when the trainer builds loaders",
    "strategy": "with --nproc or torchrun: auto (DDP), ddp, fsdp (FSDP2 sharding) or none",
    "device": "cpu, cuda, cuda:1, ... (default: cuda when available)",
    "nnodes": "machines, each running this same command with its --node-rank (--nproc processes "
              "on each; needs --rdzv-endpoint and a --run-dir they all share)",
    "node_rank": "this machine's index, 0 to nnodes-1; node 0 hosts the rendezvous",
    "rdzv_endpoint": "HOST:PORT where the machines meet: node 0's host name and a free port, the "
                     "same on every machine (torchrun's c10d rendezvous)",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="YAML", help="run config file; flags override its keys")
    parser.add_argument("--nproc", type=int, metavar="N",
                        help="train in N processes on this machine (under torchrun; "
                             "--batch-size is per process; see --strategy and --nnodes)")
    parser.add_argument("--resume", metavar="PATH",
                        help="continue a run: its run directory or a checkpoint file")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the run already in --run-dir (its files are removed first)")
    parser.add_argument("--print-config", action="store_true",
                        help="print the effective config as YAML and exit")
    group = parser.add_argument_group(
        "config keys (each also a YAML key)",
        "Defaults shown apply to --config runs; the bundled default run has its own "
        "settings: see `trainwell fit --print-config`.")
    hints = typing.get_type_hints(cfg.FitConfig)
    for field in dataclasses.fields(cfg.FitConfig):
        if field.name in _SPECIAL:
            continue
        flag = "--" + field.name.replace("_", "-")
        help_text = _field_help(field.name, hints[field.name], field.default)
        if bool in cfg.allowed_types(hints[field.name]):
            group.add_argument(flag, dest=f"cfg_{field.name}", action=argparse.BooleanOptionalAction,
                               default=argparse.SUPPRESS, help=help_text)
        else:
            metavar = cfg.allowed_types(hints[field.name])[0].__name__.upper()
            group.add_argument(flag, dest=f"cfg_{field.name}", metavar=metavar,
                               default=argparse.SUPPRESS, help=help_text)
    group.add_argument("--metric", dest="metric", action="append", metavar="NAME[=SPEC]",
                       help="validation metric: 'accuracy', or NAME=module:function (repeatable)")
    group.add_argument("--logger", dest="logger", action="append",
                       choices=(*cfg.LOGGERS, "none"),
                       help="also log to TensorBoard (tensorboard/) or MLflow (mlflow.db) in the run "
                            "directory (repeatable; 'none': only the CSV files, always written)")
    group.add_argument("--optimizer", metavar="NAME", help="torch.optim class (default AdamW)")
    group.add_argument("--lr", metavar="FLOAT", help="the optimizer's learning rate")
    group.add_argument("--optimizer-arg", action="append", metavar="KEY=VALUE",
                       help="optimizer keyword argument, e.g. weight_decay=0.01 (repeatable)")
    group.add_argument("--scheduler", metavar="NAME",
                       help="torch.optim.lr_scheduler class, or 'none'")
    group.add_argument("--scheduler-interval", choices=cfg.INTERVALS,
                       help="step the scheduler per 'epoch' or per optimizer 'step'")
    group.add_argument("--scheduler-arg", action="append", metavar="KEY=VALUE",
                       help="scheduler keyword argument, e.g. max_lr=0.01 (repeatable)")


def run(args: argparse.Namespace) -> int:
    resume = Path(args.resume) if args.resume else None
    config, origins = resolve(args, resume)
    if args.print_config:
        sys.stdout.write(cfg.dump(config))
        return 0
    nodes = machines(config, origins)  # None: this machine only
    if config.run_dir is not None:  # a run directory of another run: refused before any work
        from trainwell.fit import rundir

        rundir.claim(Path(config.run_dir), resume, args.overwrite, cli=True)
    if (args.nproc is None and nodes is None and _world() == 1
            and config.strategy in ("ddp", "fsdp") and origins.saved_only("strategy")):
        # Saved by N processes, resumed in one: the checkpoint holds whole tensors.
        print(f"trainwell: the run was saved with --strategy {config.strategy}; resuming it in 1 "
              "process (pass --nproc N to train in N again)", file=sys.stderr)
        config = dataclasses.replace(config, strategy="auto")
    if args.nproc is not None or nodes is not None:
        nproc = 1 if args.nproc is None else args.nproc
        if nproc < 1:
            raise TrainwellError(f"--nproc {nproc}: must be at least 1 (processes on this machine)")
        if config.device is not None:  # checked once here, not by every worker
            from trainwell.fit.console import check_device

            check_device(config.device, origins.key("device"))
        return _launch(nproc, config, getattr(args, "_argv", sys.argv[1:]), nodes)
    return train(config, resume, origins, args.overwrite)


def _launch(nproc: int, config: cfg.FitConfig, argv: list[str],
            nodes: Nodes | None = None) -> int:
    """Re-run this command in ``nproc`` processes under torchrun (on each of ``nodes``),
    in ONE run directory."""
    from trainwell.fit.launch import launch, worker_argv

    # Chosen once, here: every rank writes into it (several machines: --run-dir, checked).
    run_dir = _new_run_dir(config.run_dir)
    return launch(nproc, [*worker_argv(argv, "fit"), "--run-dir", str(run_dir)], nodes)


def train(config: cfg.FitConfig, resume: Path | None, origins: Origins | None = None,
          overwrite: bool = False) -> int:
    """Build everything the config names, fit, and print the result.

    Errors speak the command line: a Trainer message such as ``nonfinite='skip'``
    reaches the user as ``--nonfinite skip``.
    """
    try:
        return _train(config, resume, origins or Origins([]), overwrite)
    except UserCodeError:
        raise
    except TrainwellError as error:
        raise TrainwellError(interface_words(str(error), _ARGUMENTS), error.exit_code) from error
    except RuntimeError as error:  # a collective's, when another rank ended: one line
        from trainwell.fit.machines import lost_rank

        lost = lost_rank(error)
        if lost is None:
            raise
        raise lost from error


def _train(config: cfg.FitConfig, resume: Path | None, origins: Origins, overwrite: bool) -> int:
    import warnings

    import torch

    from trainwell.fit import console
    from trainwell.fit.curves import CurvesPlot
    from trainwell.fit.failure import InputRecorder
    from trainwell.fit.loggers import make_loggers
    from trainwell.fit.callbacks import ConfigFile
    from trainwell.fit.machines import connect_early, lost_rank
    from trainwell.fit.seeding import seed_everything
    from trainwell.fit.trainer import FinishedRunWarning, Trainer

    console.check_device(config.device, origins.key("device"))
    connect_early(config.strategy, config.device)  # several machines: see machines.py
    if config.threads is not None:
        torch.set_num_threads(config.threads)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning if _rank() == 0 else _silent
        warnings.filterwarnings("ignore", category=FinishedRunWarning)  # said below, in flags
        seed_everything(config.seed)  # the factories' random init is part of the run
        model = factories.call_factory(config.model, "model")
        data = factories.call_factory(config.data, "data")
        train_data, val_data = _split(data, config.data)
        arguments = trainer_arguments(config, model, train_data, origins)
        rank0 = _rank() == 0  # under torchrun: files, loggers and output from rank 0 only
        if _world() > 1 and config.run_dir is None:
            raise TrainwellError("under torchrun pass --run-dir (one folder for all ranks), or "
                                 "use `trainwell fit --nproc N`, which picks one")
        callbacks = make_loggers(config.loggers, cfg.to_dict(config)) if rank0 else []
        if config.curves and rank0:
            callbacks.append(CurvesPlot())
        parameters = console.count_parameters(model)  # before sharding replaces them
        run_dir = _new_run_dir(config.run_dir)  # made by the Trainer once the run can start
        if rank0:  # written when training starts: a refused or failed start leaves none
            saved = cfg.dump(dataclasses.replace(config, run_dir=str(run_dir)), launch=False)
            callbacks.insert(0, ConfigFile(saved))
        if rank0 and config.progress:
            callbacks.append(console.StartSummary(
                parameters, config.precision, horizon(config, train_data, "step"),
                _batch_size(config, train_data), config.accumulate, _world(), run_dir))
        trainer = Trainer(**arguments, run_dir=run_dir, callbacks=callbacks, overwrite=overwrite)
        recorder = None if config.compile else InputRecorder(trainer.model)
        started = time.perf_counter()
        try:
            result = trainer.fit(train_data, val_data, resume=resume)
        except (TrainwellError, KeyboardInterrupt):
            raise
        except Exception as error:  # raised inside the user's model, loss or data
            if recorder is None or lost_rank(error) is not None:
                raise
            raise UserCodeError(recorder.describe(error)) from error
        finally:
            if recorder is not None:
                recorder.remove()
        seconds = time.perf_counter() - started
    trainer.close()  # the process group, when the Trainer made one
    if result.already_finished:
        if rank0:
            _print_finished(result, run_dir, config, origins)
        return 0
    if rank0:
        _print_summary(result, run_dir, config.monitor, seconds)
    # Stopped by a signal after saving a checkpoint: the shell's code for that signal.
    return {"SIGINT": 130, "SIGTERM": 143}.get(result.signal or "", 0)


def _batch_size(config: cfg.FitConfig, train_data: Any) -> int | None:
    """Samples per batch of one process: the DataLoader's own, or --batch-size for tensors."""
    from torch.utils.data import DataLoader

    if isinstance(train_data, DataLoader):
        return train_data.batch_size
    return config.batch_size


def trainer_arguments(config: cfg.FitConfig, model: Any, train_data: Any,
                      origins: Origins | None = None) -> dict[str, Any]:
    """Everything the Trainer takes, names resolved (so errors come before any file is written)."""
    from torch import nn

    origins = origins or Origins([])
    if not isinstance(model, nn.Module):
        raise TrainwellError(f"model factory {config.model!r} returned a {type(model).__name__}, "
                             "not a torch.nn.Module")
    scheduler = None
    interval = "epoch"
    if config.scheduler is not None:
        interval = config.scheduler.interval
        scheduler = factories.scheduler_factory(config.scheduler, horizon(config, train_data, interval),
                                          lambda key: origins.argument("scheduler", key))
    optimizer = factories.optimizer_factory(config.optimizer,
                                      lambda key: origins.argument("optimizer", key), model)
    return dict(
        model=model, optimizer=optimizer,
        loss=factories.loss_function(config.loss), scheduler=scheduler, scheduler_interval=interval,
        metrics=factories.metric_functions(config.metrics) or None,
        max_epochs=config.max_epochs, max_steps=config.max_steps, batch_size=config.batch_size,
        eval_batch_size=config.eval_batch_size, accumulate=config.accumulate,
        precision=config.precision, clip_grad_norm=config.clip_grad_norm, device=config.device,
        seed=config.seed, deterministic=config.deterministic, compile=config.compile,
        checkpoint_every=config.checkpoint_every, keep_last=config.keep_last,
        monitor=config.monitor, mode=config.mode,
        early_stopping_patience=config.early_stopping_patience, nonfinite=config.nonfinite,
        log_every=config.log_every, progress=config.progress, num_workers=config.num_workers,
        strategy=config.strategy,
    )


def horizon(config: cfg.FitConfig, train_data: Any, interval: str) -> int:
    """The run's length in optimizer steps (or epochs), as the Trainer will count it."""
    from torch.utils.data import DataLoader, TensorDataset

    world = _world()  # under DDP each rank trains 1/world of the samples per epoch
    if isinstance(train_data, DataLoader):
        batches = math.ceil(len(train_data) / world)
    else:
        tensors = train_data.tensors if isinstance(train_data, TensorDataset) else train_data
        first = tensors[0] if isinstance(tensors, (tuple, list)) else tensors
        batches = math.ceil(math.ceil(len(first) / world) / config.batch_size)
    per_epoch = math.ceil(batches / config.accumulate)
    steps = per_epoch * config.max_epochs
    if config.max_steps is not None:
        steps = min(steps, config.max_steps)
    return steps if interval == "step" else math.ceil(steps / per_epoch)


def _split(data: Any, spec: str | None) -> tuple[Any, Any]:
    if isinstance(data, tuple) and len(data) == 2 and not _is_tensor(data[0]):
        return data
    raise TrainwellError(
        f"data factory {spec!r} must return (train, val) (val may be None), each a DataLoader, "
        f"a TensorDataset or an (X, y) tuple of tensors; got {_shape_of(data)}")


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _shape_of(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}: ({', '.join(type(v).__name__ for v in value)})"
    return f"a {type(value).__name__}"


def _new_run_dir(run_dir: str | None) -> Path:
    """The run directory: the one asked for, or a new name under trainwell-runs/ (not made
    here: the Trainer makes it when the run starts, so a failed start leaves nothing)."""
    if run_dir is not None:
        return Path(run_dir)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1, 1000):
        path = RUNS_FOLDER / (stamp if n == 1 else f"{stamp}-{n}")
        if not path.exists():
            return path
    raise TrainwellError(f"cannot find a new run directory name under {RUNS_FOLDER}; pass --run-dir")


def _print_finished(result: Any, run_dir: Path, config: cfg.FitConfig, origins: Origins) -> None:
    """A resumed run that had already reached its end: one line, and how to train on."""
    state = result.state
    if config.max_steps is not None and state.step >= config.max_steps:
        limit, value, more = "max_steps", config.max_steps, "a larger --max-steps (or --max-steps none)"
    elif state.epoch >= config.max_epochs:  # the run's own epoch: it may be far past the flag
        limit, value, more = "max_epochs", config.max_epochs, f"--max-epochs {state.epoch + 1} or more"
    else:
        limit, value = "early_stopping_patience", config.early_stopping_patience
        more = (f"--early-stopping-patience {state.bad_epochs + 1} or more (or "
                "--early-stopping-patience none)")
    source = origins.key(limit)
    source = "the default" if source == limit else source
    if limit == "early_stopping_patience":
        epochs = f"{state.bad_epochs} epoch" + ("" if state.bad_epochs == 1 else "s")
        ended = (f"stopped early ({state.where()}): {config.monitor} did not improve for "
                 f"{epochs} and")
    else:
        ended = f"already finished ({state.where()}):"
    print(f"trainwell: {run_dir} {ended} {limit} is {value} ({source}); nothing was trained or "
          f"written; to train on, resume with {more}", file=sys.stderr)


def _silent(*args: Any, **kwargs: Any) -> None:
    """Warnings of ranks other than 0: rank 0 prints the same ones."""


def _rank() -> int:
    import os

    return int(os.environ.get("RANK", "0"))


def _world() -> int:
    import os

    return int(os.environ.get("WORLD_SIZE", "1"))


def _print_summary(result: Any, run_dir: Path, monitor: str, seconds: float) -> None:
    if not result.history:
        print(f"nothing to train: the run already stopped at step {result.state.step}")
    else:
        last = result.history[-1]
        values = "  ".join(f"{k} {v:.4f}" for k, v in last.items() if k.startswith("val_"))
        print(f"epoch {last['epoch']}, step {last['step']}: "
              f"{values or 'train_loss %.4f' % last['train_loss']}  ({seconds:.1f} s)")
    best = result.best
    if best is not None and monitor in best and result.best_checkpoint is not None:
        print(f"best {monitor} {best[monitor]:.4f} at epoch {best['epoch']}: {result.best_checkpoint}")
    files = sorted(p.name + ("/" if p.is_dir() else "") for p in run_dir.iterdir())
    print(f"run directory: {run_dir} ({', '.join(files)})")


def _show_warning(message: Any, category: Any, filename: str, lineno: int,
                  file: Any = None, line: Any = None) -> None:
    from trainwell.terminal import paint

    print(f"{paint('trainwell: warning:', 'yellow')} {interface_words(str(message), _ARGUMENTS)}",
          file=sys.stderr)


def _field_help(name: str, hint: Any, default: Any) -> str:
    choices = cfg.CHOICES.get(name)
    if choices:
        text = f"one of {', '.join(choices)}"
    else:
        text = _HELP.get(name) or " or ".join(
            "none" if t is type(None) else t.__name__ for t in cfg.allowed_types(hint))
    if default is not None and default is not dataclasses.MISSING and "default" not in text:
        text += f" (default {default})"
    return text
