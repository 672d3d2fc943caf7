"""A posteriori certification of the invariant lines v(xi) = c xi: equilibration and Smale's alpha test.

* ``equilibrate``: x = D y, c = s c' with D = diag(2^delta), s = 2^sigma, and the equations times
  e_i = 1 / (d_i s) turn v(x) = c x into v'(y) = c' w y with Q'[i,j,k] = e_i d_j d_k Q[i,j,k] and
  w = 1. The exponents minimise the sum of (log2 |Q'[i,j,k]|)^2 over the non-zero entries (least
  squares in the logarithms, the equilibration of Sommese & Wampler, "The numerical solution of
  systems of polynomials", 2005, section 6.4), rounded to integers, so that Q' is exact in
  floating point and a root of the scaled system is a root of the given one, with nothing lost in
  between.
* ``alpha_test``: Smale's alpha theory (Blum, Cucker, Shub and Smale, "Complexity and Real
  Computation", 1998, ch. 8; used as in Hauenstein and Sottile, "alphaCertified", 2012). For the
  square system f(z) = (v'(y) - c' w y, l . y - 1), z = (y, c') in C^{p+1} (l a real unit chart),
      beta(z)  = |Df(z)^-1 f(z)|,
      gamma(z) = sup_{k >= 2} |Df(z)^-1 D^k f(z) / k!|^{1/(k-1)} = |Df(z)^-1 D^2 f / 2|,
  exactly, because f is quadratic (D^2 f is constant, D^k f = 0 for k > 2). With
  alpha = beta gamma < alpha_0 = (13 - 3 sqrt 17) / 4 = 0.1577, z is an approximate zero: Newton's
  method from z converges quadratically to a root zeta with |z - zeta| <= 2 beta(z). The bounds
  used here are upper bounds: with X the computed inverse of Df and sigma_lo the smallest singular
  value of Df minus its floating-point error bound, |Df^-1 - X| <= Dx = (error of Df and of the
  inversion) / sigma_lo^2; beta <= |X f| + Dx |f| + |f - fl(f)| / sigma_lo, with the rounding
  bound of the evaluation of f (Higham, "Accuracy and Stability of Numerical Algorithms", 2002,
  section 3.1: |fl(sum) - sum| <= gamma_m sum |terms|, gamma_m = m u / (1 - m u)); and
  gamma <= (sum_m |sum_i X_mi B_i|_F^2)^(1/2) + Dx (sum_i |B_i|_F^2)^(1/2) with f_i(z) = z^T B_i z.
* Completeness (the "alpha" certificate of InvariantLines): p quadrics in P^p meet in 2^p points
  counted with multiplicity when the intersection is finite, and the irreducible components of
  any intersection have degrees adding to at most 2^p (Fulton, "Intersection Theory", 1984,
  section 12.3); so 2^p distinct points (2^p - 1 certified lines and the trivial root) are all
  the solutions, each simple, with no positive-dimensional component.
* Two certified points z_a, z_b have different roots if their angle in P^p exceeds the sum of
  the angular radii asin(2 beta / |z|) (the Fubini-Study distance is a metric and
  sin angle(u, u + e) <= |e| / |u|). Q and l real: a certified real point has a real root (Newton
  from a real point of a real system stays real); a point with |Im z| > 2 beta has a non-real root
  (its root and the root's conjugate, both roots, lie within 2 beta of z and of conj(z)).
"""
from __future__ import annotations

from fractions import Fraction

from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import cKDTree

from .homotopy import solve_rows

__all__ = ["ALPHA0", "UNIT_ROUNDOFF", "equilibrate", "alpha_test", "pairwise_angles", "close_pairs", "pair_angles",
           "backward_error", "exact_root", "exact_jacobian_rank"]

#: Smale's constant: alpha < ALPHA0 makes z an approximate zero with |z - zeta| <= 2 beta
ALPHA0 = (13 - 3 * np.sqrt(17)) / 4
UNIT_ROUNDOFF = np.finfo(float).eps / 2


