"""Whole-run loops of the discrete schemes in scalar code that numba compiles (``nopython``): the
compiled path of :mod:`integrators.reference.nonholonomic` (``backend="numba"``). Plain Python + numpy
arrays indexed element by element; nothing here imports numba (the engine hands the ``jit`` down). The engine
runs dlas and the Lie-group RATTLE by the straight-line loop of :mod:`integrators.codegen.nonholonomic_source`
(simplified Newton) where it applies; dlas_run below is their generic loop and its reference.

**dlas_run**: the discrete Lagrange-d'Alembert-Suslov map of
:mod:`integrators.reference.nonholonomic.lie_schemes`, with the multiplier eliminated. With
D_x = (dtau^-1_x)^T and the identity Ad*_{tau(x)} = D_{-x} D_x^{-1} (tau(-x) = tau(x)^-1, true for exp and
cay), the step m_k -> m_{k+1} is

    N^T (D_{h xi} I xi - m_k) = 0,   xi = N eta                        (p = n - k unknowns eta)
    m_{k+1} = Pc D_{-h xi} I xi,     Pc = 1 - A^T (A I^-1 A^T)^-1 A I^-1,

N an orthonormal basis of ker A (so A xi = 0 exactly) and Pc the projection that puts A I^-1 m_{k+1} = 0
(the impulse A^T c after the node). Closed forms of dtau^-1_x (Bou-Rabee and Marsden 2009):

* exp on algebras with ad_x^3 = -theta^2 ad_x, theta^2 = -tr(ad_x^2)/2 >= 0 (so(3), se(2)):
  dexp^-1_x = 1 - ad_x/2 + beta(theta^2) ad_x^2, beta(s) = (1 - (theta/2) cot(theta/2))/s
  (= 1/12 + s/720 + s^2/30240 + s^3/1209600 + s^4/47900160 + ... near 0);
* cay in a matrix representation: dcay^-1_x y = y - [x, y]/2 - S(x, y, x)/4, S(x, y, z) the symmetrised
  vee((XYZ + ZYX)/2), a constant tensor on so(3), se(2), se(3).

Newton starts from the quadratic extrapolation of the last three solutions (error O(h^3); for the Lie-group
RATTLE of every second solution: its multiplier carries a parasitic mode (-1)^k delta, so its solutions
alternate by O(h delta) from step to step, and extrapolating across them costs an iteration) and stops when
the increment is at round-off, or when the next one, estimated from the measured quadratic convergence
(dn_{j+1} ~ kq dn_j^2, kq measured on earlier increments above round-off), is 10x below the tolerance: one
Newton iteration fewer per step than confirming the convergence with an increment at round-off.

Newton's Jacobian is analytic: d/dxi (D_{h xi} I xi) = D_{h xi} I + h dD_x/dx[I xi] with
dD/dx_a = (-E_a/2 + beta (E_a ad + ad E_a) - beta'(s) tr(ad E_a) ad^2)^T (exp; E_a = ad_{e_a}) and
(-E_a/2 - S(e_a, ., x)/2)^T (cay).

**mp_run**: McLachlan and Perlmutter (2006) eq. (4.18) with v_1 = v_0 + h M^-1 (F + A_{1/2}^T lambda)
eliminated: k unknowns lambda, residual A(q_1) v_1, Jacobian (A_1 + h/2 dA_1[v_1]) h M^-1 A_{1/2}^T.

**rattle_run**: the nonholonomic RATTLE (Ferraro, Iglesias and Martin de Diego 2008) on the extended state
(q, p, lambda), explicit (see :mod:`integrators.reference.nonholonomic.coordinate_schemes`).

**mp_gauge_run, rattle_gauge_run**: both with the gauge term a(q) . v (the numpy steps' equations; Newton in
(v_1, lambda) and in q_{k+1}). **dvak_run**: the discrete vakonomic step of
:mod:`integrators.reference.nonholonomic.vakonomic_schemes` (two Newton solves, complex-step Jacobians).

The problem functions are called in the writing form f(q, out) (the coordinate loops allocate their work
arrays once per run, nothing per step); :mod:`integrators.reference.nonholonomic.compiled` wraps functions
that return a new array.

The loops return the saved states, the number of steps done (the first Newton failure of any trajectory
ends the run there) and the Newton iterations. The problem functions of the coordinate loops are scalar
(one q, 1-d arrays) and are bound in by :mod:`integrators.reference.nonholonomic.compiled`.
"""

