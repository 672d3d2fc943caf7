"""The source text of the generic ensemble kernel: independent trajectories, each by the generic adaptive loop.

:mod:`integrators.codegen.generic_source` is one adaptive loop for every algebra (the structure constants, the
tableau and the projection as arrays). Its ensemble="independent" counterpart here runs that loop on every row of
an ensemble in a parallel loop over groups of trajectories (``numba.prange``; compiled with numba's disk cache by
:mod:`integrators.backends.generic_ensemble`, once per machine like the one-trajectory kernel): what the specialised
ensemble kernel (:func:`integrators.backends.batch_kernels.adaptive_independent`, one text per structure, minutes
to compile on a random basis) computes, with no compile per algebra.

For every trajectory b (Hairer, Norsett and Wanner I, II.4; each its own controller, as solve_ivp per row):

* the state z = Z[b], its compensation e = 0, the projection targets cz = CZ[b] (the Casimirs C(y0) of a
  projected pair, the linear invariants' values of a forced problem's RKMK pair; none otherwise);
* W0 = the first stage at z and the first step H0[b] (Hairer's starting step when H0[b] <= 0: ``gk_start``);
* the steps of ``gk_steps`` from t0 to t1 (at most ``max_steps`` accepted), saving only the end point, filling
  the trajectory's rows YE[b] (G, n) of the output grid TEV from its own accepted steps (the continuous
  extension, :mod:`integrators.codegen.dense_source`'s definition) from the index GI[b];
* OUT[b] = z + e (the last finite state when it failed: an increment that is not finite is not taken), ST[b] the
  status (0 reached t1, -1 the step size collapsed or the increment was not finite, -2 the budget), TE[b] the
  time reached, NS[b], NR[b] the accepted and rejected steps, GI[b] the next grid index, PK[b] the peak of its
  accepted steps (zmax, tmax, hmax: the largest |z|_inf, its time and step, as the one-trajectory loop tracks it
  for :mod:`integrators.engine.growth`).

A trajectory that fails stops alone; the others run on. Every step of a trajectory is the one-trajectory loop's,
so each row equals the single run of the generic kernel (:func:`integrators.backends.generic_kernel.function`)
from that y0 to round-off.

The work arrays (``gk_work``) are allocated once per group, not per trajectory: ``gk_group`` (with numba's
reference counting: it allocates and slices) runs the trajectories lo..hi-1 of one group one after another by
``gk_one``, which like ``gk_steps`` and every function it calls allocates nothing and is compiled without
reference counting (a call of a reference-counted function increments and decrements the count of each of its
~70 array arguments atomically). The entry ``gk_ensemble`` (``parallel=True``) is a ``prange`` over the groups;
:mod:`integrators.backends.generic_ensemble` makes more groups than threads and sets numba's chunk size to one
group, so a thread that finishes its group takes the next (the trajectories' costs differ).

The ambient pairs (RK forms, projected or not, unforced or with the multiplier force) without an output grid go
in lanes instead (``gl_group``, ``gl_run``; the specialised kernel's lanes,
:func:`integrators.codegen.ensemble_source.lanes_source`, do the same per structure): a group keeps L trajectories
in the columns of (n, L) arrays and computes one attempt of all of them at once, every operation of the
one-trajectory loop (``gk_field``: w = W z + c, ad*_w z over the non-zero entries of C, (I - P) g; the stage sums
over the rows of A, b, E; the scale atol + rtol max(|z|, |z1|) and the error sums) in the same order, the innermost
loop over the lanes (contiguous: the compiler vectorizes it); then each lane's controller as gk_steps has it
(acceptance, the projection of an accepted step and the next first stage there, Kahan's sum, the step factor, the
budget, the collapse of the step size; a projected pair's Casimir projection over the lanes too, ``gl_project``:
gk_project's simplified Newton iterations per lane, a lane leaving them at its own stopping test). A lane whose
trajectory ended takes the group's next one (its first stage
and first step by ``gk_start``); an empty lane computes zeros. So each trajectory takes the single loop's steps
and ends at its state (bitwise, where the compiler contracts nothing). 10^4 servo-constraints of the first kind on
Bianchi VI_-2.5 (rk853, 9.6 attempts a trajectory): 116 ms of CPU one trajectory after another, 10.5 ms in 64
lanes (the specialised lanes: 2.4 ms); 10^4 free Euler-Poincare states on so(4) (rk853_projected, 5.8 attempts):
40 ms of CPU with the projection per lane, 17 ms with it over the lanes (14.3 ms with the Casimirs' monomial
tables of liegroups.monomials; rk853 without projection 14.6 ms).

With an output grid every pair runs one trajectory after another: the grid's points dominate there (a 1001-point
grid on 2000 trajectories, Bianchi VI servo1 rk853: 178 us a trajectory, ~180 ns a point), and a lane version
that filled the grid from the lanes' stages measured the same (357 against 373 ms; so(4) free rk853_projected 1281
against 1098 ms).

The output grid's rows are YE (B, G, n): one trajectory's rows contiguous (the loop's ``ye`` of one trajectory);
the caller transposes to the ensemble's (G, B, n).
"""

