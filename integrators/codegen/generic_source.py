"""The source text of the generic adaptive kernel: one loop for every algebra, the structure as data.

The generated programs of :mod:`integrators.codegen.programs` are straight-line code written per structure
(the non-zero entries of C and W are constants in the text), so a new algebra is a new text and, under
numba, a new compile (13-190 s for the DOP853-sized loops, ``benchmarks/RESULTS.md``, "Drawn systems").
The text here is written once: the structure constants enter as sparse arrays (index triples ``ci, cj,
ck`` and values ``cv`` of C[i, j, k]), the velocity w = W z + c as a dense W and c, the multiplier
projector P of a forced problem as a dense matrix, the tableau as arrays (A, b, the error rows E with the
FSAL stage as their last column), the Casimirs of a projected pair as the sparse tables of their
monomials (:func:`liegroups.monomials.monomial_tables`), the linear invariants of a forced problem as rows. Compiled with numba's disk
cache (:func:`integrators.backends.generic_kernel.kernel`), it is compiled once per machine and numba
version, independent of the algebra.

It computes what the generated loop computes (and so what the numpy reference does, to round-off), for a
coadjoint problem z' = ad*_{w(z)} z + f(z), w = W z + c, unforced (f = 0) or with the multiplier force
f = -P ad*_w z (servo-constraints of the first kind, several constraints, Suslov's problem):

* ambient Runge-Kutta stages K_i = h F(z + sum_j a_ij K_j), F(z) = (I - P) ad*_{W z + c} z (P = 0 unforced);
* RKMK stages K_i = h dexpinv_{theta_i}(xi(exp(theta_i) . z)) (Munthe-Kaas 1999), the generator xi(z) = w in g
  (unforced) or (w, -P ad*_w z) in g x g* (forced: :class:`integrators.codegen.affine_source.AffineSource`),
  its action, dexp^-1 and the error estimate mapped to the state as
  :mod:`integrators.codegen.generic_group_source` writes them (the action by the scaled Taylor series with the
  writers' plan ``tplan``, dexp^-1 the Bernoulli series with the bracket of g or g x g*, summed to round-off);
* the error norm of scipy's RK45 / DOP853 (Hairer, Norsett and Wanner I, II.4; DOP853 in RKMK form with the
  damping exponent of :data:`integrators.core.controller.LIE_DOP853_GAMMA`), for RKMK mapped to the
  state by ad*_{err} z (+ the g* part of err when forced); the controller of :mod:`integrators.core.controller`
  (its constants are written into the text, so a change of them changes the text and its cache); Hairer's
  starting step (``hstart``, ``rmsq`` of :mod:`integrators.reference.genhelpers`) from the ambient field when
  h <= 0; Kahan's compensated sum of the increments (Hairer, McLachlan and Razakarivony 2008);
* the projection of every accepted step (:mod:`integrators.codegen.generic_projection_source`): onto the
  Casimirs' level set for the projected pairs, onto the linear invariants {L z = L z0} for the RKMK pairs of a
  forced problem that declares them (:mod:`integrators.codegen.linear_projection`); the next first stage at
  the projected point;
* the output grid (``te, ye, GI``; the definition of :mod:`integrators.codegen.dense_source`, whose specialised
  loop "adaptive_grid" the tests compare with): for an accepted step from (t, z) with stage increments K_i (the
  step's, the FSAL one and the interpolant's extra stages K_i = the stage of the rows ``extra_A``, computed once
  for a step that contains requested times, ``gk_stage`` as the step's own), every requested time strictly inside
  it has s = (t_out - t) / h and theta(s) = sum_i b_i(s) K_i, b_i(s) = sum_k P[i, k] s^(k+1) (the tableau's P,
  Horner), the state zb + theta(s) (ambient) or exp(theta(s)) . zb (RKMK, the action of the step; in g x g* when
  forced), zb = z + e, then projected as the step is (``gk_dense``); a requested time equal to a step's end takes
  the step's state. The coefficients are the tableau's arrays, so DOP853's extra stages and order-7 interpolant and
  the 5(4) pairs' dense output are the same text.

The helpers the text calls (``tplan``, ``hstart``, ``rmsq``, ``fin``, ``bmax``, ``rinv``, ``grow``) are those
of :mod:`integrators.reference.genhelpers`, put into the module's namespace by the loader (jitted under
numba, plain Python floats otherwise). One trajectory; :mod:`integrators.codegen.generic_ensemble_source` runs
this loop on every trajectory of an independent ensemble (``gk_work``, ``gk_start`` and ``gk_steps`` are its
pieces).
"""

