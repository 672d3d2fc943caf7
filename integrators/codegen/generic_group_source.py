"""The Lie-group pieces of the generic kernel's text (:mod:`integrators.codegen.generic_source`): the generator of an
RKMK stage, its action on the state, dexp^-1 and the error estimate mapped to the state, the structure as data.

One text for the unforced and the forced coadjoint problems, chosen at run time by ``forced`` (a Lie-group pair on
a problem with the multiplier force f(z) = -P ad*_{w(z)} z that
:func:`integrators.geometry.recognition.multiplier_projector` recognises: servo-constraints of the first kind,
several constraints, Suslov's problem). The mathematics is that of the code writers,
:class:`integrators.codegen.writer.Source` (unforced) and :class:`integrators.codegen.affine_source.AffineSource`
(forced), and so of the numpy reference (:class:`integrators.geometry.spaces.CoadjointSpace`,
:class:`integrators.geometry.spaces.AffineCoadjointSpace`):

* the generator xi(z) = w = W z + c in g, or with a forcing xi(z) = (w, f) = (W z + c, -P ad*_w z) in the
  semidirect product g x g* (2n components; ``gk_generator``);
* its action for unit time, the exact flow of the frozen affine field z' = ad*_x z + v (v = 0 unforced):
  act((x, v), z) = exp(M) (z, 1) = e^A z + phi_1(A) v, M = [[A, v], [0, 0]], A = ad(x)^T, by the scaled Taylor
  series of the action (Al-Mohy and Higham 2011): s substeps of exp(M/s), ||M/s||_1 <= 1/2, m terms until the
  tail is below 2^-54 (``tplan`` of :mod:`integrators.reference.genhelpers`, from ||M||_1 = max(||A||_1, |v|_1)
  itself where the writers take the bound sum_i |x_i| ||ad(e_i)^T||_1 >= ||A||_1: fewer substeps, the same
  truncation); per substep the terms t_1 = A y + v, t_k = A t_(k-1) / k, the increment summed from them
  (no cancellation; ``gk_act``). No closed forms (Rodrigues and its kin, the cubic forms of AffineSource
  agree with it to round-off);
* dexp^-1_theta(v) = sum_k B_k/k! ad_theta^k v (Munthe-Kaas 1999) with the bracket of the space: -[x, y] in
  g (the bracket matching ad*, x -> ad*_x an anti-homomorphism), [(x1, v1), (x2, v2)] = (-[x1, x2],
  ad*_{x1} v2 - ad*_{x2} v1) in g x g*, applied as a matrix (``gk_bracket``); summed to round-off as
  :func:`integrators.geometry.spaces.dexpinv_series` defines it (the K of ``dexpinv_order`` from
  x^2 = ||ad_theta||_F^2 / (2 pi)^2, the quadratic form G2 of :func:`integrators.geometry.spaces.adnorm_form` or,
  in g x g*, of :func:`integrators.codegen.affine_source.affine_adnorm_form`; NaN beyond DEXPINV_X2MAX) or
  truncated after ``terms`` terms (``gk_dexpinv``);
* the state change of a generator to leading order, ad*_x z (+ v with a forcing): the error estimate of an
  RKMK pair mapped to the state (``gk_state``).
"""

from __future__ import annotations

#: the functions of the text, in the order of their definition
FUNCTIONS = ("gk_generator", "gk_adt", "gk_bracket", "gk_act", "gk_dexpinv", "gk_state")

