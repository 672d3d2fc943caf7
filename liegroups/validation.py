"""Validation of structure constants: shape, finiteness, antisymmetry and the Jacobi identity.

[e_i, e_j] = sum_k C[i,j,k] e_k defines a Lie algebra iff C[i,j,k] = -C[j,i,k] and the Jacobi identity
[e_i,[e_j,e_k]] + [e_j,[e_k,e_i]] + [e_k,[e_i,e_j]] = 0 holds for every triple (any Lie algebra text, e.g.
Humphreys (1972), *Introduction to Lie Algebras*, section 1.1). Each failure raises a StructureConstantsError that
names the identity, the worst indices and the residual.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import LieAlgebraError, StructureConstantsError

#: relative tolerance for the identities checked at construction
DEFAULT_RTOL = 1e-10


def real_array(x, what, error=LieAlgebraError):
    """x as a float array; ``error`` (a LieGroupsError) naming ``what`` for complex or non-numeric input
    (sympy symbols, strings, objects) instead of a silent cast or a bare TypeError."""
    if np.iscomplexobj(x):
        raise error(f"{what} must be real, got a complex array")
    if isinstance(x, (str, bytes)):
        raise error(f"{what} must be a real numeric array, got the string {x!r:.60}")
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise error(f"{what} must be a real numeric array: {exc}") from None


def all_finite(x):
    """True when every entry of the float array x is finite (one reduction; exact fallback)."""
    with np.errstate(all="ignore"):
        return bool(np.isfinite(np.sum(x)) or np.all(np.isfinite(x)))


def check_finite(x, what, error=LieAlgebraError):
    """Raise ``error`` naming the first NaN or inf entry of x."""
    if not all_finite(x):
        bad = tuple(int(v) for v in np.argwhere(~np.isfinite(x))[0])
        raise error(f"{what} must be finite: entry {bad} is {x[bad]}")
    return x


def as_structure_constants(C):
    """C as a fresh float array of shape (n, n, n) with finite entries, or raise StructureConstantsError."""
    if np.iscomplexobj(C):
        raise StructureConstantsError("shape", "structure constants must be real, got a complex array")
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


def jacobi_residual(C: ArrayLike) -> NDArray[np.float64]:
    """Jacobi tensor J[i,j,k,m]: the e_m component of [e_i,[e_j,e_k]] + [e_j,[e_k,e_i]] + [e_k,[e_i,e_j]].

    J = sum_l C[j,k,l] C[i,l,m] + C[k,i,l] C[j,l,m] + C[i,j,l] C[k,l,m].
    """
    C = np.asarray(C, dtype=float)
    t = np.einsum("jkl,ilm->ijkm", C, C)
    return t + np.transpose(t, (1, 2, 0, 3)) + np.transpose(t, (2, 0, 1, 3))


def check_structure_constants(C: ArrayLike, rtol: float = DEFAULT_RTOL) -> NDArray[np.float64]:
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
    # the identity is homogeneous of degree 2: check C/|C| (no overflow for C ~ 1e200) and report the
    # residual in the units of C^2 (which may be inf in the message, never an OverflowError)
    scale = np.float64(scale)
    Jn = jacobi_residual(C / scale)
    with np.errstate(all="ignore"):
        J = Jn * scale**2
    worst = np.unravel_index(int(np.argmax(np.abs(Jn))), Jn.shape)
    with np.errstate(all="ignore"):
        res = float(abs(J[worst]))
        tol = float(rtol * scale**2 * C.shape[0])
    if abs(Jn[worst]) > rtol * C.shape[0]:
        i, j, k, m = (int(v) for v in worst)
        raise StructureConstantsError(
            "jacobi",
            f"Jacobi identity fails for (e_{i}, e_{j}, e_{k}) (0-based indices): the e_{m} component of "
            f"[e_i,[e_j,e_k]] + cyclic is {J[worst]:.3e} (tolerance {tol:.1e}; relative to max|C|^2: "
            f"{float(Jn[worst]):.3e}, tolerance {rtol * C.shape[0]:.1e})",
            indices=(i, j, k, m), residual=res, tolerance=tol,
        )
    return C
