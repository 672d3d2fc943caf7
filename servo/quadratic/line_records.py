"""InvariantLine records from scaled roots, built for all roots at once.

A root z = (y, c') of the equilibrated system (servo.quadratic.certify.equilibrate: xi = d y, c = s c', exact
powers of 2) becomes the line [xi] in its normal form (servo.quadratic.certify.normalise_line: unit direction,
c real > 0 when |c| exceeds the line's threshold, else c = 0 and the largest component real > 0), with its
reality, and for a real line the eigenvalues of the sphere flow eig(B^T J B) - c at xi (B an orthonormal basis
of xi-perp, J = dv(xi); the derivation is in InvariantLine.stability). Every step is a batched numpy operation
over the roots (at p = 12 the 4095 records one at a time took ~0.3 s); the row norms are taken one row at a
time, so that directions, c and thresholds are bit for bit those of one root at a time (the batched sphere
eigenvalues may differ in the last bits).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .line_types import InvariantLine
from .protocol import QuadraticField

__all__ = ["line_tol", "make_lines", "sphere_eigs"]


def line_tol(Qs: NDArray[Any], w: NDArray[Any], d: NDArray[Any], s: float, xi: ArrayLike, tol: float
             ) -> NDArray[np.float64]:
    """c counts as 0 on the unit line xi (rows of a (B, p) array, or one (p,) vector) when, in the equilibrated
    system (y = xi / d, c' = c / s), |c' w| |y| <= tol max |Q'| |y|^2 (inf-norms; the measure of
    certify.backward_error)."""
    y = np.abs(np.asarray(xi) / d).max(axis=-1)
    return tol * s * np.abs(Qs).max() * y / np.abs(w).max()


def sphere_eigs(q: QuadraticField, xi: NDArray[Any], c: NDArray[Any]) -> NDArray[Any]:
    """Eigenvalues of the sphere flow at the real fixed points xi (B, p): eig(B^T J B) - c, shape (B, p - 1)."""
    xi = np.asarray(xi, dtype=float)
    n, p = xi.shape
    if p == 1 or n == 0:
        return np.zeros((n, max(p - 1, 0)))
    J = q.jacobian(xi)
    Bs = np.swapaxes(np.linalg.svd(xi[:, None, :])[2][:, 1:], 1, 2)     # orthonormal bases of xi-perp, (B, p, p-1)
    return np.linalg.eigvals(np.swapaxes(Bs, 1, 2) @ J @ Bs) - np.asarray(c, dtype=float)[:, None]


def make_lines(q: QuadraticField, Qs: NDArray[Any], w: NDArray[Any], d: NDArray[Any], s: float, Z: ArrayLike,
               mult: Sequence[int], is_real: Sequence[bool | None], cycles: Sequence[tuple[int, ...]],
               alpha: Sequence[float], tol: float, precision: Sequence[int | None] | None = None,
               ball: Sequence[Any] | None = None, c_nonzero: Sequence[bool | None] | None = None
               ) -> list[InvariantLine]:
    """The InvariantLines of the scaled roots Z (B, p + 1): xi = d y, c = s c', normalised. ``is_real[k]`` None:
    decide by the look of the numbers (imaginary parts below 1e-7; not a proof, the certificate says whether
    reality was proved). c counts as 0 below the relative ``tol`` (``line_tol``; also on a ball-certified line,
    whose proved enclosure of c' may exclude 0: then c is tiny against the scale of Q but not 0);
    ``c_nonzero[k]`` True / False overrides that test (c != 0 exactly when True)."""
    p = q.p
    Z = np.asarray(Z, dtype=complex).reshape(-1, p + 1)
    nb = len(Z)
    if nb == 0:
        return []
    precision = [None] * nb if precision is None else precision
    ball = [None] * nb if ball is None else ball
    c_nonzero = [None] * nb if c_nonzero is None else c_nonzero
    X, C0 = Z[:, :p] * d, Z[:, p] * s
    n = np.array([np.linalg.norm(x) for x in X])
    X, C = X / n[:, None], C0 / n
    ltol = line_tol(Qs, w, d, s, X, tol)
    for k, cz in enumerate(c_nonzero):
        if cz is not None:
            ltol[k] = 0.0 if cz else max(float(abs(C0[k])) / n[k] * 2, 1e-300)
    big = np.abs(C) > ltol
    top = X[np.arange(nb), np.argmax(np.abs(X), axis=1)]
    ph = np.exp(-1j * np.angle(np.where(big, C, top)))
    D = X * ph[:, None]
    CC = np.where(big, C * ph, 0.0).astype(complex)
    looks = np.all(np.abs(D.imag) < 1e-7, axis=1) & (np.abs(CC.imag) <= np.maximum(ltol, 1e-300))
    real = np.array([bool(q.is_real and lk) if r is None else bool(r) for r, lk in zip(is_real, looks)], dtype=bool)
    # components at round-off are set to 0, judged in the equilibrated coordinates y (x = d * y, d exact powers
    # of 2), where every component is computed to ~1e-16 of the largest: in the original coordinates a proved
    # component can be 2^-60 of the largest (a mixed-scale system), and zeroing it there made two distinct
    # lines equal. Judged against the largest component, a tiny y component that d magnifies was zeroed on proved
    # lines (a mixed-scale p = 2 system of the fuzz: (1.5e-5, -1) with c = 5.8e17 became (0, -1)); a line proved in
    # ball arithmetic knows its components far better: there a component is 0 only when its enclosure reaches 0
    Y = Z[:, :p] * ph[:, None]
    zero_below = 1e-15 * np.abs(Y).max(axis=1, keepdims=True)
    for k, b in enumerate(ball):
        if b is not None:
            zero_below[k] = b[0].radius
    # and only where the component is negligible in xi as well (|xi_j| <= 1e-15 |xi|): a y component at round-off
    # that d magnifies keeps the value computed for it
    Dr = np.where((np.abs(Y.real) <= zero_below) & (np.abs(D.real) <= 1e-15), 0, D.real)
    Dc = Dr + 1j * np.where((np.abs(Y.imag) <= zero_below) & (np.abs(D.imag) <= 1e-15), 0, D.imag)
    eigs = np.zeros((nb, max(p - 1, 0)), dtype=complex)
    if real.any():
        eigs[real] = sphere_eigs(q, Dr[real], CC[real].real)
    out = []
    for k in range(nb):
        if real[k]:
            e = eigs[k].copy() if np.any(eigs[k].imag) else eigs[k].real.copy()    # as eigvals of one matrix
            L = InvariantLine(Dr[k].copy(), float(CC[k].real), mult[k], True, 0.0, cycles[k], e,
                              float(ltol[k]), alpha=alpha[k])
        else:
            L = InvariantLine(Dc[k].copy(), complex(CC[k]), mult[k], False, 0.0, cycles[k], None, float(ltol[k]),
                              alpha=alpha[k])
        L.precision = precision[k]
        L.ball = ball[k]
        out.append(L)
    return out