from __future__ import annotations

from ..core import controller
from . import generic_source
from .ensemble_source import NEVER
from .projection import MAX_ITER, TOL_FACTOR

#: the functions of the ensemble, in the order of their definition (after those of generic_source)
FUNCTIONS = ("gk_one", "gk_group", "gl_field", "gl_combine", "gl_casimirs", "gl_project", "gl_start", "gl_finish",
             "gl_run", "gl_group", "gk_ensemble")

#: the parallel entry
ENTRY = "gk_ensemble"

#: the functions that allocate (compiled with numba's reference counting; the entry also ``parallel=True``)
ALLOCATING = generic_source.ALLOCATING + ("gk_group", "gl_group", ENTRY)

_DATA = ("lie, terms, ci, cj, ck, cv, W, c, P, hasP, G2, bern, A, b, E, fsal, order, XA, PD, qb, qp, qi, qv, qc, "
         "pL, pG")
_WORK = ("K, M, W0, wv, gv, th, Y, xh, d, z1, wl, et, ez, sc, w1, w2, w3, w4, w5, w6, w7, inc, zp, yg, zb, PG, PM, PL, "
         "pdv, piv, pt, pr, pu, pv, pa, mon, pk")
_RUN = "t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, TEV, YE, GI, PK"

_TEXT_HEAD = '''

def gk_one(bt, t0, t1, h, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, TEV, ye, GI, PK, ts, ys, z,
           e, cz, @DATA@,
           @WORK@):
    """Trajectory bt of the ensemble from Z[bt] with first step h (<= 0: Hairer's) by gk_steps, into OUT[bt], ST[bt],
    TE[bt], NS[bt], NR[bt], its peak PK[bt] (zmax, tmax, hmax), its grid rows ye from GI[bt]; z, e, cz, ts, ys and
    the work arrays are the group's."""
    n = z.shape[0]
    pk[0] = 0.0
    pk[1] = t0
    pk[2] = 0.0
    for i in range(n):
        z[i] = Z[bt, i]
        e[i] = 0.0
    for k in range(cz.shape[0]):
        cz[k] = CZ[bt, k]
    h = gk_start(t0, t1, h, rtol, atol, max_step, z, lie, ci, cj, ck, cv, W, c, P, hasP, order, W0, wv, gv, w1, w2,
                 w3, Y, sc)
    t = t0
    nsteps = 0
    nrej = 0
    since = 0
    gi = GI[bt]
    while True:   # saves only the end point (save_every NEVER): ts, ys have its row; -3 only defensively
        status, t, h, nsteps, nrej, since, j, gi = gk_steps(
            t, t1, h, rtol, atol, max_step, @NEVER@, max_steps, since, nsteps, nrej, 1, gi, ts, ys, z, e, cz,
            TEV, ye, lie, terms, ci, cj, ck, cv, W, c, P, hasP, G2, bern, A, b, E, fsal, order, XA, PD, qb, qp, qi, qv, qc,
            pL, pG, @WORK@)
        if status != -3:
            break
    for i in range(n):
        OUT[bt, i] = z[i] + e[i]
    ST[bt] = status
    TE[bt] = t
    NS[bt] = nsteps
    NR[bt] = nrej
    GI[bt] = gi
    for k in range(3):
        PK[bt, k] = pk[k]


def gk_group(lo, hi, @RUN@, @DATA@):
    """The trajectories lo..hi-1 one after another with one set of work arrays (gk_work)."""
    n = Z.shape[1]
    forced = lie and hasP
    gd = 2*n if forced else n
    p = CZ.shape[1]
    (@WORK@) = gk_work(n, gd, p, PD, qb)
    ts = np.empty(2)
    ys = np.empty((2, n))
    z = np.empty(n)
    e = np.empty(n)
    cz = np.empty(p)
    for bt in range(lo, hi):
        gk_one(bt, t0, t1, H0[bt], rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, TEV, YE[bt], GI, PK,
               ts, ys, z, e, cz, @DATA@, @WORK@)


def gl_field(ci, cj, ck, cv, W, c, P, hasP, Y, w, g, out, L):
    """out[:, l] = (I - P) ad*_{W Y[:, l] + c} Y[:, l] for the lanes l < L (gk_field's operations in its order, each
    over the lanes: the innermost loops run over contiguous lanes, which the compiler vectorizes); w, g (n, L) work."""
    n = Y.shape[0]
    for i in range(n):
        for l in range(L):
            w[i, l] = 0.0
        j = 0
        while j + 3 < n:   # four terms a pass over the lanes (the sum in gk_velocity's order: fewer loads, stores)
            w0 = W[i, j]
            w1 = W[i, j + 1]
            w2 = W[i, j + 2]
            w3 = W[i, j + 3]
            for l in range(L):
                w[i, l] = (((w[i, l] + w0*Y[j, l]) + w1*Y[j + 1, l]) + w2*Y[j + 2, l]) + w3*Y[j + 3, l]
            j += 4
        while j < n:
            wij = W[i, j]
            for l in range(L):
                w[i, l] += wij*Y[j, l]
            j += 1
        ci_ = c[i]
        for l in range(L):
            w[i, l] = w[i, l] + ci_
    dst = g if hasP else out
    for i in range(n):
        for l in range(L):
            dst[i, l] = 0.0
    T = cv.shape[0]
    t = 0
    while t < T:   # the entries of C sorted by j: up to four of one j a pass over the lanes, in gk_coad's order
        j = cj[t]
        if t + 3 < T and cj[t + 1] == j and cj[t + 2] == j and cj[t + 3] == j:
            a0 = ci[t]
            a1 = ci[t + 1]
            a2 = ci[t + 2]
            a3 = ci[t + 3]
            k0 = ck[t]
            k1 = ck[t + 1]
            k2 = ck[t + 2]
            k3 = ck[t + 3]
            v0 = cv[t]
            v1 = cv[t + 1]
            v2 = cv[t + 2]
            v3 = cv[t + 3]
            for l in range(L):
                dst[j, l] = ((((dst[j, l] + v0*w[a0, l]*Y[k0, l]) + v1*w[a1, l]*Y[k1, l]) + v2*w[a2, l]*Y[k2, l])
                             + v3*w[a3, l]*Y[k3, l])
            t += 4
        else:
            a = ci[t]
            k = ck[t]
            v = cv[t]
            for l in range(L):
                dst[j, l] += v*w[a, l]*Y[k, l]
            t += 1
    if hasP:
        for i in range(n):
            for l in range(L):
                out[i, l] = 0.0
            for j in range(n):
                q = (1.0 if i == j else 0.0) - P[i, j]
                for l in range(L):
                    out[i, l] += q*g[j, l]


def gl_combine(coef, nq, K, out, L):
    """out[:, l] = sum_q coef[q] K[q, :, l] over q < nq with coef[q] != 0 (gk_stage's theta, in its order)."""
    n = out.shape[0]
    for i in range(n):
        for l in range(L):
            out[i, l] = 0.0
    for q in range(nq):
        a = coef[q]
        if a != 0.0:
            for i in range(n):
                for l in range(L):
                    out[i, l] += a*K[q, i, l]

'''