def _gamma_m(m):
    """Higham's gamma_m = m u / (1 - m u): relative error bound of a sum of m rounded terms."""
    return m * UNIT_ROUNDOFF / (1 - m * UNIT_ROUNDOFF)


def equilibrate(Q: ArrayLike) -> tuple[NDArray[Any], NDArray[np.float64], NDArray[np.float64], float]:
    """Exact power-of-two scaling of v(x) = c x: returns (Q', w, d, s) with
    Q'[i,j,k] = e_i d_j d_k Q[i,j,k] and w_i = e_i d_i s, so that for x = d * y, c = s c'

        e_i (v_i(x) - c x_i) = sum_jk Q'[i,j,k] y_j y_k - w_i c' y_i,

    a row scaling e of the equations and a column scaling (d, s) of the unknowns (x, c). Here
    e_i = 2^-t / (d_i s), so w = 2^-t (1, ..., 1): c' keeps the size of the other unknowns (an
    independent row scaling, tried first, made some w_i tiny and pushed the roots with large c
    onto the trivial root [0 : ... : 0 : 1]). delta = log2 d and sigma = log2 s minimise the sum
    of (log2 |Q'[i,j,k]|)^2 over the non-zero entries (linear least squares), rounded to integers;
    t puts max(|Q'|, w) in [1/2, 1). If the rounded scaling would under- or overflow an entry
    (not exact), d = 1.
    """
    Q = np.asarray(Q)
    p = Q.shape[0]
    A = np.abs(Q)
    nz = np.argwhere(A > 0)
    if nz.size == 0:
        return Q.copy(), np.ones(p), np.ones(p), 1.0
    M = np.zeros((len(nz), p + 1))
    r = np.arange(len(nz))
    np.add.at(M, (r, nz[:, 1]), 1.0)
    np.add.at(M, (r, nz[:, 2]), 1.0)
    np.add.at(M, (r, nz[:, 0]), -1.0)
    M[:, p] = -1.0
    sol = np.linalg.lstsq(M, -np.log2(A[tuple(nz.T)]), rcond=None)[0]
    delta = np.round(np.clip(sol[:p] - np.mean(sol[:p]), -300, 300)).astype(int)
    ex = delta[None, :, None] + delta[None, None, :] - delta[:, None, None]
    Qd = np.ldexp(Q.real, ex) + (1j * np.ldexp(Q.imag, ex) if np.iscomplexobj(Q) else 0)
    back = np.ldexp(Qd.real, -ex) + (1j * np.ldexp(Qd.imag, -ex) if np.iscomplexobj(Q) else 0)
    if not np.array_equal(back, Q):
        delta, Qd = np.zeros(p, dtype=int), Q.copy()
    e = int(np.frexp(np.abs(Qd).max())[1])          # max |Qd| in [2^(e-1), 2^e): s = 2^e
    if abs(e) > 1000:
        raise ValueError(f"Q entries too large or small to scale: max |Q d d / d| = 2^{e}")
    Qs = Qd * 2.0 ** (-e)
    return Qs, np.ones(p), np.ldexp(1.0, delta), float(2.0 ** e)


def _fields(Q, y):
    """A[b, i, j] = sum_k Q[i,j,k] y[b,k], v'(y) = A y, and the term sizes T_i = sum |Q_ijk||y_j||y_k|."""
    A = np.einsum("ijk,bk->bij", Q, y)
    T = np.einsum("ijk,bj,bk->bi", np.abs(Q), np.abs(y), np.abs(y))
    return A, np.einsum("bij,bj->bi", A, y), T


def _bilinear(Q, w):
    """B_i, i < p, with f_i(z) = z^T B_i z: B_i = [[Q_i, -w_i e_i / 2], [-w_i e_i^T / 2, 0]]."""
    p = Q.shape[0]
    B = np.zeros((p, p + 1, p + 1), dtype=complex)
    B[:, :p, :p] = Q
    B[np.arange(p), np.arange(p), p] = -w / 2
    B[np.arange(p), p, np.arange(p)] = -w / 2
    return B


