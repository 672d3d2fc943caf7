"""Kovalevskaya exponents at the Darboux points d = -xi / c of the invariant lines, numerically and batched.

K = Dv(d) + Id = Id - J(xi) / c with J(xi) = Dv(xi); K d = -d, and the other p - 1 eigenvalues of K are the
exponents (the derivation is in the docstring of servo.quadratic.kovalevskaya).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...errors import QuadraticSystemError
from ..line_types import InvariantLine
from ..protocol import QuadraticField

__all__ = ["kovalevskaya_exponents", "attach_exponents", "darboux_point"]


def kovalevskaya_exponents(Q: ArrayLike, directions: ArrayLike, c: ArrayLike) -> NDArray[np.complex128]:
    """Kovalevskaya exponents at the Darboux points d = -xi / c, batched: shape (B, p - 1) complex.

    K = Id - J(xi) / c with J(xi)_ij = 2 sum_k Q[i,j,k] xi_k (= Dv(d) + Id, see servo.quadratic.kovalevskaya).
    K d = -d, so with a Householder reflector H (H xi ~ e_1) H K H = [[-1, *], [0, K']] and the exponents are
    eig(K'), all in one batched ``np.linalg.eigvals`` call. Each row is sorted by real part (to 9 decimals),
    then imaginary part.
    """
    Q = np.asarray(Q)
    X = np.atleast_2d(np.asarray(directions, dtype=complex))
    C = np.atleast_1d(np.asarray(c, dtype=complex))
    B, p = X.shape
    if B == 0 or p == 1:
        return np.zeros((B, max(p - 1, 0)), dtype=complex)
    if np.any(C == 0):
        raise QuadraticSystemError(f"c = 0 at row {int(np.argmax(C == 0))}: an equilibrium line has no Darboux point")
    K = np.eye(p) - 2.0 * np.einsum("ijk,bk->bij", Q, X) / C[:, None, None]
    xh = X / np.linalg.norm(X, axis=1, keepdims=True)
    a = np.abs(xh[:, 0])
    ph = np.where(a > 0, xh[:, 0] / np.where(a > 0, a, 1.0), 1.0)
    u = xh.copy()
    u[:, 0] += ph                                   # u = xh + e^{i theta} e_1, |u|^2 = 2 + 2 |xh_0| >= 2
    H = np.eye(p) - 2.0 * u[:, :, None] * u[:, None, :].conj() / np.einsum("bi,bi->b", u.conj(), u).real[:, None, None]
    Kp = (H @ K @ H)[:, 1:, 1:]
    rho = np.linalg.eigvals(Kp)
    key = np.round(rho.real, 9) + 0.0                 # ties in the real part (conjugate pairs): imaginary part
    order = np.lexsort((rho.imag, key), axis=1)
    return np.take_along_axis(rho, order, axis=1)


def attach_exponents(q: QuadraticField, lines: Iterable[InvariantLine]) -> None:
    """Set ``kovalevskaya_exponents`` on every InvariantLine of ``lines`` (None where c = 0), in one batch."""
    lines = list(lines)
    live = [L for L in lines if not L.is_equilibrium_line]
    for L in lines:
        L.kovalevskaya_exponents = None
    if not live:
        return
    rho = kovalevskaya_exponents(q.Q, np.array([L.direction for L in live]), np.array([L.c for L in live]))
    for L, r in zip(live, rho):
        L.kovalevskaya_exponents = r


def darboux_point(line: InvariantLine) -> NDArray[Any]:
    """d = -xi / c with v(d) = -d for an invariant line with c != 0 (x(t) = d / t solves x' = v(x))."""
    if line.is_equilibrium_line:
        raise QuadraticSystemError(f"the line {line!r} has c = 0 (a line of equilibria): no Darboux point")
    return -np.asarray(line.direction) / line.c
