"""The discrete vakonomic step's whole-run loop (dvak_run) in scalar code that numba compiles, as
:mod:`integrators.reference.nonholonomic.kernels` (whose ``solve_small``, MAX_ITER and TOL it uses): the step of
:mod:`integrators.reference.nonholonomic.vakonomic_schemes` (two Newton solves, complex-step Jacobians)."""

from __future__ import annotations

import math

import numpy as np

from .kernels import MAX_ITER, TOL


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
