"""Output at requested times for the adaptive pairs, by the pair's continuous extension.

For an accepted step [t_n, t_n + h_n] that contains requested times, the stage increments K_i of the
step are recomputed (all such steps at once: the steps are a batch axis of the generic numpy stages
:meth:`integrators.reference.pair.ReferencePair.stages`), and the continuous extension

    theta(s) = sum_i b_i(s) K_i,   s = (t - t_n) / h_n in [0, 1],   b_i(s) = sum_k P[i, k] s^(k+1),

is mapped to the state as the step maps theta(1): for the RKMK pairs z(t_n + s h_n) = exp(ad theta(s))^T
z_n, through the same coadjoint action the step uses (so the Casimirs hold at every output point to
round-off); for the ambient pairs y_n + theta(s), projected onto the level set of the Casimirs for
the projected pairs (:mod:`integrators.codegen.projection`: the interpolant would leave it by its error).
The K_i of an RKMK step are the increments of the Runge-Kutta method applied to theta' =
dexp^-1_theta(w(exp(theta) . z_n)) (Munthe-Kaas 1999), so the RK continuous extension gives
theta(s h) to its order and the state to the same order.

Coefficients: the tableau's own (:class:`integrators.tableaux.Tableau`: the rows P of b_i(s) over its
stages, its FSAL stage and the extra stages ``extra_A``, ``extra_c`` that only the interpolant needs).

Cost: one recomputation of the step (its stages, the FSAL stage and any extra stages) per
accepted step that contains a requested time, whatever the number of requested times in it.

This is the definition. The generated adaptive loops do not recompute: they fill the grid from each
accepted step's own stages (:mod:`integrators.codegen.dense_source`), tested against :func:`at_times`
to round-off; this module serves the generic numpy path (``fast=False`` or an unrecognised problem),
the steps after a terminal event stopped a trajectory, and the numpy engine of the independent
ensembles (:func:`extension`).
"""

from __future__ import annotations

import numpy as np

from .runge_kutta import stages


def weights(tab, s):
    """b_i(s) of the continuous extension of the tableau ``tab`` at the points s (shape (m,)): shape
    (m, rows), the rows over the tableau's stages, its FSAL stage and the extra stages of the interpolant
    (:meth:`integrators.tableaux.Tableau.weights`)."""
    return tab.weights(np.asarray(s, dtype=float))


def _extra_stages(ref, t, z, hs, K):
    """Append the interpolant's extra stages to the increments K (a list) as the step computes a stage:
    K_i = h dexp^-1_{theta_i}(w(exp(theta_i) . z)) (RKMK) or h f(t + c_i h, z + theta_i), with
    theta_i = sum_j a_ij K_j."""
    return stages(ref.tab.extra_A, ref.tab.extra_c, t, hs, ref.increment(z, hs), K)


def at_times(ref, ts, ys, t_eval):
    """States at the times ``t_eval`` (within [ts[0], ts[-1]], sorted in the direction of integration)
    from the accepted steps (ts, ys) of a run whose stages are ``ref`` (a :class:`integrators.reference.pair.ReferencePair`)."""
    ts = np.asarray(ts, dtype=float)
    t_eval = np.asarray(t_eval, dtype=float)
    direction = 1.0 if ts[-1] >= ts[0] else -1.0
    u, ue = direction * ts, direction * t_eval
    # step k contains t when u[k] <= t < u[k+1]; the last time goes in the last step
    k = np.clip(np.searchsorted(u, ue, side="right") - 1, 0, len(ts) - 2)
    out = np.empty((len(t_eval),) + ys.shape[1:])
    exact = ue == u[k]
    out[exact] = ys[k[exact]]
    at_end = ue == u[k + 1]
    out[at_end] = ys[k[at_end] + 1]
    inner = ~(exact | at_end)
    if not np.any(inner):
        return out
    kk = k[inner]
    steps, where = np.unique(kk, return_inverse=True)
    shape = (len(steps),) + (1,) * (ys.ndim - 1)
    t0 = ts[steps].reshape(shape)
    hs = (ts[steps + 1] - ts[steps]).reshape(shape)
    z = ys[steps]
    Ks, theta, d, z1, wl, Kl = ref.stages(t0, z, hs, ref.first(t0, z))
    K = np.stack(_extra_stages(ref, t0, z, hs, Ks + ([Kl] if ref.tab.fsal else [])))  # (stages, steps, ...)
    s = (t_eval[inner] - ts[kk]) / (ts[kk + 1] - ts[kk])
    B = weights(ref.tab, s)  # (points, stages)
    Kp = K[:, where]  # (stages, points, ...)
    # theta(s_p) = sum_i B[p, i] K_i of the step containing point p, one batched matrix product
    P, S = B.shape
    th = (B[:, None, :] @ np.moveaxis(Kp, 0, 1).reshape(P, S, -1))[:, 0].reshape((P,) + Kp.shape[2:])
    zp = z[where]
    yp = zp + (ref.space.act_delta(th, zp) if ref.lie else th)
    out[inner] = yp + ref.projection(yp)   # a projected pair: every output state on the level set
    return out


def extension(ref, t0, z, hs, s, targets=None):
    """The continuous extension of m steps, each point its own: the state at t0[p] + s[p] hs[p] of the step
    of size hs[p] from (t0[p], z[p]) (t0, hs, s of shape (m,), z (m, n)); ``targets`` (m, p): the Casimir
    values a projected pair projects each point onto (default: those of ``ref``). An independent
    ensemble (:mod:`integrators.engine.batch`) fills its output grid with it, every trajectory from its
    own steps."""
    col = (len(z),) + (1,) * (z.ndim - 1)
    t0, hs = np.reshape(t0, col), np.reshape(hs, col)
    Ks, theta, d, z1, wl, Kl = ref.stages(t0, z, hs, ref.first(t0, z))
    K = np.stack(_extra_stages(ref, t0, z, hs, Ks + ([Kl] if ref.tab.fsal else [])))  # (stages, m, ...)
    th = np.einsum("pi,ip...->p...", weights(ref.tab, s), K)
    yp = z + (ref.space.act_delta(th, z) if ref.lie else th)
    if ref.proj is None:
        return yp
    return yp + (ref.projection(yp) if targets is None else ref.proj.increment(yp, targets))
