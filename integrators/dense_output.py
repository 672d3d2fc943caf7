"""Output at requested times for the adaptive pairs, by the pair's continuous extension.

For an accepted step [t_n, t_n + h_n] that contains requested times, the stage increments K_i of the
step are recomputed (all such steps at once: the steps are a batch axis of the generic numpy stages
:meth:`integrators.adaptive._Reference.stages`), and the continuous extension

    theta(s) = sum_i b_i(s) K_i,   s = (t - t_n) / h_n in [0, 1],   b_i(s) = sum_k P[i, k] s^(k+1),

is mapped to the state as the step maps theta(1): for the RKMK pairs z(t_n + s h_n) = exp(ad theta(s))^T
z_n, through the same coadjoint action the step uses (so the Casimirs hold at every output point to
round-off); for the ambient pairs y_n + theta(s). The K_i of an RKMK step are the increments of the
Runge-Kutta method applied to theta' = dexp^-1_theta(w(exp(theta) . z_n)) (Munthe-Kaas 1999), so the
RK continuous extension gives theta(s h) to its order and the state to the same order.

Coefficients: Dormand-Prince 5(4) dense output of order 4 (Shampine 1986, "Some practical Runge-Kutta
formulas", Math. Comp. 46; Hairer, Norsett and Wanner, *Solving ODEs I*, II.6), the seventh stage
being the FSAL stage h f(y_{n+1}); these are the numbers of scipy's RK45.P. DOP853's order-7 dense
output (three extra stages) is not implemented: a DOP853-based pair with an output grid raises
IntegrationInputError.

Cost: one recomputation of the step (its stages plus the FSAL stage) per accepted step that contains
a requested time, whatever the number of requested times in it.
"""

from __future__ import annotations

import numpy as np

from .errors import IntegrationInputError
from .grid import step_grid

# Shampine (1986) / Hairer, Norsett and Wanner I, II.6: b_i(s) = sum_k P[i, k] s^(k+1), i over the
# six stages of DP5(4) and the FSAL stage.
DP5_P = np.array([
    [1.0, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
    [0.0, 0.0, 0.0, 0.0],
    [0.0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
    [0.0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
    [0.0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
    [0.0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
    [0.0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423],
])

DENSE = {"dp5": DP5_P}


def output_grid(t0, t1, h, steps, save_every):
    """Every save_every-th point of the grid of h / steps (:func:`integrators.grid.step_grid`) on
    [t0, t1], t1 always included: the output times of an adaptive run given h or steps."""
    n, hh = step_grid(t0, t1, h, steps)
    idx = np.arange(0, n + 1, save_every)
    if idx[-1] != n:
        idx = np.append(idx, n)
    te = t0 + idx * hh
    te[-1] = t1
    return te


def weights(tableau, s):
    """b_i(s) of the continuous extension of ``tableau`` at the points s (shape (m,)): shape (m, stages)."""
    P = DENSE[tableau]
    s = np.asarray(s, dtype=float)
    powers = s[:, None] ** np.arange(1, P.shape[1] + 1)
    return powers @ P.T


def check_supported(method):
    """IntegrationInputError unless ``method``'s tableau has a continuous extension here."""
    if method.tableau not in DENSE:
        have = ", ".join(sorted(DENSE))
        raise IntegrationInputError(
            f"{method.name!r} has no dense output (its tableau {method.tableau!r} has no continuous extension "
            f"here; tableaux with one: {have}, i.e. rkmk45 / rk45): run it without t_eval / h / steps, "
            f"or use rkmk45 / rk45 for an output grid")


def at_times(ref, ts, ys, t_eval):
    """States at the times ``t_eval`` (within [ts[0], ts[-1]], sorted in the direction of integration)
    from the accepted steps (ts, ys) of a run whose stages are ``ref`` (an adaptive._Reference)."""
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
    K = np.stack(Ks + [Kl])  # (stages, steps, ...)
    s = (t_eval[inner] - ts[kk]) / (ts[kk + 1] - ts[kk])
    B = weights(ref.tab["name"], s)  # (points, stages)
    Kp = K[:, where]  # (stages, points, ...)
    th = np.einsum("pi,ip...->p...", B, Kp)
    zp = z[where]
    out[inner] = zp + (ref.space.act_delta(th, zp) if ref.lie else th)
    return out
