"""``liedyn compare NAME``: the integrator comparison (order, drift, work-precision) as a table and a figure."""

from __future__ import annotations

from .common import Progress, add_common, add_entry_args, emit_json, resolve


def cmd_compare(args):
    from ..output import plots
    from ..verify.compare import compare_entry, format_summary

    entry = resolve(args.name, args.param)
    methods = [m.strip() for m in args.methods.split(",")] if args.methods else None
    with Progress(f"comparing integrators on {entry.name}") as prog:
        kw = {}
        if args.steps:
            kw["ladder"] = [x for x in args.steps.replace(";", ",").split(",") if x.strip()]
        if args.rtol:
            kw["tols"] = [x for x in args.rtol.replace(";", ",").split(",") if x.strip()]
        rows, summary, reference = compare_entry(entry, methods=methods, t_end=args.t_end, progress=prog, **kw)
    if args.plot:
        plots.save(plots.compare_figure(rows, f"{entry.name}: work-precision"), args.plot)
    if args.json:
        emit_json({"name": entry.name, "reference": reference, "summary": summary, "rows": rows})
        return 0
    print(f"{entry.name}: integrator comparison")
    print(format_summary(summary, reference))
    if args.plot:
        print(f"figure: {args.plot}")
    return 0


def add_parsers(sub):
    p = sub.add_parser("compare", help="integrator comparison: order, drift, work-precision")
    add_entry_args(p)
    p.add_argument("--methods", default=None, help="comma-separated method names (default: all that apply)")
    p.add_argument("--t-end", type=float, default=None)
    p.add_argument("--steps", default=None, metavar="N1,N2,...",
                   help="step ladder of the fixed-step methods (default 100,200,400,800); the order is fitted "
                        "on its asymptotic range only")
    p.add_argument("--rtol", default=None, metavar="R1,R2,...",
                   help="tolerance ladder of the adaptive methods (default 1e-6,1e-8,1e-10; atol = rtol/100)")
    p.add_argument("--plot", default=None, metavar="path.png", help="save the work-precision figure")
    add_common(p)
    p.set_defaults(func=cmd_compare)