from __future__ import annotations

import math

import numpy as np

MAX_ITER = 30
TOL = 4e-16


def beta_exp(s):
    """(beta(s), beta'(s)) of dexp^-1 = 1 - A/2 + beta A^2 for A^3 = -s A (s = theta^2 >= 0)."""
    if s < 0.04:
        b = 1.0 / 12 + s * (1.0 / 720 + s * (1.0 / 30240 + s * (1.0 / 1209600 + s / 47900160)))
        db = 1.0 / 720 + s * (2.0 / 30240 + s * (3.0 / 1209600 + s * 4.0 / 47900160))
        return b, db
    th = math.sqrt(s)
    ct = math.cos(0.5 * th) / math.sin(0.5 * th)
    g = 1.0 - 0.5 * th * ct
    gp = -0.5 * ct + 0.25 * th / math.sin(0.5 * th) ** 2
    b = g / s
    db = (gp / s - 2.0 * g / (s * th)) / (2.0 * th)
    return b, db


def make_dinv(beta_exp):
    """dinv_matrix calling ``beta_exp`` (plain or jitted)."""

    def dinv_matrix(x, C, S, mode, Dm, ad, ad2):
        """Fill Dm[k, j] = (dtau^-1_x)[k, j] (and ad, ad2 = ad_x, ad_x^2); returns (beta, beta') (exp) or (0, 0)."""
        n = x.shape[0]
        for k in range(n):
            for j in range(n):
                s = 0.0
                for i in range(n):
                    s += x[i] * C[i, j, k]
                ad[k, j] = s
        b, db = 0.0, 0.0
        if mode == 0:
            tr = 0.0
            for k in range(n):
                for j in range(n):
                    s = 0.0
                    for i in range(n):
                        s += ad[k, i] * ad[i, j]
                    ad2[k, j] = s
                tr += ad2[k, k]
            b, db = beta_exp(max(-0.5 * tr, 0.0))
            for k in range(n):
                for j in range(n):
                    Dm[k, j] = (1.0 if k == j else 0.0) - 0.5 * ad[k, j] + b * ad2[k, j]
        else:
            for k in range(n):
                for j in range(n):
                    q = 0.0
                    for i in range(n):
                        for l in range(n):
                            q += x[i] * x[l] * S[i, j, l, k]
                    Dm[k, j] = (1.0 if k == j else 0.0) - 0.5 * ad[k, j] - 0.25 * q
        return b, db

    return dinv_matrix


def solve_small(J, r, out):
    """out = J^-1 r for a small dense J (Gaussian elimination with partial pivoting; J, r overwritten);
    False when J is singular."""
    p = r.shape[0]
    for c in range(p):
        piv, best = c, abs(J[c, c])
        for i in range(c + 1, p):
            if abs(J[i, c]) > best:
                piv, best = i, abs(J[i, c])
        if best == 0.0:
            return False
        if piv != c:
            for j in range(p):
                J[c, j], J[piv, j] = J[piv, j], J[c, j]
            r[c], r[piv] = r[piv], r[c]
        for i in range(c + 1, p):
            f = J[i, c] / J[c, c]
            for j in range(c, p):
                J[i, j] -= f * J[c, j]
            r[i] -= f * r[c]
    for i in range(p - 1, -1, -1):
        s = r[i]
        for j in range(i + 1, p):
            s -= J[i, j] * out[j]
        out[i] = s / J[i, i]
    return True


