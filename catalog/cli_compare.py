"""``liedyn compare NAME``: the integrator comparison (order, drift, work-precision) as a table and a figure."""

from __future__ import annotations

from .cli_common import Progress, add_common, add_entry_args, emit_json, resolve


def format_summary(summary, reference):
    """Plain-text table of :func:`catalog.compare.compare_entry`'s summary."""
    lines = [f"error at t_end against the {reference}; Casimirs / others: largest relative drift of the claimed "
             "Casimirs and of the other integrals (e.g. energy) over the ladder",
             f"{'method':14s} {'order':>6s} {'declared':>8s} {'best error':>11s} {'Casimirs':>9s} {'others':>9s} "
             f"{'time [s]':>9s}  preserves"]
    for m, s in summary.items():
        if "error" in s and "best_error" not in s:
            lines.append(f"{m:14s} not applicable: {s['error']}")
            continue
        order = "-" if s["order"] is None else f"{s['order']:.2f}"
        dec = "-" if s["declared_order"] is None else str(s["declared_order"])
        pres = ", ".join(s["preserves"] or []) or "-"
        cd = "-" if s.get("casimir_drift") is None else f"{s['casimir_drift']:.2e}"
        od = "-" if s.get("other_drift") is None else f"{s['other_drift']:.2e}"
        lines.append(f"{m:14s} {order:>6s} {dec:>8s} {s['best_error']:11.3e} {cd:>9s} {od:>9s} "
                     f"{s['wall_time']:9.3f}  {pres}")
    return "\n".join(lines)


def cmd_compare(args):
    from . import plots
    from .compare import compare_entry

    entry = resolve(args.name, args.param)
    methods = [m.strip() for m in args.methods.split(",")] if args.methods else None
    with Progress(f"comparing integrators on {entry.name}") as prog:
        rows, summary, reference = compare_entry(entry, methods=methods, t_end=args.t_end, progress=prog)
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
    p.add_argument("--plot", default=None, metavar="path.png", help="save the work-precision figure")
    add_common(p)
    p.set_defaults(func=cmd_compare)