from __future__ import annotations

import math

from ..core import controller
from ..geometry.spaces import AFFINE_SCALE_FLOOR, DEXPINV_KMAX, DEXPINV_TOL, DEXPINV_X2MAX, ROUNDOFF_TERMS
from . import generic_group_source, generic_projection_source
from .projection import MAX_ITER, TOL_FACTOR

#: the functions of the text, in the order of their definition (each jitted by the loader)
FUNCTIONS = (("gk_velocity", "gk_coad", "gk_field", "gk_matvec", "gk_rms") + generic_group_source.FUNCTIONS
             + generic_projection_source.FUNCTIONS + ("gk_first", "gk_stage", "gk_dense", "gk_steps", "gk_work", "gk_start",
                "gk_adaptive"))

#: the entry point: the adaptive loop
ENTRY = "gk_adaptive"

#: the functions that allocate arrays (compiled with numba's reference counting; every other one without)
ALLOCATING = ("gk_work", ENTRY)

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


def gk_matvec(M, v, out):
    n = v.shape[0]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += M[i, j]*v[j]
        out[i] = s


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


@GROUP@
@PROJECTION@

def gk_first(ci, cj, ck, cv, W, c, P, hasP, lie, forced, z, w, g, out):
    """The first stage's generator (``lie``: gk_generator, 2n components with ``forced``) or field
    (I - P) ad*_{W z + c} z at z; w, g are work vectors of n."""
    if lie:
        gk_generator(ci, cj, ck, cv, W, c, P, forced, z, g, out)
    else:
        gk_field(ci, cj, ck, cv, W, c, P, hasP, z, w, g, out)


def gk_stage(ci, cj, ck, cv, W, c, P, hasP, G2, bern, terms, lie, forced, a, nq, K, r, z, hs, th, Y, M, wv,
             gv, xh, w1, w2, w3, w4, w5, w6, w7):
    """K[r] = the stage increment with the coefficients a[:nq] over the rows K[:nq], from z with step hs:
    theta = sum_q a_q K_q, K_r = hs (I - P) ad*_{w(Y)} Y at Y = z + theta (ambient), or
    hs dexp^-1_theta(xi(exp(theta) . z)) (``lie``: RKMK, the generator xi in g or g x g*); the work vectors th
    (theta), Y, M, wv, gv, xh, w1..w7 are overwritten. The step's stages (rows of A) and the continuous
    extension's extra stages (rows of XA) are both this."""
    gd = K.shape[1]
    n = z.shape[0]
    for i in range(gd):
        th[i] = 0.0
    for q in range(nq):
        aq = a[q]
        if aq != 0.0:
            for i in range(gd):
                th[i] += aq*K[q, i]
    if lie:
        gk_act(ci, cj, ck, cv, th, forced, z, False, Y, M, w3, w4, w5, w6, w7)
        gk_generator(ci, cj, ck, cv, W, c, P, forced, Y, wv, gv)
        for i in range(gd):
            xh[i] = hs*gv[i]
        gk_dexpinv(ci, cj, ck, cv, G2, bern, terms, forced, th, xh, gv, M, w1, w2)
        for i in range(gd):
            K[r, i] = gv[i]
    else:
        for i in range(n):
            Y[i] = z[i] + th[i]
        gk_field(ci, cj, ck, cv, W, c, P, hasP, Y, wv, gv, xh)
        for i in range(n):
            K[r, i] = hs*xh[i]


