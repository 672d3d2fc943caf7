"""The tangent flow of one trajectory in numpy, batched over time (the numpy backend of the Lyapunov spectra).

The generated tangent flow (:mod:`integrators.codegen.tangent_source`) steps the state and the frame
together, one step at a time; in Python floats a step of the 6 x 6 variational system costs 13-20 times
the state's operations. Here the same quantities are computed in a few numpy calls over all steps at once,
from three facts:

1. The Jacobian of a field that is quadratic in the state is affine in it: J(Y) = J0 + sum_l Y_l J_l
   (a recognised coadjoint field Q ad*_{W z + c} z: J0[j, l] = sum_i c_i C[i, j, l],
   J_m[j, l] = sum_i (W[i, l] C[i, j, m] + W[i, m] C[i, j, l]), times Q on the left; a tabled
   time-dependent field: the linear coefficients and the derivative of the quadratic ones at the stage
   times, :mod:`integrators.codegen.timed_source`). The state's stages Y_ki of every step are recorded by
   the generated state loop (:func:`integrators.codegen.tangent_source.stages_source`, the state's own
   arithmetic, so the states are those of the generated flow to the bit), and J at all of them is one
   product.
2. An explicit Runge-Kutta step applied to the variational equation is linear in the frame: V -> M_k V
   with M_k = I + sum_i b_i KV_i, KV_i = h J(Y_ki) (I + sum_j a_ij KV_j) (Hairer, Norsett and Wanner I,
   II.2), batched over k; a QR interval of ``sub`` steps is their product. With a leaf (normals N at z,
   orthonormal basis Nh, projector P = I - Nh Nh^T), the frame's first p columns span the leaf's tangent
   space T and the others lie in its normal space, so "step the frame, project its first p columns"
   is the linear map A_k = M - Nh' Nh'^T M P (Nh' at the interval's end, P at its start) applied to the
   whole frame: the lead columns get P' M, the others M, as in the generated code.
3. The QR steps telescope: with Q_k R_k = A_k Q_(k-1) (positive diagonals),
   R_(a+m) ... R_(a+1) = Q_(a+m)^T (A_(a+m) ... A_(a+1)) Q_a, and the diagonal of a product of triangular
   matrices is the product of the diagonals, so the sums of log R_ii up to any interval k of a block are
   log |diag R| of the QR of (A_k ... A_(a+1)) Q_a. The products over a block (prefix products, batched over
   the blocks) are taken only while their condition number stays below :data:`COND` (bounded by
   prod (1 + d_k)/(1 - d_k), d_k = ||A_k - I||_F): the QR of a product of condition kappa is as accurate as
   kappa eps, so the sums differ from the interval-by-interval QR by round-off. The blocks' QRs run in
   sequence (LAPACK's dgeqrf/dorgqr), the QRs at the saved intervals batched; the first column's norm at
   every interval gives MEGNO's L = log |delta| (Cincotta and Simo 2000) as the generated code has it.

Every number the generated loop returns (the state, the frame, the sums of logs and MEGNO's accumulators,
the running estimates at the saved intervals) comes back, equal to round-off. A run that is not finite
anywhere (overflow, a singular frame) returns None: the caller runs the generated loop, whose stopping
rules (the last finite interval kept) it keeps.
"""

from __future__ import annotations

import math
from array import array

import numpy as np
from scipy.linalg import lapack

from ..geometry.timed_quadratic import features

#: the largest condition number of a block's product of interval maps (the sums of logs lose about
#: log10(COND) digits against a QR at every interval: 1e-14 relative)
COND = 100.0
#: the steps of one chunk (its stages, Jacobians and step maps in memory: about 25 MB for 6 x 6 and rk4)
CHUNK_STEPS = 16384


def jacobian_basis(st):
    """(J0, Jl) of a recognised coadjoint structure: J(z) = J0 + sum_m z_m Jl[m] (module docstring)."""
    C, W, c = st.C, st.W, st.c
    n = st.n
    J0 = np.einsum("i,ijl->jl", c, C)
    Jl = np.einsum("il,ijm->mjl", W, C) + np.einsum("im,ijl->mjl", W, C)
    if st.P is not None:
        Q = np.eye(n) - st.P
        J0 = Q @ J0
        Jl = np.einsum("jr,mrl->mjl", Q, Jl)
    return J0, Jl


def stage_jacobians(pl, Ys, timing, nsteps):
    """J at every stage Y (N, s, n) of ``nsteps`` steps: (N, s, n, n)."""
    n = pl.n
    if timing is None:
        J0, Jl = pl._jbasis if getattr(pl, "_jbasis", None) is not None else jacobian_basis(pl.st)
        pl._jbasis = (J0, Jl)
        J = Ys.reshape(-1, n) @ Jl.reshape(n, n * n)
        J += J0.reshape(-1)
        return J.reshape(Ys.shape + (n,))
    TB, S, k0 = timing
    s = Ys.shape[1]
    nf = 1 + n + n * (n + 1) // 2
    coef = np.asarray(TB).reshape(S, s, n, nf)[(k0 + np.arange(nsteps)) % S]      # (N, s, n, nf)
    J = coef[..., 1:n + 1].copy()                                                   # L[r, l]
    q = coef[..., n + 1:]                                                           # q[r, (j, k)]
    for idx, (j, k) in enumerate(features(n)):
        qi = q[..., idx]                                                            # (N, s, n): over r
        if j == k:
            J[..., j] += 2.0 * qi * Ys[..., None, j]
        else:
            J[..., j] += qi * Ys[..., None, k]
            J[..., k] += qi * Ys[..., None, j]
    return J


