"""How the invariant lines of a quadratic system show themselves in a notebook: a Markdown table.

One row per real line x = s xi, v(xi) = c xi: the direction xi (|xi| = 1), c, the multiplicity, the
stability of the ray +xi on the sphere of directions, the blow-up time 1/(c s0) of s' = c s^2 for
s0 = 1 (none for c <= 0), and the residual |v(xi) - c xi|; then the counts (complex lines,
positive-dimensional families, whether the multiplicities add up to 2^p - 1).
"""

from __future__ import annotations

import numpy as np

__all__ = ["invariant_lines_markdown"]


def _num(x, digits=6):
    x = complex(x)
    if abs(x.imag) <= 1e-12 * max(1.0, abs(x.real)):
        return f"{x.real:.{digits}g}"
    return f"{x.real:.{digits}g}{x.imag:+.{digits}g}i"


def invariant_lines_markdown(lines) -> str:
    """Markdown for Jupyter: the real invariant lines as a table, then the counts."""
    head = (f"**Invariant lines** of a quadratic system with p = {lines.p}: {len(lines)} lines, "
            f"{lines.real_count} real, total multiplicity {lines.total_multiplicity} "
            f"(generic count 2^p - 1 = {2 ** lines.p - 1}), families {len(lines.positive_dimensional)}, "
            f"certified: {'yes' if lines.certified else 'no'}")
    rows = ["| direction ξ | c | multiplicity | stability of +ξ | blow-up time (s0 = 1) | residual |",
            "|---|---|---|---|---|---|"]
    for L in lines.real:
        d = ", ".join(_num(v, 4) for v in np.real_if_close(L.direction))
        c = float(np.real(L.c))
        blow = f"{1.0 / c:.6g}" if c > 0 else "none"
        rows.append(f"| ({d}) | {_num(L.c)} | {L.multiplicity} | {L.stability} | {blow} | {L.residual:.1e} |")
    if not lines.real:
        rows.append("| (no real line) | | | | | |")
    return head + "\n\n" + "\n".join(rows)
