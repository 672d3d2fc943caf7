"""Whole-run loops of the coordinate schemes in scalar code that numba compiles (``nopython``), as
:mod:`integrators.reference.nonholonomic.kernels` (whose ``solve_small``, MAX_ITER and TOL they use):

**mp_run**: McLachlan and Perlmutter (2006) eq. (4.18) with v_1 = v_0 + h M^-1 (F + A_{1/2}^T lambda)
eliminated: k unknowns lambda, residual A(q_1) v_1, Jacobian (A_1 + h/2 dA_1[v_1]) h M^-1 A_{1/2}^T.

**rattle_run**: the nonholonomic RATTLE (Ferraro, Iglesias and Martin de Diego 2008) on the extended state
(q, p, lambda), explicit (see :mod:`integrators.reference.nonholonomic.coordinate_schemes`).

**mp_gauge_run, rattle_gauge_run**: both with the gauge term a(q) . v (the numpy steps' equations; Newton in
(v_1, lambda) and in q_{k+1}).

The problem functions are scalar (one q, 1-d arrays), called in the writing form f(q, out) (the loops allocate
their work arrays once per run, nothing per step), and are bound in by
:mod:`integrators.reference.nonholonomic.compiled`. The loops return the saved states, the number of steps done
(the first Newton failure of any trajectory ends the run there) and the Newton iterations.
"""

from __future__ import annotations

import math

import numpy as np

from .kernels import MAX_ITER, TOL


def make_mp_run(solve_small, grad_V, A_of, dA_of, K_CON):
    """mp_run on the scalar problem functions grad_V(q) (n,), A_of(q) (k, n), dA_of(q) (k, n, n)."""

    def mp_run(Y0, h, nsteps, save_every, K, M, Minv):
        """McLachlan-Perlmutter eq. (4.18) over nsteps from every row of Y0 (B, 2n) (see the module docstring)."""
        B, n2 = Y0.shape
        n = n2 // 2
        g, a0, a1 = np.empty(n), np.empty(n), np.empty(n)           # the problem functions write here
        Ah, A0, A1 = np.empty((K_CON, n)), np.empty((K_CON, n)), np.empty((K_CON, n))
        dA1 = np.empty((K_CON, n, n))
        Dah, Da0, Da1 = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
        ys = np.empty((K, B, n2))
        ys[0] = Y0
        done = nsteps
        iters = 0
        q0, v0, qh, q1, v1, F = (np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n))
        k = K_CON
        MiAt = np.empty((n, k))                            # h M^-1 A_{1/2}^T
        lam, r, de, J = np.empty(k), np.empty(k), np.empty(k), np.empty((k, k))
        for b in range(B):
            for i in range(n):
                q0[i] = Y0[b, i]
                v0[i] = Y0[b, n + i]
            jsave = 1
            for kstep in range(1, nsteps + 1):
                if kstep > done:
                    break
                for i in range(n):
                    qh[i] = q0[i] + 0.5 * h * v0[i]
                grad_V(qh, g)
                A_of(qh, Ah)
                for i in range(n):
                    for c in range(k):
                        s = 0.0
                        for j in range(n):
                            s += Minv[i, j] * Ah[c, j]
                        MiAt[i, c] = h * s
                for i in range(n):
                    s = 0.0
                    for j in range(n):
                        s += Minv[i, j] * g[j]
                    F[i] = v0[i] - h * s                    # v_1 without the constraint force
                for c in range(k):
                    lam[c] = 0.0
                ok = False
                prev = np.inf
                for it in range(MAX_ITER):
                    for i in range(n):
                        s = F[i]
                        for c in range(k):
                            s += MiAt[i, c] * lam[c]
                        v1[i] = s
                        q1[i] = qh[i] + 0.5 * h * s
                    A_of(q1, A1)
                    dA_of(q1, dA1)
                    for c in range(k):
                        s = 0.0
                        for i in range(n):
                            s += A1[c, i] * v1[i]
                        r[c] = -s
                        for d in range(k):
                            t = 0.0
                            for i in range(n):
                                Ji = A1[c, i]
                                for l in range(n):
                                    Ji += 0.5 * h * dA1[c, l, i] * v1[l]
                                t += Ji * MiAt[i, d]
                            J[c, d] = t
                    if not solve_small(J, r, de):
                        break
                    dn, sc = 0.0, 1.0
                    for c in range(k):
                        lam[c] += de[c]
                        dn = max(dn, abs(de[c]))
                    for i in range(n):
                        sc = max(sc, abs(v1[i]), abs(q0[i]))
                    iters += 1
                    if not math.isfinite(dn):
                        break
                    if dn * h <= TOL * sc or (dn >= prev and dn * h <= 1e3 * TOL * sc):
                        ok = True
                        break
                    prev = dn
                if not ok:
                    done = kstep - 1
                    break
                for i in range(n):
                    s = F[i]
                    for c in range(k):
                        s += MiAt[i, c] * lam[c]
                    v0[i] = s
                    q0[i] = qh[i] + 0.5 * h * s
                if kstep % save_every == 0 or kstep == nsteps:
                    for i in range(n):
                        ys[jsave, b, i] = q0[i]
                        ys[jsave, b, n + i] = v0[i]
                    jsave += 1
        return ys, done, iters


    return mp_run


