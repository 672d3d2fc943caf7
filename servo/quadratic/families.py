"""Positive-dimensional solution sets of v(xi) = c xi met by the homotopy: the local dimension test at a path
end point, and the merging of witnesses that lie on one linear family (used by ``invariant_lines``)."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .homotopy import QuadraticEigenHomotopy
from .line_types import FamilyWitness

__all__ = ["local_dimension", "merge_linear_families"]


def local_dimension(hom: QuadraticEigenHomotopy, z: NDArray[np.complex128], eps: float = 1e-2) -> int:
    """Local dimension test at an end point z of the homotopy (t = 1).

    In the chart zhat^H w = 1 at zhat = z/|z|, for each random unit direction r of the numerical
    null space of dF (r orthogonal to zhat) solve the over-determined system F(w) = 0,
    zhat^H w = 1, r^H (w - zhat) = eps by Gauss-Newton. On a curve through zhat with a tangent
    not orthogonal to r this converges to residual ~1e-16; at an isolated root of multiplicity mu
    the residual cannot go below ~eps^mu, so with eps = 1e-2 and threshold 1e-13 roots with
    mu <= 6 are told apart from families. Returns the dimension found (0 = isolated).
    """
    zh = z / np.linalg.norm(z)
    J = np.vstack([hom.JF(zh), zh.conj()[None]])
    s, vh = np.linalg.svd(J)[1:]
    null = vh[s < 1e-6 * s[0]].conj()
    found = []
    for r in null:
        w = zh + eps * r
        for _ in range(40):
            res = np.concatenate([hom.F(w), [zh.conj() @ w - 1, r.conj() @ (w - zh) - eps]])
            A = np.vstack([hom.JF(w), zh.conj()[None], r.conj()[None]])
            dw = np.linalg.lstsq(A, res, rcond=1e-12)[0]
            w = w - dw
            if np.linalg.norm(dw) < 1e-15:
                break
        res = np.concatenate([hom.F(w), [zh.conj() @ w - 1, r.conj() @ (w - zh) - eps]])
        if np.linalg.norm(res) < 1e-13:
            found.append(w - zh)
    if not found:
        return 0
    return int(np.linalg.matrix_rank(np.array(found), tol=1e-3 * eps))


def merge_linear_families(hom: QuadraticEigenHomotopy, fams: list[FamilyWitness], d: NDArray[np.float64],
                          s: float) -> list[FamilyWitness]:
    """Merge witnesses that lie on one linear family: F vanishes on the segment between them
    (F of the scaled system, points mapped by y = xi / d, c' = c / s)."""
    merged = []
    for f in fams:
        z1 = np.concatenate([f.direction / d, [f.c / s]])
        for g in merged:
            z0 = np.concatenate([g.direction / d, [g.c / s]])
            pts = [(1 - t) * z0 + t * z1 for t in (0.3, 0.7)] + [z0 + 1j * z1]
            if all(
                    np.linalg.norm(hom.F(w)) < 1e-9 * np.linalg.norm(w) ** 2 for w in pts):
                g.paths += f.paths
                g.local_dimension = max(g.local_dimension, f.local_dimension)
                g.is_equilibria = bool(g.is_equilibria and f.is_equilibria)
                break
        else:
            merged.append(f)
    return merged
