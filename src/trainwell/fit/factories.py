"""Names in a run config resolved into objects: factories, torch.optim classes, losses, metrics.

``module:function`` (or ``path/to/file.py:function``) is imported from the
current directory; an optimizer or scheduler named by class is checked
against its signature and built once over a stand-in parameter, so a bad
argument (a negative ``lr``, ``weight_decay=abc``) is one line naming where it
came from, before any file is written. Imports torch and the user's modules
lazily.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainwell.errors import TrainwellError
from trainwell.fit.config import OptimizerConfig, SchedulerConfig


def import_factory(spec: str, what: str) -> Any:
    """The callable named by ``"module:function"`` or ``"path/to/file.py:function"``; the
    current directory is importable (as with ``python -m``), a file's folder too."""
    import importlib
    import os
    import sys

    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise TrainwellError(f"{what} {spec!r} is not 'module:function' (e.g. mymodels:make_model "
                             "or ./mymodels.py:make_model)")
    if module_name.endswith(".py"):
        return _attribute(_import_file(Path(module_name), spec, what), module_name, attr, spec, what)
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
    return _attribute(module, module_name, attr, spec, what)


def _import_file(path: Path, spec: str, what: str) -> Any:
    """Import ``path`` as the module of its file name, its folder put on ``sys.path`` (as
    ``python path`` does), so DataLoader workers and checkpoints find it again by name."""
    import importlib
    import sys

    if not path.is_file():
        raise TrainwellError(f"{what} {spec!r}: no such file {spec.rpartition(':')[0]!r}")
    if not path.stem.isidentifier():
        raise TrainwellError(f"{what} {spec!r}: {path.name!r} is not a valid module name; "
                             "rename the file (letters, digits, underscores)")
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(path.stem)
    except Exception as error:  # the user's module raised while importing
        raise TrainwellError(f"{what} {spec!r}: importing {str(path)!r} failed: {_describe(error)}") from None
    loaded = Path(getattr(module, "__file__", "") or "")
    if not loaded.is_file() or not loaded.samefile(path):
        raise TrainwellError(f"{what} {spec!r}: the name {path.stem!r} is already taken by "
                             f"{loaded or 'a built-in module'}; rename {path.name}")
    return module


def _attribute(module: Any, module_name: str, attr: str, spec: str, what: str) -> Any:
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


def optimizer_factory(config: OptimizerConfig, name_of: Callable[[str], str] | None = None,
                      model: Any = None) -> Any:
    """``callable(params) -> Optimizer`` for the Trainer; name and arguments checked now.

    The optimizer is built with its fastest step (``fused``, else ``foreach``; see
    kernels.py). ``model``: the module whose parameters it will get, to see layers with
    sparse gradients (None: it has none). ``name_of(key)`` says where an argument came
    from (``--lr -1``), for the error.
    """
    import torch

    from trainwell.fit.kernels import build_fastest, has_sparse_gradients

    cls = _torch_class(torch.optim, torch.optim.Optimizer, config.name, "optimizer")
    what = f"optimizer {config.name}"
    name_of = name_of or (lambda key: f"{what}: {key}")
    _check_kwargs(cls, config.kwargs, what, ("params",), name_of)
    kwargs = dict(config.kwargs)
    # Build it once over a stand-in parameter: its own range checks (a negative lr) fire
    # now, as one line naming the key, not after the run directory is made.
    _try_build(lambda: cls([torch.nn.Parameter(torch.zeros(1))], **kwargs), kwargs, what, name_of)
    sparse = (lambda: has_sparse_gradients(model)) if model is not None else (lambda: False)
    return lambda params: build_fastest(cls, params, kwargs, sparse)


def named_optimizer(name: str, kwargs: dict[str, Any] | None, model: Any) -> Any:
    """The Python API's ``optimizer="adamw"``: a ``torch.optim`` class named in any case,
    built as ``trainwell fit --optimizer`` builds it (checked now, fastest step)."""
    import torch

    if not isinstance(kwargs, (dict, type(None))):
        raise TrainwellError(f"optimizer_args is a {type(kwargs).__name__}; pass a dict, "
                             "e.g. optimizer_args={'lr': 1e-3}")
    names = {n.lower(): n for n, c in vars(torch.optim).items()
             if isinstance(c, type) and issubclass(c, torch.optim.Optimizer) and not n.startswith("_")}
    exact = name if name in names.values() else names.get(name.lower(), name)
    config = OptimizerConfig(exact, dict(kwargs) if kwargs is not None else {})
    return optimizer_factory(config, lambda key: f"optimizer_args[{key!r}]", model)