def make_rattle_run(solve_small, grad_V, A_of, K_CON):
    """rattle_run on the scalar problem functions grad_V(q), A_of(q)."""

    def rattle_run(Y0, L0, h, nsteps, save_every, K, M, Minv):
        """The nonholonomic RATTLE on (q, p, lambda) over nsteps from every row of Y0 (B, 2n) and its starting
        multipliers L0 (B, k): (ys (K, B, 2n) in (q, v), lambdas at the end (B, k), steps done)."""
        B, n2 = Y0.shape
        n = n2 // 2
        g, a0, a1 = np.empty(n), np.empty(n), np.empty(n)           # the problem functions write here
        Ah, A0, A1 = np.empty((K_CON, n)), np.empty((K_CON, n)), np.empty((K_CON, n))
        dA1 = np.empty((K_CON, n, n))
        Dah, Da0, Da1 = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
        k = L0.shape[1]
        ys = np.empty((K, B, n2))
        ys[0] = Y0
        Lend = np.empty((B, k))
        q, p, ph, pt, u = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        lam = np.empty(k)
        G, r, de = np.empty((k, k)), np.empty(k), np.empty(k)
        done = nsteps
        for b in range(B):
            for i in range(n):
                q[i] = Y0[b, i]
            for i in range(n):
                s = 0.0
                for j in range(n):
                    s += M[i, j] * Y0[b, n + j]
                p[i] = s
            for c in range(k):
                lam[c] = L0[b, c]
            jsave = 1
            for kstep in range(1, nsteps + 1):
                grad_V(q, g)
                A_of(q, A0)
                for i in range(n):
                    s = p[i] - 0.5 * h * g[i]
                    for c in range(k):
                        s += 0.5 * h * A0[c, i] * lam[c]
                    ph[i] = s
                for i in range(n):
                    s = 0.0
                    for j in range(n):
                        s += Minv[i, j] * ph[j]
                    q[i] += h * s
                grad_V(q, g)
                A_of(q, A1)
                for i in range(n):
                    pt[i] = ph[i] - 0.5 * h * g[i]
                for c in range(k):                         # (h/2) A M^-1 A^T lambda = -A M^-1 pt
                    for i in range(n):
                        s = 0.0
                        for j in range(n):
                            s += Minv[i, j] * A1[c, j]
                        u[i] = s
                    s = 0.0
                    for i in range(n):
                        s += u[i] * pt[i]
                    r[c] = -s
                    for d in range(k):
                        t = 0.0
                        for i in range(n):
                            t += u[i] * A1[d, i]
                        G[c, d] = 0.5 * h * t
                if not solve_small(G, r, de):
                    done = min(done, kstep - 1)
                    break
                for c in range(k):
                    lam[c] = de[c]
                for i in range(n):
                    s = pt[i]
                    for c in range(k):
                        s += 0.5 * h * A1[c, i] * lam[c]
                    p[i] = s
                if kstep % save_every == 0 or kstep == nsteps:
                    for i in range(n):
                        ys[jsave, b, i] = q[i]
                        s = 0.0
                        for j in range(n):
                            s += Minv[i, j] * p[j]
                        ys[jsave, b, n + i] = s
                    jsave += 1
            for c in range(k):
                Lend[b, c] = lam[c]
        return ys, Lend, done

    return rattle_run


