"""Invariant lines followed across a sweep: column ``c_k`` is the same line at every point.

At each point the measure ``invariant_lines`` finds the real lines x = s xi, v(xi) = c xi, of the reduced
system, each once, in no particular order (``servo.invariant_lines``: |xi| = 1, c >= 0). Line k of the
table is defined by its direction at the first point where it appears and is followed by continuity:

* each point is compared with one neighbour measured before it. On a grid the neighbour of the point with
  grid indices (i_1, ..., i_d) is the point with the last non-zero index lowered by one, so every line of
  the grid, and the first column, is walked in order from point 0; random samples have no order, and each
  point is compared with point 0;
* the lines of the point are matched to the neighbour's by the largest |cos| of the angle between their
  directions (an optimal assignment, ``scipy.optimize.linear_sum_assignment``); a pair with
  |cos| < :data:`MATCH_COS` is no match, and a line without a match starts a new line number;
* the matched direction is oriented like the neighbour's (xi -> -xi when their dot product is negative).
  The ray -xi has c -> -c and the opposite stability (attracting <-> repelling), so ``c_k`` and
  ``stability_k`` are those of the continuously oriented ray and c_k may be negative.

The columns per line k: ``c_k``, ``stability_k``, ``xi_k`` (the oriented direction, "x1;x2;..."), and
``kovalevskaya_k`` where the measure gives them; a point where line k does not exist has NaN and "".
:func:`track_lines` also returns, per line, where it starts and its direction there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .grid import Grid

__all__ = ["track_lines", "MATCH_COS"]

#: the smallest |cos(angle)| between the directions of one line at neighbouring points
MATCH_COS = 0.9
_FLIP = {"attracting": "repelling", "repelling": "attracting"}


def _parse(xi: str) -> NDArray[np.float64] | None:
    if not isinstance(xi, str) or not xi:
        return None
    return np.array([float(v) for v in xi.split(";")])


def _neighbours(g: Grid) -> NDArray[np.int64]:
    """The neighbour of each point measured before it (-1 for point 0)."""
    n = g.size
    if g.kind != "grid":
        out = np.zeros(n, dtype=np.int64)
        out[:1] = -1
        return out
    idx = np.array(np.unravel_index(np.arange(n), g.shape))  # (d, n)
    out = np.full(n, -1, dtype=np.int64)
    for p in range(1, n):
        i = idx[:, p].copy()
        j = int(np.nonzero(i)[0][-1])
        i[j] -= 1
        out[p] = int(np.ravel_multi_index(tuple(i), g.shape))
    return out


def _slots(columns: dict[str, NDArray[Any]]) -> list[int]:
    k, out = 1, []
    while f"xi_{k}" in columns:
        out.append(k)
        k += 1
    return out


def track_lines(columns: dict[str, NDArray[Any]], g: Grid) -> tuple[dict[str, NDArray[Any]], list[dict[str, Any]]]:
    """The table with the per-line columns renumbered by line (see the module docstring), and per line
    {"line", "first_point", "direction"} (its direction where it first appears)."""
    from scipy.optimize import linear_sum_assignment

    slots = _slots(columns)
    if not slots:
        return columns, []
    n = g.size
    has_k = any(f"kovalevskaya_{k}" in columns for k in slots)
    # per point: list of (xi, c, stability, kovalevskaya) in the measure's order
    found = []
    for p in range(n):
        row = []
        for k in slots:
            xi = _parse(columns[f"xi_{k}"][p])
            if xi is None:
                continue
            kv = columns.get(f"kovalevskaya_{k}")
            row.append([xi, float(columns[f"c_{k}"][p]), str(columns[f"stability_{k}"][p]),
                        "" if kv is None else str(kv[p])])
        found.append(row)
    label: list[list[int]] = [[] for _ in range(n)]   # line number of each found line
    oriented: list[list[Any]] = [[] for _ in range(n)]
    lines: list[dict[str, Any]] = []
    nb = _neighbours(g)
    for p in range(n):
        row = found[p]
        prev = nb[p]
        lab = [-1] * len(row)
        if prev >= 0 and row and oriented[prev]:
            A = np.array([r[0] for r in row])
            B = np.array([r[0] for r in oriented[prev]])
            cos = np.abs(A @ B.T) / np.outer(np.linalg.norm(A, axis=1), np.linalg.norm(B, axis=1))
            ri, ci = linear_sum_assignment(-cos)
            for i, j in zip(ri, ci):
                if cos[i, j] >= MATCH_COS:
                    lab[i] = label[prev][j]
                    if row[i][0] @ oriented[prev][j][0] < 0:  # the ray -xi: c -> -c, stability reversed
                        row[i] = [-row[i][0], -row[i][1], _FLIP.get(row[i][2], row[i][2]), row[i][3]]
        for i in range(len(row)):
            if lab[i] < 0:
                lab[i] = len(lines)
                lines.append({"line": len(lines) + 1, "first_point": p,
                              "direction": [float(x) for x in row[i][0]]})
        label[p] = lab
        oriented[p] = row
    out = {k: v for k, v in columns.items()
           if not any(k == f"{pre}_{s}" for s in slots for pre in ("c", "stability", "xi", "kovalevskaya"))}
    m = len(lines)
    c = np.full((m, n), np.nan)
    st = np.full((m, n), "", dtype=object)
    xi = np.full((m, n), "", dtype=object)
    kv = np.full((m, n), "", dtype=object)
    for p in range(n):
        for lab, r in zip(label[p], oriented[p]):
            c[lab, p] = r[1]
            st[lab, p] = r[2]
            xi[lab, p] = ";".join(f"{x:.10g}" for x in r[0])
            kv[lab, p] = r[3]
    for j in range(m):
        out[f"c_{j + 1}"] = c[j]
        out[f"stability_{j + 1}"] = st[j]
        out[f"xi_{j + 1}"] = xi[j]
        if has_k:
            out[f"kovalevskaya_{j + 1}"] = kv[j]
    if "error" in out:  # keep error last
        out["error"] = out.pop("error")
    return out, lines
