"""`trainwell server`: the static checker as a language server for editors (LSP over stdio).

Editors start it themselves (see docs/check.md, *Editors*). pygls, a
dependency of the light install, is imported only when the server starts.
"""

from __future__ import annotations

import argparse

from trainwell.errors import TrainwellError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only transport; editors pass it)")


def run(args: argparse.Namespace) -> int:
    try:
        from trainwell.lint.language_server import build
    except ModuleNotFoundError as error:
        if error.name and error.name.split(".")[0] in ("pygls", "lsprotocol"):
            raise TrainwellError("`trainwell server` needs pygls 2, a dependency of trainwell that is missing here: "
                                 "pip install \"pygls>=2,<3\" (or reinstall trainwell)") from None
        raise
    from trainwell.lint.workers import fewer_collections
    with fewer_collections():  # every edit builds and frees a file's facts: fewer young collections, nothing frozen
        build().start_io()
    return 0