def make_mp_gauge_run(solve_small, grad_V, A_of, dA_of, a_of, Da_of, K_CON):
    """mp_run with the gauge term a(q) . v (the numpy step of
    :class:`integrators.reference.nonholonomic.coordinate_schemes.MPStepper`): Newton in (v_1, lambda), n + k
    unknowns, on

        M (v_1 - v_0) + a(q_1) - a(q_0) - h (F + Da_{1/2}^T v_1 / 2 + A_{1/2}^T lambda) = 0,   A(q_1) v_1 = 0,

    F = -grad V(q_{1/2}) + Da_{1/2}^T v_0 / 2, q_1 = q_{1/2} + h/2 v_1; Jacobian [[M + h/2 (Da_1 - Da_{1/2}^T),
    -h A_{1/2}^T], [A_1 + h/2 dA_1[v_1], 0]]; the same stop as the numpy step (per trajectory)."""

    def mp_gauge_run(Y0, h, nsteps, save_every, K, M, Minv):
        B, n2 = Y0.shape
        n = n2 // 2
        g, a0, a1 = np.empty(n), np.empty(n), np.empty(n)           # the problem functions write here
        Ah, A0, A1 = np.empty((K_CON, n)), np.empty((K_CON, n)), np.empty((K_CON, n))
        dA1 = np.empty((K_CON, n, n))
        Dah, Da0, Da1 = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
        k = K_CON
        m = n + k
        ys = np.empty((K, B, n2))
        ys[0] = Y0
        done = nsteps
        iters = 0
        q0, v0, qh, q1, F = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        u, r, du, J = np.empty(m), np.empty(m), np.empty(m), np.empty((m, m))
        for b in range(B):
            for i in range(n):
                q0[i] = Y0[b, i]
                v0[i] = Y0[b, n + i]
            jsave = 1
            for kstep in range(1, nsteps + 1):
                if kstep > done:
                    break
                sc = 1.0
                for i in range(n):
                    qh[i] = q0[i] + 0.5 * h * v0[i]
                    sc = max(sc, abs(q0[i]), abs(v0[i]))
                grad_V(qh, g)
                A_of(qh, Ah)
                a_of(q0, a0)
                Da_of(qh, Dah)
                for i in range(n):
                    s = -g[i]
                    for j in range(n):
                        s += 0.5 * Dah[j, i] * v0[j]
                    F[i] = s
                    u[i] = v0[i]
                for c in range(k):
                    u[n + c] = 0.0
                ok = False
                prev = np.inf
                for it in range(MAX_ITER):
                    for i in range(n):
                        q1[i] = qh[i] + 0.5 * h * u[i]
                    A_of(q1, A1)
                    dA_of(q1, dA1)
                    a_of(q1, a1)
                    Da_of(q1, Da1)
                    for i in range(n):
                        s = a1[i] - a0[i] - h * F[i]
                        for j in range(n):
                            s += M[i, j] * (u[j] - v0[j]) - 0.5 * h * Dah[j, i] * u[j]
                            J[i, j] = M[i, j] + 0.5 * h * (Da1[i, j] - Dah[j, i])
                        for c in range(k):
                            s -= h * Ah[c, i] * u[n + c]
                            J[i, n + c] = -h * Ah[c, i]
                        r[i] = -s
                    for c in range(k):
                        s = 0.0
                        for i in range(n):
                            s += A1[c, i] * u[i]
                        r[n + c] = -s
                        for l in range(n):
                            t = A1[c, l]
                            for j in range(n):
                                t += 0.5 * h * dA1[c, j, l] * u[j]
                            J[n + c, l] = t
                        for d in range(k):
                            J[n + c, n + d] = 0.0
                    if not solve_small(J, r, du):
                        break
                    dn = 0.0
                    for i in range(m):
                        u[i] += du[i]
                        dn = max(dn, abs(du[i]))
                    iters += 1
                    if not math.isfinite(dn):
                        break
                    if dn <= TOL * sc or (dn >= prev and dn <= 1e3 * TOL * sc):
                        ok = True
                        break
                    prev = dn
                if not ok:
                    done = kstep - 1
                    break
                for i in range(n):
                    v0[i] = u[i]
                    q0[i] = qh[i] + 0.5 * h * u[i]
                if kstep % save_every == 0 or kstep == nsteps:
                    for i in range(n):
                        ys[jsave, b, i] = q0[i]
                        ys[jsave, b, n + i] = v0[i]
                    jsave += 1
        return ys, done, iters

    return mp_gauge_run


