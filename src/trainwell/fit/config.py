"""The run config of `trainwell fit`: YAML and flags, validated into typed dataclasses.

Layers, lowest first: the field defaults, the bundled default run (only when no
model is named), a resumed run's saved ``config.yaml``, the user's YAML file,
the command-line flags. A key that does not exist, a value of the wrong type or
out of range is a ``TrainwellError`` naming the key (or the flag), before
anything is imported or trained. Nothing here imports torch; factories.py
turns the names into objects.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from pathlib import Path
from typing import Any

import yaml

from trainwell.errors import TrainwellError

PRECISIONS = ("32", "bf16-mixed", "16-mixed")
INTERVALS = ("epoch", "step")
MODES = ("min", "max")
NONFINITE = ("raise", "skip")
STRATEGIES = ("auto", "ddp", "fsdp", "none")
LOGGERS = ("tensorboard", "mlflow")  # CSV files are always written


@dataclasses.dataclass
class OptimizerConfig:
    """A ``torch.optim`` class by name and its keyword arguments."""

    name: str = "AdamW"
    kwargs: dict[str, Any] = dataclasses.field(default_factory=lambda: {"lr": 1e-3})


@dataclasses.dataclass
class SchedulerConfig:
    """A ``torch.optim.lr_scheduler`` class by name, its interval and keyword arguments.

    ``OneCycleLR`` without ``total_steps``/``epochs`` and ``CosineAnnealingLR``
    without ``T_max`` get the run's length in units of ``interval``.
    """

    name: str
    interval: str = "epoch"
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class FitConfig:
    """Everything `trainwell fit` needs; each field has a flag of the same name."""

    model: str | None = None  # "module:function" returning an nn.Module
    data: str | None = None  # "module:function" returning (train, val)
    loss: str = "CrossEntropyLoss"  # a torch.nn loss class, or "module:function"
    metrics: dict[str, str] = dataclasses.field(default_factory=dict)  # name -> "accuracy" | "module:function"
    optimizer: OptimizerConfig = dataclasses.field(default_factory=OptimizerConfig)
    scheduler: SchedulerConfig | None = None
    max_epochs: int = 10
    max_steps: int | None = None
    batch_size: int = 64
    eval_batch_size: int | None = None
    accumulate: int = 1
    precision: str = "32"
    clip_grad_norm: float | None = None
    device: str | None = None
    seed: int = 0
    deterministic: bool = False
    compile: bool = False
    run_dir: str | None = None  # None: a new folder under ./trainwell-runs/
    checkpoint_every: int | None = None
    keep_last: int | None = 3
    monitor: str = "val_loss"
    mode: str = "min"
    early_stopping_patience: int | None = None
    nonfinite: str = "raise"
    log_every: int = 50
    progress: bool = True
    num_workers: int | None = None
    strategy: str = "auto"  # under torchrun / --nproc: auto (DDP), ddp, fsdp, none
    threads: int | None = None  # torch.set_num_threads; None: PyTorch's default
    loggers: list[str] = dataclasses.field(default_factory=list)  # opt-in: tensorboard, mlflow
    curves: bool = True  # curves.png in the run directory
    # Several machines (launch keys: how this command starts, never saved with the run).
    nnodes: int = 1  # machines, each running the same command (--nproc processes on each)
    node_rank: int = 0  # this machine's index; node 0 hosts the rendezvous
    rdzv_endpoint: str | None = None  # "HOST:PORT" of node 0, where the machines meet


# How `trainwell fit` is started, not what it trains: left out of a run's config.yaml,
# so a resume chooses its own machines.
LAUNCH_KEYS = ("nnodes", "node_rank", "rdzv_endpoint")


CHOICES: dict[str, tuple[str, ...]] = {
    "precision": PRECISIONS, "mode": MODES, "nonfinite": NONFINITE,
    "strategy": STRATEGIES,
}


class _Loader(yaml.SafeLoader):
    """Safe YAML that also reads ``1e-3`` as a number (YAML 1.1 wants ``1.0e-3``)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$"),
    list("-+0123456789."),
)


