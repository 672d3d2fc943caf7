"""Exact solutions the catalog checks its simulations against, derived independently of ``servo/``.

* :func:`euler_top_solution`: the free rigid body m' = m x w, w = I^-1 m, by Jacobi elliptic
  functions (Landau-Lifshitz, Mechanics, section 37, eqs. 37.10-37.12).
* :func:`servo_sleigh_u`: the Chaplygin servo-sleigh u' = alpha u w, w' = beta u w, whose integral
  gamma = beta u - alpha w turns the first equation into u' = u (beta u - gamma)/alpha ... solved as
  u(t) = gamma / (beta + C e^{gamma t}) (Kozlov's lectures on servo-constraints, "Сервосани Чаплыгина").
* :func:`inclined_skate`: the Chaplygin skate on an inclined plane from rest with phi' = w
  (Kozlov's lectures on servo-constraints, "Example: the Chaplygin skate"): x = sin^2(wt)/(2w^2),
  y = (wt - sin(2wt)/2)/(2w^2), phi = wt.
"""

from __future__ import annotations

import numpy as np
import scipy  # scipy.special loads on first use (scipy's own lazy submodules)

from ..errors import NoExactSolution


def euler_top_solution(inertia, m0):
    """Return t -> m(t) (shape (K, 3)) for the free rigid body with principal moments ``inertia``.

    Landau's formulas for I_A < I_B < I_C and M^2 > 2 E I_B:
    w_A = sqrt((2E I_C - M^2)/(I_A (I_C - I_A))) cn(tau), w_B = sqrt((2E I_C - M^2)/(I_B (I_C - I_B))) sn(tau),
    w_C = sqrt((M^2 - 2E I_A)/(I_C (I_C - I_A))) dn(tau), tau = lambda t,
    lambda^2 = (I_C - I_B)(M^2 - 2E I_A)/(I_A I_B I_C), k^2 = (I_B - I_A)(2E I_C - M^2)/((I_C - I_B)(M^2 - 2E I_A));
    for M^2 < 2 E I_B the labels A and C are exchanged. The phase tau_0 comes from m0 and the direction
    of time (the parity of the relabelling) from Euler's equation at t = 0.
    Raises :class:`NoExactSolution` for equal moments or on the separatrix (k^2 = 1).
    """
    I = np.asarray(inertia, dtype=float)
    m0 = np.asarray(m0, dtype=float)
    if len(set(np.round(I, 12))) < 3:
        raise NoExactSolution(f"equal principal moments {I}: use the symmetric-top solution")
    M2 = float(m0 @ m0)
    E2 = float(np.sum(m0**2 / I))  # 2E
    order = list(np.argsort(I))  # ascending
    if M2 < E2 * I[order[1]]:
        order = order[::-1]
    A, B, C = order
    IA, IB, IC = I[A], I[B], I[C]
    den = (IC - IB) * (M2 - E2 * IA)
    if abs(den) < 1e-14 * max(1.0, M2):
        raise NoExactSolution("the motion is on the separatrix M^2 = 2 E I_B (k^2 = 1)")
    k2 = (IB - IA) * (E2 * IC - M2) / den
    if not 0 <= k2 < 1 - 1e-12:
        raise NoExactSolution(f"elliptic modulus k^2 = {k2} outside [0, 1)")
    lam = np.sqrt(den / (IA * IB * IC))
    amp = np.sqrt(np.maximum([(E2 * IC - M2) / (IA * (IC - IA)), (E2 * IC - M2) / (IB * (IC - IB)),
                              (M2 - E2 * IA) / (IC * (IC - IA))], 0.0))
    w0 = m0 / I
    sC = 1.0 if w0[C] >= 0 else -1.0
    if amp[0] == 0:  # steady rotation about the C axis
        return lambda t: np.broadcast_to(m0, (np.size(t), 3)).copy()
    phi0 = np.arctan2(w0[B] / amp[1], w0[A] / amp[0])
    ellipkinc = scipy.special.ellipkinc
    u0 = float(ellipkinc(phi0, k2)) if abs(phi0) <= np.pi / 2 else \
        float(np.sign(phi0) * 2 * ellipkinc(np.pi / 2, k2) - ellipkinc(np.sign(phi0) * np.pi - phi0, k2))
    # direction of time from Euler's equation m' = m x w at t = 0
    mdot = np.cross(m0, w0)
    sn0, cn0, dn0, _ = scipy.special.ellipj(u0, k2)
    dA = -amp[0] * sn0 * dn0 * lam * IA
    dB = amp[1] * cn0 * dn0 * lam * IB
    if abs(dB) >= abs(dA):
        sigma = 1.0 if dB * mdot[B] >= 0 else -1.0
    else:
        sigma = 1.0 if dA * mdot[A] >= 0 else -1.0

    def m_of_t(t):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        sn, cn, dn, _ = scipy.special.ellipj(u0 + sigma * lam * t, k2)
        out = np.empty(t.shape + (3,))
        out[..., A] = IA * amp[0] * cn
        out[..., B] = IB * amp[1] * sn
        out[..., C] = IC * sC * amp[2] * dn
        return out

    return m_of_t


def servo_sleigh_u(alpha, beta, u0, w0):
    """u(t) of u' = alpha u w, w' = beta u w: with gamma = beta u0 - alpha w0 (a first integral),
    w = (beta u - gamma)/alpha and u' = u (beta u - gamma), so u(t) = gamma / (beta + C e^{gamma t}),
    C = gamma/u0 - beta (for gamma = 0: u = u0 / (1 - beta u0 t); for alpha = 0: u = u0, w = w0 e^{beta u0 t}).
    Returns t -> (u, w)."""
    gamma = beta * u0 - alpha * w0
    if alpha == 0:  # u' = 0, w' = beta u0 w
        return lambda t: np.stack([np.full_like(np.asarray(t, float), u0),
                                   w0 * np.exp(beta * u0 * np.asarray(t, float))], -1)
    if u0 == 0:
        return lambda t: np.stack([np.zeros_like(np.asarray(t, float)), np.full_like(np.asarray(t, float), w0)], -1)
    Cst = gamma / u0 - beta

    def uw(t):
        t = np.asarray(t, dtype=float)
        if abs(gamma) < 1e-15:
            u = u0 / (1.0 - beta * u0 * t)
        else:
            u = gamma / (beta + Cst * np.exp(gamma * t))
        w = (beta * u - gamma) / alpha
        return np.stack([u, w], -1)

    return uw


def inclined_skate(w):
    """t -> (x, y, phi, x', y', phi') of the Chaplygin skate on the inclined plane
    (L = (x'^2 + y'^2 + phi'^2)/2 + x, x' sin phi - y' cos phi = 0, from rest at the origin, phi' = w)."""

    def sol(t):
        t = np.asarray(t, dtype=float)
        wt = w * t
        x = np.sin(wt) ** 2 / (2 * w**2)
        y = (wt - np.sin(2 * wt) / 2) / (2 * w**2)
        xd = np.sin(2 * wt) / (2 * w)
        yd = (1 - np.cos(2 * wt)) / (2 * w)
        return np.stack([x, y, wt, xd, yd, np.full_like(t, w)], -1)

    return sol