def scheduler_factory(config: SchedulerConfig, horizon: int,
                      name_of: Callable[[str], str] | None = None) -> Any:
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
    what = f"scheduler {config.name}"
    name_of = name_of or (lambda key: f"{what}: {key}")
    _check_kwargs(cls, kwargs, what, ("optimizer",), name_of)
    stand_in = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)

    def build_and_step() -> None:  # some arguments are first used by step()
        scheduler = cls(stand_in, **kwargs)
        stand_in.step()
        if not isinstance(scheduler, module.ReduceLROnPlateau):
            scheduler.step()

    _try_build(build_and_step, kwargs, what, name_of)
    return lambda optimizer: cls(optimizer, **kwargs)


def _try_build(build: Callable[[], Any], kwargs: dict[str, Any], what: str,
               name_of: Callable[[str], str]) -> None:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a stand-in, not the run
            build()
    except (ValueError, TypeError, ZeroDivisionError) as error:
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        key = _blamed_key(text, kwargs)
        if key is None and isinstance(error, TypeError):
            texts = [k for k, v in kwargs.items() if isinstance(v, str)]
            key = texts[0] if len(texts) == 1 else None  # "unsupported operand type(s) ... 'str'"
        where = name_of(key) if key is not None else what
        raise TrainwellError(f"{where}: {what} refuses it: {text}") from None


# Words PyTorch's range checks use for an argument, when they do not use its name.
_ARGUMENT_WORDS = {"learning rate": "lr", "beta": "betas", "epsilon": "eps"}


def _blamed_key(message: str, kwargs: dict[str, Any]) -> str | None:
    for key in sorted(kwargs, key=len, reverse=True):
        if re.search(rf"\b{re.escape(key)}\b", message):
            return key
    lowered = message.lower()
    return next((key for word, key in _ARGUMENT_WORDS.items()
                 if word in lowered and key in kwargs), None)


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


def _check_kwargs(cls: type, kwargs: dict[str, Any], what: str, skip: tuple[str, ...],
                  name_of: Callable[[str], str]) -> None:
    import inspect

    params = {n: p for n, p in inspect.signature(cls).parameters.items()
              if n not in skip and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    for key, value in kwargs.items():
        if key not in params:
            raise TrainwellError(f"{name_of(key)}: unknown argument of {what}; valid "
                                 f"arguments: {', '.join(params)}")
        expected = _expected_kind(params[key])
        if expected is not None and not _fits(value, expected):
            raise TrainwellError(f"{name_of(key)}: expected {_describe_kind(expected)}, got {value!r}")
    missing = [n for n, p in params.items() if p.default is p.empty and n not in kwargs]
    if missing:
        raise TrainwellError(f"{what}: missing required argument(s) {', '.join(missing)}")


_NUMBERS = {"int", "float", "None", "list[float]", "list[int]", "Tensor", "torch.Tensor"}


def _expected_kind(param: Any) -> Any:
    """What an argument must be, from its annotation or else its default (None: no opinion).

    "number" (a number or a list of them, per parameter group), "bool", or a
    tuple of allowed literal values.
    """
    import ast

    annotation = param.annotation if isinstance(param.annotation, str) else \
        getattr(param.annotation, "__name__", "")
    parts = {part.strip() for part in annotation.split("|")} if annotation else set()
    if parts == {"bool"} or isinstance(param.default, bool):
        return "bool"
    literal = re.fullmatch(r"Literal\[(.*)\]", annotation.strip()) if annotation else None
    if literal:
        return tuple(ast.literal_eval(f"({literal.group(1)},)"))
    if (parts and parts <= _NUMBERS and parts != {"None"}) or (
            not parts and isinstance(param.default, (int, float))):
        return "number"
    if isinstance(param.default, tuple) and param.default \
            and all(isinstance(v, (int, float)) for v in param.default):
        return "number"  # betas=(0.9, 0.999): a list of numbers
    return None


def _describe_kind(expected: Any) -> str:
    if isinstance(expected, tuple):
        return "one of " + ", ".join(map(str, expected))
    return {"bool": "true or false", "number": "a number"}[expected]


def _fits(value: Any, expected: Any) -> bool:
    if isinstance(expected, tuple):
        return value in expected
    if expected == "bool":
        return isinstance(value, bool)
    if value is None:
        return True

    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    return number(value) or (isinstance(value, (list, tuple)) and all(map(number, value)))


def _describe(error: BaseException) -> str:
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"