_LANE_CASIMIRS = '''
def gl_casimirs(qb, qp, qi, qv, qc, p, z, vals, G, grad, mon, acc, sl, L):
    """gk_casimirs over the lanes l < L (its operations in its order): vals[k, l] = C_k(z[:, l]) and with ``grad``
    G[k, j, l] = dC_k/dz_j, from the monomial tables (qb, the sparse rows qp, qi, qv of H and D, the constants qc);
    mon (monomials, L) the monomials below the top degree, acc, sl (L) work."""
    n = z.shape[0]
    for l in range(L):
        mon[0, l] = 1.0
    for r in range(qb.shape[0]):
        c0 = qb[r, 0]
        p0 = qb[r, 2]
        j = qb[r, 3]
        for c in range(qb[r, 1]):
            for l in range(L):
                mon[c0 + c, l] = mon[p0 + c, l]*z[j, l]
    pn = p*n
    for k in range(p):
        for l in range(L):
            acc[l] = qc[k]
        for j in range(n):
            row = k*n + j
            for l in range(L):
                sl[l] = 0.0
            for t in range(qp[row], qp[row + 1]):
                v = qv[t]
                m = qi[t]
                for l in range(L):
                    sl[l] += v*mon[m, l]
            for l in range(L):
                acc[l] += z[j, l]*sl[l]
            if grad:
                for l in range(L):
                    G[k, j, l] = 0.0
                for t in range(qp[pn + row], qp[pn + row + 1]):
                    v = qv[t]
                    m = qi[t]
                    for l in range(L):
                        G[k, j, l] += v*mon[m, l]
        for l in range(L):
            vals[k, l] = acc[l]
'''