def gk_dense(ci, cj, ck, cv, W, c, P, hasP, G2, bern, terms, lie, forced, XA, PD, K, z, e, sg, hs, first,
             y, zb, th, Y, M, wv, gv, xh, w1, w2, w3, w4, w5, w6, w7):
    """y = the state at s = sg of the accepted step of signed size hs from z (compensation e) with the stage
    increments K[:s + 1] (the step's and the FSAL stage): with ``first`` the continuous extension's extra
    stages first (K[s + 1 + x] by gk_stage from z with the rows XA[x]), then (dense_source's definition)
    theta(s) = sum_i b_i(s) K_i, b_i(s) = sum_k PD[i, k] s^(k+1) (Horner), y = zb + theta(s) (ambient) or
    zb + (exp(theta(s)) . zb - zb) (``lie``: the action of gk_act, in g x g* when ``forced``), zb = z + e; the
    caller projects y. zb and the work vectors are overwritten."""
    n = z.shape[0]
    gd = K.shape[1]
    R = PD.shape[0]
    nx = XA.shape[0]
    if first:
        for x in range(nx):
            gk_stage(ci, cj, ck, cv, W, c, P, hasP, G2, bern, terms, lie, forced, XA[x], R - nx + x, K,
                     R - nx + x, z, hs, th, Y, M, wv, gv, xh, w1, w2, w3, w4, w5, w6, w7)
    for i in range(n):
        zb[i] = z[i] + e[i]
    for i in range(gd):
        th[i] = 0.0
    for q in range(R):
        bw = 0.0
        for k in range(PD.shape[1] - 1, -1, -1):
            bw = (bw + PD[q, k])*sg
        if bw != 0.0:
            for i in range(gd):
                th[i] += bw*K[q, i]
    if lie:
        gk_act(ci, cj, ck, cv, th, forced, zb, True, Y, M, w3, w4, w5, w6, w7)
        for i in range(n):
            y[i] = zb[i] + Y[i]
    else:
        for i in range(n):
            y[i] = zb[i] + th[i]


def gk_work(n, gd, p, PD, qb):
    """The work arrays of gk_steps for a state of n components, generators of gd, p projection targets, the
    continuous extension's rows PD and the Casimirs' monomial blocks qb (allocated once per trajectory, or once per
    group of trajectories by the ensemble kernel, integrators.codegen.generic_ensemble_source)."""
    K = np.zeros((PD.shape[0], gd))
    M = np.empty((gd, gd))
    W0 = np.empty(gd)
    wv = np.empty(n)
    gv = np.empty(gd)
    th = np.empty(gd)
    Y = np.empty(n)
    xh = np.empty(gd)
    d = np.empty(n)
    z1 = np.empty(n)
    wl = np.empty(gd)
    et = np.empty(gd)
    ez = np.empty(n)
    sc = np.empty(n)
    w1 = np.empty(gd)
    w2 = np.empty(gd)
    w3 = np.empty(n)
    w4 = np.empty(n)
    w5 = np.empty(n)
    w6 = np.empty(n)
    w7 = np.empty(n)
    inc = np.zeros(n)
    zp = np.empty(n)
    yg = np.empty(n)
    zb = np.empty(n)
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
    nm = 1
    for r in range(qb.shape[0]):    # the Casimirs' monomials below the top degree (gk_casimirs): 0..nm-1
        nm = max(nm, qb[r, 0] + qb[r, 1])
    mon = np.empty(nm)
    pk = np.zeros(3)    # the run's peak: zmax, tmax, hmax (gk_steps)
    return (K, M, W0, wv, gv, th, Y, xh, d, z1, wl, et, ez, sc, w1, w2, w3, w4, w5, w6, w7, inc, zp, yg, zb, PG,
            PM, PL, pdv, piv, pt, pr, pu, pv, pa, mon, pk)


