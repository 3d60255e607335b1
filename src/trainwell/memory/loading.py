"""Import ``pkg.module:function`` (or ``path/to/file.py:function``) from the current directory, and call it."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from trainwell.errors import TrainwellError


def load_object(spec: str, flag: str) -> Any:
    """The object named by ``spec`` (``module:attr``), importable from the current directory."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise TrainwellError(f"{flag} expects MODULE:FUNCTION (e.g. mypkg.models:make_model), got {spec!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)  # `trainwell memory --model models:make` finds ./models.py like `python -c` does
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise TrainwellError(f"{flag}: no such file {module_name!r}")
            loader_spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(loader_spec)  # type: ignore[arg-type]
            loader_spec.loader.exec_module(module)  # type: ignore[union-attr]
        else:
            module = importlib.import_module(module_name)
    except TrainwellError:
        raise
    except Exception as error:  # the user's module failed to import: say which and why, in one line
        raise TrainwellError(f"{flag}: cannot import {module_name!r} ({type(error).__name__}: {error}); "
                             "run from the folder that contains it") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise TrainwellError(f"{flag}: module {module_name!r} has no attribute {attr!r}") from None


def call_factory(factory: Any, spec: str, flag: str, *args: Any) -> Any:
    """Call the user's factory; an exception becomes one line naming the factory and the error."""
    if not callable(factory):
        raise TrainwellError(f"{flag} {spec!r} is a {type(factory).__name__}, not a function")
    try:
        return factory(*args)
    except Exception as error:
        message = str(error).splitlines()[0] if str(error) else ""
        raise TrainwellError(f"{flag} factory {spec!r} raised {type(error).__name__}: {message}") from None
