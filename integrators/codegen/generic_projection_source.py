"""The projections of the generic kernel's text (:mod:`integrators.codegen.generic_source`): every accepted step
of a pair that keeps invariants is moved back onto their level set, the invariants as data.

* The Casimirs of a projected pair (:mod:`integrators.codegen.projection`): C_k and its gradient from the
  monomial tables of :func:`liegroups.monomials.monomial_tables` as a sparse table (``gk_casimirs``), the projection onto {C_k = c_k} by simplified Newton iterations
  with one L D L^T factorisation of G G^T, G = grad C fixed (Hairer, Lubich and Wanner 2006, IV.4,
  Algorithm 4.2; ``gk_project``), the algorithm and stopping test of
  :class:`integrators.codegen.projection.CasimirProjection`.
* The linear invariants L z of a forced problem that an RKMK pair keeps by projection
  (:mod:`integrators.codegen.linear_projection`: the constraints of a servo-constraint of the first kind):
  z1 = z~ - L^T (L L^T)^-1 (L z~ - L z0), exact in one step (the level set is an affine subspace), with the
  rows G = (L L^T)^-1 L of :class:`integrators.codegen.linear_projection.LinearProjection` as data
  (``gk_linproject``), the arithmetic of its ``write``.
"""

from __future__ import annotations

#: the functions of the text, in the order of their definition
FUNCTIONS = ("gk_casimirs", "gk_project", "gk_linproject", "gk_projection")

TEXT = '''
def gk_casimirs(qb, qp, qi, qv, qc, p, z, vals, G, grad, mon):
    """vals_k = C_k(z) and, with ``grad``, G[k, j] = dC_k/dz_j, from the tables of
    liegroups.monomials.monomial_tables (the same definitions as its monomial_sum): the monomials m of z below
    the top degree (mon, m_0 = 1; block r of qb = (first, count, parent, j): mon[first + c] = mon[parent + c] z_j,
    degree by degree), then C_k = qc_k + sum_j z_j (H m)_(k n + j) and dC_k/dz_j = (D m)_(k n + j), H and D the
    rows of one sparse table (CSR: the entries of row r at qp[r]..qp[r + 1] - 1, column qi, value qv; rows 0..pn-1
    those of H, pn..2pn-1 those of D, pn = p n). A dense quartic in 10 variables (so(5) in a random basis, 714
    monomials) costs ~3,600 products for the values and gradients here, against ~14,000 and as many indexed loads
    term by term."""
    n = z.shape[0]
    mon[0] = 1.0
    for r in range(qb.shape[0]):
        c0 = qb[r, 0]
        p0 = qb[r, 2]
        zj = z[qb[r, 3]]
        for c in range(qb[r, 1]):
            mon[c0 + c] = mon[p0 + c]*zj
    pn = p*n
    for k in range(p):
        acc = qc[k]
        for j in range(n):
            row = k*n + j
            s = 0.0
            for t in range(qp[row], qp[row + 1]):
                s += qv[t]*mon[qi[t]]
            acc += z[j]*s
            if grad:
                g = 0.0
                for t in range(qp[pn + row], qp[pn + row + 1]):
                    g += qv[t]*mon[qi[t]]
                G[k, j] = g
        vals[k] = acc


def gk_project(qb, qp, qi, qv, qc, p, z, targets, inc, y, G, Mm, L, pdv, piv, pt, pr, pu, pv, pa, mon):
    """The increment inc = G^T lambda projecting z onto {C = targets} and the point y = z + inc:
    simplified Newton with G = grad C(z) fixed, M = G G^T = L D L^T (1/D_j or 0 for a dependent
    direction, genhelpers.rinv), until every |r_k| <= TOL_FACTOR 2 eps sum_j |G_kj z_j|, at most MAX_ITER iterations
    (integrators.codegen.projection)."""
    n = z.shape[0]
    gk_casimirs(qb, qp, qi, qv, qc, p, z, pr, G, True, mon)
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
                if not bmax(abs(pr[k]) - @TOLFACTOR@*pt[k]) <= 0.0:
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
        gk_casimirs(qb, qp, qi, qv, qc, p, y, pr, G, False, mon)
        for k in range(p):
            pr[k] = pr[k] - targets[k]


def gk_linproject(pL, pG, z, targets, inc, y, r):
    """The increment inc = -G^T (L z - targets) projecting z onto {L z = targets} and the point y = z + inc
    (LinearProjection.write: r_k = sum_j L_kj z_j - targets_k, inc_j = sum_k -G_kj r_k, G = (L L^T)^-1 L)."""
    n = z.shape[0]
    p = pL.shape[0]
    for k in range(p):
        s = 0.0
        for j in range(n):
            if pL[k, j] != 0.0:
                s += pL[k, j]*z[j]
        r[k] = s - targets[k]
    for j in range(n):
        s = 0.0
        for k in range(p):
            if pG[k, j] != 0.0:
                s += -pG[k, j]*r[k]
        inc[j] = s
        y[j] = z[j] + s


def gk_projection(pL, pG, qb, qp, qi, qv, qc, p, z, targets, inc, y, G, Mm, L, pdv, piv, pt, pr, pu, pv, pa, mon):
    """The projection of z (inc, y = z + inc): onto {L z = targets} when pL has rows (gk_linproject), else onto
    the Casimirs' level set {C = targets} (gk_project); the accepted steps and the output grid's points."""
    if pL.shape[0] > 0:
        gk_linproject(pL, pG, z, targets, inc, y, pr)
    else:
        gk_project(qb, qp, qi, qv, qc, p, z, targets, inc, y, G, Mm, L, pdv, piv, pt, pr, pu, pv, pa, mon)
'''
