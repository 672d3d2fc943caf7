"""``liedyn list`` and ``liedyn show NAME``."""

from __future__ import annotations

import numpy as np

from .common import add_common, add_entry_args, emit_json, resolve


def cmd_list(args):
    """Names, families and titles from the registry (no entry is built, so this is fast)."""
    from ..registry import specs

    rows = [{"name": name, "title": s.title, "family": s.family, "summary": s.doc.split("\n")[0],
             "defaults": dict(s.defaults)} for name, s in specs().items()]
    if args.json:
        emit_json(rows)
        return 0
    w = max((len(r["name"]) for r in rows), default=4)
    for r in rows:
        print(f"{r['name']:{w}s}  {r['family']:12s} {r['title']}")
    return 0


def show_data(entry):
    """Everything ``show`` prints, as a dict."""
    from ..output import describe

    text, latex = describe.equations(entry)
    return {
        "name": entry.name, "description": entry.description, "references": describe.references(entry),
        "model": entry.model, "kind": entry.kind, "parameters": dict(entry.parameters),
        "equations": text, "latex": latex, "model_equations": describe.model_text(entry), "realizability": describe.realizability(entry),
        "realizability_exact": (None if (q := describe.realizability_exact(entry)) is None else str(q)),
        "realizability_line": describe.realizability_line(entry),
        "first_integrals": describe.integrals(entry), "labels": list(entry.labels),
        "initial_state": (entry.initial_state if isinstance(entry.initial_state, dict)
                          else np.asarray(entry.initial_state).tolist()),
        "t_end": entry.t_end, "steps": entry.steps, "method": entry.method,
        "exact_solution": entry.exact_solution is not None,
    }


def cmd_show(args):
    entry = resolve(args.name, args.param)
    d = show_data(entry)
    if args.json:
        emit_json(d)
        return 0
    print(f"{d['name']}  ({d['model']}, {d['kind']})")
    print(d["description"])
    if d["parameters"]:
        print("parameters: " + ", ".join(f"{k}={v}" for k, v in d["parameters"].items()))
    print("\nequations" + (f" ({d['model_equations']}):" if d["model_equations"] else ":"))
    if args.latex:
        print(d["latex"])
    else:
        for line in d["equations"]:
            print("  " + line)
    if d["realizability_line"]:
        print("\n" + d["realizability_line"])
    print("\nfirst integrals:")
    for f in d["first_integrals"]:
        expr = f" = {f['expr']}" if f.get("expr") else ""
        print(f"  [{f['source']}] {f['name']}{expr}")
    if not d["first_integrals"]:
        print("  (none claimed)")
    print(f"\nexact solution: {'yes' if d['exact_solution'] else 'none known'}")
    print("\nreferences:")
    for ref in d["references"]:
        print("  - " + ref)
    return 0


def add_parsers(sub):
    p = sub.add_parser("list", help="the named systems of the catalog")
    add_common(p)
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("show", help="equations, realizability, first integrals and references of one system")
    add_entry_args(p)
    p.add_argument("--latex", action="store_true", help="print the equations as LaTeX")
    add_common(p)
    p.set_defaults(func=cmd_show)
