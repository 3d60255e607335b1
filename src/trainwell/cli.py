"""The `trainwell` command: subcommands, argument parsing and exit codes.

Each subcommand lives beside the code it drives (``trainwell/<part>/command.py``)
and exposes ``add_arguments(parser)`` and ``run(args) -> int``. Those modules
import nothing heavy at module level, so `trainwell check` never pays for
``import torch``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import traceback
from collections.abc import Iterable, Sequence

from trainwell import __version__
from trainwell.errors import TrainwellError, internal_error, user_frames
from trainwell.terminal import paint

# the modules of the `trainwell[torch]` extra (import names): `fit`, `run`, `memory`, `verify-resume` need them
TORCH_EXTRA = frozenset({"torch", "numpy", "yaml", "tqdm", "safetensors", "sklearn", "matplotlib"})

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "fit": ("trainwell.fit.command", "train a model with the trainwell Trainer (default: an MLP on scikit-learn's digits)"),
    "check": ("trainwell.lint.command", "find silent training-loop bugs in Python source, without running it"),
    "rule": ("trainwell.catalog.command", "print the documentation page of a rule (or --all to list them)"),
    "run": ("trainwell.runtime.command", "run a training script and report the silent bugs it commits"),
    "memory": ("trainwell.memory.command", "how much memory training needs, and what each saving buys"),
    "export": ("trainwell.fit.export_command", "write a run's trained weights as safetensors, for plain PyTorch"),
    "verify-resume": ("trainwell.fit.verify_command", "check that stopping and resuming your run gives bitwise-identical weights"),
    "server": ("trainwell.lint.server_command", "the static checker as a language server for editors (LSP over stdio)"),
}


def _available_subcommands(names: Iterable[str] = tuple(SUBCOMMANDS)) -> dict[str, object]:
    """The modules of the subcommands ``names``: a run imports only the one it runs (`trainwell check` on the
    files of a commit starts without the Trainer's YAML and launcher imports)."""
    modules: dict[str, object] = {}
    for name in names:
        module_name = SUBCOMMANDS[name][0]
        try:
            modules[name] = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if (error.name or "").split(".")[0] in TORCH_EXTRA:
                modules[name] = _NeedsExtra(name, error.name or "")
                continue
            raise
    return modules


def _needs_extra(command: str, module: str) -> TrainwellError:
    return TrainwellError(f"`trainwell {command}` needs {module.split('.')[0]}, which the light install leaves out: "
                          f"pip install \"trainwell[torch]\" (in a clone: pip install \".[torch]\")")


class _NeedsExtra:
    """A subcommand whose module needs the ``torch`` extra, in a light install: any arguments, one line saying what to install."""

    def __init__(self, command: str, module: str) -> None:
        self.command, self.module = command, module

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        parser.epilog = str(_needs_extra(self.command, self.module))

    def run(self, args: argparse.Namespace) -> int:
        raise _needs_extra(self.command, self.module)


class Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake as one line (the full usage is ``--help`` away)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        # "--params -5B" is a value (refused by its own check), not an unknown option.
        self._negative_number_matcher = re.compile(r"^-\d")

    command: str | None = None  # the subcommand named on the command line, for the hint

    def error(self, message: str) -> None:  # type: ignore[override]
        prog = f"{self.prog} {self.command}" if self.command and " " not in self.prog else self.prog
        raise TrainwellError(f"{message} (see `{prog} --help`)")


_DEBUG_HELP = "on an error, also print the full traceback"


def build_parser(modules: dict[str, object]) -> argparse.ArgumentParser:
    parser = Parser(prog="trainwell", description="Train PyTorch models right, and find the silent bugs in training loops.")
    parser.add_argument("-V", "--version", action="version", version=f"trainwell {__version__}")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in SUBCOMMANDS.items():
        module = modules.get(name)
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        if module is not None:  # a subcommand not run here is listed by name and help only
            module.add_arguments(sub)  # type: ignore[attr-defined]
            sub.set_defaults(_module=module)
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; every error ends here as one line (``--debug``: with its traceback)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = False
    try:
        command = _named_command(argv)
        parser = build_parser(_available_subcommands([command] if command else []))
        parser.command = command
        args = parser.parse_args(argv)
        debug = args.debug
        if args.command is None:
            parser.print_help()
            return 2
        args._argv = argv  # the launcher of `fit --nproc` re-runs the same command
        return int(args._module.run(args) or 0)
    except TrainwellError as error:
        if debug:
            traceback.print_exc()
        return _report(str(error), error.exit_code)
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("trainwell: interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as error:
        missing = (error.name or "").split(".")[0]
        if missing in TORCH_EXTRA and not user_frames(error):
            return _report(str(_needs_extra(_command_in(argv), missing)), 2)
        return _crash(error, debug)
    except Exception as error:  # not a mistake trainwell knows: still one line, unless --debug
        return _crash(error, debug)


def _crash(error: Exception, debug: bool) -> int:
    if debug:
        traceback.print_exc()
    if user_frames(error):
        from trainwell.errors import describe_user_error

        return _report(describe_user_error(error, "your code"), 1)
    return _report(internal_error(error), 1)


def _named_command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first item that is one (no global option takes a value)."""
    return next((item for item in argv if item in SUBCOMMANDS), None)


def _command_in(argv: Sequence[str]) -> str:
    """The subcommand named in ``argv`` (for a message), or ``COMMAND``."""
    return _named_command(argv) or "COMMAND"


def _report(message: str, code: int) -> int:
    """Print the error; a worker of `fit --nproc` leaves it to the launcher, which prints one."""
    from trainwell.fit.launch import record_failure

    if not record_failure(message, code):
        print(f"{paint('trainwell: error:', 'red')} {message}", file=sys.stderr)
    return code


# Subcommands that run no user code and leave nothing to clean up: their process ends without the interpreter's
# teardown, which frees every object one by one (a one-core `check` of the eight-repository benchmark spends
# 0.35 s of 4.5 s there, freeing syntax trees no one reads again), as mypy ends its runs.
_NO_TEARDOWN = frozenset({"check"})


def entry() -> None:
    """The `trainwell` console script (and ``python -m trainwell``): :func:`main`, then the exit."""
    code = main()
    if _named_command(sys.argv[1:]) in _NO_TEARDOWN:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, ValueError):  # a reader that closed the pipe early; a stream main() closed
            pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
