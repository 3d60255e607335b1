"""Run a script or module the way `python SCRIPT ARGS` / `python -m MODULE ARGS` would."""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from typing import Callable

from trainwell.runtime.location import hide_checker_frames, trim_to_user
from trainwell.runtime.watcher import watch


def run_script(watcher: watch, target: str, args: list[str], as_module: bool = False) -> int:
    """Run ``target`` as ``__main__`` under ``watcher``; return the exit code python would give.

    ``sys.argv``, ``sys.path[0]`` and ``__main__`` are what python sets; the
    working directory is unchanged.
    """
    if as_module:  # runpy replaces argv[0] with the module's file
        return run_as_main(watcher, [target, *args], os.getcwd(), lambda: runpy.run_module(target, run_name="__main__", alter_sys=True))
    path = os.path.abspath(target)  # __file__ absolute, as python sets it
    return run_as_main(watcher, [target, *args], os.path.dirname(path), lambda: runpy.run_path(path, run_name="__main__"))


def run_as_main(watcher: watch, argv: list[str], path0: str, body: Callable[[], object]) -> int:
    """Run the user's ``body`` under ``watcher`` with ``sys.argv`` and ``sys.path[0]`` as python sets them.

    An exception prints its traceback as python prints it (the checker's frames
    removed) and gives 1; ``SystemExit`` gives its code; both are restored after.
    """
    saved_argv, saved_path0 = sys.argv[:], sys.path[0]
    sys.argv, sys.path[0] = argv, path0
    try:
        with watcher:
            body()
    except SystemExit as stop:
        return _exit_code(stop.code)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - the user's own failure, shown as python shows it
        trim_to_user(error)
        hide_checker_frames(error)
        traceback.print_exception(error)
        return 1
    finally:
        sys.argv, sys.path[0] = saved_argv, saved_path0
    return 0


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
