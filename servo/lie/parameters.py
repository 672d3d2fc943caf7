"""Validation of the parameters of a Lie-group system: inertia tensor I, covectors a (constraint) and b
(control), with numbers, sympy symbols or a mixture.

A parameter is kept twice: as an exact sympy object (numbers become sympy Rationals/Floats, so the
symbolic equations print exactly what was given) and, when it has no free symbols, as a float numpy
array for the numeric right-hand sides. Checks (Kozlov, servo-constraint slides, "Systems on Lie
groups": T = (I w, w)/2 with I symmetric positive definite, a != 0, b != 0):

* I has shape (n, n), is symmetric (|I_ij - I_ji| <= 1e-12 max|I|) and positive definite
  (smallest eigenvalue > 1e-12 times the largest); symbolic entries are checked for symmetry only;
* a, b have length n and are not zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias, Union

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

from ..errors import CovectorError, InertiaError, ServoError

SYM_TOL = 1e-12

#: one entry of a parameter as a user gives it: a real number or a sympy expression (a symbol such as I1)
Scalar: TypeAlias = Union[float, sp.Expr]
#: the inertia I ((n, n), or its n principal moments) or covectors a, b ((n,), or (k, n) for k
#: constraints) as a user gives them: numbers or sympy expressions in nested sequences, a numpy array
#: or a sympy Matrix
Parameter: TypeAlias = Union[ArrayLike, sp.MatrixBase, Sequence[Scalar], Sequence[Sequence[Scalar]]]


def _sympify(x):
    """A real parameter entry as sympy; TypeError (turned into the caller's ServoError) for a complex
    number, a boolean or a string that is not an expression."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"the entry {x!r} is a boolean, not a number")
    if isinstance(x, (complex, np.complexfloating)):
        raise TypeError(f"the entry {x!r} is complex; parameters must be real")
    if isinstance(x, (float, np.floating)):
        f = float(x)
        if not np.isfinite(f):
            return sp.Float(f)  # refused with its position by the finiteness checks
        return sp.Integer(int(f)) if f.is_integer() else sp.Float(f)
    if isinstance(x, (int, np.integer)):
        return sp.Integer(int(x))
    e = sp.sympify(x)
    if getattr(e, "is_real", None) is False and not getattr(e, "free_symbols", None):
        raise TypeError(f"the entry {x!r} is not real; parameters must be real")
    return e


def check_real_vector(raw, what):
    """A vector of real numbers or sympy expressions (e.g. the linear term c of H); (sympy column, float
    array or None). ServoError naming the entry that is complex, non-numeric or not finite."""
    try:
        v = sp.Matrix([_sympify(x) for x in raw])
    except (sp.SympifyError, TypeError) as exc:
        raise ServoError(f"{what} has an entry that is neither a real number nor a sympy expression: {exc}") from None
    num = to_float(v) if is_numeric(v) else None
    if num is not None and not np.all(np.isfinite(num)):
        i = int(np.argwhere(~np.isfinite(num))[0][0])
        raise ServoError(f"{what} must be finite: entry {i} is {num[i]}")
    return v, num


def is_numeric(expr):
    """True if the sympy object has no free symbols."""
    return not getattr(expr, "free_symbols", set())


def to_float(M):
    """A sympy Matrix without free symbols as a float numpy array (vectors come out 1-d)."""
    arr = np.array(M.evalf(17).tolist(), dtype=float)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    return arr


def as_matrix(value, n, what):
    """(sympy Matrix, float array or None) for an (n, n) parameter such as the inertia tensor."""
    try:
        raw = np.asarray(value, dtype=object)
    except Exception as exc:  # pragma: no cover - numpy accepts almost anything as object
        raise InertiaError(f"{what} must be an {n}x{n} array: {exc}") from None
    if isinstance(value, sp.MatrixBase):
        raw = np.array(value.tolist(), dtype=object)
    if raw.ndim == 1 and raw.shape[0] == n:
        raw = np.diag(raw)  # a vector of principal moments
    if raw.shape != (n, n):
        raise InertiaError(f"{what} must have shape ({n}, {n}) (or be a vector of {n} principal moments) "
                           f"for an algebra of dimension {n}, got shape {raw.shape}")
    try:
        M = sp.Matrix(n, n, [_sympify(x) for x in raw.ravel()])
    except (sp.SympifyError, TypeError) as exc:
        raise InertiaError(f"{what} has an entry that is neither a number nor a sympy expression: {exc}") from None
    return M, (to_float(M) if is_numeric(M) else None)


def check_inertia(value, n, what="inertia"):
    """Validate a symmetric positive definite inertia tensor; return (sympy Matrix, float array or None).

    Raises InertiaError naming the asymmetric entry (i, j) and |I_ij - I_ji|, or the smallest eigenvalue.
    """
    M, num = as_matrix(value, n, what)
    if num is not None:
        if not np.all(np.isfinite(num)):
            i, j = (int(v) for v in np.argwhere(~np.isfinite(num))[0])
            raise InertiaError(f"{what} must be finite: entry ({i}, {j}) is {num[i, j]}")
        scale = float(np.max(np.abs(num))) or 1.0
        asym = np.abs(num - num.T)
        i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
        if asym[i, j] > SYM_TOL * scale:
            raise InertiaError(f"{what} must be symmetric: |I[{i},{j}] - I[{j},{i}]| = {asym[i, j]:.3e} "
                               f"(tolerance {SYM_TOL * scale:.1e})")
        ev = np.linalg.eigvalsh(0.5 * (num + num.T))
        if ev[0] <= SYM_TOL * max(abs(ev[-1]), 1e-300):
            raise InertiaError(f"{what} must be positive definite: its smallest eigenvalue is {ev[0]:.6g} "
                               f"(largest {ev[-1]:.6g})")
        return M, 0.5 * (num + num.T)
    for i in range(n):
        for j in range(i + 1, n):
            d = sp.simplify(M[i, j] - M[j, i])
            if d != 0:
                raise InertiaError(f"{what} must be symmetric: I[{i},{j}] - I[{j},{i}] = {d} is not zero")
    return M, None


def check_inverse_inertia(value, n):
    """A symmetric positive semidefinite 'inverse inertia' d^2H/dm^2 (e.g. diag(J^-1, 0) for the heavy top)."""
    M, num = as_matrix(value, n, "inverse_inertia")
    if num is not None:
        if not np.all(np.isfinite(num)):
            raise InertiaError("inverse_inertia must be finite")
        scale = float(np.max(np.abs(num))) or 1.0
        asym = np.abs(num - num.T)
        i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
        if asym[i, j] > SYM_TOL * scale:
            raise InertiaError(f"inverse_inertia must be symmetric: |K[{i},{j}] - K[{j},{i}]| = {asym[i, j]:.3e}")
        ev = np.linalg.eigvalsh(0.5 * (num + num.T))
        if ev[0] < -SYM_TOL * scale:
            raise InertiaError(f"inverse_inertia must be positive semidefinite: smallest eigenvalue {ev[0]:.6g}")
        num = 0.5 * (num + num.T)
    return M, num


def check_covector(value, n, what):
    """Validate a covector of length n that must not vanish; return (sympy column Matrix, float array or None)."""
    raw = np.asarray(value.tolist() if isinstance(value, sp.MatrixBase) else value, dtype=object).ravel()
    if raw.shape != (n,):
        raise CovectorError(f"{what} must be a covector of length {n} (the dimension of the algebra), "
                            f"got shape {np.shape(value)}")
    try:
        v = sp.Matrix([_sympify(x) for x in raw])
    except (sp.SympifyError, TypeError) as exc:
        raise CovectorError(f"{what} has an entry that is neither a number nor a sympy expression: {exc}") from None
    num = to_float(v) if is_numeric(v) else None
    if num is not None:
        if not np.all(np.isfinite(num)):
            raise CovectorError(f"{what} must be finite, got {num}")
        if not np.any(num != 0.0):
            raise CovectorError(f"{what} must be non-zero (|{what}| = 0)")
    elif all(sp.simplify(x) == 0 for x in v):
        raise CovectorError(f"{what} must be non-zero (every entry simplifies to 0)")
    return v, num


def free_symbols(*objs):
    """The union of the free symbols of sympy objects (sorted by name)."""
    out = set()
    for o in objs:
        if o is not None:
            out |= getattr(o, "free_symbols", set())
    return sorted(out, key=str)


def check_covectors(value, n, what):
    """One covector (n,) or k covectors (k, n), each non-zero and finite, linearly independent.

    Returns (sympy Matrix n x k whose columns are the covectors, float array (k, n) or None, single)
    with ``single`` true when one covector of shape (n,) was given. Raises CovectorError naming the
    covector that is zero or a combination of the ones before it (and by how much, numerically).
    """
    if isinstance(value, sp.MatrixBase):
        raw = np.array(value.tolist(), dtype=object)
        if 1 in raw.shape and n in raw.shape and raw.ndim == 2 and raw.shape != (n, n):
            raw = raw.ravel()
    else:
        raw = np.asarray(value, dtype=object)
    if raw.ndim == 1:
        col, num = check_covector(raw, n, what)
        return col, None if num is None else num[None, :], True
    if raw.ndim != 2 or raw.shape[1] != n or raw.shape[0] < 1:
        raise CovectorError(f"{what} must be one covector of length {n} or k covectors of shape (k, {n}), "
                            f"got shape {np.shape(value)}")
    cols, nums = [], []
    for i, row in enumerate(raw):
        c, v = check_covector(row, n, f"{what}_{i + 1}")
        cols.append(c)
        nums.append(v)
    M = sp.Matrix.hstack(*cols)
    num = None if any(v is None for v in nums) else np.array(nums)
    k = len(cols)
    if k > n:
        raise CovectorError(f"{what}: {k} covectors in dimension {n} cannot be linearly independent")
    if num is not None:
        for i in range(1, k):
            # distance of the i-th covector from the span of the ones before it, relative to its length
            basis = np.linalg.qr(num[:i].T)[0]
            rest = num[i] - basis @ (basis.T @ num[i])
            rel = float(np.linalg.norm(rest) / np.linalg.norm(num[i]))
            if rel <= 1e-10:
                raise CovectorError(f"{what}_{i + 1} = {num[i].tolist()} is a linear combination of "
                                    f"{what}_1..{what}_{i} (relative distance from their span {rel:.1e}); "
                                    f"the {what} covectors must be linearly independent")
    else:
        for i in range(1, k):
            if M[:, :i + 1].rank(simplify=True) <= i:
                raise CovectorError(f"{what}_{i + 1} is a linear combination of {what}_1..{what}_{i} for every "
                                    f"value of the symbols; the {what} covectors must be linearly independent")
    return M, num, False
