"""The source text of the generic adaptive kernel: one loop for every algebra, the structure as data.

The generated programs of :mod:`integrators.codegen.programs` are straight-line code written per structure
(the non-zero entries of C and W are constants in the text), so a new algebra is a new text and, under
numba, a new compile (13-190 s for the DOP853-sized loops, ``benchmarks/RESULTS.md``, "Drawn systems").
The text here is written once: the structure constants enter as sparse arrays (index triples ``ci, cj,
ck`` and values ``cv`` of C[i, j, k]), the velocity w = W z + c as a dense W and c, the tableau as arrays
(A, b, the error rows E with the FSAL stage as their last column), the Casimirs of a projected pair as
monomials (Casimir index, coefficient, exponents). Compiled with numba's disk cache
(:func:`integrators.backends.generic_kernel.kernel`), it is compiled once per machine and numba version,
independent of the algebra.

It computes what the generated loop computes (and so what the numpy reference does, to round-off):

* ambient Runge-Kutta stages K_i = h F(z + sum_j a_ij K_j), F(z) = (I - P) ad*_{W z + c} z;
* RKMK stages K_i = h dexpinv_{theta_i}(w(exp(ad theta_i)^T z)) (Munthe-Kaas 1999), dexp^-1 the
  Bernoulli series, summed to round-off as :func:`integrators.geometry.spaces.dexpinv_series` defines
  it (the K of ``dexpinv_order`` from x^2 = ||ad_theta||_F^2 / (2 pi)^2, NaN beyond DEXPINV_X2MAX) or
  truncated after ``terms`` terms; exp(ad x)^T z by the scaled Taylor series of the action with the
  generated code's plan (``tplan``: s substeps with ||ad(x)^T / s||_1 <= 1/2, terms until the tail is
  below 2^-54, from ||ad(x)^T||_1 itself; Al-Mohy and Higham 2011) -- no closed forms (Rodrigues and its kin agree with it to
  round-off), the increment exp(ad x)^T z - z accumulated without cancellation;
* the error norm of scipy's RK45 / DOP853 (Hairer, Norsett and Wanner I, II.4; DOP853 in RKMK form with the
  damping exponent of :data:`integrators.core.controller.LIE_DOP853_GAMMA`), for RKMK mapped to the
  state by ad*_{err} z; the controller of :mod:`integrators.core.controller` (its constants are written
  into the text, so a change of them changes the text and its cache); Hairer's starting step
  (``hstart``, ``rmsq`` of :mod:`integrators.reference.genhelpers`) when h <= 0; Kahan's compensated sum
  of the increments (Hairer, McLachlan and Razakarivony 2008);
* for the projected pairs, the projection of every accepted step onto {C_k = c_k} by simplified Newton
  iterations with one L D L^T factorisation of G G^T (Hairer, Lubich and Wanner 2006, IV.4, Algorithm
  4.2), the algorithm and stopping test of :mod:`integrators.codegen.projection`, the Casimirs and their
  gradients evaluated from the monomials.

The helpers the text calls (``tplan``, ``hstart``, ``rmsq``, ``fin``, ``bmax``, ``grow``) are those of
:mod:`integrators.reference.genhelpers`, put into the module's namespace by the loader (jitted under
numba, plain Python floats otherwise). One trajectory; ensembles keep the numpy columns and the
specialised batch loop.
"""

from __future__ import annotations

import math

from ..core import controller
from ..geometry.spaces import DEXPINV_KMAX, DEXPINV_TOL, DEXPINV_X2MAX, ROUNDOFF_TERMS
from .projection import MAX_ITER

#: the functions of the text, in the order of their definition (each jitted by the loader)
FUNCTIONS = ("gk_velocity", "gk_coad", "gk_field", "gk_adt", "gk_negbracket", "gk_matvec", "gk_act",
             "gk_dexpinv", "gk_rms", "gk_casimirs", "gk_project", "gk_adaptive")

#: the entry point: the adaptive loop
ENTRY = "gk_adaptive"