def _combo(pairs, eye):
    """I + sum a K over (a, K) pairs, in place in a fresh array."""
    (a, K), rest = pairs[0], pairs[1:]
    out = np.multiply(K, a)
    for a, K in rest:
        out += a * K
    out += eye
    return out


def step_maps(tab, J, h):
    """M_k = the derivative of the tableau's step map, from the stages' Jacobians J (N, s, n, n)."""
    N, s, n, _ = J.shape
    eye = np.eye(n)
    KV = []
    for i, row in enumerate(tab.A):
        terms = [(float(a), K) for a, K in zip(row[:i], KV) if a != 0.0]
        Ji = np.ascontiguousarray(J[:, i])
        if terms:
            K = np.matmul(Ji, _combo(terms, eye))
            K *= h
        else:
            K = Ji * h
        KV.append(K)
    return _combo([(float(b), K) for b, K in zip(tab.b, KV) if b != 0.0], eye)


def _block_length(A, nqr):
    """The number m of interval maps A_k (K, n, n) whose products keep a condition number <= COND: the largest
    bound c of cond(A_k) over k, c = (1 + d)/(1 - d) with d = ||A_k - I||_F < 1, or the bound
    sqrt(||A||_1 ||A||_inf ||A^-1||_1 ||A^-1||_inf) (||A||_2^2 <= ||A||_1 ||A||_inf), whichever is smaller,
    and m = log COND / log c (cond of a product <= the product of the conds)."""
    n = A.shape[-1]
    D = A - np.eye(n)
    dmax = math.sqrt(float(np.max(np.einsum("kij,kij->k", D, D))))
    if dmax < 1.0:      # the cheap bound, when it allows blocks of 8 or more
        m = int(math.log(COND) / max(math.log((1.0 + dmax) / (1.0 - dmax)), 1e-300))
        if m >= 8:
            return max(1, min(nqr, m))
    d = np.sqrt(np.einsum("kij,kij->k", D, D))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(d < 1.0, (1.0 + d) / (1.0 - d), np.inf)
        try:
            Ai = np.linalg.inv(A)
        except np.linalg.LinAlgError:
            return 1
        a = np.abs(A)
        ai = np.abs(Ai)
        c2 = np.sqrt(a.sum(-2).max(-1) * a.sum(-1).max(-1) * ai.sum(-2).max(-1) * ai.sum(-1).max(-1))
        lc = float(np.max(np.log(np.minimum(c, c2))))
    if not lc < math.log(COND):       # NaN, inf or one map alone past the bound
        return 1
    return max(1, min(nqr, int(math.log(COND) / max(lc, 1e-300))))


def _qr(X):
    """(Q, |diag R|) of X (n, k), Q with a positive diagonal of R (LAPACK's Householder QR)."""
    qr, tau, _, info = lapack.dgeqrf(X)
    d = np.diagonal(qr)[:X.shape[1]].copy()
    Q, _, info2 = lapack.dorgqr(qr[:, :X.shape[1]], tau)
    if info or info2:
        return None, None
    return Q * np.sign(d), np.abs(d)


