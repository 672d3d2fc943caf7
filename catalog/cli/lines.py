"""``liedyn lines NAME``: the invariant lines x = s xi, v(xi) = c xi, of the entry's reduced homogeneous
quadratic system (``servo.quadratic``), with c, reality, multiplicity, stability on the sphere of directions, the
Kovalevskaya exponents at the Darboux point d = -xi / c and the degrees (<= 4) for which they rule out a
homogeneous polynomial first integral (servo.quadratic.kovalevskaya)."""

from __future__ import annotations

import sys

import numpy as np

from .common import Progress, add_common, add_entry_args, emit_json, resolve


def lines_of(entry, q=None):
    """(QuadraticSystem, InvariantLines) of ``entry`` (or of its reduced system ``q`` when given); a
    ValueError when it has no reduced system."""
    from ..output.describe import quadratic_system

    q = quadratic_system(entry) if q is None else q
    if q is None:
        raise ValueError(f"{entry.name}: no homogeneous quadratic reduced system (model {entry.model!r})")
    if hasattr(q, "invariant_lines"):
        return q, q.invariant_lines()
    from servo.quadratic.invariant_lines import invariant_lines

    return q, invariant_lines(q)


def _num(z):
    z = complex(z)
    return z.real if abs(z.imag) <= 1e-12 * max(1.0, abs(z)) else z


def _exponents(L):
    rho = getattr(L, "kovalevskaya_exponents", None)
    return None if rho is None else [_num(x) for x in rho]


def line_rows(lines):
    rows = []
    for L in lines:
        d = np.asarray(L.direction)
        rows.append({
            "direction": [_num(x) for x in (d.real if L.is_real else d)],
            "c": _num(L.c), "is_real": bool(L.is_real), "multiplicity": int(L.multiplicity),
            "is_equilibrium_line": bool(L.is_equilibrium_line),
            "stability": getattr(L, "stability", None) if L.is_real else None,
            "residual": float(getattr(L, "residual", np.nan)),
            "kovalevskaya_exponents": _exponents(L),
        })
    return rows


def lines_data(entry, q, lines):
    return {
        "name": entry.name, "p": int(q.p), "variables": list(getattr(q, "variables", [])),
        "lines": line_rows(lines), "total_multiplicity": int(lines.total_multiplicity),
        "bound": 2 ** int(q.p) - 1, "real_count": int(getattr(lines, "real_count", 0)),
        "families": len(getattr(lines, "positive_dimensional", []) or []),
        "certified": bool(getattr(lines, "certified", False)),
        "integrability_obstructions": _obstructions(q, lines),
    }


def _obstructions(q, lines, max_degree=4):
    if not hasattr(q, "integrability_obstructions"):
        return None
    ob = q.integrability_obstructions(max_degree, lines=lines)
    return {"max_degree": max_degree, "ruled_out": list(ob.ruled_out), "open": list(ob.open_degrees),
            "darboux_points": ob.darboux_points, "text": str(ob)}


def _fmt(x):
    if isinstance(x, complex):
        return f"{x.real:.5g}{x.imag:+.5g}i"
    return f"{x:.6g}"


def cmd_lines(args):
    from ..output.describe import quadratic_system

    entry = resolve(args.name, args.param)
    q = quadratic_system(entry)
    plot = args.plot
    if plot and q is not None and q.p > 3:  # said before the (possibly long) computation
        print(f"liedyn: note: --plot draws the phase plane (p = 2) or the sphere of directions (p = 3); "
              f"{entry.name} has p = {q.p}, so no figure is written", file=sys.stderr)
        plot = None
    with Progress(f"invariant lines of {entry.name}"):
        q, lines = lines_of(entry, q)
    d = lines_data(entry, q, lines)
    if plot:
        from ..output import plots

        plots.save(plots.phase_portrait_figure(q, entry.name), args.plot)
    if args.json:
        emit_json(d)
        return 0
    print(f"{entry.name}: reduced system of dimension p = {d['p']} ({', '.join(d['variables'])})")
    print(f"{'direction':44s} {'c':>14s} {'real':5s} {'mult':>4s} {'equil':5s} {'stability':10s} "
          "Kovalevskaya exponents at d = -xi/c")
    for r in d["lines"]:
        direction = "(" + ", ".join(_fmt(x) for x in r["direction"]) + ")"
        rho = r["kovalevskaya_exponents"]
        rho = "-" if rho is None else "(" + ", ".join(_fmt(x) for x in rho) + ")"
        print(f"{direction:44s} {_fmt(r['c']):>14s} {'yes' if r['is_real'] else 'no':5s} {r['multiplicity']:4d} "
              f"{'yes' if r['is_equilibrium_line'] else 'no':5s} {r['stability'] or '-':10s} {rho}")
    print(f"total multiplicity {d['total_multiplicity']} (bound 2^p - 1 = {d['bound']}), real {d['real_count']}, "
          f"families {d['families']}, certified complete: {'yes' if d['certified'] else 'no'}")
    ob = d["integrability_obstructions"]
    if ob is not None:
        ruled = ", ".join(map(str, ob["ruled_out"])) or "none"
        print(f"homogeneous polynomial first integrals ruled out by the exponents (degree <= {ob['max_degree']}): "
              f"{ruled}")
    if plot:
        print(f"figure: {plot}")
    return 0


def add_parsers(sub):
    p = sub.add_parser("lines", help="invariant lines of the reduced quadratic system")
    add_entry_args(p)
    p.add_argument("--plot", default=None, metavar="path.png", help="save the phase portrait with the lines (p <= 3)")
    add_common(p)
    p.set_defaults(func=cmd_lines)