_TEXT = '''
def gk_velocity(W, c, z, out):
    """out = W z + c."""
    n = z.shape[0]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += W[i, j]*z[j]
        out[i] = s + c[i]


def gk_coad(ci, cj, ck, cv, x, m, out):
    """out_j = (ad*_x m)_j = sum_{i,k} x_i C[i, j, k] m_k over the non-zero entries of C."""
    out[:] = 0.0
    for t in range(cv.shape[0]):
        out[cj[t]] += cv[t]*x[ci[t]]*m[ck[t]]


def gk_field(ci, cj, ck, cv, W, c, P, hasP, z, w, g, out):
    """out = (I - P) ad*_{W z + c} z (P only when hasP); w, g are work vectors."""
    gk_velocity(W, c, z, w)
    if hasP:
        gk_coad(ci, cj, ck, cv, w, z, g)
        n = z.shape[0]
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += ((1.0 if i == j else 0.0) - P[i, j])*g[j]
            out[i] = s
    else:
        gk_coad(ci, cj, ck, cv, w, z, out)


def gk_adt(ci, cj, ck, cv, x, M):
    """M = ad(x)^T: M[j, k] = sum_i x_i C[i, j, k] ((ad*_x m)_j = sum_k M[j, k] m_k)."""
    M[:, :] = 0.0
    for t in range(cv.shape[0]):
        M[cj[t], ck[t]] += cv[t]*x[ci[t]]


def gk_negbracket(ci, cj, ck, cv, x, M):
    """M = -ad(x): (M y)_k = -[x, y]_k = -sum_{i,j} x_i y_j C[i, j, k] (the bracket matching ad*)."""
    M[:, :] = 0.0
    for t in range(cv.shape[0]):
        M[ck[t], cj[t]] -= cv[t]*x[ci[t]]


def gk_matvec(M, v, out):
    n = v.shape[0]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += M[i, j]*v[j]
        out[i] = s


def gk_act(ci, cj, ck, cv, norms, x, z, delta, out, M, xs, cur, u, acc, tmp):
    """exp(ad x)^T z (delta False) or exp(ad x)^T z - z (delta True): s substeps of the Taylor series
    of exp(A / s) z, A = ad(x)^T, m terms (tplan of ||A||_1 itself, where the generated code takes the
    bound sum_i |x_i| norms_i >= ||A||_1: fewer substeps, the same truncation below 2^-54), the
    increment summed from the terms k >= 1; NaN beyond the plan's range (an overflow, not a step)."""
    n = z.shape[0]
    gk_adt(ci, cj, ck, cv, x, M)
    bound = 0.0
    for k in range(n):          # ||A||_1, the largest column sum (at most sum_i |x_i| norms_i)
        col = 0.0
        for j in range(n):
            col += abs(M[j, k])
        if col > bound or col != col:   # NaN sticks: tplan then gives NaN
            bound = col
    s, m, bad = tplan(bound)
    inv = 1.0/s
    for j in range(n):
        cur[j] = z[j]
        out[j] = 0.0
        for k in range(n):
            M[j, k] = inv*M[j, k]
    for _ in range(s):
        for i in range(n):
            u[i] = cur[i]
            acc[i] = 0.0
        kk = 0.0
        for _k in range(m):
            kk = kk + 1.0
            gk_matvec(M, u, tmp)
            for i in range(n):
                u[i] = tmp[i]/kk
                acc[i] = acc[i] + u[i]
        for i in range(n):
            out[i] = out[i] + acc[i]
            cur[i] = cur[i] + acc[i]
    for i in range(n):
        out[i] = out[i] + bad
        if not delta:
            out[i] = z[i] + out[i]


def gk_dexpinv(ci, cj, ck, cv, G2, bern, terms, theta, v, out, M, t, t2):
    """dexp^-1_theta(v) = sum_k B_k/k! A^k v, A = -ad_theta (spaces.dexpinv_series): summed to round-off
    (terms >= ROUNDOFF_TERMS: up to the even K with (pi^2/3) x^(K+2)/(1 - x^2) <= 2^-53,
    x^2 = theta^T G2 theta = ||ad_theta||_F^2 / (2 pi)^2; NaN when x^2 > DEXPINV_X2MAX) or truncated
    after ``terms`` terms."""
    n = v.shape[0]
    gk_negbracket(ci, cj, ck, cv, theta, M)
    if terms >= @ROUNDOFF@:
        x2 = 0.0
        for i in range(n):
            x2 += G2[i, i]*theta[i]*theta[i]
            for j in range(i + 1, n):
                x2 += 2.0*G2[i, j]*theta[i]*theta[j]
        bad = 0.0 if x2 <= @X2MAX@ else math.nan
        lim = @TOL3@*(1.0 - x2)
        K = 2.0
        xk = x2*x2
        while xk > lim and K < @KMAX@:
            K = K + 2.0
            xk = xk*x2
        gk_matvec(M, v, t)
        for i in range(n):
            out[i] = v[i] - 0.5*t[i]
        for m in range(int(K) // 2):
            gk_matvec(M, t, t2)
            bc = bern[2 + 2*m]
            for i in range(n):
                out[i] = out[i] + bc*t2[i]
            gk_matvec(M, t2, t)
        for i in range(n):
            out[i] = out[i] + bad
        return
    for i in range(n):
        out[i] = v[i]
        t[i] = v[i]
    for k in range(1, terms):
        gk_matvec(M, t, t2)
        for i in range(n):
            t[i] = t2[i]
        if bern[k] != 0.0:
            for i in range(n):
                out[i] = out[i] + bern[k]*t[i]


def gk_rms(u, n):
    """The rms of u[:n] without overflow (genhelpers.rmsq)."""
    m = 0.0
    for i in range(n):
        a = abs(u[i])
        m = a if a > m else m
    m = m if m > 0.0 else 1.0
    s = 0.0
    for i in range(n):
        s += (u[i]/m)*(u[i]/m)
    return rmsq(m, s, float(n))


def gk_casimirs(pk, pc, pe, p, z, vals, G, grad):
    """vals_k = C_k(z) = sum of the monomials pc * prod z^pe of Casimir pk; with ``grad`` also
    G[k, j] = dC_k/dz_j."""
    n = z.shape[0]
    for k in range(p):
        vals[k] = 0.0
        if grad:
            for j in range(n):
                G[k, j] = 0.0
    for t in range(pc.shape[0]):
        mono = pc[t]
        for j in range(n):
            for _ in range(pe[t, j]):
                mono = mono*z[j]
        vals[pk[t]] += mono
        if grad:
            for j in range(n):
                if pe[t, j] > 0:
                    d = pc[t]*pe[t, j]
                    for l in range(n):
                        for _ in range(pe[t, l] - (1 if l == j else 0)):
                            d = d*z[l]
                    G[pk[t], j] += d


def gk_project(pk, pc, pe, p, z, targets, inc, y, G, Mm, L, pdv, piv, pt, pr, pu, pv, pa):
    """The increment inc = G^T lambda projecting z onto {C = targets} and the point y = z + inc:
    simplified Newton with G = grad C(z) fixed, M = G G^T = L D L^T (1/D_j or 0 for a dependent
    direction, genhelpers.rinv), until every |r_k| <= 4 eps sum_j |G_kj z_j|, at most MAX_ITER
    iterations (integrators.codegen.projection)."""
    n = z.shape[0]
    gk_casimirs(pk, pc, pe, p, z, pr, G, True)
    for k in range(p):
        for m in range(k + 1):
            s = 0.0
            for j in range(n):
                s += G[k, j]*G[m, j]
            Mm[k, m] = s
    for j in range(p):
        d = Mm[j, j]
        for k in range(j):
            d -= L[j, k]*L[j, k]*pdv[k]
        pdv[j] = d
        piv[j] = rinv(d, Mm[j, j])
        for i in range(j + 1, p):
            s = Mm[i, j]
            for k in range(j):
                s -= L[i, k]*L[j, k]*pdv[k]
            L[i, j] = s*piv[j]
    for k in range(p):
        s = 0.0
        for j in range(n):
            s += abs(G[k, j]*z[j])
        pt[k] = 4.440892098500626e-16*s
        pr[k] = pr[k] - targets[k]
        pa[k] = 0.0
    for it in range(@MAXITER@):
        if it > 0:
            done = True
            for k in range(p):
                if not bmax(abs(pr[k]) - pt[k]) <= 0.0:
                    done = False
            if done:
                break
        for i in range(p):
            s = pr[i]
            for k in range(i):
                s -= L[i, k]*pu[k]
            pu[i] = s
        for i in range(p - 1, -1, -1):
            s = pu[i]*piv[i]
            for k in range(i + 1, p):
                s -= L[k, i]*pv[k]
            pv[i] = s
        for k in range(p):
            pa[k] = pa[k] - pv[k]
        for j in range(n):
            s = 0.0
            for k in range(p):
                s += G[k, j]*pa[k]
            inc[j] = s
            y[j] = z[j] + s
        gk_casimirs(pk, pc, pe, p, y, pr, G, False)
        for k in range(p):
            pr[k] = pr[k] - targets[k]


def gk_adaptive(t0, t1, h, rtol, atol, max_step, save_every, max_steps, since, ts, ys, z, e, cz,
                lie, terms, ci, cj, ck, cv, W, c, P, hasP, G2, norms, bern,
                A, b, E, fsal, order, pk, pc, pe):
    """The adaptive loop of an embedded pair on one trajectory (z, e: the state and its compensation,
    updated in place; cz: the projection's targets, empty without one) -> (status, t, h, nsteps, nrej,
    nsave, ts, ys) with the meaning of integrators.codegen.programs.adaptive_source: status 0 reached t1,
    -1 the step size fell below 10 eps |t| (or an accepted increment was not finite), -2 the budget of
    max_steps accepted steps was spent (t, h, z, e continue the run in a second call)."""
    n = z.shape[0]
    s = b.shape[0]
    p = cz.shape[0]
    nE = E.shape[0]
    K = np.zeros((s + 1, n))
    M = np.empty((n, n))
    W0 = np.empty(n)
    wv = np.empty(n)
    gv = np.empty(n)
    th = np.empty(n)
    Y = np.empty(n)
    xh = np.empty(n)
    d = np.empty(n)
    z1 = np.empty(n)
    wl = np.empty(n)
    et = np.empty(n)
    ez = np.empty(n)
    sc = np.empty(n)
    w1 = np.empty(n)
    w2 = np.empty(n)
    w3 = np.empty(n)
    w4 = np.empty(n)
    w5 = np.empty(n)
    inc = np.zeros(n)
    zp = np.empty(n)
    PG = np.zeros((p, n))
    PM = np.zeros((p, p))
    PL = np.zeros((p, p))
    pdv = np.zeros(p)
    piv = np.zeros(p)
    pt = np.zeros(p)
    pr = np.zeros(p)
    pu = np.zeros(p)
    pv = np.zeros(p)
    pa = np.zeros(p)
    if lie:
        gk_velocity(W, c, z, W0)
    else:
        gk_field(ci, cj, ck, cv, W, c, P, hasP, z, wv, gv, W0)
    if not h > 0.0:   # Hairer's starting step (genhelpers.hstart), from the ambient field
        if lie:
            gk_field(ci, cj, ck, cv, W, c, P, hasP, z, wv, gv, w1)
        else:
            for i in range(n):
                w1[i] = W0[i]
        iv = abs(t1 - t0)
        for i in range(n):
            sc[i] = atol + abs(z[i])*rtol
            w2[i] = z[i]/sc[i]
        d0 = gk_rms(w2, n)
        for i in range(n):
            w2[i] = w1[i]/sc[i]
        d1 = gk_rms(w2, n)
        h0 = hstart(0, d0, d1, 0.0, 0.0, order, iv, max_step)
        dh = h0 if t1 > t0 else -h0
        for i in range(n):
            Y[i] = z[i] + dh*w1[i]
        gk_field(ci, cj, ck, cv, W, c, P, hasP, Y, wv, gv, w3)
        for i in range(n):
            w2[i] = (w3[i] - w1[i])/sc[i]
        d2h = gk_rms(w2, n)
        h = hstart(1, d0, d1, d2h, h0, order, iv, max_step)
    expo = -1.0/(order + 1)
    t = t0
    direction = 1.0 if t1 > t0 else -1.0
    nsteps = 0
    nrej = 0
    j = 1
    status = 0
    while direction*(t1 - t) > 0.0:
        if nsteps >= max_steps:
            status = -2
            break
        if h > max_step:
            h = max_step
        last = False
        if direction*(t + direction*h - t1) >= 0.0:
            h = abs(t1 - t)
            last = True
        hs = direction*h
        # the stages (FSAL: the first is hs W0)
        for i in range(n):
            K[0, i] = hs*W0[i]
        for r in range(1, s):
            for i in range(n):
                th[i] = 0.0
            for q in range(r):
                a = A[r, q]
                if a != 0.0:
                    for i in range(n):
                        th[i] += a*K[q, i]
            if lie:
                gk_act(ci, cj, ck, cv, norms, th, z, False, Y, M, w1, w2, w3, w4, w5)
                gk_velocity(W, c, Y, wv)
                for i in range(n):
                    xh[i] = hs*wv[i]
                gk_dexpinv(ci, cj, ck, cv, G2, bern, terms, th, xh, gv, M, w1, w2)
                for i in range(n):
                    K[r, i] = gv[i]
            else:
                for i in range(n):
                    Y[i] = z[i] + th[i]
                gk_field(ci, cj, ck, cv, W, c, P, hasP, Y, wv, gv, xh)
                for i in range(n):
                    K[r, i] = hs*xh[i]
        # the increment d and the end point z1
        for i in range(n):
            th[i] = 0.0
        for q in range(s):
            if b[q] != 0.0:
                for i in range(n):
                    th[i] += b[q]*K[q, i]
        if lie:
            gk_act(ci, cj, ck, cv, norms, th, z, True, d, M, w1, w2, w3, w4, w5)
        else:
            for i in range(n):
                d[i] = th[i]
        for i in range(n):
            z1[i] = z[i] + d[i]
        if lie:
            gk_velocity(W, c, z1, wl)
            if fsal:
                for i in range(n):
                    xh[i] = hs*wl[i]
                gk_dexpinv(ci, cj, ck, cv, G2, bern, terms, th, xh, gv, M, w1, w2)
                for i in range(n):
                    K[s, i] = gv[i]
        else:
            gk_field(ci, cj, ck, cv, W, c, P, hasP, z1, wv, gv, wl)
            if fsal:
                for i in range(n):
                    K[s, i] = hs*wl[i]
        # the error norm (scipy's RK45 / DOP853)
        for i in range(n):
            az = abs(z[i])
            a1 = abs(z1[i])
            sc[i] = atol + rtol*(az if az > a1 else a1)
        e5 = 0.0
        e3 = 0.0
        for r in range(nE):
            for i in range(n):
                et[i] = 0.0
            for q in range(s + (1 if fsal else 0)):
                a = E[r, q]
                if a != 0.0:
                    for i in range(n):
                        et[i] += a*K[q, i]
            if lie:
                gk_coad(ci, cj, ck, cv, et, z, ez)
            else:
                for i in range(n):
                    ez[i] = et[i]
            acc = 0.0
            for i in range(n):
                v = ez[i]/sc[i]
                acc += v*v
            if r == 0:
                e5 = acc
            else:
                e3 = acc
        if nE == 1:
            err = bmax(@NORM1@)
        elif lie:
            err = bmax(@NORM2L@)
        else:
            err = bmax(@NORM2@)
        if err <= 1.0:
            chk = 0.0
            for i in range(n):
                chk += d[i]
            if not fin(chk):
                status = -1
                break
            if p > 0:   # onto {C = cz}; the next first stage at the projected point
                gk_project(pk, pc, pe, p, z1, cz, inc, zp, PG, PM, PL, pdv, piv, pt, pr, pu, pv, pa)
                gk_field(ci, cj, ck, cv, W, c, P, hasP, zp, wv, gv, wl)
                for i in range(n):
                    d[i] = d[i] + inc[i]
            for i in range(n):
                yk = d[i] + e[i]
                sk = z[i] + yk
                e[i] = (z[i] - sk) + yk
                z[i] = sk
                W0[i] = wl[i]
            t = t1 if last else t + hs
            nsteps += 1
            since += 1
            if since == save_every or last:
                since = 0
                if j >= ts.shape[0]:
                    ts, ys = grow(ts, ys)
                ts[j] = t
                for i in range(n):
                    ys[j, i] = z[i] + e[i]
                j += 1
            @ACCEPT@
            h = h*fac
        else:
            nrej += 1
            @REJECT@
            h = h*fac
            if h < 10.0*2.2e-16*abs(t) or h < 1e-300:
                status = -1
                break
    return status, t, h, nsteps, nrej, j, ts, ys
'''


def text() -> str:
    """The module text of the generic kernel, its constants filled in (dexp^-1 summed to round-off, the
    controller, the projection's iterations): the functions of :data:`FUNCTIONS`, unjitted."""
    subs = {"@ROUNDOFF@": str(int(ROUNDOFF_TERMS)), "@X2MAX@": repr(float(DEXPINV_X2MAX)),
            "@TOL3@": repr(float(DEXPINV_TOL * 3.0 / math.pi ** 2)), "@KMAX@": repr(float(DEXPINV_KMAX)),
            "@MAXITER@": str(int(MAX_ITER)),
            # the controller and the error norm of integrators.core.controller (n, expo: the loop's variables)
            "@NORM1@": controller.error_norm_source(["e5"], "n", "math.sqrt"),
            "@NORM2@": controller.error_norm_source(["e5", "e3"], "n", "math.sqrt"),
            "@NORM2L@": controller.error_norm_source(["e5", "e3"], "n", "math.sqrt", lie=True),
            "@ACCEPT@": controller.accepted_source("expo"), "@REJECT@": controller.rejected_source("expo")}
    out = _TEXT
    for k, v in subs.items():
        out = out.replace(k, v)
    return out