def make_dlas_run(dinv_matrix, solve_small):
    """dlas_run calling the given helpers (plain or jitted)."""

    def dlas_run(M0, h, nsteps, save_every, K, I, Iinv, N, Pc, C, S, mode, Pout, Y0, stride):
        """The dlas map over nsteps from every row of M0 (B, n): (ys (K, B, n), steps done, iterations, the
        carried states at the end (B, n)). The carried state is m_{k+1} = Pc D_{-x} I xi, the saved one
        Pout D_{-x} I xi (ys[0] = Y0): dlas has Pout = Pc; the Lie-group RATTLE carries mu^+ (Pc = 2 P - 1, a
        reflection) and saves m = P D_{-x} I xi (Pout = P)."""
        B, n = M0.shape
        p = N.shape[1]
        ys = np.empty((K, B, n))
        ys[0] = Y0
        Mend = np.empty((B, n))
        done = nsteps
        iters = 0
        Dm, ad, ad2 = np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
        x, w, xi, R, Cw = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty((n, n))
        Jf, Jr, r, eta, de = np.empty((n, n)), np.empty((p, p)), np.empty(p), np.empty(p), np.empty(p)
        m, mn, a1, a2 = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        hist = np.zeros((6, p))                     # the last six solutions eta (ring buffer)
        kq = -1.0                                   # Newton's quadratic constant, once measured
        for b in range(B):
            for i in range(n):
                m[i] = M0[b, i]
            # first guess: eta = N^T I^-1 m
            for a in range(p):
                s = 0.0
                for i in range(n):
                    t = 0.0
                    for j in range(n):
                        t += Iinv[i, j] * m[j]
                    s += N[i, a] * t
                eta[a] = s
            jsave = 1
            for kstep in range(1, nsteps + 1):
                if kstep > done:
                    break
                if kstep > 3 * stride:     # predictor: quadratic extrapolation of the solutions stride, 2 and 3
                    k1, k2, k3 = (kstep - stride) % 6, (kstep - 2 * stride) % 6, (kstep - 3 * stride) % 6
                    for a in range(p):       # strides back (stride 2: a sequence that alternates step to step)
                        eta[a] = 3.0 * hist[k1, a] - 3.0 * hist[k2, a] + hist[k3, a]
                elif kstep > 1:
                    for a in range(p):
                        eta[a] = hist[(kstep - 1) % 6, a]
                ok = False
                prev = np.inf
                for it in range(MAX_ITER):
                    for i in range(n):
                        s = 0.0
                        for a in range(p):
                            s += N[i, a] * eta[a]
                        xi[i] = s
                        x[i] = h * s
                    for i in range(n):
                        s = 0.0
                        for j in range(n):
                            s += I[i, j] * xi[j]
                        w[i] = s
                    bb, db = dinv_matrix(x, C, S, mode, Dm, ad, ad2)
                    for j in range(n):                      # R = D_x w - m
                        s = 0.0
                        for k in range(n):
                            s += Dm[k, j] * w[k]
                        R[j] = s - m[j]
                    for a in range(n):                      # Cw[a, j] = sum_k C[a, j, k] w_k
                        for j in range(n):
                            s = 0.0
                            for k in range(n):
                                s += C[a, j, k] * w[k]
                            Cw[a, j] = s
                    for j in range(n):                      # Jf[j, a] = d R_j / d xi_a
                        for a in range(n):
                            s = 0.0
                            for k in range(n):
                                s += Dm[k, j] * I[k, a]
                            Jf[j, a] = s
                    if mode == 0:
                        for j in range(n):
                            a1[j] = 0.0
                            a2[j] = 0.0
                        for j in range(n):
                            for k in range(n):
                                a1[j] += ad[k, j] * w[k]
                        for j in range(n):
                            for k in range(n):
                                a2[j] += ad[k, j] * a1[k]
                        for a in range(n):
                            trAE = 0.0
                            for k in range(n):
                                for j in range(n):
                                    trAE += ad[k, j] * C[a, k, j]
                            for j in range(n):
                                s = -0.5 * Cw[a, j]
                                t = 0.0
                                for k in range(n):
                                    t += ad[k, j] * Cw[a, k] + C[a, j, k] * a1[k]
                                s += bb * t - db * trAE * a2[j]
                                Jf[j, a] += h * s
                    else:
                        for a in range(n):
                            for j in range(n):
                                s = -0.5 * Cw[a, j]
                                t = 0.0
                                for l in range(n):
                                    for k in range(n):
                                        t += x[l] * S[a, j, l, k] * w[k]
                                Jf[j, a] += h * (s - 0.5 * t)
                    for a in range(p):                      # reduced: r = N^T R, Jr = N^T Jf N
                        s = 0.0
                        for j in range(n):
                            s += N[j, a] * R[j]
                        r[a] = -s
                        for c in range(p):
                            s = 0.0
                            for j in range(n):
                                for i in range(n):
                                    s += N[j, a] * Jf[j, i] * N[i, c]
                            Jr[a, c] = s
                    if not solve_small(Jr, r, de):
                        break
                    dn, sc = 0.0, 1.0
                    for a in range(p):
                        eta[a] += de[a]
                        dn = max(dn, abs(de[a]))
                        sc = max(sc, abs(eta[a]))
                    iters += 1
                    if not math.isfinite(dn):
                        break
                    if dn <= TOL * sc or (dn >= prev and dn <= 1e3 * TOL * sc):
                        ok = True
                        break
                    # quadratic convergence: the next increment is ~ kq dn^2 (kq = dn_j / dn_{j-1}^2 measured
                    # on increments above round-off); stop when it would be below the tolerance
                    if it > 0 and dn > 1e3 * TOL * sc and dn < prev:
                        kq = dn / (prev * prev)
                    if kq > 0.0 and 10.0 * kq * dn * dn <= TOL * sc and (it > 0 or dn <= 1e-6 * sc):
                        ok = True
                        break
                    prev = dn
                if not ok:
                    done = kstep - 1
                    break
                for a in range(p):
                    hist[kstep % 6, a] = eta[a]
                for i in range(n):
                    s = 0.0
                    for a in range(p):
                        s += N[i, a] * eta[a]
                    xi[i] = s
                    x[i] = -h * s
                for i in range(n):
                    s = 0.0
                    for j in range(n):
                        s += I[i, j] * xi[j]
                    w[i] = s
                dinv_matrix(x, C, S, mode, Dm, ad, ad2)
                for j in range(n):                          # D_{-x} I xi
                    s = 0.0
                    for k in range(n):
                        s += Dm[k, j] * w[k]
                    mn[j] = s
                for i in range(n):
                    s = 0.0
                    for j in range(n):
                        s += Pc[i, j] * mn[j]
                    m[i] = s
                if kstep % save_every == 0 or kstep == nsteps:
                    for i in range(n):
                        s = 0.0
                        for j in range(n):
                            s += Pout[i, j] * mn[j]
                        ys[jsave, b, i] = s
                    jsave += 1
            for i in range(n):
                Mend[b, i] = m[i]
        return ys, done, iters, Mend


    return dlas_run


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


