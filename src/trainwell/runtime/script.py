"""Run a script or module the way `python SCRIPT ARGS` / `python -m MODULE ARGS` would."""

from __future__ import annotations

import os
import runpy
import sys
import traceback

from trainwell.runtime.location import hide_checker_frames, trim_to_user
from trainwell.runtime.watcher import watch


def run_script(watcher: watch, target: str, args: list[str], as_module: bool = False) -> int:
    """Run ``target`` as ``__main__`` under ``watcher``; return the exit code python would give.

    ``sys.argv``, ``sys.path[0]`` and ``__main__`` are what python sets; the
    working directory is unchanged. An exception prints its traceback and
    gives 1, ``SystemExit`` gives its code.
    """
    saved_argv, saved_path0 = sys.argv[:], sys.path[0]
    if as_module:
        sys.argv = [target, *args]  # runpy replaces argv[0] with the module's file
        sys.path[0] = os.getcwd()
    else:
        sys.argv = [target, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(target))
    try:
        with watcher:
            if as_module:
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(os.path.abspath(target), run_name="__main__")  # __file__ absolute, as python sets it
    except SystemExit as stop:
        return _exit_code(stop.code)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - the script's own failure, shown as python shows it
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
