"""The ``liedyn`` command line.

Subcommands: ``list``, ``show NAME``, ``cite NAME``, ``simulate NAME``, ``lines NAME``, ``compare NAME``,
``report --out DIR``, ``algebras``; NAME is a catalog entry or a path to a TOML file (see
:mod:`catalog.entries.toml_loader`). Every subcommand takes ``--json``. Errors print one line on stderr and
exit with status 2; a simulation that ends with status -1 prints its status and message and exits with 1; ``--debug`` (before or after the subcommand) shows the traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import NoReturn


def _cmd_algebras(args: argparse.Namespace) -> int:
    from .algebras import algebra_rows, format_algebra_table

    rows = algebra_rows(max_degree=args.max_degree)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(format_algebra_table(rows))
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line (``liedyn: error: ...``, exit 2) like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"liedyn: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    from . import cite
    from . import compare
    from . import lines
    from . import report
    from . import show
    from . import simulate
    from . import sweep
    from .common import add_common

    p = _Parser(prog="liedyn", description="Dynamics on Lie groups with servo-constraints")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True)
    show.add_parsers(sub)
    cite.add_parsers(sub)
    simulate.add_parsers(sub)
    lines.add_parsers(sub)
    compare.add_parsers(sub)
    report.add_parsers(sub)
    sweep.add_parsers(sub)
    a = sub.add_parser("algebras", help="table of the named Lie algebras and their Casimirs")
    a.add_argument("--max-degree", type=int, default=4, help="largest Casimir degree searched (2..8, default 4)")
    add_common(a)
    a.set_defaults(func=_cmd_algebras)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. `liedyn list | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("liedyn: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one clear line, exit 2
        if debug:
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"liedyn: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
