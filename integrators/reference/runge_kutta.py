"""The one numpy stage recurrence of the Runge-Kutta tableaux (the reference every generated stage is tested
against), in both forms a tableau is applied in:

    K_i = h f(t + c_i h, z + theta_i)                                  (ambient, "rk" and "projected")
    K_i = h dexp^-1_{theta_i}(w(t + c_i h, exp(theta_i) . z))           (Munthe-Kaas 1999, "rkmk")

with theta_i = sum_{j<i} a_ij K_j. The fixed-step steppers (:mod:`integrators.reference.stepping`), the
adaptive pairs' stages (:mod:`integrators.engine.adaptive`), the interpolant's extra stages
(:mod:`integrators.reference.dense_output`) and group reconstruction (:mod:`integrators.engine.reconstruction`)
all call :func:`stages`; only the map from (t_i, theta_i) to K_i differs (:func:`rk_increment`,
:func:`rkmk_increment`).
"""

from __future__ import annotations

import numpy as np

from ..geometry.closed_dexpinv import space_dexpinv


def lincomb(coeffs, terms):
    """sum_i coeffs[i] terms[i] over the nonzero coefficients (None when all are zero); zip stops at the
    shorter of the two, so a tableau row may be longer than the list of stages computed so far."""
    out = None
    for a, K in zip(coeffs, terms):
        if a != 0.0:
            out = a * K if out is None else out + a * K
    return out


def stages(rows, nodes, t, hs, increment, K=None):
    """Append K_i = increment(t + c_i hs, theta_i), theta_i = sum_j a_ij K_j (None for a zero row), for the
    given tableau rows and nodes (a tableau's A and c, the rows after an FSAL first stage already in K, or
    the extra stages of an interpolant) to the list K; returns K."""
    K = [] if K is None else K
    for row, ci in zip(rows, nodes):
        K.append(increment(t + ci * hs, lincomb(row, K)))
    return K


def batch_time(ti, z):
    """The stage time t + c_i hs shaped like the batch of z (z[..., 0]), the convention of f(t, y): a time per
    state (the steps of the continuous extension, hs of shape (m, 1)) loses the trailing axis that hs has
    to multiply z; f(t, y) would otherwise broadcast (m, 1) against (m,) into (m, m)."""
    if np.ndim(ti) and np.ndim(ti) == np.ndim(z) and np.shape(ti)[-1] == 1:
        return np.reshape(ti, np.shape(ti)[:-1])
    return ti


def rk_increment(f, z, hs):
    """(t_i, theta_i) -> hs f(t_i, z + theta_i): the ambient form."""
    def inc(ti, theta):
        return hs * f(batch_time(ti, z), z if theta is None else z + theta)
    return inc


def rkmk_increment(space, z, hs, terms):
    """(t_i, theta_i) -> hs dexp^-1_{theta_i}(w(t_i, exp(theta_i) . z)) with the series to ``terms`` terms
    (summed to round-off in closed form where one applies: :func:`integrators.geometry.closed_dexpinv.space_dexpinv`),
    on a space of :mod:`integrators.geometry.spaces` (field, act, bracket)."""
    def inc(ti, theta):
        ti = batch_time(ti, z)
        if theta is None:
            return hs * space.field(ti, z)
        xi = hs * space.field(ti, space.act(theta, z))
        return space_dexpinv(space, theta, xi, terms) if terms > 1 else xi
    return inc