def parse_yaml(text: str, where: str) -> Any:
    """Parse YAML text; a syntax error is one line naming ``where``."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise TrainwellError(f"{where}{at}: invalid YAML: {problem}") from None


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Read a config file into a mapping; an empty file is an error (it would train the default)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise TrainwellError(f"--config {path}: not a text file; give a YAML file of keys such "
                             "as model: and data: (see `trainwell fit --print-config`)") from None
    except OSError as error:
        raise TrainwellError(f"cannot read config {path}: {error.strerror}") from None
    data = parse_yaml(text, str(path))
    if data is None:
        raise TrainwellError(f"{path} is empty: give keys such as model: and data: (see "
                             "`trainwell fit --print-config`), or drop --config for the bundled default")
    if not isinstance(data, dict):
        raise TrainwellError(f"{path}: the config must be a mapping of keys to values, got {_kind(data)}")
    return data


def field_names() -> list[str]:
    return [f.name for f in dataclasses.fields(FitConfig)]


def merge(*layers: dict[str, Any]) -> dict[str, Any]:
    """Later layers win key by key; ``optimizer``/``scheduler`` sections merge
    their keys unless the later layer names a different class."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            old = out.get(key)
            if (key in ("optimizer", "scheduler") and isinstance(old, dict)
                    and isinstance(value, dict)
                    and value.get("name", old.get("name")) == old.get("name")):
                out[key] = {**old, **value}
            else:
                out[key] = value
    return out


FLAGS = "command line"  # the ``where`` of values that came from flags

# Ranges of numeric keys: (lowest, highest) inclusive; None is open.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "max_epochs": (1, None), "max_steps": (1, None), "batch_size": (1, None),
    "eval_batch_size": (1, None), "accumulate": (1, None), "checkpoint_every": (1, None),
    "keep_last": (1, None), "early_stopping_patience": (1, None), "log_every": (1, None),
    "num_workers": (0, None), "threads": (1, None), "seed": (0, 2**63 - 1),
    "nnodes": (1, None), "node_rank": (0, None),
}


def at(where: str, key: str) -> str:
    """Name a key as the user wrote it: ``--batch-size`` on the command line, else ``file: key``."""
    return "--" + key.replace("_", "-") if where == FLAGS else f"{where}: {key}"


def build(data: dict[str, Any], where: str = "config") -> FitConfig:
    """Validate a mapping into a ``FitConfig``; the first problem is a TrainwellError."""
    valid = field_names()
    unknown = [k for k in data if k not in valid]
    if unknown:
        raise TrainwellError(_unknown_key(unknown[0], valid, where))
    hints = typing.get_type_hints(FitConfig)
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key == "optimizer":
            values[key] = _section(value, f"{where}: optimizer", OptimizerConfig, required_name=False)
        elif key == "scheduler":
            values[key] = None if value is None else _section(
                value, f"{where}: scheduler", SchedulerConfig, required_name=True)
        elif key == "metrics":
            values[key] = _metrics(value, where)
        elif key == "loggers":
            values[key] = _loggers(value, where)
        else:
            values[key] = _check_type(key, value, hints[key], where)
            _check_range(key, values[key], where)
    config = FitConfig(**values)
    for key, choices in CHOICES.items():
        value = getattr(config, key)
        if key in data and value not in choices:
            if where == FLAGS:
                raise TrainwellError(f"{at(where, key)} {value}: must be one of {', '.join(choices)}")
            raise TrainwellError(f"{at(where, key)}: {value!r} is not one of {', '.join(choices)}")
    return config


def _check_range(key: str, value: Any, where: str) -> None:
    if value is None:
        return
    low, high = RANGES.get(key, (None, None))
    if key == "clip_grad_norm" and not value > 0:
        problem = "must be a positive number (or none: no clipping)"
    elif key == "run_dir" and not value.strip():
        problem = "must name a folder (or none: a new one under trainwell-runs/)"
    elif key == "rdzv_endpoint" and endpoint_problem(value):
        problem = endpoint_problem(value)
    elif (low is not None and value < low) or (high is not None and value > high):
        bounds = f"at least {low}" if high is None else f"between {low} and {high}"
        extra = " (or none: keep every checkpoint)" if key == "keep_last" else ""
        problem = f"must be {bounds}{extra}"
    else:
        return
    shown = f"{at(where, key)} {value}:" if where == FLAGS else f"{at(where, key)}: {value!r}"
    raise TrainwellError(f"{shown} {problem}")