def gk_start(t0, t1, h, rtol, atol, max_step, z, lie, ci, cj, ck, cv, W, c, P, hasP, order, W0, wv, gv, w1, w2,
             w3, Y, sc):
    """W0 = the first stage at z (gk_first); returns h, or Hairer's starting step when h <= 0 (genhelpers.hstart,
    from the ambient field); w1, w2, w3, Y, sc are work vectors."""
    n = z.shape[0]
    forced = lie and hasP
    gk_first(ci, cj, ck, cv, W, c, P, hasP, lie, forced, z, wv, gv, W0)
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
    return h


def gk_adaptive(t0, t1, h, rtol, atol, max_step, save_every, max_steps, since, ts, ys, z, e, cz, te, ye, GI,
                lie, terms, ci, cj, ck, cv, W, c, P, hasP, G2, bern,
                A, b, E, fsal, order, XA, PD, qb, qp, qi, qv, qc, pL, pG):
    """The adaptive loop of an embedded pair on one trajectory (z, e: the state and its compensation,
    updated in place; cz: the projection's targets, empty without one) -> (status, t, h, nsteps, nrej,
    nsave, ts, ys, zmax, tmax, hmax) with the meaning of integrators.codegen.programs.adaptive_source: status 0 reached t1,
    -1 the step size fell below 10 eps |t| (or an accepted increment was not finite), -2 the budget of
    max_steps accepted steps was spent (t, h, z, e continue the run in a second call). An RKMK pair
    (``lie``) on a forced problem (``hasP``) has generators of gd = 2n components, else gd = n; the
    projection is onto the linear invariants when pL has rows, else onto the Casimirs (qb, qp, qi, qv, qc).
    The output grid (integrators.codegen.dense_source; te empty: none): the states at the times te[GI[0]:]
    (sorted in the direction of integration) that an accepted step passes, from its continuous extension
    (gk_dense, the extra stages XA and the weights PD over the rows K: stages, FSAL stage, extra stages),
    projected as the step is, into the rows of ye; a time equal to a step's end takes the step's state; GI[0]
    the next grid index on return (a continued run goes on filling the same grid)."""
    n = z.shape[0]
    forced = lie and hasP
    gd = 2*n if forced else n
    (K, M, W0, wv, gv, th, Y, xh, d, z1, wl, et, ez, sc, w1, w2, w3, w4, w5, w6, w7, inc, zp, yg, zb, PG, PM, PL,
     pdv, piv, pt, pr, pu, pv, pa, mon, pk) = gk_work(n, gd, cz.shape[0], PD, qb)
    pk[1] = t0
    h = gk_start(t0, t1, h, rtol, atol, max_step, z, lie, ci, cj, ck, cv, W, c, P, hasP, order, W0, wv, gv, w1, w2,
                 w3, Y, sc)
    t = t0
    nsteps = 0
    nrej = 0
    j = 1
    gi = GI[0]
    while True:
        status, t, h, nsteps, nrej, since, j, gi = gk_steps(
            t, t1, h, rtol, atol, max_step, save_every, max_steps, since, nsteps, nrej, j, gi, ts, ys, z, e, cz,
            te, ye, lie, terms, ci, cj, ck, cv, W, c, P, hasP, G2, bern, A, b, E, fsal, order, XA, PD, qb, qp, qi, qv, qc,
            pL, pG, K, M, W0, wv, gv, th, Y, xh, d, z1, wl, et, ez, sc, w1, w2, w3, w4, w5, w6, w7, inc, zp, yg,
            zb, PG, PM, PL, pdv, piv, pt, pr, pu, pv, pa, mon, pk)
        if status != -3:
            break
        ts, ys = grow(ts, ys)
    GI[0] = gi
    return status, t, h, nsteps, nrej, j, ts, ys, pk[0], pk[1], pk[2]