def real_chart(y: NDArray[Any]) -> NDArray[np.float64]:
    """A real unit vector l per row with l . y != 0: the real part of y / |y| turned to be as real
    as possible (for a real line l = +-y / |y|)."""
    yh = y / np.linalg.norm(y, axis=1, keepdims=True)
    ph = np.exp(-0.5j * np.angle(np.einsum("bi,bi->b", yh, yh)))
    l = (yh * ph[:, None]).real
    return l / np.linalg.norm(l, axis=1, keepdims=True)


def alpha_test(Q: ArrayLike, w: ArrayLike, Z: NDArray[np.complex128], real_rows: ArrayLike, newton: int = 4
               ) -> dict[str, NDArray[Any]]:
    """Smale's alpha test at the rows of Z = (y, c') for v'(y) = c' w y, v'_i = sum Q[i,j,k] y_j y_k.

    Each row gets its own real chart l . y = 1 (``real_chart``); rows flagged in ``real_rows`` are
    replaced by their real part (Q real). ``newton`` Newton steps in the chart come first.
    Returns a dict of arrays: z (the points tested, in the chart), alpha, beta, gamma (upper bounds,
    inf where Df is numerically singular), ok (alpha < ALPHA0), radius (angle in P^p within which
    the root lies), real (certified real root), nonreal (certified non-real root).
    """
    Q = np.asarray(Q)
    p = Q.shape[0]
    n = Z.shape[0]
    qreal = not np.iscomplexobj(Q)
    z = np.array(Z, dtype=complex)
    if qreal:
        z[real_rows] = z[real_rows].real
    l = real_chart(z[:, :p])
    z /= np.einsum("bi,bi->b", l, z[:, :p])[:, None]
    idx = np.arange(p)
    Qc = Q.astype(complex)

    def system(z):
        y, c = z[:, :p], z[:, p]
        A, v, T = _fields(Qc, y)
        F = np.concatenate([v - c[:, None] * w * y, (np.einsum("bi,bi->b", l, y) - 1)[:, None]], axis=1)
        J = np.zeros((n, p + 1, p + 1), dtype=complex)
        J[:, :p, :p] = 2 * A
        J[:, idx, idx] -= c[:, None] * w
        J[:, :p, p] = -w * y
        J[:, p, :p] = l
        return F, J, T

    for _ in range(newton):
        F, J, _ = system(z)
        dz = solve_rows(J, F)
        good = np.all(np.isfinite(dz), axis=1)
        z[good] -= dz[good]
        if qreal:
            z[real_rows] = z[real_rows].real
    F, J, T = system(z)
    y, c = z[:, :p], z[:, p]
    # rounding bounds: f_i has p^2 products of three factors and one c y_i term; Df_ij has p terms
    errF = np.zeros((n, p + 1))
    errF[:, :p] = _gamma_m(p * p + 4) * (T + np.abs(c)[:, None] * np.abs(w * y))
    errF[:, p] = _gamma_m(p + 2) * (np.abs(y).sum(axis=1) + 1)
    absJ = np.zeros((n, p + 1, p + 1))
    absJ[:, :p, :p] = 2 * np.einsum("ijk,bk->bij", np.abs(Q), np.abs(y))
    absJ[:, idx, idx] += np.abs(c)[:, None] * np.abs(w)
    absJ[:, :p, p] = np.abs(w * y)
    errJ = _gamma_m(p + 2) * np.sqrt((absJ ** 2).sum(axis=(1, 2)))
    K = np.sqrt((np.abs(Q) ** 2).sum() + (w ** 2).sum() / 2) * (1 + 1e-12)
    with np.errstate(invalid="ignore"):
        sv = np.linalg.svd(np.nan_to_num(J), compute_uv=False)
    smax, smin = sv[:, 0], sv[:, -1]
    slo = smin - errJ - 8 * (p + 1) ** 2 * UNIT_ROUNDOFF * smax
    # X = computed inverse of the computed Df; ninv >= |Df^-1| of the exact Df and of the computed
    # one; |Df_exact^-1 - X| <= ninv^2 |Df_exact - (the matrix X inverts exactly)| <= Dx
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ninv = np.where(slo > 0, 1.0 / slo, np.inf)
        X = np.linalg.inv(np.where(np.isfinite(ninv)[:, None, None], np.nan_to_num(J), np.eye(p + 1)))
        Dx = ninv ** 2 * (errJ + 8 * (p + 1) ** 2 * UNIT_ROUNDOFF * smax)
        # beta = |Df^-1 f| <= |X f_c| + (Dx + rounding of X f_c) |f_c| + ninv |f - f_c|
        fc = np.linalg.norm(F, axis=1)
        beta = (np.linalg.norm(np.einsum("bij,bj->bi", X, F), axis=1)
                + (Dx + 2 * (p + 1) * UNIT_ROUNDOFF * ninv) * fc
                + ninv * np.linalg.norm(errF, axis=1)) * (1 + 1e-12)
        # gamma = |Df^-1 D^2 f / 2| <= |X B| + Dx K, B the bilinear map (u, v) -> (u^T B_i v)_i,
        # |X B| <= (sum_m |sum_i X_mi B_i|_F^2)^(1/2), K = (sum_i |B_i|_F^2)^(1/2) >= |B|
        # sum_m |sum_i X_mi B_i|_F^2 = sum_m X_m G X_m^H with the Gram matrix G_ii' = <B_i, B_i'>_F (p x p: no
        # (n, N, N, N) array), plus the rounding of G and of the quadratic forms: at most
        # 2 gamma_(N^2 + p + 4) sum_m |X_m| Gabs |X_m|^T, Gabs_ii' = sum_jk |B_i,jk| |B_i',jk| >= |G|
        Bm = _bilinear(Q, w).reshape(p, -1)
        G = Bm @ Bm.conj().T
        Gabs = np.abs(Bm) @ np.abs(Bm).T
        Xp = X[:, :, :p]
        quad = np.einsum("bmi,ij,bmj->b", Xp, G.conj(), Xp.conj()).real
        aX = np.abs(Xp)
        err = 2 * _gamma_m((p + 1) ** 2 + p + 4) * np.einsum("bmi,ij,bmj->b", aX, Gabs, aX) * (1 + 1e-12)
        gamma = (np.sqrt(np.clip(quad + err, 0, None)) + Dx * K) * (1 + 1e-12)
        alpha = np.where(np.isfinite(ninv), beta * gamma, np.inf)
    zn = np.linalg.norm(z, axis=1)
    ok = np.isfinite(alpha) & (alpha < ALPHA0) & (2 * beta < zn) & np.all(np.isfinite(z), axis=1)
    with np.errstate(invalid="ignore"):
        radius = np.where(ok, np.arcsin(np.clip(2 * beta / zn, 0, 1)) * (1 + 1e-12) + 1e-15, np.inf)
    real = ok & qreal & np.all(z.imag == 0, axis=1)
    nonreal = ok & qreal & (np.linalg.norm(z.imag, axis=1) > 2 * beta * (1 + 1e-12))
    return dict(z=z, alpha=alpha, beta=beta, gamma=gamma, ok=ok, radius=radius, real=real,
                nonreal=nonreal)


