"""The run config of `trainwell fit`: YAML and flags, validated into typed dataclasses.

Layers, lowest first: the field defaults, the bundled default run (only when no
model is named), a resumed run's saved ``config.yaml``, the user's YAML file,
the command-line flags. A key that does not exist or a value of the wrong type
is a ``TrainwellError`` naming the key, before anything is imported or trained.
Nothing here imports torch.
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
    """Read a config file into a mapping (an empty file is an empty config)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise TrainwellError(f"cannot read config {path}: {error.strerror}") from None
    data = parse_yaml(text, str(path))
    if data is None:
        return {}
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
    config = FitConfig(**values)
    for key, choices in CHOICES.items():
        if getattr(config, key) not in choices:
            raise TrainwellError(f"{where}: {key}: {getattr(config, key)!r} is not one of {', '.join(choices)}")
    return config


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


def dump(config: FitConfig) -> str:
    """The effective config as YAML (what ``--print-config`` shows and runs save)."""
    return yaml.safe_dump(to_dict(config), sort_keys=False, default_flow_style=False)


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
        raise TrainwellError(f"{where}: loggers: expected a list of {', '.join(LOGGERS)} "
                             f"(CSV files are always written), got {value!r}")
    return list(dict.fromkeys(names))


def _check_type(key: str, value: Any, hint: Any, where: str) -> Any:
    allowed = allowed_types(hint)
    if value is None and type(None) in allowed:
        return None
    if float in allowed and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if any(_is(value, t) for t in allowed):
        return value
    expected = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
    raise TrainwellError(f"{where}: {key}: expected {expected}, got {value!r} ({_kind(value)})")


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


# --------------------------------------------------------------------------
# Resolving names into objects (imports torch and the user's modules lazily).

def import_factory(spec: str, what: str) -> Any:
    """The callable named by ``"module:function"``; the current directory is importable."""
    import importlib
    import os
    import sys

    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise TrainwellError(f"{what} {spec!r} is not 'module:function' (e.g. mymodels:make_model)")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and module_name.startswith(error.name):
            raise TrainwellError(
                f"{what} {spec!r}: no module named {error.name!r} (run from the folder that holds "
                "it, or install it)") from None
        raise TrainwellError(f"{what} {spec!r}: importing {module_name!r} failed: {_describe(error)}") from None
    except Exception as error:  # the user's module raised while importing
        raise TrainwellError(f"{what} {spec!r}: importing {module_name!r} failed: {_describe(error)}") from None
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise TrainwellError(f"{what} {spec!r}: module {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise TrainwellError(f"{what} {spec!r} is not callable (it is a {type(target).__name__})")
    return target


def call_factory(spec: str, what: str) -> Any:
    """Import and call a factory; an exception inside it is one line with its location."""
    factory = import_factory(spec, what)
    try:
        return factory()
    except TrainwellError:
        raise
    except Exception as error:
        raise TrainwellError(f"{what} {spec!r} raised {_describe(error)}", exit_code=1) from None


def optimizer_factory(config: OptimizerConfig) -> Any:
    """``callable(params) -> Optimizer`` for the Trainer; name and kwargs checked now."""
    import torch

    cls = _torch_class(torch.optim, torch.optim.Optimizer, config.name, "optimizer")
    _check_kwargs(cls, config.kwargs, f"optimizer {config.name}", skip=("params",))
    kwargs = dict(config.kwargs)
    return lambda params: cls(params, **kwargs)


def scheduler_factory(config: SchedulerConfig, horizon: int) -> Any:
    """``callable(optimizer) -> scheduler``; ``horizon`` is the run's length in
    units of ``config.interval``, filled in where the schedule needs it."""
    import torch

    module = torch.optim.lr_scheduler
    cls = _torch_class(module, (module.LRScheduler, module.ReduceLROnPlateau), config.name,
                       "scheduler")
    kwargs = dict(config.kwargs)
    if cls is module.OneCycleLR and not {"total_steps", "epochs"} & kwargs.keys():
        kwargs["total_steps"] = horizon
    if cls is module.CosineAnnealingLR and "T_max" not in kwargs:
        kwargs["T_max"] = horizon
    _check_kwargs(cls, kwargs, f"scheduler {config.name}", skip=("optimizer",))
    return lambda optimizer: cls(optimizer, **kwargs)


def loss_function(name: str) -> Any:
    """A ``torch.nn`` loss by class name (instantiated), or a ``module:function``."""
    if ":" in name:
        return import_factory(name, "loss")
    from torch import nn

    return _torch_class(nn, nn.modules.loss._Loss, name, "loss")()


def metric_functions(metrics: dict[str, str]) -> dict[str, Any]:
    """Built-in metric names pass through (the Trainer knows them); others are imported."""
    return {name: import_factory(spec, f"metric {name!r}") if ":" in spec else spec
            for name, spec in metrics.items()}


def _torch_class(module: Any, base: Any, name: str, what: str) -> Any:
    bases = base if isinstance(base, tuple) else (base,)
    cls = getattr(module, name, None)
    if isinstance(cls, type) and issubclass(cls, bases) and not name.startswith("_"):
        return cls
    names = sorted(n for n, c in vars(module).items()
                   if isinstance(c, type) and issubclass(c, bases) and c not in bases[:1]
                   and not n.startswith("_"))
    return _raise_choice(what, name, module.__name__, names)


def _raise_choice(what: str, name: str, where: str, names: list[str]) -> Any:
    import difflib

    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise TrainwellError(f"{what} {name!r} is not in {where}{hint}; valid choices: {', '.join(names)}")


def _check_kwargs(cls: type, kwargs: dict[str, Any], what: str, skip: tuple[str, ...]) -> None:
    import inspect

    params = {n: p for n, p in inspect.signature(cls).parameters.items()
              if n not in skip and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    for key in kwargs:
        if key not in params:
            raise TrainwellError(f"{what}: unknown argument {key!r}; valid arguments: {', '.join(params)}")
    missing = [n for n, p in params.items() if p.default is p.empty and n not in kwargs]
    if missing:
        raise TrainwellError(f"{what}: missing required argument(s) {', '.join(missing)}")


def _describe(error: BaseException) -> str:
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"