def run_one(pl, states, z, V, acc, sub, nqr, save_every, h, dt, timing=None, normals=None):
    """``nqr`` QR intervals of ``sub`` steps of one trajectory (module docstring): z (n,), V (n, k), acc (k + 4)
    as :func:`integrators.backends.tangent_runner.run` has them; ``states`` the generated state loop
    (:func:`integrators.codegen.tangent_source.stages_source`, Python floats), ``normals`` y -> (..., n, r)
    the leaf's normals (used when the plan keeps a leaf). Returns (z, V, acc, RUN (K, k), RUNM (K,)), or
    None when anything is not finite (the caller then runs the generated loop). The intervals go in chunks
    of about :data:`CHUNK_STEPS` steps (the stages and maps of a chunk in memory, not of the whole run)."""
    z = np.asarray(z, dtype=float).copy()
    Q = np.ascontiguousarray(V, dtype=float)
    acc = np.asarray(acc, dtype=float).copy()
    per = max(1, CHUNK_STEPS // sub)
    runs, runms = [], []
    lst = None
    if timing is not None:      # (TB, S, k0[, TB as a list for the Python loop])
        lst = timing[3] if len(timing) > 3 else np.asarray(timing[0]).tolist()
    k = 0
    while k < nqr:
        c = min(per, nqr - k)
        tm = None if timing is None else (timing[0], int(timing[1]), int(timing[2]) + k * sub, lst)
        got = _chunk(pl, states, z, Q, acc, sub, c, k, nqr, save_every, h, dt, tm, normals)
        if got is None:
            return None
        z, Q, acc, run, runm = got
        runs.append(run)
        runms.append(runm)
        k += c
    return z, Q, acc, np.concatenate(runs), np.concatenate(runms)


def _chunk(pl, states, z, V, acc, sub, nqr, k0, ntot, save_every, h, dt, timing, normals):
    """QR intervals k0 + 1 .. k0 + nqr of a run of ``ntot`` (the running estimates of the saved ones among
    them: k a multiple of ``save_every``, or ``ntot``)."""
    n, nc, tab = pl.n, pl.ncols, pl.tab
    s = len(tab.A)
    N = nqr * sub
    out = array("d")
    Z = [float(x) for x in z]
    extra = () if timing is None else (timing[3], timing[1], timing[2])
    with np.errstate(all="ignore"):
        states(h, N, Z, out, *extra)
        Ys = np.frombuffer(out, dtype=float).reshape(N, s, n)
        zf = np.array(Z)
        if not (np.all(np.isfinite(Ys)) and np.all(np.isfinite(zf))):
            return None
        J = stage_jacobians(pl, Ys, None if timing is None else timing[:3], N)
        M = step_maps(tab, J, h)
        A = M
        if sub > 1:
            M4 = M.reshape(nqr, sub, n, n)
            A = M4[:, 0]
            for j in range(1, sub):
                A = M4[:, j] @ A
        zq = np.concatenate([Ys[sub::sub, 0], zf[None]])                  # z at the end of each interval
        if normals is not None and pl.p < n and (pl.proj is not None or pl.L is not None):
            Nz = np.asarray(normals(np.concatenate([z[None], zq])), dtype=float)
            Nh = np.linalg.qr(Nz.reshape(nqr + 1, n, -1))[0]              # orthonormal normals
            Ns, Ne = Nh[:-1], Nh[1:]
            MP = A - (A @ Ns) @ np.swapaxes(Ns, -1, -2)
            A = A - Ne @ (np.swapaxes(Ne, -1, -2) @ MP)
        if not np.all(np.isfinite(A)):
            return None
        m = _block_length(A, nqr)
        nb = -(-nqr // m)
        Ap = A if nb * m == nqr else np.concatenate([A, np.broadcast_to(np.eye(n), (nb * m - nqr, n, n))])
        A4 = Ap.reshape(nb, m, n, n)
        Pi = np.empty_like(A4)
        Pi[:, 0] = A4[:, 0]
        for j in range(1, m):
            Pi[:, j] = A4[:, j] @ Pi[:, j - 1]
        # the blocks in sequence
        Q = V
        logs = acc[:nc].copy()
        Qs = np.empty((nb, n, nc))
        starts = np.empty((nb, nc))           # the sums of logs at each block's start
        for b in range(nb):
            Qs[b] = Q
            starts[b] = logs
            jb = m - 1 if b < nb - 1 else nqr - 1 - b * m
            Q, dg = _qr(Pi[b, jb] @ Q)
            if Q is None:
                return None
            logs = logs + np.log(dg)
        if not (np.all(np.isfinite(logs)) and np.all(np.isfinite(Q))):
            return None
        # every interval: the frame before its QR, from its block's start
        X = (Pi @ Qs[:, None]).reshape(nb * m, n, nc)[:nqr]
        blk = np.arange(nqr) // m
        L = starts[blk, 0] + np.log(np.sqrt(np.einsum("ki,ki->k", X[:, :, 0], X[:, :, 0])))
        ks = np.arange(k0 + 1, k0 + nqr + 1)
        keep = (ks % save_every == 0) | (ks == ntot)
        R = np.linalg.qr(X[keep], mode="r")
        runlog = starts[blk[keep]] + np.log(np.abs(np.diagonal(R, axis1=-2, axis2=-1)))
        tk = ks * dt
        Lp0, iL0, iY0, Yp0 = (float(x) for x in acc[nc:nc + 4])
        Lprev = np.concatenate([[Lp0], L[:-1]])
        iL = np.cumsum(np.concatenate([[iL0], 0.5 * dt * (L + Lprev)]))[1:]
        Yk = 2.0 * (L - iL / tk)
        Yprev = np.concatenate([[Yp0], Yk[:-1]])
        iY = np.cumsum(np.concatenate([[iY0], 0.5 * dt * (Yk + Yprev)]))[1:]
        if not (np.all(np.isfinite(L)) and np.all(np.isfinite(runlog)) and np.all(np.isfinite(iY))):
            return None
    tks = tk[keep]
    acc_out = np.concatenate([logs, [L[-1], iL[-1], iY[-1], Yk[-1]]])
    return zf, Q, acc_out, runlog / tks[:, None], iY[keep] / tks
