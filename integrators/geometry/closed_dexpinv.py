"""dexp^-1 in closed form where ad_x has few eigenvalues, with coefficients exact to round-off.

The round-off sum of dexp^-1 (:func:`integrators.geometry.spaces.dexpinv_series`, terms >= ROUNDOFF_TERMS)
is g(A) v, A = -ad_x (the bracket of the coadjoint spaces), with

    g(l) = l / (e^l - 1) = sum_k B_k/k! l^k = 1 - l/2 + h(l^2),
    h(mu) = (r/2) coth(r/2) - 1 = sum_{k>=1} b_k mu^k,  r^2 = mu,  b_k = B_2k/(2k)!

(the even part of g is (l/2) coth(l/2); Munthe-Kaas 1999; Hairer, Lubich and Wanner 2006, IV.8). h is
analytic for |mu| < 4 pi^2 (the poles of coth(r/2) are at r = 2 pi i k), so g(A) = 1 - A/2 + h(M),
M = A^2, whenever rho(A) < 2 pi; and h(M) = p(M) for any polynomial p that agrees with h on the
spectrum of M, with derivatives up to the multiplicity of each eigenvalue in the minimal polynomial of
M (Hermite interpolation: the definition of a primary matrix function, Higham 2008, *Functions of
Matrices*, Def. 1.4 and Thm. 1.3). With H(mu) = h(mu)/mu = sum_{k>=1} b_k mu^(k-1) (H(0) = 1/12):

* A^3 = q A (so(3), where q = -|x|^2, and the 3-dimensional algebras with ad_x^3 = q ad_x, "ad3"; on
  each ideal of "ad3x2"): M (M - q) = 0, so p(mu) = H(q) mu and

      dexp^-1 v = v - A v / 2 + E(q) A^2 v,   E(q) = H(q) = (1 - (t/2) cot(t/2)) / t^2  (q = -t^2);

  at q = 0, M^2 = 0 and p(mu) = h'(0) mu = H(0) mu: the same formula.
* A (A^2 - s)^2 = 0 (se(3): s = -|omega|^2, ad_x has the eigenvalues 0 and +-i |omega|, each of the
  two twice, :func:`pair_form`): M (M - s)^2 = 0, and p(mu) = alpha mu + beta mu^2 must satisfy
  p(s) = h(s), p'(s) = h'(s). With h = mu H and h' = H + mu H' these read
  alpha + beta s = H(s) and alpha + 2 beta s = H(s) + s H'(s), so

      beta = H'(s),   alpha = H(s) - s H'(s),
      dexp^-1 v = v - A v / 2 + alpha A^2 v + beta A^4 v

  (for s = -theta^2: alpha = H(-theta^2) + theta^2 H'(-theta^2), with h(-theta^2) =
  (theta/2) cot(theta/2) - 1). At s = 0, M^3 = 0 and the Hermite interpolant at the
  triple root 0 is h'(0) mu + h''(0) mu^2 / 2 = H(0) mu + H'(0) mu^2: the same formula, so alpha and
  beta are analytic in s through 0. Their series: alpha = sum_{k>=1} (2 - k) b_k s^(k-1),
  beta = sum_{k>=2} (k - 1) b_k s^(k-2).

No cancellation. The closed forms (t/2) cot(t/2) lose digits as t -> 0 (1 - (t/2) cot(t/2) ~ t^2/12;
for H' the loss is ~ t^-4), so every coefficient here is a polynomial: the Taylor series above with
exact Bernoulli numbers, economized on the interval of q (or s) that the round-off rule lets through.
That interval follows from Schur's inequality sum |lambda_i|^2 <= ||A||_F^2: with A^3 = q A and
tr A^2 = 2 q, A has exactly two non-zero eigenvalues, each with lambda^2 = q, so 2 |q| <= ||A||_F^2
= (2 pi)^2 x^2 <= (2 pi)^2 DEXPINV_X2MAX (beyond it the generated code answers NaN); for the pair
shape tr A^2 = 4 s (checked by :func:`pair_form`) gives 4 |s| <= ||A||_F^2. Economization (Chebyshev
truncation of the exact polynomial on the interval, then back to powers of q, all in exact rational
arithmetic; Press et al. 2007, *Numerical Recipes*, 5.11) drops only terms whose sum is below
2^-55 |f| on the interval (a quarter of an ulp): on [-9.13, 0] (so(3)) E takes degree 14, on
[-4.57, 0] (se(3)) alpha and beta 11, where the plain Taylor series would need about 26 and 18 terms.
On q < 0 the Taylor terms of E(q), of alpha - 1/12 and of beta each have one sign (the economized
coefficients differ from them only in tiny high-order terms), so Horner's rule in q is well
conditioned: tests/integrators/test_closed_dexpinv.py finds at most 1.7 ulp against mpmath.
On the pair shape the rule reads the spectrum itself: the size |s| / pi^2 (:func:`pair_size`) takes
the place of x^2 in the tiers and the bound. By Schur |s| / pi^2 <= x^2, so every theta the x^2 rule
lets through still gets a value, and so does a theta with a small rotation and a large translation
part (x^2 large, s small), where the closed form is exact and the series would not converge in
DEXPINV_KMAX terms; the polynomials depend on s alone, so their intervals are the same.
The generated code keeps shorter sets for the usual small steps (TIERS_X2: x^2 <= 2^-12, where
|q| <= 0.005 and E, alpha, beta take degree 3, and x^2 <= 2^-6, |q| <= 0.31: E of degree 6, alpha and
beta of degree 5), chosen by comparisons of x^2.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from .recognition import cubic_ad, killing_half
from .relations import _pmul, ad_relation
from .spaces import DEXPINV_X2MAX, ROUNDOFF_TERMS, CoadjointSpace, GroupSpace, adnorm_form, dexpinv_series

#: the economized polynomials drop Chebyshev terms summing to at most this fraction of min |f|
ECONOMY_TOL = 2.0 ** -55
#: the exact Taylor polynomial is cut where its remainder is below this fraction of |f| (bound below)
_TAYLOR_TOL = 2.0 ** -80
#: the exact Taylor coefficients are rounded to dyadic numbers of this many significant bits (a relative
#: change of 2^-90 each, far below the 2^-55 kept; powers of two as denominators keep the arithmetic fast)
_BITS = 90
#: the x^2 at or below which the generated code takes shorter polynomials (an adaptive step is almost
#: always there: on se(3) at rtol 1e-10 x^2 is ~4e-5 with rkmk45, ~5e-4 and at most 1e-2 with rkmk853)
TIERS_X2 = (2.0 ** -12, 2.0 ** -6)


def cubic_bound(x2):
    """The bound on |q| (A^3 = q A) where ||ad_x||_F^2 <= (2 pi)^2 x2 (module docstring), with a margin
    of 2^-30."""
    return 2.0 * math.pi ** 2 * x2 * (1.0 + 2.0 ** -30)


def pair_bound(x2):
    """The bound on |s| (A (A^2 - s)^2 = 0) where ||ad_x||_F^2 <= (2 pi)^2 x2, with a margin of 2^-30."""
    return math.pi ** 2 * x2 * (1.0 + 2.0 ** -30)


#: |q| on the algebras with A^3 = q A, and |s| on those with A (A^2 - s)^2 = 0, where the round-off rule
#: gives a value (x^2 <= DEXPINV_X2MAX)
CUBIC_QMAX = cubic_bound(DEXPINV_X2MAX)
PAIR_SMAX = pair_bound(DEXPINV_X2MAX)


def _dyadic(x):
    """x (a Fraction) rounded to _BITS significant bits."""
    if x == 0:
        return Fraction(0)
    e = _BITS - (abs(x.numerator).bit_length() - x.denominator.bit_length())
    return Fraction(round(x * 2 ** e), 2 ** e) if e >= 0 else Fraction(round(x / 2 ** -e) * 2 ** -e)


@lru_cache(maxsize=None)
def _bernoulli_ratios(count):
    """b_k = B_2k / (2k)! for k < count, exact, from the tangent numbers T_k (integers; the algorithm of
    Knuth and Buckholtz 1967 as given by Brent and Harvey 2013): B_2k = (-1)^(k-1) 2k T_k / (4^k (4^k - 1))."""
    n = max(count - 1, 1)
    T = [0, 1] + [0] * (n - 1)
    for k in range(2, n + 1):
        T[k] = (k - 1) * T[k - 1]
    for k in range(2, n + 1):
        for j in range(k, n + 1):
            T[j] = (j - k) * T[j - 1] + (j - k + 2) * T[j]
    out = [Fraction(1)]
    for k in range(1, count):
        out.append(Fraction((-1) ** (k - 1) * 2 * k * T[k], 4 ** k * (4 ** k - 1) * math.factorial(2 * k)))
    return tuple(out)


def _taylor(name, degree):
    """Exact Taylor coefficients (powers 0..degree) of E = H, alpha or beta in q (module docstring)."""
    b = _bernoulli_ratios(degree + 3)
    if name == "E":
        return [b[j + 1] for j in range(degree + 1)]
    if name == "alpha":
        return [(1 - j) * b[j + 1] for j in range(degree + 1)]
    if name == "beta":
        return [(j + 1) * b[j + 2] for j in range(degree + 1)]
    raise ValueError(f"unknown dexp^-1 coefficient {name!r} (one of 'E', 'alpha', 'beta')")


def _taylor_degree(radius):
    """A degree N with the Taylor remainder of E, alpha, beta below _TAYLOR_TOL |f| on |q| <= radius:
    |b_k| = 2 zeta(2k) / (2 pi)^2k <= (pi^2/3) (2 pi)^-2k, so the j-th coefficient of any of the three is
    at most (j + 2) (pi^2/3) (2 pi)^-2 rho^j / radius^j, rho = radius / (2 pi)^2, and |f| >= 1/1000
    (|E| >= 1/12 - ..., |beta| >= 1/720 - ...: the first term dominates on these intervals)."""
    rho = radius / (2.0 * math.pi) ** 2
    if not rho < 0.5:
        raise ValueError(f"dexp^-1 coefficient interval |q| <= {radius} too close to the pole at 4 pi^2")
    N = 1
    while (N + 3) * (math.pi ** 2 / 3.0) / (2.0 * math.pi) ** 2 * rho ** (N + 1) / (1.0 - rho) > _TAYLOR_TOL / 1000.0:
        N += 1
    return N


@lru_cache(maxsize=None)
def economized(name, lo, hi):
    """Float coefficients c_0..c_d (powers of q) of E, alpha or beta (module docstring) on [lo, hi]:
    the exact Taylor polynomial economized (Chebyshev terms dropped while their sum stays below
    ECONOMY_TOL min |f|), in exact dyadic arithmetic, each coefficient then rounded once."""
    if not lo < hi:
        raise ValueError(f"empty interval [{lo}, {hi}] for the dexp^-1 coefficient {name!r}")
    # the interval rounded outwards to 8 significant bits (small denominators keep the arithmetic fast)
    k = 7 - math.frexp(max(abs(lo), abs(hi)))[1]
    lo, hi = Fraction(math.floor(math.ldexp(lo, k)), 2 ** k), Fraction(math.ceil(math.ldexp(hi, k)), 2 ** k)
    a = [_dyadic(c) for c in _taylor(name, _taylor_degree(float(max(abs(lo), abs(hi)))))]
    n = len(a)
    m, r = (lo + hi) / 2, (hi - lo) / 2
    # powers of t, q = m + r t
    bt = [sum(a[j] * math.comb(j, i) * m ** (j - i) for j in range(i, n)) * r ** i for i in range(n)]
    # t^i = 2^(1-i) sum_{k = i, i-2, ...} C(i, (i-k)/2) T_k (the T_0 term halved)
    c = [Fraction(0)] * n
    for i, v in enumerate(bt):
        for k in range(i % 2, i + 1, 2):
            w = Fraction(math.comb(i, (i - k) // 2), 2 ** (i - 1)) if i else Fraction(1)
            c[k] += v * (w / 2 if k == 0 and i else w)
    cf = np.array([float(x) for x in c])
    fmin = float(np.min(np.abs(np.polynomial.chebyshev.chebval(np.linspace(-1.0, 1.0, 257), cf))))
    deg, tail = n - 1, 0.0
    while deg > 0 and tail + abs(cf[deg]) <= ECONOMY_TOL * fmin:
        tail += abs(cf[deg])
        deg -= 1
    # back to powers of t (T_(k+1) = 2 t T_k - T_(k-1)), then of q: t = (q - m) / r
    mono, Tm, T = [Fraction(0)] * (deg + 1), [Fraction(1)], [Fraction(0), Fraction(1)]
    mono[0] = c[0]
    if deg:
        mono[1] = c[1]
    for k in range(2, deg + 1):
        Tm, T = T, [(2 * T[i - 1] if i else 0) - (Tm[i] if i < len(Tm) else 0) for i in range(k + 1)]
        for i, v in enumerate(T):
            mono[i] += c[k] * v
    out = [Fraction(0)] * (deg + 1)
    for i, v in enumerate(mono):
        for j in range(i + 1):
            out[j] += v * math.comb(i, j) * (-m) ** (i - j) / r ** i
    return tuple(float(x) for x in out)


def quadratic_interval(S, qmax):
    """The interval of s(x) = x^T S x the coefficients must cover: [-qmax, 0] when S is negative
    semidefinite (so(3), se(3)), [0, qmax] when positive semidefinite, else [-qmax, qmax]."""
    ev = np.linalg.eigvalsh(0.5 * (S + S.T))
    tol = 1e-12 * max(1.0, float(np.max(np.abs(ev)))) if ev.size else 0.0
    if np.all(ev <= tol):
        return -qmax, 0.0
    if np.all(ev >= -tol):
        return 0.0, qmax
    return -qmax, qmax


_PAIRS = {}


def pair_form(C):
    """S with s(x) = x^T S x when A = -ad_x satisfies A (A^2 - s)^2 = 0 and tr A^2 = 4 s for every x,
    else None: se(3) in any basis (s = -|omega|^2), and any algebra whose ad_x has the eigenvalues 0
    and +-sqrt(s), each of the two twice (the minimal polynomial mu (mu^2 - s)^2 of generic x).

    Read off :func:`integrators.geometry.relations.ad_relation`: the relation A^5 = c_3 A^3 + c_1 A
    (no even powers) with c_1 = -(c_3 / 2)^2 as polynomials in the invariant forms; s = c_3 / 2; the
    trace condition (with the Killing form, tr ad_x^2 = 2 x^T killing_half(C) x) is what bounds |s|
    by ||A||_F^2 / 4 (module docstring)."""
    C = np.asarray(C, dtype=float)
    key = (C.tobytes(), C.shape)
    if key not in _PAIRS:
        _PAIRS[key] = _pair_form(C)
    return _PAIRS[key]


def _pair_form(C):
    n = C.shape[0]
    rel = ad_relation(C, n)
    if rel is None or rel[0] != 5 or set(rel[2]) != {1, 3}:
        return None
    _, gens, poly = rel
    half = {mono: 0.5 * a for mono, a in poly[3]}
    square = _pmul(half, half)
    c1 = dict(poly[1])
    scale = max(1.0, max(abs(a) for a in square.values()))
    if any(abs(c1.get(m, 0.0) + square.get(m, 0.0)) > 1e-12 * scale for m in set(c1) | set(square)):
        return None
    S = np.zeros((n, n))
    for mono, a in half.items():
        if len(mono) == 1:             # a quadratic invariant form (2, Q)
            S += a * gens[mono[0]][1]
        else:                          # a product of two linear ones (1, f) (1, g)
            f, g = gens[mono[0]][1], gens[mono[1]][1]
            S += 0.5 * a * (np.outer(f, g) + np.outer(g, f))
    K = killing_half(C)
    if np.max(np.abs(K - 2.0 * S)) > 1e-10 * max(1.0, float(np.max(np.abs(K)))):
        return None
    return S


def pair_size(s):
    """|s| / pi^2, the size the round-off rule reads on the pair shape A (A^2 - s)^2 = 0 in place of
    x^2 (module docstring): at most x^2, and pair_bound(pair_size(s)) >= |s|."""
    return np.abs(s) / math.pi ** 2


def _polyval(coeffs, q):
    """sum_j coeffs[j] q^j by Horner's rule (Python floats for a scalar q: no numpy call per term)."""
    if np.ndim(q) == 0:
        q, out = float(q), coeffs[-1]
        for c in reversed(coeffs[:-1]):
            out = c + q * out
        return out
    out = np.full(np.shape(q), coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = c + q * out
    return out


def cubic_coefficient(q):
    """E(q) for |q| <= CUBIC_QMAX (the economized polynomial of the generated code, both signs of q);
    NaN beyond: dexp^-1 = 1 - A/2 + E(q) A^2 when A^3 = q A."""
    q = np.asarray(q, dtype=float)
    out = _polyval(economized("E", -CUBIC_QMAX, CUBIC_QMAX), q)
    return np.where(np.abs(q) <= CUBIC_QMAX, out, np.nan)


def pair_coefficients(s):
    """(alpha(s), beta(s)) for |s| <= PAIR_SMAX, NaN beyond: dexp^-1 = 1 - A/2 + alpha A^2 + beta A^4
    when A (A^2 - s)^2 = 0."""
    s = np.asarray(s, dtype=float)
    ok = np.abs(s) <= PAIR_SMAX
    return tuple(np.where(ok, _polyval(economized(k, -PAIR_SMAX, PAIR_SMAX), s), np.nan) for k in ("alpha", "beta"))


_FORMS = {}


def _reference_form(algebra):
    """("E", Q) when ad_x^3 = q ad_x (q = x^T Q x; so(3), the "ad3" algebras), ("pair", S) for
    :func:`pair_form`, else None; with G / (2 pi)^2, x^2 = theta^T G theta / (2 pi)^2 (cached per C)."""
    C = np.asarray(algebra.structure_constants, dtype=float)
    key = (C.tobytes(), C.shape)
    if key not in _FORMS:
        form = ("E", killing_half(C)) if cubic_ad(C) else None
        if form is None:
            S = pair_form(C)
            form = None if S is None else ("pair", S)
        _FORMS[key] = (form, adnorm_form(C) / (2.0 * math.pi) ** 2)
    return _FORMS[key]


def space_dexpinv(space, theta, v, terms):
    """dexp^-1_theta(v) of an RKMK stage on ``space`` (:mod:`integrators.geometry.spaces`) as
    :func:`integrators.geometry.spaces.dexpinv_series` defines it for ``terms``; summed to round-off
    (terms >= ROUNDOFF_TERMS) on a :class:`CoadjointSpace` or :class:`GroupSpace` whose algebra has
    ad_x^3 = q ad_x (so(3), "ad3") or A (A^2 - s)^2 = 0 (se(3)), by the closed forms of this module
    (two or four brackets instead of up to DEXPINV_KMAX; the polynomials of the tier of TIERS_X2 that
    holds x^2, as the generated code) while x^2 <= DEXPINV_X2MAX over the batch (on the pair shape
    |s| / pi^2, :func:`pair_size`), the series' own answer beyond (phi_1(A)^-1 v); v itself on an abelian space
    (:class:`integrators.geometry.orbit_space.OrbitSpace`)."""
    if getattr(space, "abelian", False):
        return v
    if int(terms) < ROUNDOFF_TERMS or not isinstance(space, (CoadjointSpace, GroupSpace)):
        return dexpinv_series(space.bracket, theta, v, terms)
    cached = space.__dict__.get("_closed_dexpinv")
    if cached is None or cached[0] is not space.algebra:   # kept on the space (its algebra checked)
        cached = space.__dict__["_closed_dexpinv"] = (space.algebra,) + _reference_form(space.algebra)
    _, form, G = cached
    theta = np.asarray(theta, dtype=float)
    if form is None:
        return dexpinv_series(space.bracket, theta, v, terms)
    kind, S = form
    if theta.ndim == 1:   # one trajectory: two products each, Python floats after
        x2, q = float(theta @ (G @ theta)), float(theta @ (S @ theta))
    else:
        x2, q = np.max(np.sum((theta @ G) * theta, axis=-1)), np.sum((theta @ S) * theta, axis=-1)
    if kind == "pair":   # the pair shape's rule reads |s| / pi^2 (module docstring)
        x2 = float(np.max(pair_size(q)))
    if not x2 <= DEXPINV_X2MAX:
        return dexpinv_series(space.bracket, theta, v, terms)
    # the interval of the generated code's tiers that holds x^2 (both signs of q)
    tier = next((t for t in TIERS_X2 if x2 <= t), DEXPINV_X2MAX)
    bound = cubic_bound(tier) if kind == "E" else pair_bound(tier)
    a1 = space.bracket(theta, v)
    a2 = space.bracket(theta, a1)
    if kind == "E":
        E = _polyval(economized("E", -bound, bound), q)
        return v - 0.5 * a1 + np.asarray(E)[..., None] * a2
    a4 = space.bracket(theta, space.bracket(theta, a2))
    al = _polyval(economized("alpha", -bound, bound), q)
    be = _polyval(economized("beta", -bound, bound), q)
    return v - 0.5 * a1 + np.asarray(al)[..., None] * a2 + np.asarray(be)[..., None] * a4
