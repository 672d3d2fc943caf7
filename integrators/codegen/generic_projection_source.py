"""The projections of the generic kernel's text (:mod:`integrators.codegen.generic_source`): every accepted step
of a pair that keeps invariants is moved back onto their level set, the invariants as data.

* The Casimirs of a projected pair (:mod:`integrators.codegen.projection`): C_k as monomials (Casimir index,
  coefficient, (variable, exponent) pairs; ``gk_casimirs``), the projection onto {C_k = c_k} by simplified Newton iterations
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
def gk_casimirs(pk, pc, pe, p, z, vals, G, grad, PZ):
    """vals_k = C_k(z) = sum of the monomials pc * prod_a z_(j_a)^(m_a) of Casimir pk, the monomial's variables and
    exponents as pairs pe[t, a] = (j_a, m_a) (increasing j, padded with (0, 0): a Casimir of degree d has at most d
    of them, so a monomial costs O(d^2), not O(n^2)); with ``grad`` also G[k, j] = dC_k/dz_j. PZ (n + 1, >= m + 1 and
    >= d + 1), m the largest exponent: rows 0..n-1 the powers z_j^m, filled here once for all the monomials; row n
    the factors of a monomial and their suffix products (allocating nothing, the function compiles without
    reference counting)."""
    n = z.shape[0]
    D = pe.shape[1]
    for j in range(n):
        q = 1.0
        PZ[j, 0] = 1.0
        for m in range(1, PZ.shape[1]):
            q = q*z[j]
            PZ[j, m] = q
    for k in range(p):
        vals[k] = 0.0
        if grad:
            for j in range(n):
                G[k, j] = 0.0
    if not grad:
        for t in range(pc.shape[0]):
            mono = pc[t]
            for a in range(D):
                mono = mono*PZ[pe[t, a, 0], pe[t, a, 1]]
            vals[pk[t]] += mono
        return
    fq = PZ[n]        # the factors z_(j_a)^(m_a), then their suffix products
    for t in range(pc.shape[0]):
        mono = pc[t]
        for a in range(D):
            fq[a] = PZ[pe[t, a, 0], pe[t, a, 1]]
            mono = mono*fq[a]
        vals[pk[t]] += mono
        fq[D] = 1.0
        for a in range(D - 1, -1, -1):
            fq[a] = fq[a]*fq[a + 1]
        left = pc[t]            # dC/dz_(j_a) = pc m_a z_(j_a)^(m_a - 1) prod_(b != a) z_(j_b)^(m_b)
        for a in range(D):
            m = pe[t, a, 1]
            if m > 0:
                x = PZ[pe[t, a, 0], m - 1]
                G[pk[t], pe[t, a, 0]] += left*m*x*fq[a + 1]
                left = left*PZ[pe[t, a, 0], m]


def gk_project(pk, pc, pe, p, z, targets, inc, y, G, Mm, L, pdv, piv, pt, pr, pu, pv, pa, PZ):
    """The increment inc = G^T lambda projecting z onto {C = targets} and the point y = z + inc:
    simplified Newton with G = grad C(z) fixed, M = G G^T = L D L^T (1/D_j or 0 for a dependent
    direction, genhelpers.rinv), until every |r_k| <= 4 eps sum_j |G_kj z_j|, at most MAX_ITER
    iterations (integrators.codegen.projection)."""
    n = z.shape[0]
    gk_casimirs(pk, pc, pe, p, z, pr, G, True, PZ)
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
        gk_casimirs(pk, pc, pe, p, y, pr, G, False, PZ)
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


def gk_projection(pL, pG, pk, pc, pe, p, z, targets, inc, y, G, Mm, L, pdv, piv, pt, pr, pu, pv, pa, PZ):
    """The projection of z (inc, y = z + inc): onto {L z = targets} when pL has rows (gk_linproject), else onto
    the Casimirs' level set {C = targets} (gk_project); the accepted steps and the output grid's points."""
    if pL.shape[0] > 0:
        gk_linproject(pL, pG, z, targets, inc, y, pr)
    else:
        gk_project(pk, pc, pe, p, z, targets, inc, y, G, Mm, L, pdv, piv, pt, pr, pu, pv, pa, PZ)
'''
