"""``liedyn report --out DIR``: the static HTML report (see :mod:`catalog.output.report`)."""

from __future__ import annotations

from .common import Progress, add_common, emit_json


def cmd_report(args):
    from ..output.report import write_report

    names = [n.strip() for n in args.only.split(",")] if args.only else None
    if names:
        from ..registry import get

        for n in names:
            get(n)  # unknown names fail here with one clear line
    with Progress("writing the report") as prog:
        path, verdicts, failures = write_report(args.out, names=names, progress=prog,
                                                compare=not args.no_compare)
    n_pass = sum(v.passed for v in verdicts)
    if args.json:
        emit_json({"path": str(path), "checks": len(verdicts), "passed": n_pass,
                   "failed": [v.as_dict() for v in verdicts if not v.passed],
                   "entry_failures": [{"name": n, "error": e} for n, e in failures]})
        return 0
    print(f"report: {path}  ({n_pass}/{len(verdicts)} checks pass)")
    for v in verdicts:
        if not v.passed:
            print("  " + v.line())
    return 0


def add_parsers(sub):
    p = sub.add_parser("report", help="write the HTML report of every catalog entry")
    p.add_argument("--out", default="out/report", help="output directory (default out/report)")
    p.add_argument("--only", default=None, help="comma-separated entry names (default: all)")
    p.add_argument("--no-compare", action="store_true", help="skip the integrator comparison section")
    add_common(p)
    p.set_defaults(func=cmd_report)
