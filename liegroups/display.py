"""How a Lie algebra shows itself in a notebook (``_repr_markdown_``, math typeset by the front end).

The summary gives the name, the dimension, the basis, the type read off the structure constants and
the polynomial Casimirs (up to degree 4). The type is decided by linear algebra on C (DESIGN.md
conventions, [e_i, e_j] = sum_k C[i,j,k] e_k): abelian if C = 0; nilpotent if the lower central series
g, [g, g], [g, [g, g]], ... reaches 0; solvable if the derived series g, [g, g], [[g, g], [g, g]], ...
reaches 0; semisimple if the Killing form tr(ad x ad y) is non-degenerate (Cartan's criterion);
otherwise neither (a non-trivial Levi decomposition, e.g. se(3)).
"""

from __future__ import annotations

import numpy as np

from ._lazy import lazy_module

sp = lazy_module("sympy")  # imported when an algebra is displayed

__all__ = ["algebra_type", "algebra_markdown"]


def _rank_basis(vectors, tol):
    """An orthonormal basis (rows) of the span of ``vectors`` (rows)."""
    if len(vectors) == 0:
        return np.zeros((0, 0))
    u, s, vt = np.linalg.svd(np.asarray(vectors, float), full_matrices=False)
    r = int(np.sum(s > tol * max(1.0, s[0] if s.size else 1.0)))
    return vt[:r]


def _bracket_span(C, A, B, tol):
    """Basis of span{[a, b] : a in span A, b in span B} (A, B: rows in the basis of g)."""
    if len(A) == 0 or len(B) == 0:
        return np.zeros((0, C.shape[0]))
    br = np.einsum("ai,bj,ijk->abk", A, B, C).reshape(-1, C.shape[0])
    return _rank_basis(br, tol)


def algebra_type(g, tol: float = 1e-10) -> str:
    """'abelian', 'nilpotent', 'solvable', 'semisimple' or 'neither solvable nor semisimple'."""
    C = np.asarray(g.structure_constants, float)
    n = C.shape[0]
    if not np.any(C):
        return "abelian"
    full = np.eye(n)
    lower = full
    for _ in range(n + 1):
        lower = _bracket_span(C, full, lower, tol)
        if len(lower) == 0:
            return "nilpotent"
    derived = full
    for _ in range(n + 1):
        derived = _bracket_span(C, derived, derived, tol)
        if len(derived) == 0:
            return "solvable"
    K = g.killing_form()
    if abs(np.linalg.det(K)) > tol * max(1.0, np.max(np.abs(K))) ** n:
        return "semisimple"
    return "neither solvable nor semisimple"


def algebra_markdown(g) -> str:
    """Markdown for Jupyter: name, dimension, basis, type and Casimirs in LaTeX."""
    cas = g.casimirs()
    items = [f"$C_{{{k + 1}}} = {sp.latex(getattr(c, 'expr', c))}$" for k, c in enumerate(cas)]
    rows = [f"**Lie algebra {g.name}**", "",
            "| | |", "|---|---|",
            f"| dimension | {g.dim} |",
            f"| basis | {', '.join(f'`{b}`' for b in g.basis)} |",
            f"| type | {algebra_type(g)} |",
            f"| Casimirs (degree ≤ 4) | {'; '.join(items) if items else 'none'} |"]
    return "\n".join(rows)
