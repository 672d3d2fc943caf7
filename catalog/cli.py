"""The ``liedyn`` command line.

Subcommands: ``algebras`` (table of the named Lie algebras). Errors print one line and exit with 2;
``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import json
import sys


def _cmd_algebras(args):
    from .algebra_table import algebra_rows, format_algebra_table

    rows = algebra_rows(max_degree=args.max_degree)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(format_algebra_table(rows))
    return 0


def build_parser():
    p = argparse.ArgumentParser(prog="liedyn", description="Dynamics on Lie groups with servo-constraints")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("algebras", help="table of the named Lie algebras and their Casimirs")
    a.add_argument("--max-degree", type=int, default=4)
    a.add_argument("--json", action="store_true", help="machine-readable output")
    a.set_defaults(func=_cmd_algebras)
    return p


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except Exception as exc:  # one clear line, exit 2
        if args.debug:
            raise
        print(f"liedyn: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
