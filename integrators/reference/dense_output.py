"""Output at requested times for the adaptive pairs, by the pair's continuous extension.

For an accepted step [t_n, t_n + h_n] that contains requested times, the stage increments K_i of the
step are recomputed (all such steps at once: the steps are a batch axis of the generic numpy stages
:meth:`integrators.engine.adaptive._Reference.stages`), and the continuous extension

    theta(s) = sum_i b_i(s) K_i,   s = (t - t_n) / h_n in [0, 1],   b_i(s) = sum_k P[i, k] s^(k+1),

is mapped to the state as the step maps theta(1): for the RKMK pairs z(t_n + s h_n) = exp(ad theta(s))^T
z_n, through the same coadjoint action the step uses (so the Casimirs hold at every output point to
round-off); for the ambient pairs y_n + theta(s), projected onto the level set of the Casimirs for
the projected pairs (:mod:`integrators.codegen.projection`: the interpolant would leave it by its error).
The K_i of an RKMK step are the increments of the Runge-Kutta method applied to theta' =
dexp^-1_theta(w(exp(theta) . z_n)) (Munthe-Kaas 1999), so the RK continuous extension gives
theta(s h) to its order and the state to the same order.

Coefficients: Dormand-Prince 5(4) dense output of order 4 (Shampine 1986, "Some practical Runge-Kutta
formulas", Math. Comp. 46; Hairer, Norsett and Wanner, *Solving ODEs I*, II.6), the seventh stage
being the FSAL stage h f(y_{n+1}); these are the numbers of scipy's RK45.P. DOP853's dense output of
order 7 with three extra stages (Hairer's dop853.f, subroutine CONTD8; Hairer, Norsett and Wanner I,
II.10), the numbers of scipy's dop853_coefficients.

Cost: one recomputation of the step (its stages, the FSAL stage and, for DOP853, 3 extra stages) per
accepted step that contains a requested time, whatever the number of requested times in it.
"""

from __future__ import annotations

import numpy as np

from .. import tableaux
from ..geometry.spaces import dexpinv_series

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

# Hairer's dop853.f (Hairer, Norsett and Wanner I, II.10; the same numbers as scipy's
# dop853_coefficients): three extra stages 14-16 (rows over the stages 1-13, the 13th the FSAL stage
# h f(y_{n+1})), their nodes, and the rows d_4..d_7 of the order-7 interpolant
# theta(s) = s (F0 + (1-s) (F1 + s (F2 + (1-s) (F3 + s (F4 + (1-s) (F5 + s F6)))))) with
# F0 = sum b_i K_i, F1 = K_1 - F0, F2 = 2 F0 - K_1 - K_13, F_{3..6} = sum_i d_{j,i} K_i.
DOP853_EXTRA_A = (
    (0.056167502283047954, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25350021021662483, -0.2462390374708025,
     -0.12419142326381637, 0.15329179827876568, 0.00820105229563469, 0.007567897660545699, -0.008298),
    (0.03183464816350214, 0.0, 0.0, 0.0, 0.0, 0.028300909672366776, 0.053541988307438566,
     -0.05492374857139099, 0.0, 0.0, -0.00010834732869724932, 0.0003825710908356584,
     -0.00034046500868740456, 0.1413124436746325),
    (-0.42889630158379194, 0.0, 0.0, 0.0, 0.0, -4.697621415361164, 7.683421196062599, 4.06898981839711,
     0.3567271874552811, 0.0, 0.0, 0.0, -0.0013990241651590145, 2.9475147891527724, -9.15095847217987),
)
DOP853_EXTRA_C = (0.1, 0.2, 7 / 9)
DOP853_D = np.array([
    [-8.428938276109013, 0.0, 0.0, 0.0, 0.0, 0.5667149535193777, -3.0689499459498917, 2.38466765651207,
     2.117034582445028, -0.871391583777973, 2.2404374302607883, 0.6315787787694688, -0.08899033645133331,
     18.148505520854727, -9.194632392478356, -4.436036387594894],
    [10.427508642579134, 0.0, 0.0, 0.0, 0.0, 242.28349177525817, 165.20045171727028, -374.5467547226902,
     -22.113666853125306, 7.733432668472264, -30.674084731089398, -9.332130526430229, 15.697238121770845,
     -31.139403219565178, -9.35292435884448, 35.81684148639408],
    [19.985053242002433, 0.0, 0.0, 0.0, 0.0, -387.0373087493518, -189.17813819516758, 527.8081592054236,
     -11.57390253995963, 6.8812326946963, -1.0006050966910838, 0.7777137798053443, -2.778205752353508,
     -60.19669523126412, 84.32040550667716, 11.99229113618279],
    [-25.69393346270375, 0.0, 0.0, 0.0, 0.0, -154.18974869023643, -231.5293791760455, 357.6391179106141,
     93.40532418362432, -37.45832313645163, 104.0996495089623, 29.8402934266605, -43.53345659001114,
     96.32455395918828, -39.17726167561544, -149.72683625798564],
])


