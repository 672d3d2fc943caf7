"""The table of named Lie algebras printed by ``liedyn algebras``."""

from __future__ import annotations

from ..errors import CatalogError

#: accepted --max-degree: the classical Casimirs have degree 2 (so(3), se(3), sl(2), so(4)) up to 4; above 8
#: the monomial count C(d + n - 1, n - 1) of a 6-dimensional algebra passes 1287 per equation and the
#: null-space problems grow quickly without finding anything new for the named algebras
MAX_DEGREE_RANGE = (2, 8)


def algebra_rows(max_degree=4):
    """One dict per named algebra: name, dim, solvable, nilpotent, semisimple, Casimirs (and a warning)."""
    from liegroups import named

    lo, hi = MAX_DEGREE_RANGE
    if not lo <= max_degree <= hi:
        raise CatalogError(f"--max-degree must be between {lo} and {hi} (the degree of the polynomial Casimirs "
                           f"searched for), got {max_degree}")
    rows = []
    for key, g in named.all_named().items():
        cas = g.casimirs(max_degree=max_degree)
        rows.append({
            "name": key,
            "algebra": g.name,
            "dim": g.dim,
            "solvable": g.is_solvable(),
            "nilpotent": g.is_nilpotent(),
            "semisimple": g.is_semisimple(),
            "casimirs_expected": cas.expected,
            "casimirs": [str(c.expr) for c in cas],
            "warning": cas.warning,
            "max_degree": max_degree,
        })
    return rows


def format_algebra_table(rows):
    """Plain-text table of :func:`algebra_rows`."""
    yn = {True: "yes", False: "no"}
    head = f"{'name':14s} {'algebra':16s} {'dim':>3s}  {'solv':4s} {'nilp':4s} {'ss':3s}  {'#C':>2s}/{'exp':<3s} Casimirs"
    lines = [head, "-" * len(head)]
    for r in rows:
        cas = "; ".join(r["casimirs"]) or f"(none polynomial up to degree {r.get('max_degree', 4)})"
        lines.append(
            f"{r['name']:14s} {r['algebra']:16s} {r['dim']:3d}  {yn[r['solvable']]:4s} {yn[r['nilpotent']]:4s} "
            f"{yn[r['semisimple']]:3s}  {len(r['casimirs']):2d}/{r['casimirs_expected']:<3d} {cas}"
        )
    return "\n".join(lines)