def endpoint_problem(text: str) -> str:
    """What is wrong with a rendezvous endpoint ``HOST:PORT`` ("" when nothing is)."""
    host, sep, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):  # IPv6: [::1]:29500
        host = host[1:-1]
    elif ":" in host:
        host = ""  # a bare IPv6 address: which colon ends it?
    if not sep or not host.strip() or not port.isdigit():
        return "expected HOST:PORT, e.g. node001:29500 (node 0's host name and a free port)"
    if not 1 <= int(port) <= 65535:
        return f"port {port} is not between 1 and 65535"
    return ""


def to_dict(config: FitConfig) -> dict[str, Any]:
    """The config as the YAML mapping that would build it again."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if isinstance(value, OptimizerConfig):
            value = {"name": value.name, **value.kwargs}
        elif isinstance(value, SchedulerConfig):
            value = {"name": value.name, "interval": value.interval, **value.kwargs}
        out[f.name] = value
    return out


def dump(config: FitConfig, launch: bool = True) -> str:
    """The effective config as YAML (what ``--print-config`` shows; a run saves it without
    the ``launch`` keys)."""
    data = to_dict(config)
    if not launch:
        data = {k: v for k, v in data.items() if k not in LAUNCH_KEYS}
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def _section(value: Any, where: str, cls: type, required_name: bool) -> Any:
    if isinstance(value, str):
        value = {"name": value}  # `optimizer: SGD`
    if not isinstance(value, dict):
        raise TrainwellError(f"{where}: expected a mapping like {{name: ..., lr: ...}}, got {_kind(value)}")
    value = dict(value)
    name = value.pop("name", None)
    if name is None and required_name:
        raise TrainwellError(f"{where}: 'name' is missing (a class of torch.optim.lr_scheduler, e.g. OneCycleLR)")
    if name is not None and not isinstance(name, str):
        raise TrainwellError(f"{where}: name: expected a class name (str), got {_kind(name)}")
    for key in value:
        if not isinstance(key, str):
            raise TrainwellError(f"{where}: keys must be argument names, got {key!r}")
    if cls is SchedulerConfig:
        interval = value.pop("interval", "epoch")
        if interval not in INTERVALS:
            raise TrainwellError(f"{where}: interval: {interval!r} is not one of {', '.join(INTERVALS)}")
        return SchedulerConfig(name=name, interval=interval, kwargs=value)
    return OptimizerConfig(name=name or OptimizerConfig.name, kwargs=value)


def _metrics(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        value = {item: item for item in value}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TrainwellError(
            f"{where}: metrics: expected a list of names or a mapping name -> 'accuracy' or "
            f"'module:function', got {value!r}")
    return dict(value)


def _loggers(value: Any, where: str) -> list[str]:
    """``loggers: [tensorboard, mlflow]`` (one name alone, or none/[] for CSV only)."""
    names = [] if value is None else [value] if isinstance(value, str) else value
    if not isinstance(names, list) or any(n not in LOGGERS for n in names):
        raise TrainwellError(f"{at(where, 'loggers')}: expected a list of {', '.join(LOGGERS)} "
                             f"(CSV files are always written), got {value!r}")
    return list(dict.fromkeys(names))


def _check_type(key: str, value: Any, hint: Any, where: str) -> Any:
    allowed = allowed_types(hint)
    if value is None and type(None) in allowed:
        return None
    if float in allowed and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if float in allowed and isinstance(value, float) and value != value:
        raise TrainwellError(f"{at(where, key)}: nan is not a number it can use")
    if any(_is(value, t) for t in allowed):
        return value
    if where == FLAGS:
        expected = " or ".join(_WORDS.get(t, t.__name__) for t in allowed)
        raise TrainwellError(f"{at(where, key)} {value}: expected {expected}")
    expected = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
    raise TrainwellError(f"{at(where, key)}: expected {expected}, got {value!r} ({_kind(value)})")


_WORDS = {int: "an integer", float: "a number", str: "text", bool: "true or false",
          type(None): "none"}


def allowed_types(hint: Any) -> tuple[type, ...]:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return tuple(typing.get_args(hint))
    return (typing.get_origin(hint) or hint,)


def _is(value: Any, expected: type) -> bool:
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _unknown_key(key: Any, valid: list[str], where: str) -> str:
    import difflib

    close = difflib.get_close_matches(str(key), valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{where}: unknown key {key!r}{hint}; valid keys: {', '.join(valid)}"