def pairwise_angles(Z: ArrayLike) -> NDArray[np.float64]:
    """Fubini-Study distances (angles in [0, pi/2]) between the rows of Z as points of P^N:
    asin |w - u (u^H w)| for unit u, w (stable for small angles); above sine _NEAR the cheaper
    asin sqrt(1 - |u^H w|^2), lowered by 1e-13 (its rounding error) so that it is never too large."""
    U = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    G = U.conj() @ U.T                                     # G[a, b] = u_a^H u_b
    # sin angle = sqrt(1 - |G|^2) has an absolute error of ~ eps / sin angle: fine for large angles; the pairs
    # closer than NEAR get the stable |u_b - u_a (u_a^H u_b)| (one (pairs, N) array, not an (n, N, n) one)
    s = np.sqrt(np.clip(1 - np.abs(G) ** 2, 0, None)) - 1e-13      # minus a bound of its rounding error
    a, b = np.nonzero(s < _NEAR)
    if a.size:
        D = U[b] - U[a] * G[a, b][:, None]
        s[a, b] = np.sqrt((np.abs(D) ** 2).sum(axis=1))
    return np.arcsin(np.clip(s, 0, 1))


#: angle (sine) below which pairwise_angles uses the stable formula
_NEAR = 1e-2


def close_pairs(Z: ArrayLike, r: float, Z2: ArrayLike | None = None) -> NDArray[np.int_]:
    """Every pair of rows of Z (a < b), or of Z and Z2 (a row of Z, b row of Z2), whose angle in P^N may be
    <= r: a superset, found without the n x n matrix of all angles (a k-d tree, scipy.spatial.cKDTree).

    Key: the moduli m(u) = (|u_0|, ..., |u_N|) of the unit rows, a function on P^N. For unit u, w at angle
    theta, min_phi |u - e^(i phi) w| = 2 sin(theta / 2) <= theta, and |m(u) - m(w)| <= |u - e^(i phi) w|
    for every phi (the triangle inequality per component); so theta <= r gives |m(u) - m(w)| <= r, and the
    pairs with moduli farther apart than r (plus rounding slack) are at angles > r. Returns an (k, 2) array."""
    Z = np.asarray(Z)
    M = np.abs(Z) / np.linalg.norm(Z, axis=1, keepdims=True)
    rr = float(r) * (1 + 1e-9) + 1e-14
    if Z2 is None:
        if len(Z) < 2:
            return np.zeros((0, 2), dtype=int)
        return cKDTree(M).query_pairs(rr, output_type="ndarray").reshape(-1, 2)
    Z2 = np.asarray(Z2)
    if not len(Z) or not len(Z2):
        return np.zeros((0, 2), dtype=int)
    M2 = np.abs(Z2) / np.linalg.norm(Z2, axis=1, keepdims=True)
    hits = cKDTree(M).query_ball_tree(cKDTree(M2), rr)
    out = [(a, b) for a, row in enumerate(hits) for b in row]
    return np.array(out, dtype=int).reshape(-1, 2)