def _dop853_rows():
    """F_0..F_6 of the DOP853 interpolant as rows over the 16 stage increments K_1..K_16."""
    F = np.zeros((7, 16))
    F[0, :12] = tableaux.get("dop853")["b"]
    F[1] = -F[0]
    F[1, 0] += 1.0
    F[2] = 2.0 * F[0]
    F[2, 0] -= 1.0
    F[2, 12] -= 1.0
    F[3:] = DOP853_D
    return F


_DOP853_F = _dop853_rows()


def _dp5_weights(s):
    return (s[:, None] ** np.arange(1, DP5_P.shape[1] + 1)) @ DP5_P.T


def _dop853_weights(s):
    s = s[:, None]
    w = np.zeros((s.shape[0], 16))
    for i, row in enumerate(_DOP853_F[::-1]):
        w = (w + row) * (s if i % 2 == 0 else 1.0 - s)
    return w


DENSE = {"dp5": _dp5_weights, "dop853": _dop853_weights}
EXTRA = {"dp5": ((), ()), "dop853": (DOP853_EXTRA_A, DOP853_EXTRA_C)}


def weights(tableau, s):
    """b_i(s) of the continuous extension of ``tableau`` at the points s (shape (m,)): shape (m, stages),
    the stages being the tableau's, its FSAL stage and the extra stages of the interpolant."""
    return DENSE[tableau](np.asarray(s, dtype=float))


def _extra_stages(ref, t, z, hs, K):
    """Append the interpolant's extra stages to the increments K (a list) as the step computes a stage:
    K_i = h dexp^-1_{theta_i}(w(exp(theta_i) . z)) (RKMK) or h f(t + c_i h, z + theta_i), with
    theta_i = sum_j a_ij K_j."""
    for row, c in zip(*EXTRA[ref.tab["name"]]):
        th = sum(a * Kj for a, Kj in zip(row, K) if a != 0.0)
        if ref.lie:
            w = ref.space.field(t + c * hs, ref.space.act(th, z))
            K.append(dexpinv_series(ref.space.bracket, th, hs * w, ref.terms) if ref.terms > 1 else hs * w)
        else:
            K.append(hs * ref.rhs(t + c * hs, z + th))
    return K


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
    K = np.stack(_extra_stages(ref, t0, z, hs, Ks + [Kl]))  # (stages, steps, ...)
    s = (t_eval[inner] - ts[kk]) / (ts[kk + 1] - ts[kk])
    B = weights(ref.tab["name"], s)  # (points, stages)
    Kp = K[:, where]  # (stages, points, ...)
    th = np.einsum("pi,ip...->p...", B, Kp)
    zp = z[where]
    yp = zp + (ref.space.act_delta(th, zp) if ref.lie else th)
    out[inner] = yp + ref.projection(yp)   # a projected pair: every output state on the level set
    return out