def make_rattle_gauge_run(solve_small, grad_V, A_of, a_of, Da_of, K_CON):
    """rattle_run with the gauge term (the numpy step of
    :class:`integrators.reference.nonholonomic.coordinate_schemes.RattleStepper`, its ``_gauge_positions``): per
    step a Newton solve in q_{k+1} (n unknowns) of M w + (a_k + a_{k+1})/2 - h/2 Da_k^T w = p~, w = (q_{k+1} -
    q_k)/h, Jacobian M/h + Da_{k+1}/2 - Da_k^T/2, then the k x k multiplier solve. Carries (q, v, lambda);
    returns (ys, lambdas at the end, steps done, Newton iterations)."""

    def rattle_gauge_run(Y0, L0, h, nsteps, save_every, K, M, Minv):
        B, n2 = Y0.shape
        n = n2 // 2
        g, a0, a1 = np.empty(n), np.empty(n), np.empty(n)           # the problem functions write here
        Ah, A0, A1 = np.empty((K_CON, n)), np.empty((K_CON, n)), np.empty((K_CON, n))
        dA1 = np.empty((K_CON, n, n))
        Dah, Da0, Da1 = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
        k = L0.shape[1]
        ys = np.empty((K, B, n2))
        ys[0] = Y0
        Lend = np.empty((B, k))
        q, v, ph, q1, w, pt, uu, r, dq = (np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n),
                                          np.empty(n), np.empty(n), np.empty(n), np.empty(n))
        J = np.empty((n, n))
        lam = np.empty(k)
        G, rk, de = np.empty((k, k)), np.empty(k), np.empty(k)
        done = nsteps
        iters = 0
        for b in range(B):
            for i in range(n):
                q[i] = Y0[b, i]
                v[i] = Y0[b, n + i]
            for c in range(k):
                lam[c] = L0[b, c]
            jsave = 1
            for kstep in range(1, nsteps + 1):
                if kstep > done:
                    break
                grad_V(q, g)
                A_of(q, A0)
                a_of(q, a0)
                Da_of(q, Da0)
                sc = 1.0
                for i in range(n):
                    s = -0.5 * h * g[i]
                    for j in range(n):
                        s += M[i, j] * v[j]
                    for c in range(k):
                        s += 0.5 * h * A0[c, i] * lam[c]
                    ph[i] = s
                    sc = max(sc, abs(q[i]))
                for i in range(n):                          # the step without the gauge's change
                    s = 0.0
                    for j in range(n):
                        s += Minv[i, j] * ph[j]
                    q1[i] = q[i] + h * s
                ok = False
                prev = np.inf
                for it in range(MAX_ITER):
                    for i in range(n):
                        w[i] = (q1[i] - q[i]) / h
                    a_of(q1, a1)
                    Da_of(q1, Da1)
                    for i in range(n):
                        s = 0.5 * (a0[i] + a1[i]) - ph[i] - a0[i]
                        for j in range(n):
                            s += M[i, j] * w[j] - 0.5 * h * Da0[j, i] * w[j]
                            J[i, j] = M[i, j] / h + 0.5 * Da1[i, j] - 0.5 * Da0[j, i]
                        r[i] = -s
                    if not solve_small(J, r, dq):
                        break
                    dn = 0.0
                    for i in range(n):
                        q1[i] += dq[i]
                        dn = max(dn, abs(dq[i]))
                    iters += 1
                    if not math.isfinite(dn):
                        break
                    if dn <= TOL * sc or (dn >= prev and dn <= 1e3 * TOL * sc):
                        ok = True
                        break
                    prev = dn
                if not ok:
                    done = kstep - 1
                    break
                for i in range(n):
                    w[i] = (q1[i] - q[i]) / h
                    q[i] = q1[i]
                grad_V(q, g)
                a_of(q, a1)
                Da_of(q, Da1)
                A_of(q, A1)
                for i in range(n):
                    s = 0.5 * (a0[i] + a1[i]) - 0.5 * h * g[i]
                    for j in range(n):
                        s += M[i, j] * w[j] + 0.5 * h * Da1[j, i] * w[j]
                    pt[i] = s - a1[i]                       # p~ - a_{k+1}: the velocity part
                for c in range(k):                          # (h/2) A M^-1 A^T lambda = -A M^-1 (p~ - a)
                    for i in range(n):
                        s = 0.0
                        for j in range(n):
                            s += Minv[i, j] * A1[c, j]
                        uu[i] = s
                    s = 0.0
                    for i in range(n):
                        s += uu[i] * pt[i]
                    rk[c] = -s
                    for d in range(k):
                        t = 0.0
                        for i in range(n):
                            t += uu[i] * A1[d, i]
                        G[c, d] = 0.5 * h * t
                if not solve_small(G, rk, de):
                    done = kstep - 1
                    break
                for c in range(k):
                    lam[c] = de[c]
                for i in range(n):
                    s = pt[i]
                    for c in range(k):
                        s += 0.5 * h * A1[c, i] * lam[c]
                    ph[i] = s
                for i in range(n):
                    s = 0.0
                    for j in range(n):
                        s += Minv[i, j] * ph[j]
                    v[i] = s
                if kstep % save_every == 0 or kstep == nsteps:
                    for i in range(n):
                        ys[jsave, b, i] = q[i]
                        ys[jsave, b, n + i] = v[i]
                    jsave += 1
            for c in range(k):
                Lend[b, c] = lam[c]
        return ys, Lend, done, iters

    return rattle_gauge_run