def make_dvak_run(solve_small, Lv1, Lq1, phi1, n, k, jit):
    """dvak_run on the scalar functions Lv1(q, v, lam, out) (n,), Lq1(q, v, lam, out) (n,), phi1(q, v, out) (k,)
    of :class:`integrators.reference.nonholonomic.problems.VakonomicCoordinateData` (``scalar``; called with complex
    arrays). The step of :class:`integrators.reference.nonholonomic.vakonomic_schemes.VakonomicStepper`: two Newton
    solves of n + k unknowns, (q_1, mu) and the node's (v_1, lambda_1), each Jacobian column by a complex step
    (Squire and Trefethen 1998, eps = 1e-30, as :mod:`integrators.reference.nonholonomic.newton`); the same stop
    (increment <= TOL max(1, |u|), or not decreasing below 1e3 TOL). ``jit`` compiles the three functions (the
    identity: plain Python); returns dvak_run."""
    m = n + k

    def residual(which, U, q0, p0, h, qm, w, lv, lq, ph, out):
        """out = R(U) (which 0: the interval's equations at U = (q_1, mu); 1: the node's at U = (v_1, lambda_1),
        q0 then q_1 and p0 then p_1)."""
        if which == 0:
            for i in range(n):
                qm[i] = 0.5 * (q0[i] + U[i])
                w[i] = (U[i] - q0[i]) / h
            Lv1(qm, w, U[n:], lv)
            Lq1(qm, w, U[n:], lq)
            phi1(qm, w, ph)
            for i in range(n):
                out[i] = lv[i] - 0.5 * h * lq[i] - p0[i]
        else:
            Lv1(q0, U[:n], U[n:], lv)
            phi1(q0, U[:n], ph)
            for i in range(n):
                out[i] = lv[i] - p0[i]
        for c in range(k):
            out[n + c] = ph[c]

    residual = jit(residual)

    def newton_solve(which, u, q0, p0, h, U, qm, w, lv, lq, ph, R, Rc, J, r, du):
        """Newton on R(u) = 0 from u (overwritten): (converged, iterations)."""
        prev = np.inf
        for it in range(MAX_ITER):
            for i in range(m):
                U[i] = u[i]
            residual(which, U, q0, p0, h, qm, w, lv, lq, ph, R)
            for j in range(m):
                for i in range(m):
                    U[i] = u[i]
                U[j] = u[j] + 1e-30j
                residual(which, U, q0, p0, h, qm, w, lv, lq, ph, Rc)
                for i in range(m):
                    J[i, j] = Rc[i].imag / 1e-30
            for i in range(m):
                r[i] = -R[i].real
            if not solve_small(J, r, du):
                return False, it + 1
            dn, sc = 0.0, 1.0
            for i in range(m):
                u[i] += du[i]
                dn = max(dn, abs(du[i]))
                sc = max(sc, abs(u[i]))
            if not math.isfinite(dn):
                return False, it + 1
            if dn <= TOL * sc or (dn >= prev and dn <= 1e3 * TOL * sc):
                return True, it + 1
            prev = dn
        return False, MAX_ITER

    newton_solve = jit(newton_solve)

    def dvak_run(Y0, h, nsteps, save_every, K):
        B = Y0.shape[0]
        ys = np.empty((K, B, 2 * n + k))
        ys[0] = Y0
        done = nsteps
        iters = 0
        q0c, p0c = np.empty(n, dtype=np.complex128), np.empty(n, dtype=np.complex128)
        U, R, Rc = np.empty(m, dtype=np.complex128), np.empty(m, dtype=np.complex128), np.empty(m, dtype=np.complex128)
        qm, w = np.empty(n, dtype=np.complex128), np.empty(n, dtype=np.complex128)
        lv, lq, ph = np.empty(n, dtype=np.complex128), np.empty(n, dtype=np.complex128), np.empty(k, dtype=np.complex128)
        J, r, du, u = np.empty((m, m)), np.empty(m), np.empty(m), np.empty(m)
        v0, lam0, mu = np.empty(n), np.empty(k), np.empty(k)
        for b in range(B):
            for i in range(n):
                q0c[i] = Y0[b, i]
                v0[i] = Y0[b, n + i]
            for c in range(k):
                lam0[c] = Y0[b, 2 * n + c]
            jsave = 1
            for kstep in range(1, nsteps + 1):
                if kstep > done:
                    break
                for i in range(n):                           # p_0 = L*_v(q_0, v_0; lambda_0)
                    U[i] = v0[i]
                for c in range(k):
                    U[n + c] = lam0[c]
                Lv1(q0c, U[:n], U[n:], lv)
                for i in range(n):
                    p0c[i] = lv[i].real
                    u[i] = q0c[i].real + h * v0[i]
                for c in range(k):
                    u[n + c] = lam0[c]
                ok, it1 = newton_solve(0, u, q0c, p0c, h, U, qm, w, lv, lq, ph, R, Rc, J, r, du)
                if not ok:
                    done = kstep - 1
                    break
                for i in range(n):                           # p_1 = L*_v + h/2 L*_q at the midpoint
                    U[i] = u[i]
                for c in range(k):
                    U[n + c] = u[n + c]
                    mu[c] = u[n + c]
                for i in range(n):
                    qm[i] = 0.5 * (q0c[i] + U[i])
                    w[i] = (U[i] - q0c[i]) / h
                Lv1(qm, w, U[n:], lv)
                Lq1(qm, w, U[n:], lq)
                for i in range(n):
                    p0c[i] = (lv[i] + 0.5 * h * lq[i]).real
                    q0c[i] = u[i]                            # q_1
                    u[i] = 2.0 * w[i].real - v0[i]
                for c in range(k):
                    u[n + c] = 2.0 * mu[c] - lam0[c]
                ok, it2 = newton_solve(1, u, q0c, p0c, h, U, qm, w, lv, lq, ph, R, Rc, J, r, du)
                if not ok:
                    done = kstep - 1
                    break
                iters += it1 + it2
                for i in range(n):
                    v0[i] = u[i]
                for c in range(k):
                    lam0[c] = u[n + c]
                if kstep % save_every == 0 or kstep == nsteps:
                    for i in range(n):
                        ys[jsave, b, i] = q0c[i].real
                        ys[jsave, b, n + i] = v0[i]
                    for c in range(k):
                        ys[jsave, b, 2 * n + c] = lam0[c]
                    jsave += 1
        return ys, done, iters

    return jit(dvak_run)