def pair_angles(Z: ArrayLike, a: NDArray[np.int_], b: NDArray[np.int_], Z2: ArrayLike | None = None
                ) -> NDArray[np.float64]:
    """Fubini-Study distances between rows a of Z and rows b of Z2 (default Z), the stable formula of
    ``pairwise_angles`` (asin |w - u (u^H w)|, unit u, w) lowered by 1e-14 for its rounding error."""
    U = np.asarray(Z) / np.linalg.norm(Z, axis=1, keepdims=True)
    W = U if Z2 is None else np.asarray(Z2) / np.linalg.norm(Z2, axis=1, keepdims=True)
    u, w = U[a], W[b]
    g = np.einsum("ki,ki->k", u.conj(), w)
    s = np.sqrt((np.abs(w - u * g[:, None]) ** 2).sum(axis=1)) * (1 - 1e-14) - 1e-14
    return np.arcsin(np.clip(s, 0, 1))


def backward_error(Q: ArrayLike, xi: ArrayLike, c: ArrayLike, w: ArrayLike | None = None) -> NDArray[np.float64]:
    """Relative residual of (xi, c) rows for v(xi) = c w xi (w = 1 by default), normwise against the
    whole system:  max_i |v_i(xi) - c w_i xi_i| / (max |Q| |xi|^2 + max |w| |c| |xi|)  (inf-norms).

    Applied to the equilibrated system (``equilibrate``) this is the residual "relative to the
    scaled system": round-off gives a few units of 1e-16 however the given Q is scaled."""
    xi = np.atleast_2d(xi)
    c = np.atleast_1d(c)
    Q = np.asarray(Q)
    w = np.ones(xi.shape[-1]) if w is None else np.asarray(w)
    _, v, _ = _fields(Q.astype(complex), xi.astype(complex))
    num = np.abs(v - c[:, None] * w * xi).max(axis=1)
    n = np.abs(xi).max(axis=1)
    den = np.abs(Q).max() * n ** 2 + np.abs(w).max() * np.abs(c) * n
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.where(num > 0, np.inf, 0.0))


