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

The loops of the coordinate schemes (mp_run, rattle_run and their gauge forms) are in
:mod:`integrators.reference.nonholonomic.coordinate_kernels`, the discrete vakonomic step (dvak_run) in
:mod:`integrators.reference.nonholonomic.vakonomic_kernel`; MAX_ITER, TOL and ``solve_small`` here are theirs too.

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