_TEXT_TAIL = '''

def gl_project(qb, qp, qi, qv, qc, p, z, targets, inc, y, G, Mm, Lf, pdv, piv, pt, pr, pu, pv, pa, mon, acc, sl,
               act, L):
    """gk_project over the lanes l < L (its operations in its order): inc[:, l] = G^T lambda projecting z[:, l]
    onto {C = targets[:, l]}, y = z + inc, simplified Newton with one L D L^T factorisation per lane; a lane
    leaves the iterations at the single loop's stopping test (act[l] False: its inc, y kept), at most @MAXITER@."""
    n = z.shape[0]
    gl_casimirs(qb, qp, qi, qv, qc, p, z, pr, G, True, mon, acc, sl, L)
    for k in range(p):
        for m in range(k + 1):
            for l in range(L):
                Mm[k, m, l] = 0.0
            for j in range(n):
                for l in range(L):
                    Mm[k, m, l] += G[k, j, l]*G[m, j, l]
    for j in range(p):
        for l in range(L):
            pdv[j, l] = Mm[j, j, l]
        for k in range(j):
            for l in range(L):
                pdv[j, l] -= Lf[j, k, l]*Lf[j, k, l]*pdv[k, l]
        for l in range(L):
            piv[j, l] = rinv(pdv[j, l], Mm[j, j, l])
        for i in range(j + 1, p):
            for l in range(L):
                Lf[i, j, l] = Mm[i, j, l]
            for k in range(j):
                for l in range(L):
                    Lf[i, j, l] -= Lf[i, k, l]*Lf[j, k, l]*pdv[k, l]
            for l in range(L):
                Lf[i, j, l] = Lf[i, j, l]*piv[j, l]
    for k in range(p):
        for l in range(L):
            pt[k, l] = 0.0
        for j in range(n):
            for l in range(L):
                pt[k, l] += abs(G[k, j, l]*z[j, l])
        for l in range(L):
            pt[k, l] = 4.440892098500626e-16*pt[k, l]
            pr[k, l] = pr[k, l] - targets[k, l]
            pa[k, l] = 0.0
    for l in range(L):
        act[l] = True
    for it in range(@MAXITER@):
        if it > 0:
            more = False
            for l in range(L):
                if act[l]:
                    done = True
                    for k in range(p):
                        if not bmax(abs(pr[k, l]) - @TOLFACTOR@*pt[k, l]) <= 0.0:
                            done = False
                    act[l] = not done
                    more = more or not done
            if not more:
                break
        for i in range(p):
            for l in range(L):
                pu[i, l] = pr[i, l]
            for k in range(i):
                for l in range(L):
                    pu[i, l] -= Lf[i, k, l]*pu[k, l]
        for i in range(p - 1, -1, -1):
            for l in range(L):
                pv[i, l] = pu[i, l]*piv[i, l]
            for k in range(i + 1, p):
                for l in range(L):
                    pv[i, l] -= Lf[k, i, l]*pv[k, l]
        for k in range(p):
            for l in range(L):
                if act[l]:
                    pa[k, l] = pa[k, l] - pv[k, l]
        for j in range(n):
            for l in range(L):
                if act[l]:
                    inc[j, l] = 0.0
            for k in range(p):
                for l in range(L):
                    if act[l]:
                        inc[j, l] += G[k, j, l]*pa[k, l]
            for l in range(L):
                if act[l]:
                    y[j, l] = z[j, l] + inc[j, l]
        gl_casimirs(qb, qp, qi, qv, qc, p, y, pr, G, False, mon, acc, sl, L)
        for k in range(p):
            for l in range(L):
                pr[k, l] = pr[k, l] - targets[k, l]


def gl_start(bt, l, t0, t1, H0, rtol, atol, max_step, Z, CZ, zl, el, W0l, czl, tl, hl, nsl, nrl, idx, ci, cj, ck,
             cv, W, c, P, hasP, order, z, W0, wv, gv, w1, w2, w3, Y, sc, pkl):
    """Lane l takes trajectory bt: its state Z[bt] (compensation 0), targets CZ[bt], first stage and first step
    (gk_start: Hairer's when H0[bt] <= 0)."""
    n = z.shape[0]
    for i in range(n):
        z[i] = Z[bt, i]
        zl[i, l] = z[i]
        el[i, l] = 0.0
    for k in range(CZ.shape[1]):
        czl[k, l] = CZ[bt, k]
    h = gk_start(t0, t1, H0[bt], rtol, atol, max_step, z, False, ci, cj, ck, cv, W, c, P, hasP, order, W0, wv, gv,
                 w1, w2, w3, Y, sc)
    for i in range(n):
        W0l[i, l] = W0[i]
    tl[l] = t0
    pkl[0, l] = 0.0
    pkl[1, l] = t0
    pkl[2, l] = 0.0
    hl[l] = h
    nsl[l] = 0
    nrl[l] = 0
    idx[l] = bt


def gl_finish(l, status, OUT, ST, TE, NS, NR, zl, el, W0l, tl, nsl, nrl, idx, PK, pkl):
    """Lane l's trajectory ends with ``status``: its results written, the lane emptied (zeros: harmless arithmetic)."""
    bt = idx[l]
    n = zl.shape[0]
    for i in range(n):
        OUT[bt, i] = zl[i, l] + el[i, l]
        zl[i, l] = 0.0
        el[i, l] = 0.0
        W0l[i, l] = 0.0
    ST[bt] = status
    TE[bt] = tl[l]
    NS[bt] = nsl[l]
    NR[bt] = nrl[l]
    for k in range(3):
        PK[bt, k] = pkl[k, l]
    idx[l] = -1


def gl_run(lo, hi, t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, PK, L,
           ci, cj, ck, cv, W, c, P, hasP, A, b, E, fsal, order, qb, qp, qi, qv, qc, pL, pG,
           Kl, zl, el, W0l, czl, Yl, thl, wl_, gl_, Fl, dl, z1l, scl, e5l, e3l, tl, hl, hsl, lastl, nsl, nrl, idx,
           Gl, Mml, Lfl, pdvl, pivl, ptl, prl, pul, pvl, pal, incl, zpl, monl, acc, sl, act,
           @WORK@, z, cz, pkl):
    """The trajectories lo..hi-1 of an ambient pair in L lanes (gk_steps' loop, one attempt of every lane at
    once): the stages, the end point and the error sums over the lanes (gl_field, gl_combine), then per lane
    the controller of gk_steps (accept or reject, the projection of an accepted step by gk_projection with the
    next first stage there, Kahan's sum, the budget); a lane whose trajectory ended takes the next one."""
    n = Z.shape[1]
    s = b.shape[0]
    p = CZ.shape[1]
    nE = E.shape[0]
    expo = -1.0/(order + 1)
    direction = 1.0 if t1 > t0 else -1.0
    nxt = lo
    active = 0
    for l in range(L):
        idx[l] = -1
        for i in range(n):
            zl[i, l] = 0.0
            el[i, l] = 0.0
            W0l[i, l] = 0.0
        hsl[l] = 0.0
        if nxt < hi:
            gl_start(nxt, l, t0, t1, H0, rtol, atol, max_step, Z, CZ, zl, el, W0l, czl, tl, hl, nsl, nrl, idx,
                     ci, cj, ck, cv, W, c, P, hasP, order, z, W0, wv, gv, w1, w2, w3, Y, sc, pkl)
            nxt += 1
            active += 1
    while active > 0:
        for l in range(L):   # the step of each lane (gk_steps: the budget, max_step, the last step)
            if idx[l] < 0:
                hsl[l] = 0.0
                continue
            while idx[l] >= 0 and (not direction*(t1 - tl[l]) > 0.0 or nsl[l] >= max_steps):
                gl_finish(l, 0 if not direction*(t1 - tl[l]) > 0.0 else -2, OUT, ST, TE, NS, NR, zl, el, W0l,
                          tl, nsl, nrl, idx, PK, pkl)
                active -= 1
                if nxt < hi:
                    gl_start(nxt, l, t0, t1, H0, rtol, atol, max_step, Z, CZ, zl, el, W0l, czl, tl, hl, nsl,
                             nrl, idx, ci, cj, ck, cv, W, c, P, hasP, order, z, W0, wv, gv, w1, w2, w3, Y, sc, pkl)
                    nxt += 1
                    active += 1
            if idx[l] < 0:
                hsl[l] = 0.0
                continue
            h = hl[l]
            if h > max_step:
                h = max_step
            last = False
            if direction*(tl[l] + direction*h - t1) >= 0.0:
                h = abs(t1 - tl[l])
                last = True
            hl[l] = h
            lastl[l] = last
            hsl[l] = direction*h
        if active == 0:
            break
        # the stages of all lanes (FSAL: the first is hs W0)
        for i in range(n):
            for l in range(L):
                Kl[0, i, l] = hsl[l]*W0l[i, l]
        for r in range(1, s):
            gl_combine(A[r], r, Kl, thl, L)
            for i in range(n):
                for l in range(L):
                    Yl[i, l] = zl[i, l] + thl[i, l]
            gl_field(ci, cj, ck, cv, W, c, P, hasP, Yl, wl_, gl_, Fl, L)
            for i in range(n):
                for l in range(L):
                    Kl[r, i, l] = hsl[l]*Fl[i, l]
        gl_combine(b, s, Kl, dl, L)
        for i in range(n):
            for l in range(L):
                z1l[i, l] = zl[i, l] + dl[i, l]
        gl_field(ci, cj, ck, cv, W, c, P, hasP, z1l, wl_, gl_, Fl, L)
        if fsal:
            for i in range(n):
                for l in range(L):
                    Kl[s, i, l] = hsl[l]*Fl[i, l]
        for i in range(n):
            for l in range(L):
                az = abs(zl[i, l])
                a1 = abs(z1l[i, l])
                scl[i, l] = atol + rtol*(az if az > a1 else a1)
        for r in range(nE):
            gl_combine(E[r], s + (1 if fsal else 0), Kl, thl, L)
            for l in range(L):
                e5l[l] = 0.0
            for i in range(n):
                for l in range(L):
                    v = thl[i, l]/scl[i, l]
                    e5l[l] += v*v
            if r == 0:
                for l in range(L):
                    e3l[l] = e5l[l]
            else:   # (e3l: the first sum, e5l: the second; swapped below)
                for l in range(L):
                    v = e5l[l]
                    e5l[l] = e3l[l]
                    e3l[l] = v
        lanep = p > 0 and pL.shape[0] == 0
        if lanep:   # the Casimir projection of every lane's end point and the next first stage there (gl_project)
            gl_project(qb, qp, qi, qv, qc, p, z1l, czl, incl, zpl, Gl, Mml, Lfl, pdvl, pivl, ptl, prl, pul, pvl, pal,
                       monl, acc, sl, act, L)
            gl_field(ci, cj, ck, cv, W, c, P, hasP, zpl, wl_, gl_, Fl, L)
        for l in range(L):   # the controller of each lane (gk_steps)
            if idx[l] < 0:
                continue
            if nE == 1:
                e5 = e3l[l]
                err = bmax(@NORM1@)
            else:
                e5 = e5l[l]
                e3 = e3l[l]
                err = bmax(@NORM2@)
            if err <= 1.0:
                chk = 0.0
                for i in range(n):
                    chk += dl[i, l]
                if not fin(chk):
                    gl_finish(l, -1, OUT, ST, TE, NS, NR, zl, el, W0l, tl, nsl, nrl, idx, PK, pkl)
                    active -= 1
                    if nxt < hi:
                        gl_start(nxt, l, t0, t1, H0, rtol, atol, max_step, Z, CZ, zl, el, W0l, czl, tl, hl, nsl,
                                 nrl, idx, ci, cj, ck, cv, W, c, P, hasP, order, z, W0, wv, gv, w1, w2, w3, Y, sc, pkl)
                        nxt += 1
                        active += 1
                    continue
                if lanep:   # projected above (the next first stage in Fl)
                    for i in range(n):
                        dl[i, l] = dl[i, l] + incl[i, l]
                elif p > 0:   # onto {L z = cz}; the next first stage at the projected point
                    for i in range(n):
                        z1[i] = z1l[i, l]
                    for k in range(p):
                        cz[k] = czl[k, l]
                    gk_projection(pL, pG, qb, qp, qi, qv, qc, p, z1, cz, inc, zp, PG, PM, PL, pdv, piv, pt, pr, pu, pv,
                                  pa, mon)
                    gk_field(ci, cj, ck, cv, W, c, P, hasP, zp, wv, gv, wl)
                    for i in range(n):
                        Fl[i, l] = wl[i]
                        dl[i, l] = dl[i, l] + inc[i]
                for i in range(n):
                    yk = dl[i, l] + el[i, l]
                    sk = zl[i, l] + yk
                    el[i, l] = (zl[i, l] - sk) + yk
                    zl[i, l] = sk
                    W0l[i, l] = Fl[i, l]
                tl[l] = t1 if lastl[l] else tl[l] + hsl[l]
                nsl[l] += 1
                zn = 0.0
                for i in range(n):
                    zn = max(zn, abs(zl[i, l]))
                if zn > pkl[0, l]:    # the lane's peak (integrators.engine.growth), as gk_steps tracks it
                    pkl[0, l] = zn
                    pkl[1, l] = tl[l]
                    pkl[2, l] = hsl[l]
                @ACCEPT@
                hl[l] = hl[l]*fac
            else:
                nrl[l] += 1
                @REJECT@
                h = hl[l]*fac
                hl[l] = h
                if h < 10.0*2.2e-16*abs(tl[l]) or h < 1e-300:
                    gl_finish(l, -1, OUT, ST, TE, NS, NR, zl, el, W0l, tl, nsl, nrl, idx, PK, pkl)
                    active -= 1
                    if nxt < hi:
                        gl_start(nxt, l, t0, t1, H0, rtol, atol, max_step, Z, CZ, zl, el, W0l, czl, tl, hl, nsl,
                                 nrl, idx, ci, cj, ck, cv, W, c, P, hasP, order, z, W0, wv, gv, w1, w2, w3, Y, sc, pkl)
                        nxt += 1
                        active += 1


def gl_group(lo, hi, @RUN@, L, @DATA@):
    """The trajectories lo..hi-1 of an ambient pair in L lanes (gl_run) with the lanes' arrays and one set of
    gk_work's arrays allocated here."""
    n = Z.shape[1]
    s = b.shape[0]
    p = CZ.shape[1]
    (@WORK@) = gk_work(n, n, p, PD, qb)
    Kl = np.zeros((s + 1, n, L))
    zl = np.zeros((n, L))
    el = np.zeros((n, L))
    W0l = np.zeros((n, L))
    czl = np.zeros((p, L))
    Yl = np.zeros((n, L))
    thl = np.zeros((n, L))
    wl_ = np.zeros((n, L))
    gl_ = np.zeros((n, L))
    Fl = np.zeros((n, L))
    dl = np.zeros((n, L))
    z1l = np.zeros((n, L))
    scl = np.ones((n, L))
    e5l = np.zeros(L)
    e3l = np.zeros(L)
    tl = np.zeros(L)
    hl = np.zeros(L)
    hsl = np.zeros(L)
    lastl = np.zeros(L, np.bool_)
    nsl = np.zeros(L, np.int64)
    nrl = np.zeros(L, np.int64)
    idx = np.full(L, -1, np.int64)
    Gl = np.zeros((p, n, L))
    Mml = np.zeros((p, p, L))
    Lfl = np.zeros((p, p, L))
    pdvl = np.zeros((p, L))
    pivl = np.zeros((p, L))
    ptl = np.zeros((p, L))
    prl = np.zeros((p, L))
    pul = np.zeros((p, L))
    pvl = np.zeros((p, L))
    pal = np.zeros((p, L))
    incl = np.zeros((n, L))
    zpl = np.zeros((n, L))
    monl = np.zeros((mon.shape[0], L))
    acc = np.zeros(L)
    sl = np.zeros(L)
    act = np.zeros(L, np.bool_)
    z = np.empty(n)
    cz = np.empty(p)
    pkl = np.zeros((3, L))
    gl_run(lo, hi, t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, PK, L,
           ci, cj, ck, cv, W, c, P, hasP, A, b, E, fsal, order, qb, qp, qi, qv, qc, pL, pG,
           Kl, zl, el, W0l, czl, Yl, thl, wl_, gl_, Fl, dl, z1l, scl, e5l, e3l, tl, hl, hsl, lastl, nsl, nrl, idx,
           Gl, Mml, Lfl, pdvl, pivl, ptl, prl, pul, pvl, pal, incl, zpl, monl, acc, sl, act,
           @WORK@, z, cz, pkl)


def gk_ensemble(@RUN@, groups, lanes, @DATA@):
    """Every row of Z (B, n) from t0 to t1 on its own (the module's docstring): B trajectories in ``groups``
    contiguous groups, a prange over the groups."""
    B = Z.shape[0]
    size = (B + groups - 1)//groups
    for g in numba.prange(groups):
        lo = g*size
        hi = min(B, lo + size)
        if lo < hi and lanes > 0:
            gl_group(lo, hi, @RUN@, lanes, @DATA@)
        elif lo < hi:
            gk_group(lo, hi, @RUN@, @DATA@)
'''