def gk_steps(t, t1, h, rtol, atol, max_step, save_every, max_steps, since, nsteps, nrej, j, gi, ts, ys, z, e, cz,
             te, ye, lie, terms, ci, cj, ck, cv, W, c, P, hasP, G2, bern, A, b, E, fsal, order, XA, PD, qb, qp, qi, qv, qc,
             pL, pG, K, M, W0, wv, gv, th, Y, xh, d, z1, wl, et, ez, sc, w1, w2, w3, w4, w5, w6, w7, inc, zp, yg,
             zb, PG, PM, PL, pdv, piv, pt, pr, pu, pv, pa, mon, pk):
    """The steps of gk_adaptive from (t, z, e) with step h, the counters and the next save and grid indices
    passed in and returned -> (status, t, h, nsteps, nrej, since, j, gi); status -3: ts has no row for the
    next step's save (the caller grows ts, ys and calls again: W0, the first stage at z, is kept in between).
    It takes every work array from gk_adaptive and allocates nothing, so it compiles without numba's
    reference counting (integrators.backends.generic_kernel), as do the functions it calls: a call of a
    compiled function with reference counting increments and decrements the count of each array argument,
    an atomic operation each, about half the time of a grid point or a stage here with ~30 of them."""
    n = z.shape[0]
    forced = lie and hasP
    gd = 2*n if forced else n
    s = b.shape[0]
    p = cz.shape[0]
    nE = E.shape[0]
    expo = -1.0/(order + 1)
    direction = 1.0 if t1 > t else -1.0
    status = 0
    ng = te.shape[0]
    while direction*(t1 - t) > 0.0:
        if nsteps >= max_steps:
            status = -2
            break
        if j >= ts.shape[0]:    # no room for this step's save: the caller grows ts, ys and calls again
            status = -3
            break
        if h > max_step:
            h = max_step
        last = False
        if direction*(t + direction*h - t1) >= 0.0:
            h = abs(t1 - t)
            last = True
        hs = direction*h
        # the stages (FSAL: the first is hs W0)
        for i in range(gd):
            K[0, i] = hs*W0[i]
        for r in range(1, s):
            gk_stage(ci, cj, ck, cv, W, c, P, hasP, G2, bern, terms, lie, forced, A[r], r, K, r, z, hs, th, Y, M,
                     wv, gv, xh, w1, w2, w3, w4, w5, w6, w7)
        # the increment d and the end point z1
        for i in range(gd):
            th[i] = 0.0
        for q in range(s):
            if b[q] != 0.0:
                for i in range(gd):
                    th[i] += b[q]*K[q, i]
        if lie:
            gk_act(ci, cj, ck, cv, th, forced, z, True, d, M, w3, w4, w5, w6, w7)
        else:
            for i in range(n):
                d[i] = th[i]
        for i in range(n):
            z1[i] = z[i] + d[i]
        gk_first(ci, cj, ck, cv, W, c, P, hasP, lie, forced, z1, wv, gv, wl)
        if fsal:
            for i in range(gd):
                xh[i] = hs*wl[i]
            if lie:
                gk_dexpinv(ci, cj, ck, cv, G2, bern, terms, forced, th, xh, gv, M, w1, w2)
                for i in range(gd):
                    K[s, i] = gv[i]
            else:
                for i in range(n):
                    K[s, i] = xh[i]
        # the error norm (scipy's RK45 / DOP853)
        for i in range(n):
            az = abs(z[i])
            a1 = abs(z1[i])
            sc[i] = atol + rtol*(az if az > a1 else a1)
        e5 = 0.0
        e3 = 0.0
        for r in range(nE):
            for i in range(gd):
                et[i] = 0.0
            for q in range(s + (1 if fsal else 0)):
                a = E[r, q]
                if a != 0.0:
                    for i in range(gd):
                        et[i] += a*K[q, i]
            if lie:
                gk_state(ci, cj, ck, cv, forced, et, z, ez)
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
            # the output times strictly inside the step, before its projection (d, z1, wl are kept)
            tn = t1 if last else t + hs
            first = True
            while gi < ng and direction*(te[gi] - tn) < 0.0:
                gk_dense(ci, cj, ck, cv, W, c, P, hasP, G2, bern, terms, lie, forced, XA, PD, K, z, e,
                         (te[gi] - t)/(tn - t), hs, first, yg, zb, th, Y, M, wv, gv, xh, w1, w2, w3, w4, w5, w6, w7)
                first = False
                if p > 0:
                    gk_projection(pL, pG, qb, qp, qi, qv, qc, p, yg, cz, inc, zp, PG, PM, PL, pdv, piv, pt, pr, pu, pv, pa, mon)
                    for i in range(n):
                        ye[gi, i] = yg[i] + inc[i]
                else:
                    for i in range(n):
                        ye[gi, i] = yg[i]
                gi += 1
            if p > 0:   # onto {L z = cz} or {C = cz}; the next first stage at the projected point
                gk_projection(pL, pG, qb, qp, qi, qv, qc, p, z1, cz, inc, zp, PG, PM, PL, pdv, piv, pt, pr, pu, pv, pa, mon)
                gk_first(ci, cj, ck, cv, W, c, P, hasP, lie, forced, zp, wv, gv, wl)
                for i in range(n):
                    d[i] = d[i] + inc[i]
            for i in range(n):
                yk = d[i] + e[i]
                sk = z[i] + yk
                e[i] = (z[i] - sk) + yk
                z[i] = sk
            for i in range(gd):
                W0[i] = wl[i]
            t = t1 if last else t + hs
            zn = 0.0
            for i in range(n):
                zn = max(zn, abs(z[i]))
            if zn > pk[0]:    # the run's peak (integrators.engine.growth)
                pk[0] = zn
                pk[1] = t
                pk[2] = hs
            while gi < ng and te[gi] == t:
                for i in range(n):
                    ye[gi, i] = z[i] + e[i]
                gi += 1
            nsteps += 1
            since += 1
            if since == save_every or last:
                since = 0
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
    return status, t, h, nsteps, nrej, since, j, gi
