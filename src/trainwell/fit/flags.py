"""The effective config of `trainwell fit`: its layers, and where each value came from.

Lowest first: the field defaults, the bundled default run (only when no model
is named), a resumed run's saved ``config.yaml``, the user's YAML file, the
command-line flags. ``Origins`` remembers which layer set each key, so an error
names it as the user wrote it: ``--lr -1`` for a flag, ``run.yaml: optimizer:
lr`` for a key of a file. No torch import.
"""

from __future__ import annotations

import argparse
import os
import typing
from pathlib import Path
from typing import Any

from trainwell.errors import TrainwellError
from trainwell.fit import config as cfg
from trainwell.fit.launch import Nodes
from trainwell.fit.machines import several_machines


class Origins:
    """Where each config value came from, to name it in an error as the user wrote it:
    ``--lr -1`` for a flag, ``run.yaml: optimizer: lr`` for a key of a file."""

    def __init__(self, layers: list[tuple[str, dict[str, Any]]]) -> None:
        self.layers = layers  # (where, mapping), lowest first

    def key(self, key: str) -> str:
        for where, layer in reversed(self.layers):
            if key in layer:
                return cfg.at(where, key)
        return key

    def set_by(self, key: str) -> bool:
        """Whether a config file or a flag of this run sets ``key`` (not a default, not the
        bundled default run, not the resumed run's saved config)."""
        return any(key in layer for _, layer in self.layers[2:])

    def saved_only(self, key: str) -> bool:
        """Whether ``key`` comes from the resumed run's saved config (no file or flag of
        this run sets it)."""
        top = next((where for where, layer in reversed(self.layers) if key in layer), None)
        return top is not None and len(self.layers) > 1 and top == self.layers[1][0]

    def argument(self, section: str, key: str) -> str:
        """An optimizer or scheduler argument: ``--lr 0``, ``--optimizer-arg k=v``, ``file: optimizer: k``."""
        for where, layer in reversed(self.layers):
            part = layer.get(section)
            if isinstance(part, dict) and key in part:
                if where != cfg.FLAGS:
                    return f"{where}: {section}: {key}"
                value = part[key]
                if (section, key) == ("optimizer", "lr"):
                    return f"--lr {value}"
                return f"--{section}-arg {key}={value}"
        return f"{section}: {key}"


def resolve(args: argparse.Namespace, resume: Path | None) -> tuple[cfg.FitConfig, Origins]:
    """The effective config: defaults < bundled default < resumed run < YAML < flags."""
    from trainwell.fit.default import PRESET

    saved: dict[str, Any] = {}
    saved_where = "saved config"
    user = cfg.read_yaml(args.config) if args.config else {}
    flags = flag_values(args)
    if resume is not None:
        if not resume.exists():
            raise TrainwellError(f"--resume {resume}: no such file or directory"
                                 + _not_shared(cfg.merge(user, flags).get("nnodes")))
        run_dir = _run_dir_of(resume)
        if run_dir is not None and (run_dir / "config.yaml").is_file():
            saved_where = str(run_dir / "config.yaml")
            saved = cfg.read_yaml(run_dir / "config.yaml")
        if run_dir is not None:
            saved["run_dir"] = str(run_dir)
        for key in cfg.LAUNCH_KEYS:  # how that run was started: this one chooses again
            saved.pop(key, None)
    named = [layer for layer in (saved, user, flags) if "model" in layer or "data" in layer]
    base = PRESET if not named else {}
    merged = cfg.merge(base, saved, user, flags)
    where = args.config or "config"
    # Check the user's own layers first, so an error names the file or flag it came from.
    cfg.build(user, where)
    cfg.build(_without_sections(flags), cfg.FLAGS)
    config = cfg.build(merged, where)
    if (config.model is None) != (config.data is None):
        missing = "data" if config.data is None else "model"
        raise TrainwellError(f"{where}: '{missing}' is missing; give both model and data "
                             "factories (or neither, for the bundled default)")
    origins = Origins([("the bundled default run", base), (saved_where, saved), (where, user),
                       (cfg.FLAGS, flags)])
    if config.run_dir is not None:
        _check_run_dir_path(Path(config.run_dir), origins.key("run_dir"))
    return config, origins


