"""`trainwell run`: run a training script as `python SCRIPT ARGS` would, under the runtime checker.

Exit code: the script's own (its `sys.exit` code; 1 if it raised). With
``--strict``, a script that ended with 0 exits 1 when anything was found.
Mistakes in trainwell's own arguments (a missing script, a directory, a
syntax error, an output path that cannot be written) are one line each,
found before the script starts; a report or plot that fails to be written
after the run is one line too and never changes the script's exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from trainwell.errors import TrainwellError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", metavar="FILE.json", help="write the findings, the exit code and the step count as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 when anything was found (a failing script keeps its own code)")
    parser.add_argument("--select", action="append", metavar="CODES", help="report only these codes or prefixes (comma-separated; TW503 is opt-in)")
    parser.add_argument("--ignore", action="append", metavar="CODES", help="do not report these codes or prefixes (comma-separated)")
    parser.add_argument("--plot", metavar="FILE.png", help="draw learning rate, loss and gradient norm per optimizer step, findings marked")
    parser.add_argument("--nproc", type=int, metavar="N", help="start N ranks on this machine through torchrun and watch every one (one report)")
    parser.add_argument("-m", dest="as_module", action="store_true", help="run a module, as `python -m MODULE` does")
    parser.add_argument("target", nargs=argparse.REMAINDER, metavar="SCRIPT [ARGS...]", help="the script or notebook (.ipynb) (or, with -m, the module) and its own arguments")


def _codes(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def run(args: argparse.Namespace) -> int:
    if not args.target:
        raise TrainwellError("no script given: use `trainwell run SCRIPT [ARGS...]` or `trainwell run -m MODULE [ARGS...]`")
    target, script_args = args.target[0], args.target[1:]
    if not args.as_module:
        _check_script(target)
    else:
        _check_module(target)
    from trainwell.runtime import torchrun
    from trainwell.runtime.ranks import RUN_DIR_ENV

    rank_of_launch = os.environ.get(RUN_DIR_ENV)
    if not rank_of_launch:  # a rank of `--nproc`: the launcher checked these and writes them
        for option, path in (("--report", args.report), ("--plot", args.plot)):
            if path:
                _check_writable(option, path)
    if args.nproc is not None:
        if args.plot:
            raise TrainwellError("--plot draws one process's steps: run without --nproc to plot, or drop --plot")
        select, ignore = _codes(args.select), _codes(args.ignore)
        from trainwell.runtime.watcher import watch

        watch(select=select, ignore=ignore)  # a wrong code is one line here, not one per rank
        exit_code, run = torchrun.launch_ranks(args.nproc, getattr(args, "_argv", None) or ["run", *args.target])
        return _finish(args, run, exit_code)
    from trainwell.runtime.script import run_script
    from trainwell.runtime.watcher import watch

    watcher = watch(select=_codes(args.select), ignore=_codes(args.ignore), echo=sys.stderr, record=bool(args.plot),
                    follow=True)
    shared = torchrun.torchrun_directory()  # a rank of torchrun: its local rank 0 prints the node's one report
    watcher.directory = rank_of_launch or shared
    if target.endswith(".ipynb") and not args.as_module:
        from trainwell.runtime.notebook_run import run_notebook

        exit_code = run_notebook(watcher, target, script_args)
    else:
        exit_code = run_script(watcher, target, script_args, as_module=args.as_module)
    if rank_of_launch or (shared and not torchrun.reports_for_node()):
        return exit_code
    if shared:
        return _finish(args, torchrun.gather(shared), exit_code)
    return _finish(args, watcher, exit_code)


def _finish(args: argparse.Namespace, run: Any, exit_code: int) -> int:
    """The one report of a run (one process, or every rank merged): faults, the table, --strict, --report, --plot."""
    from trainwell.runtime.summary import render_table

    if run.faults:
        print("trainwell: internal probe errors (please report): " + "; ".join(run.faults), file=sys.stderr)
    print(render_table(run.findings, run.steps, run.hand_steps, exit_code, run.ranks, run.complete),
          file=sys.stderr)
    if args.strict and run.findings and exit_code == 0:
        exit_code = 1
    if args.report:
        _write_report(args.report, run, exit_code)
    if args.plot:
        _draw(args.plot, run)
    return exit_code


def _check_script(target: str) -> None:
    """One line for a script python could not even start: missing, a folder, unreadable, not Python."""
    if os.path.isdir(target):
        raise TrainwellError(f"{target!r} is a directory; give the path of a Python file (or -m MODULE)")
    if not os.path.isfile(target):
        raise TrainwellError(f"script not found: {target!r}; give the path of a Python file (or -m MODULE)")
    if target.endswith(".ipynb"):  # every code cell must parse before the first one runs
        from trainwell.runtime.notebook_run import compiled_cells

        compiled_cells(target)
        return
    try:
        with open(target, "rb") as handle:
            compile(handle.read(), target, "exec", dont_inherit=True)
    except SyntaxError as error:  # python exits 1 for it: so does trainwell, in one line
        if error.lineno is None:  # null bytes, an undecodable file: no line to point at
            raise TrainwellError(f"{target}: not a Python source file ({error.msg}); give the path of a .py script", exit_code=1) from None
        raise TrainwellError(f"{target}:{error.lineno}: the script does not parse: {error.msg}", exit_code=1) from None
    except (OSError, ValueError) as error:
        raise TrainwellError(f"cannot read the script {target!r}: {error}") from None


def _check_module(name: str) -> None:
    """One line for a module ``python -m`` would not find (from the current folder first, as it searches)."""
    import importlib.util

    sys.path.insert(0, os.getcwd())
    package = False
    try:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations is not None:  # a package runs its __main__
            package, spec = True, importlib.util.find_spec(f"{name}.__main__")
    except (ImportError, ValueError):  # a parent package that is missing, or an empty name
        spec = None
    finally:
        sys.path.remove(os.getcwd())
    if spec is None and package:
        raise TrainwellError(f"{name!r} is a package without a __main__ module, so `python -m {name}` cannot run it; "
                             "name the module that trains", exit_code=1)
    if spec is None:
        raise TrainwellError(f"no module named {name!r} from {os.getcwd()}: run from the folder it is importable from, "
                             "or pass a script path instead of -m", exit_code=1)


def _check_writable(option: str, path: str) -> None:
    """Before the run, so an hour of training is not followed by a lost report."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise TrainwellError(f"{option} {path!r} is a directory; give a file name")
    if not os.path.isdir(folder):
        raise TrainwellError(f"{option} {path!r}: the folder {folder!r} does not exist; create it or choose another path")
    if not os.access(folder, os.W_OK):
        raise TrainwellError(f"{option} {path!r}: the folder {folder!r} is not writable; choose another path")


def _write_report(path: str, watcher: Any, exit_code: int) -> None:
    keys = ("code", "name", "message", "path", "line", "step", "count")
    findings = [{**{key: finding.to_dict()[key] for key in keys}, "count_of": finding.extra.get("count_of"),
                 **({"ranks": finding.extra["ranks"]} if "ranks" in finding.extra else {})} for finding in watcher.findings]
    document = {"findings": findings, "exit_code": exit_code, "steps": watcher.steps, "hand_written_steps": watcher.hand_steps}
    if watcher.ranks:
        document["ranks"] = watcher.ranks
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
            handle.write("\n")
    except OSError as error:
        print(f"trainwell: error: cannot write the report {path!r}: {error.strerror}", file=sys.stderr)


def _draw(path: str, watcher: Any) -> None:
    from trainwell.runtime.plot import draw

    try:
        draw(watcher.history, watcher.findings, path)
    except OSError as error:
        print(f"trainwell: error: cannot write the plot {path!r}: {error.strerror}", file=sys.stderr)