TEXT = '''
def gk_generator(ci, cj, ck, cv, W, c, P, forced, z, g, out):
    """The generator of an RKMK stage at z: out[:n] = w = W z + c and, with ``forced``, out[n:2n] = f =
    -P ad*_w z (AffineSource.velocity: (w, f) in g x g*); g is a work vector of n."""
    n = z.shape[0]
    gk_velocity(W, c, z, out)
    if forced:
        gk_coad(ci, cj, ck, cv, out, z, g)
        for i in range(n):
            s = 0.0
            for j in range(n):
                if P[i, j] != 0.0:
                    s += -P[i, j]*g[j]
            out[n + i] = s


def gk_adt(ci, cj, ck, cv, x, M):
    """M = ad(x)^T: M[j, k] = sum_i x_i C[i, j, k] ((ad*_x m)_j = sum_k M[j, k] m_k)."""
    M[:, :] = 0.0
    for t in range(cv.shape[0]):
        M[cj[t], ck[t]] += cv[t]*x[ci[t]]


def gk_bracket(ci, cj, ck, cv, theta, forced, M):
    """M = the matrix of u -> [theta, u] in dexp^-1: in g -ad(theta), (M y)_k = -[x, y]_k = -sum_{i,j} x_i y_j
    C[i, j, k]; with ``forced`` in g x g*, theta = (x, u): [(x, u), (y, r)] = (-[x, y], ad*_x r - ad*_y u), the
    2n x 2n matrix [[-ad(x), 0], [-U, ad(x)^T]] with U[j, i] = sum_k C[i, j, k] u_k ((ad*_y u)_j = sum_i U[j, i]
    y_i)."""
    n = theta.shape[0] // 2 if forced else theta.shape[0]
    M[:, :] = 0.0
    for t in range(cv.shape[0]):
        a = cv[t]*theta[ci[t]]
        M[ck[t], cj[t]] -= a
        if forced:
            M[n + cj[t], n + ck[t]] += a
            M[n + cj[t], ci[t]] -= cv[t]*theta[n + ck[t]]


def gk_act(ci, cj, ck, cv, xi, forced, z, delta, out, M, vs, cur, u, acc, tmp):
    """exp(M) (z, 1) = e^A z + phi_1(A) v, M = [[A, v], [0, 0]], A = ad(x)^T, xi = (x, v) with ``forced``
    (else xi = x, v = 0: exp(ad x)^T z), or with ``delta`` that minus z: s substeps of the Taylor series of
    exp(M / s), m terms, (s, m) the tplan of ||M||_1 = max(||A||_1, |v|_1) (module docstring); per substep
    t_1 = (A y + v) / s, t_k = (A / s) t_(k-1) / k, the increment summed from the terms; NaN beyond the plan's
    range (an overflow, not a step)."""
    n = z.shape[0]
    gk_adt(ci, cj, ck, cv, xi, M)
    bound = 0.0
    for k in range(n):          # ||A||_1, the largest column sum (at most sum_i |x_i| norms_i)
        col = 0.0
        for j in range(n):
            col += abs(M[j, k])
        if col > bound or col != col:   # NaN sticks: tplan then gives NaN
            bound = col
    if forced:                  # ||M'||_1 = max(||A||_1, min(|v|_1, 1/2)) (AffineSource._act_series)
        vb = 0.0
        for i in range(n):
            vb += abs(xi[n + i])
        if vb > 0.5:
            vb = 0.5
        if vb > bound or vb != vb:
            bound = vb
    s, m, bad = tplan(bound)
    inv = 1.0/s
    for j in range(n):
        cur[j] = z[j]
        out[j] = 0.0
        vs[j] = inv*xi[n + j] if forced else 0.0
        for k in range(n):
            M[j, k] = inv*M[j, k]
    for _ in range(s):
        gk_matvec(M, cur, tmp)
        for i in range(n):      # the term k = 1: (A y + v) / s
            u[i] = tmp[i] + vs[i]
            acc[i] = u[i]
        kk = 1.0
        for _k in range(m - 1):
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


def gk_dexpinv(ci, cj, ck, cv, G2, bern, terms, forced, theta, v, out, M, t, t2):
    """dexp^-1_theta(v) = sum_k B_k/k! A^k v, A = the bracket of theta (gk_bracket; spaces.dexpinv_series) on
    vectors of g (n) or, with ``forced``, of g x g* (2n): summed to round-off (terms >= ROUNDOFF_TERMS: up to
    the even K with (pi^2/3) x^(K+2)/(1 - x^2) <= 2^-53, x^2 = theta^T G2 theta = ||ad_theta||_F^2 / (2 pi)^2;
    NaN when x^2 > DEXPINV_X2MAX) or truncated after ``terms`` terms."""
    n = v.shape[0]
    gk_bracket(ci, cj, ck, cv, theta, forced, M)
    if terms >= @ROUNDOFF@:
        # x^2 = gx + hu / lam^2 in g x g* (G2 block diagonal; the rescaling of AffineSource.dexpinv), gx alone in g
        nx = n // 2 if forced else n
        gx = 0.0
        hu = 0.0
        for i in range(n):
            q = G2[i, i]*theta[i]*theta[i]
            for j in range(i + 1, n):
                q += 2.0*G2[i, j]*theta[i]*theta[j]
            if i < nx:
                gx += q
            else:
                hu += q
        l2 = max(1.0, hu/max(gx, @FLOOR@*hu + 1e-300))
        x2 = gx + hu/l2
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


def gk_state(ci, cj, ck, cv, forced, xi, z, out):
    """The state change of a generator to leading order: ad*_x z, with ``forced`` ad*_x z + v for xi = (x, v)
    (d/ds of the affine action at s = 0; AffineSource.to_state)."""
    gk_coad(ci, cj, ck, cv, xi, z, out)
    if forced:
        n = z.shape[0]
        for i in range(n):
            out[i] = out[i] + xi[n + i]
'''