def machines(config: cfg.FitConfig, origins: Origins) -> Nodes | None:
    """The machines to launch on (None: this one only), checked together before any work.

    Inside a torchrun process the machines are already running: launch keys of a
    config file are done with, and one on the command line is a mistake.
    """
    given = [key for key in cfg.LAUNCH_KEYS if origins.set_by(key)]
    if "TORCHELASTIC_RUN_ID" in os.environ:
        flags = [key for key in given if origins.key(key).startswith("--")]
        if flags:
            flag = origins.key(flags[0])
            raise TrainwellError(f"{flag} given inside a torchrun process; drop {flag} (torchrun "
                                 "already started the processes)")
        return None
    if not given:
        return None

    def say(key: str) -> str:  # "--node-rank 2:" or "run.yaml: node_rank: 2"
        name, value = origins.key(key), getattr(config, key)
        return f"{name} {value}:" if name.startswith("--") else f"{name}: {value!r}"

    count, rank = config.nnodes, config.node_rank
    if rank >= count:
        how_many = (f"{count} ({origins.key('nnodes')}); machines are numbered 0 to {count - 1}"
                    if "nnodes" in given else "1; pass --nnodes N too (the same on every machine)")
        raise TrainwellError(f"{say('node_rank')} must be below the number of machines, {how_many}")
    if config.rdzv_endpoint is None:
        if count == 1:
            return None  # node 0 of 1: this machine alone, as without the keys
        raise TrainwellError(f"{say('nnodes')} needs --rdzv-endpoint HOST:PORT too, where the "
                             "machines meet (node 0's host name and a free port, the same on "
                             "every machine)")
    if count > 1 and config.run_dir is None:
        raise TrainwellError(f"{say('nnodes')} pass --run-dir DIR too, a folder on a filesystem "
                             "every machine shares (each would otherwise pick a new folder of its "
                             "own)")
    return Nodes(count, rank, config.rdzv_endpoint)


def _not_shared(nnodes: Any) -> str:
    """The hint for a file missing on one of several machines (``nnodes`` as given, or torchrun's)."""
    if (isinstance(nnodes, int) and nnodes > 1) or several_machines():
        import socket

        return (f" on this machine ({socket.gethostname()}); with several machines the run "
                "directory must be on a filesystem every machine shares")
    return ""


def _check_run_dir_path(path: Path, name: str) -> None:
    """A run directory that could not be made fails now, before anything is imported or written."""
    if path.exists() and not path.is_dir():
        raise TrainwellError(f"{name} {path}: is a file, not a directory; pass a directory for the run")
    existing = next((p for p in path.parents if p.exists()), Path("."))
    if not existing.is_dir():
        raise TrainwellError(f"{name} {path}: cannot be created: {existing} is a file")
    import os

    if not path.exists() and not os.access(existing, os.W_OK | os.X_OK):
        raise TrainwellError(f"{name} {path}: cannot be created: no permission to write in {existing}")


def flag_values(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys set on the command line, with values parsed as YAML scalars."""
    out: dict[str, Any] = {}
    hints = typing.get_type_hints(cfg.FitConfig)
    for key, value in vars(args).items():
        if key.startswith("cfg_"):
            name = key[4:]
            allowed = cfg.allowed_types(hints[name])
            if isinstance(value, bool):
                out[name] = value
            elif str in allowed:  # text stays text ("--run-dir 2026"), "none" clears an optional
                out[name] = None if type(None) in allowed and value.lower() in ("none", "null") else value
            else:
                out[name] = _scalar(value, "--" + name.replace("_", "-"))
    if args.metric:
        out["metrics"] = dict(_metric_item(item) for item in args.metric)
    if args.logger:
        out["loggers"] = [name for name in args.logger if name != "none"]
    optimizer = _pairs(args.optimizer_arg, "--optimizer-arg")
    if args.lr is not None:
        optimizer["lr"] = _scalar(args.lr, "--lr")
    if args.optimizer:
        optimizer["name"] = args.optimizer
    if optimizer:
        out["optimizer"] = optimizer
    scheduler = _pairs(args.scheduler_arg, "--scheduler-arg")
    if args.scheduler_interval:
        scheduler["interval"] = args.scheduler_interval
    if args.scheduler and args.scheduler.lower() == "none":
        out["scheduler"] = None
    elif args.scheduler or scheduler:
        if args.scheduler:
            scheduler["name"] = args.scheduler
        out["scheduler"] = scheduler
    return out


def _run_dir_of(resume: Path) -> Path | None:
    if resume.is_dir():
        return resume
    if resume.parent.name == "checkpoints":
        return resume.parent.parent
    return None


def _scalar(text: str, flag: str) -> Any:
    if text.strip().lower() == "none":
        return None
    value = cfg.parse_yaml(text, flag)
    return text if isinstance(value, (dict, list)) else value


def _pairs(items: list[str] | None, flag: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise TrainwellError(f"{flag} {item!r}: expected KEY=VALUE, e.g. {flag} weight_decay=0.01")
        out[key.strip()] = cfg.parse_yaml(value, f"{flag} {key}")
    return out


def _metric_item(item: str) -> tuple[str, str]:
    name, sep, spec = item.partition("=")
    return (name, spec if sep else name)


def _without_sections(flags: dict[str, Any]) -> dict[str, Any]:
    # optimizer/scheduler flags may hold only some keys (e.g. --lr): checked once merged
    return {k: v for k, v in flags.items() if k not in ("optimizer", "scheduler")}