'''


def text() -> str:
    """The module text of the generic kernel (the loop here, the Lie-group pieces of
    :mod:`integrators.codegen.generic_group_source`, the projections of
    :mod:`integrators.codegen.generic_projection_source`), its constants filled in (dexp^-1 summed to round-off,
    the controller, the projection's iterations): the functions of :data:`FUNCTIONS`, unjitted."""
    subs = {"@ROUNDOFF@": str(int(ROUNDOFF_TERMS)), "@X2MAX@": repr(float(DEXPINV_X2MAX)),
            "@FLOOR@": repr(float(AFFINE_SCALE_FLOOR)),
            "@TOL3@": repr(float(DEXPINV_TOL * 3.0 / math.pi ** 2)), "@KMAX@": repr(float(DEXPINV_KMAX)),
            "@MAXITER@": str(int(MAX_ITER)), "@TOLFACTOR@": repr(float(TOL_FACTOR)),
            # the controller and the error norm of integrators.core.controller (n, expo: the loop's variables)
            "@NORM1@": controller.error_norm_source(["e5"], "n", "math.sqrt"),
            "@NORM2@": controller.error_norm_source(["e5", "e3"], "n", "math.sqrt"),
            "@NORM2L@": controller.error_norm_source(["e5", "e3"], "n", "math.sqrt", lie=True),
            "@ACCEPT@": controller.accepted_source("expo"), "@REJECT@": controller.rejected_source("expo")}
    out = _TEXT.replace("@GROUP@", generic_group_source.TEXT)
    out = out.replace("@PROJECTION@", generic_projection_source.TEXT)
    for k, v in subs.items():
        out = out.replace(k, v)
    return out