_TEXT = _TEXT_HEAD + _LANE_CASIMIRS + _TEXT_TAIL

#: the functions of ROWS_TEXT, compiled on their own by :mod:`integrators.backends.casimir_rows` (the end-of-run
#: check of :mod:`integrators.engine.guard` reads a run's Casimirs on its saved states through them)
ROWS_FUNCTIONS = ("gl_casimirs", "gk_casimir_rows")

ROWS_TEXT = _LANE_CASIMIRS + '''

def gk_casimir_rows(qb, qp, qi, qv, qc, ZT, out, G, mon, acc, sl):
    """out[k, r] = C_k(z_r) at the states z_r = ZT[:, r] (ZT (n, K)): gl_casimirs on blocks of B = mon.shape[1]
    states, the states of a block its lanes (G (p, n, B), acc and sl (B,) work)."""
    K = ZT.shape[1]
    p = qc.shape[0]
    B = mon.shape[1]
    for a in range(0, K, B):
        w = min(K, a + B) - a
        gl_casimirs(qb, qp, qi, qv, qc, p, ZT[:, a:a + w], out[:, a:a + w], G, False, mon, acc, sl, w)
'''



def text() -> str:
    """The module text of the generic ensemble kernel: :func:`integrators.codegen.generic_source.text` and the
    functions of :data:`FUNCTIONS` (unjitted; the loader jits them, ``numba`` in its namespace)."""
    out = _TEXT.replace("@DATA@", _DATA).replace("@WORK@", _WORK).replace("@RUN@", _RUN)
    subs = {"@NEVER@": str(int(NEVER)), "@MAXITER@": str(int(MAX_ITER)), "@TOLFACTOR@": repr(float(TOL_FACTOR)),
            # the controller and the error norm of integrators.core.controller (as generic_source writes them)
            "@NORM1@": controller.error_norm_source(["e5"], "n", "math.sqrt"),
            "@NORM2@": controller.error_norm_source(["e5", "e3"], "n", "math.sqrt"),
            "@ACCEPT@": controller.accepted_source("expo"), "@REJECT@": controller.rejected_source("expo")}
    for k, v in subs.items():
        out = out.replace(k, v)
    return generic_source.text() + out