def _is_zero_exactly(Q, w, z):
    """F(z) = v(y) - c w y == 0 in exact rational arithmetic (Q, w, z floats, hence dyadic rationals)."""
    p = Q.shape[0]
    re = [Fraction(float(a)) for a in z.real]
    im = [Fraction(float(a)) for a in z.imag]
    nzq = np.argwhere(Q != 0)
    for i in range(p):
        fr, fi = Fraction(0), Fraction(0)
        for _, j, k in nzq[nzq[:, 0] == i]:
            qr = Fraction(float(np.real(Q[i, j, k])))
            qi = Fraction(float(np.imag(Q[i, j, k])))
            pr = re[j] * re[k] - im[j] * im[k]           # y_j y_k
            pi = re[j] * im[k] + im[j] * re[k]
            fr += qr * pr - qi * pi
            fi += qr * pi + qi * pr
        wi = Fraction(float(w[i]))
        fr -= wi * (re[p] * re[i] - im[p] * im[i])         # c w_i y_i
        fi -= wi * (re[p] * im[i] + im[p] * re[i])
        if fr != 0 or fi != 0:
            return False
    return True


def exact_root(Q: ArrayLike, w: ArrayLike, z: NDArray[np.complex128], eps: float = 1e-6, max_multiplier: int = 64
               ) -> NDArray[np.complex128] | None:
    """A root near the estimate z = (y, c') of v(y) = c' w y with rational coordinates, verified in
    exact arithmetic, or None.

    z is scaled so that the largest component of y is 1; then for m = 1, ..., max_multiplier, if
    every real and imaginary part of m z is within eps m of an integer, that integer point is
    tested exactly (``_is_zero_exactly``). This proves that a root lies there (used for singular
    roots, which the alpha test cannot certify); roots with irrational coordinates give None."""
    p = Q.shape[0]
    u = np.asarray(z, dtype=complex) / z[np.argmax(np.abs(z[:p]))]
    for m in range(1, max_multiplier + 1):
        mu = m * u
        r = np.round(mu.real) + 1j * np.round(mu.imag)
        if np.all(np.abs(mu - r) <= eps * m) and np.all(np.isfinite(r)):
            if _is_zero_exactly(Q, w, r):
                return r
    return None


def exact_jacobian_rank(Q: ArrayLike, w: ArrayLike, z: NDArray[np.complex128]) -> int:
    """Rank of dF(z) = [2 A(y) - c' diag(w) | -w y] (p x (p + 1)) in exact rational arithmetic at a
    point z with float (dyadic) coordinates, e.g. one from ``exact_root``. Rank p: the root is
    simple (multiplicity 1); rank < p: singular (multiplicity >= 2 if isolated)."""
    p = Q.shape[0]

    def rat(a):
        a = complex(a)
        return sp.Rational(a.real) + sp.I * sp.Rational(a.imag)
    y = [rat(a) for a in z[:p]]
    c = rat(z[p])
    J = sp.zeros(p, p + 1)
    for i in range(p):
        for j in range(p):
            J[i, j] = 2 * sum(rat(Q[i, j, k]) * y[k] for k in range(p) if Q[i, j, k] != 0)
        J[i, i] -= c * rat(w[i])
        J[i, p] = -rat(w[i]) * y[i]
    return int(J.expand().rank())


def normalise_line(xi: ArrayLike, c: complex, tol: float = 1e-12) -> tuple[NDArray[np.complex128], complex]:
    """A line [xi] with its c in one normal form: unit direction, and the phase chosen so that c is real
    > 0 when |c| > tol (else c = 0 and the largest component of xi is real > 0)."""
    xi = np.asarray(xi, dtype=complex)
    n = np.linalg.norm(xi)
    xi, c = xi / n, c / n
    if abs(c) > tol:
        ph = np.exp(-1j * np.angle(c))
    else:
        ph = np.exp(-1j * np.angle(xi[np.argmax(np.abs(xi))]))
        c = 0.0
    return xi * ph, complex(c * ph)
