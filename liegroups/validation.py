"""Validation of structure constants: shape, finiteness, antisymmetry and the Jacobi identity.

[e_i, e_j] = sum_k C[i,j,k] e_k defines a Lie algebra iff C[i,j,k] = -C[j,i,k] and the Jacobi identity
[e_i,[e_j,e_k]] + [e_j,[e_k,e_i]] + [e_k,[e_i,e_j]] = 0 holds for every triple (any Lie algebra text, e.g.
Humphreys (1972), *Introduction to Lie Algebras*, section 1.1). Each failure raises a StructureConstantsError that
names the identity, the worst indices and the residual.
"""

from __future__ import annotations

import numpy as np

from .errors import StructureConstantsError

#: relative tolerance for the identities checked at construction
DEFAULT_RTOL = 1e-10


def as_structure_constants(C):
    """C as a fresh float array of shape (n, n, n) with finite entries, or raise StructureConstantsError."""
    try:
        arr = np.array(C, dtype=float)  # a copy: the caller's array is never frozen or aliased
    except (TypeError, ValueError) as exc:
        raise StructureConstantsError(
            "shape", f"structure constants must be a real numeric array of shape (n, n, n): {exc}"
        ) from exc
    if arr.ndim != 3 or not (arr.shape[0] == arr.shape[1] == arr.shape[2]) or arr.shape[0] == 0:
        raise StructureConstantsError(
            "shape", f"structure constants must have shape (n, n, n) with n >= 1, got {arr.shape}"
        )
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        i, j, k = (int(v) for v in bad[0])
        raise StructureConstantsError(
            "finite",
            f"structure constants must be finite: C[{i},{j},{k}] = {arr[i, j, k]} "
            f"({len(bad)} non-finite entries)",
            indices=(i, j, k),
        )
    return arr


def jacobi_residual(C):
    """Jacobi tensor J[i,j,k,m]: the e_m component of [e_i,[e_j,e_k]] + [e_j,[e_k,e_i]] + [e_k,[e_i,e_j]].

    J = sum_l C[j,k,l] C[i,l,m] + C[k,i,l] C[j,l,m] + C[i,j,l] C[k,l,m].
    """
    C = np.asarray(C, dtype=float)
    t = np.einsum("jkl,ilm->ijkm", C, C)
    return t + np.transpose(t, (1, 2, 0, 3)) + np.transpose(t, (2, 0, 1, 3))


def check_structure_constants(C, rtol=DEFAULT_RTOL):
    """Validate structure constants; return them as a new float array or raise StructureConstantsError.

    Checks, in order: shape (n, n, n), finite entries, antisymmetry C[i,j,k] = -C[j,i,k] to
    ``rtol * max|C|``, and the Jacobi identity to ``rtol * n * max|C|**2``. The error names the identity,
    the worst indices (0-based) and the residual.
    """
    C = as_structure_constants(C)
    scale = float(np.max(np.abs(C))) or 1.0
    asym = C + np.transpose(C, (1, 0, 2))
    worst = np.unravel_index(int(np.argmax(np.abs(asym))), asym.shape)
    res = float(abs(asym[worst]))
    tol = rtol * scale
    if res > tol:
        i, j, k = (int(v) for v in worst)
        raise StructureConstantsError(
            "antisymmetry",
            f"antisymmetry C[i,j,k] = -C[j,i,k] fails at (i,j,k) = ({i},{j},{k}) (0-based): "
            f"C[{i},{j},{k}] + C[{j},{i},{k}] = {asym[worst]:.3e} (tolerance {tol:.1e})",
            indices=(i, j, k), residual=res, tolerance=tol,
        )
    J = jacobi_residual(C)
    worst = np.unravel_index(int(np.argmax(np.abs(J))), J.shape)
    res = float(abs(J[worst]))
    tol = rtol * scale**2 * C.shape[0]
    if res > tol:
        i, j, k, m = (int(v) for v in worst)
        raise StructureConstantsError(
            "jacobi",
            f"Jacobi identity fails for (e_{i}, e_{j}, e_{k}) (0-based indices): the e_{m} component of "
            f"[e_i,[e_j,e_k]] + cyclic is {J[worst]:.3e} (tolerance {tol:.1e})",
            indices=(i, j, k, m), residual=res, tolerance=tol,
        )
    return C
