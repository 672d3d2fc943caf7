"""``liedyn report --out DIR``: the static HTML report (see :mod:`catalog.output.report`); ``--out x.json``
writes the checks as JSON instead (the figures are drawn in a temporary directory and dropped)."""

from __future__ import annotations

import tempfile

from .common import Progress, add_common, emit_json, is_json_path, write_json


def cmd_report(args):
    from ..output.report import write_report

    names = [n.strip() for n in args.only.split(",")] if args.only else None
    own, before = [], set()
    try:
        if args.files:  # a researcher's own systems: registered under their names, reported like the catalog's
            from ..entries.toml_loader import register_file
            from ..registry import names as known

            before = set(known())
            for f in args.files:
                name = register_file(f)
                own.append(name)
            names = own + [n for n in (names or []) if n not in own]
        if names:
            from ..registry import get

            for n in names:
                get(n)  # unknown names fail here with one clear line
        as_json = is_json_path(args.out)
        with Progress("writing the report") as prog, tempfile.TemporaryDirectory() as tmp:
            path, verdicts, failures = write_report(tmp if as_json else args.out, names=names, progress=prog,
                                                    compare=not args.no_compare)
    finally:  # the files' names leave the registry with the command (main() called twice in one process)
        from ..registry import unregister

        for name in own:
            if name not in before:
                unregister(name)
    n_pass = sum(v.passed for v in verdicts)
    summary = {"path": args.out if as_json else str(path), "checks": len(verdicts), "passed": n_pass,
               "failed": [v.as_dict() for v in verdicts if not v.passed],
               "entry_failures": [{"name": n, "error": e} for n, e in failures]}
    if as_json:
        write_json(args.out, dict(summary, verdicts=[v.as_dict() for v in verdicts]))
        path = args.out
    if args.json:
        emit_json(summary)
        return 0
    print(f"report: {path}  ({n_pass}/{len(verdicts)} checks pass)")
    for v in verdicts:
        if not v.passed:
            print("  " + v.line())
    return 0


def add_parsers(sub):
    p = sub.add_parser("report", help="write the HTML report of every catalog entry (or of your TOML systems)")
    p.add_argument("files", nargs="*", metavar="FILE.toml",
                   help="report these TOML systems (with the entries of --only, if given) instead of the catalog")
    p.add_argument("--out", default="out/report", help="output directory (default out/report); a .json path writes the checks as JSON")
    p.add_argument("--only", default=None, help="comma-separated entry names (default: all)")
    p.add_argument("--no-compare", action="store_true", help="skip the integrator comparison section")
    add_common(p)
    p.set_defaults(func=cmd_report)
