"""Helper functions called by the generated code of :mod:`integrators.codegen.writer`, one version per mode:
Python floats (also jitted by numba) and numpy arrays (an ensemble's columns).

* co2(t2) = (a, b), co3(t2) = (a, b, c): a = sin t / t, b = (1 - cos t)/t^2 = 2 sin^2(t/2)/t^2 (no
  cancellation), c = (t - sin t)/t^3 (series below t^2 = 1e-2), given t^2 (Rodrigues' coefficients,
  Murray, Li and Sastry 1994, 2.2 and 2.4);
* cq2(q) = (s1, s2): s1 = sinh(sqrt q)/sqrt q, s2 = (cosh(sqrt q) - 1)/q, the coefficients of
  exp(ad x) = 1 + s1 ad_x + s2 ad_x^2 on a 3-dimensional algebra with ad_x^3 = q ad_x
  (:meth:`integrators.codegen.exp_writer.ExponentialWriter._act_ad3`, which derives it, and ``_act_ad3x2``); sin and
  1 - cos for q < 0, by half angles (no cancellation), their Taylor series for |q| < 1e-2; cq3(q, s1) = s3 =
  sum_k q^k/(2k+3)!, the coefficient of A^2 in phi_1(A) for the affine action of a forced problem;
* tplan(bound) = (s, m, bad): substeps and terms of the Taylor action of the exponential; tbound(bound) =
  (bound, bad) for its folded form (bad NaN beyond 1e5: per column for numpy columns);
* rinv(d, m) = 1/d, or 0 when d <= 1e-12 m, d <= 1e-290 (1/d would overflow) or d is not finite (a
  pivot of the Casimir projection, :mod:`integrators.codegen.projection`: a dependent direction, or a state
  so small that its gradients underflow, is left unprojected, not divided by);
* sin: math.sin on Python floats, but NaN for an infinite angle (an overflowed state) as numpy gives,
  not a ValueError (McLachlan's splitting, :func:`integrators.codegen.fixed_programs._splitting`);
* fin, mx, bmax, grow: finiteness test, max of two values, max over an ensemble (NaN -> inf),
  doubling of the output arrays;
* sfac(err, expo): the controller's step factor for an error norm err (min(10, 0.9 err^expo) when
  err <= 1, 10 at 0; max(0.2, 0.9 err^expo) above, 0.2 for inf or NaN), per trajectory of a shared
  ensemble (:mod:`integrators.engine.freeze`: a trajectory whose own factor collapses the step is lost);
* expphi(A) = (exp(A) - I, phi_1(A), ||A||_F^2) of a matrix or a batch of them (the code writer's matrix
  form); pdinv(D, P, v): its dexp^-1 from them (one solve); taction(A, Z): exp(A) Z - Z on numpy columns
  (the Taylor series of the action);
* aexp(a, lam) = (e^(a lam) - 1, (e^(a lam) - 1)/a), aexpc(a, al, be) the same for the complex
  al + i be (real and imaginary parts), bern(mu) = (f, q), f = mu / (e^mu - 1), q = (f - 1)/mu, bernc for
  complex mu: the scalar functions of the closed forms on almost abelian algebras
  (:mod:`integrators.geometry.almost_abelian`), without cancellation near 0;
* ptables, ppoly: polynomials (the Casimirs of a projected pair in the matrix form) by monomials
  (:func:`liegroups.monomials.monomial_tables`, :func:`liegroups.monomials.monomial_sum`);
* hstart, rmsq: Hairer's starting step (Hairer, Norsett and Wanner I, II.4; see
  :func:`integrators.engine.starting_step.initial_step`), its two phases around the second evaluation of the
  field, in Python floats; :func:`integrators.engine.adaptive._initial_step_one` and the generated adaptive
  loop both call them (one copy of the formula).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg.lapack import dgesv

from liegroups.monomials import monomial_sum, monomial_tables

def _co2_float(t2):
    if not t2 < 1e300:
        return math.nan, math.nan
    if t2 < 1e-8:
        return 1.0 - t2 / 6.0 + t2 * t2 / 120.0, 0.5 - t2 / 24.0 + t2 * t2 / 720.0
    t = math.sqrt(t2)
    s = math.sin(0.5 * t) / (0.5 * t)
    return s * math.cos(0.5 * t), 0.5 * s * s   # sin t / t = s cos(t/2): sin and cos of one argument (sincos)


def _c_series(t2):
    # c = (t - sin t)/t^3 = 1/6 - t^2/120 + t^4/5040 - t^6/362880 + t^8/39916800
    return 1.0 / 6.0 - t2 * (1.0 / 120.0 - t2 * (1.0 / 5040.0 - t2 * (1.0 / 362880.0 - t2 / 39916800.0)))


def _co3_float(t2):
    if not t2 < 1e300:
        return math.nan, math.nan, math.nan
    if t2 < 1e-2:  # the series of a, b, c = (t - sin t)/t^3 (truncation < 1e-20)
        a = 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0 * (1.0 - t2 / 110.0))))
        b = 0.5 - t2 / 24.0 * (1.0 - t2 / 30.0 * (1.0 - t2 / 56.0 * (1.0 - t2 / 90.0 * (1.0 - t2 / 132.0))))
        c = 1.0 / 6.0 - t2 * (1.0 / 120.0 - t2 * (1.0 / 5040.0 - t2 * (1.0 / 362880.0 - t2 / 39916800.0)))
        return a, b, c
    t = math.sqrt(t2)
    s = math.sin(0.5 * t) / (0.5 * t)
    a = s * math.cos(0.5 * t)
    return a, 0.5 * s * s, (1.0 - a) / t2


def _co2_array(t2):
    t = np.maximum(np.sqrt(t2), 1e-150)
    s = np.sin(0.5 * t)
    st = s / t
    return 2.0 * np.cos(0.5 * t) * st, 2.0 * st * st


def _co3_array(t2):
    a, b = _co2_array(t2)
    small = t2 < 1e-2
    return a, b, np.where(small, _c_series(t2), (1.0 - a) / np.where(small, 1.0, t2))


#: below this |q| the coefficients of cq2 are their Taylor series
CQ2_SERIES = 1e-2
#: above this q (growth e^sqrt(q) > 1e137 in one step) cq2 gives NaN: an overflow, not a step
CQ2_MAX = 1e5


def _cq2_float(q):
    """(s1, s2) = (sinh r / r, (cosh r - 1)/r^2), r = sqrt(q) (r = i t for q = -t^2 < 0: sin t / t,
    (1 - cos t)/t^2), accurate to a few ulp for every q <= CQ2_MAX:

    * |q| < 1e-2: s1 = sum_k q^k/(2k+1)!, s2 = sum_k q^k/(2k+2)!, k = 0..6 (truncation
      < 1e-14/15! ~ 1e-26 relative; the same Horner form as :func:`_cq2_series`, written out here
      because numba compiles this function alone);
    * otherwise, with u = r/2: s1 = (sinh u / u) cosh u and s2 = (sinh u / u)^2 / 2 (cosh r - 1 =
      2 sinh^2 u; q < 0 the same with sin, cos), products of accurate factors, no cancellation.

    NaN for q > CQ2_MAX, q = -inf or NaN (an overflowed state: the caller's finiteness test stops)."""
    if not -1e300 < q <= CQ2_MAX:
        return math.nan, math.nan
    if -CQ2_SERIES < q < CQ2_SERIES:
        s1 = 1.0 + q / 6.0 * (1.0 + q / 20.0 * (1.0 + q / 42.0 * (1.0 + q / 72.0 * (1.0 + q / 110.0 * (1.0 + q / 156.0)))))
        s2 = 0.5 + q / 24.0 * (1.0 + q / 30.0 * (1.0 + q / 56.0 * (1.0 + q / 90.0 * (1.0 + q / 132.0 * (1.0 + q / 182.0)))))
        return s1, s2
    if q < 0.0:
        u = 0.5 * math.sqrt(-q)
        s = math.sin(u) / u
        return s * math.cos(u), 0.5 * s * s
    u = 0.5 * math.sqrt(q)
    s = math.sinh(u) / u
    return s * math.cosh(u), 0.5 * s * s


def _cq2_series(q):
    # s1 = sum_{k<=6} q^k/(2k+1)!, s2 = sum_{k<=6} q^k/(2k+2)! in Horner form (see _cq2_float)
    s1 = 1.0 + q / 6.0 * (1.0 + q / 20.0 * (1.0 + q / 42.0 * (1.0 + q / 72.0 * (1.0 + q / 110.0 * (1.0 + q / 156.0)))))
    s2 = 0.5 + q / 24.0 * (1.0 + q / 30.0 * (1.0 + q / 56.0 * (1.0 + q / 90.0 * (1.0 + q / 132.0 * (1.0 + q / 182.0)))))
    return s1, s2


def _cq3_float(q, s1):
    """s3 = sum_k q^k/(2k+3)! = (s1 - 1)/q (for q = -t^2: (t - sin t)/t^3), given s1 of :func:`_cq2_float`: the
    coefficient of A^2 in phi_1(A) = (e^A - 1)/A = 1 + s2 A + s3 A^2 when A^3 = q A (the affine action of the forced
    writer, :mod:`integrators.codegen.affine_source`). |q| < 1: the series to k = 9 in Horner form (truncation
    below 1/23! relative to 1/6, ~1e-22); else (s1 - 1)/q, where |s1 - 1| >= 1 - sin(1) > 0.15 (q <= -1:
    s1 = sin t / t) or sinh(1) - 1 > 0.17 (q >= 1), so no cancellation. NaN for a NaN s1 (q out of range)."""
    if -1.0 < q < 1.0:
        return (1.0 + q / 20.0 * (1.0 + q / 42.0 * (1.0 + q / 72.0 * (1.0 + q / 110.0 * (1.0 + q / 156.0 * (
            1.0 + q / 210.0 * (1.0 + q / 272.0 * (1.0 + q / 342.0 * (1.0 + q / 420.0))))))))) / 6.0
    return (s1 - 1.0) / q


def _cq3_array(q, s1):
    """:func:`_cq3_float` elementwise."""
    q = np.asarray(q, dtype=float)
    small = np.abs(q) < 1.0
    ser = (1.0 + q / 20.0 * (1.0 + q / 42.0 * (1.0 + q / 72.0 * (1.0 + q / 110.0 * (1.0 + q / 156.0 * (
        1.0 + q / 210.0 * (1.0 + q / 272.0 * (1.0 + q / 342.0 * (1.0 + q / 420.0))))))))) / 6.0
    with np.errstate(all="ignore"):
        return np.where(small, ser, (s1 - 1.0) / np.where(small, 1.0, q))


def _cq2_array(q):
    """:func:`_cq2_float` elementwise on an array of q (both signs in one ensemble)."""
    q = np.asarray(q, dtype=float)
    with np.errstate(all="ignore"):
        small = np.abs(q) < CQ2_SERIES
        u = 0.5 * np.sqrt(np.where(small, 1.0, np.abs(q)))
        neg = q < 0.0
        up = np.minimum(u, 400.0)  # sinh(400) is finite; larger q are NaN below
        s = np.where(neg, np.sin(u), np.sinh(up)) / u
        c = np.where(neg, np.cos(u), np.cosh(up))
        a1, a2 = _cq2_series(q)
        s1 = np.where(small, a1, s * c)
        s2 = np.where(small, a2, 0.5 * s * s)
        bad = ~((q > -1e300) & (q <= CQ2_MAX))
    return np.where(bad, np.nan, s1), np.where(bad, np.nan, s2)


def _tplan_float(bound, radius=0.5):
    """(s, m, bad): s substeps with r = bound / s <= radius (1/2 unless given) and the fewest terms m with
    e^r r^(m+1) / (m+1)! <= 2^-54 (at most 30; e^r bounded by max(1.65, e^radius)); bad = 0.0, or NaN (with
    s = m = 1) when the bound is not finite or above 1e5 (an exponential of that size is overflow, not a
    step)."""
    if not bound <= 1e5:
        return 1, 1, math.nan
    s = 1
    if bound > radius:
        s = int(math.ceil(bound / radius))
    r = bound / s
    tail = max(1.65, math.exp(radius)) * r  # e^r r^(m+1)/(m+1)! for m = 0
    m = 0
    while tail > 5.551115123125783e-17 and m < 30:
        m += 1
        tail = tail * r / (m + 1)
    return s, max(m, 1), 0.0


def _tplan_array(bound, radius=0.5):
    """:func:`_tplan_float` for numpy columns: the plan of the largest bound within range (<= 1e5), and
    bad NaN only in the columns beyond it (or NaN), so that one overflowing trajectory of an ensemble
    does not make the others NaN."""
    b, bad = _tbound_array(bound)
    s, m, _ = _tplan_float(b, radius)
    return s, m, bad


def _tbound_float(bound):
    """(bound, bad) of the folded Taylor action: bad = 0.0 within range (<= 1e5), NaN beyond or for NaN
    (then the bound is inf)."""
    return (bound if bound == bound else math.inf), (0.0 if bound <= 1e5 else math.nan)


def _tbound_array(bound):
    """(largest bound within range, bad per column) for numpy columns (see :func:`_tplan_array`)."""
    bound = np.asarray(bound, dtype=float)
    ok = bound <= 1e5
    b = float(np.max(np.where(ok, bound, 0.0))) if bound.size else 0.0
    return b, (np.where(ok, 0.0, np.nan) if bound.ndim else (0.0 if ok else math.nan))


def _rinv_float(d, m):
    return 1.0 / d if 1e-12 * m < d < math.inf and d > 1e-290 else 0.0


def _rinv_array(d, m):
    ok = (d > 1e-12 * m) & (d < np.inf) & (d > 1e-290)
    return np.where(ok, 1.0 / np.where(ok, d, 1.0), 0.0)


def _sin_float(x):
    return math.sin(x) if -math.inf < x < math.inf else math.nan


#: |a lambda| (real part) beyond which aexp / aexpc answer NaN (e^709 is the largest double; the step is rejected)
_AEXP_MAX = 700.0
#: |mu| below which bern / bernc take the series of q(mu) (the direct formula loses <= 2/|mu| ulp above)
_BERN_SERIES = 0.5
#: q(mu) = (mu/(e^mu - 1) - 1)/mu = sum_{k>=1} B_k mu^(k-1)/k! = -1/2 + mu p(mu^2): the coefficients of p,
#: lowest first (B_2 = 1/6, B_4 = -1/30, B_6 = 1/42, B_8 = -1/30, B_10 = 5/66, B_12 = -691/2730, B_14 = 7/6
#: over k!; the next term is below 2^-60 |q| for |mu| < 1/2): Horner's rule in mu^2 written out in the float
#: versions, one product with the powers of mu^2 in the array versions
_P0, _P1, _P2, _P3, _P4, _P5, _P6 = _BERN_P = (1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0, -1.0 / 1209600.0,
                                               1.0 / 47900160.0, -691.0 / 1307674368000.0, 7.0 / 523069747200.0)
_BERN_ARRAY = np.array(_BERN_P)
_BERN_POWERS = np.arange(7.0)


def _aexp_float(a, lam):
    """(e^(a lam) - 1, (e^(a lam) - 1)/a) (lam at a = 0), NaN beyond |a lam| = 700."""
    x = a * lam
    if not abs(x) <= _AEXP_MAX:
        return math.nan, math.nan
    e = math.expm1(x)
    return e, (e / a if a != 0.0 else lam)


def _aexp_array(a, lam):
    # the usual case (every column within range, none with a = 0) in four numpy calls; else per column
    x = a * lam
    if np.all(a) and np.max(np.abs(x)) <= _AEXP_MAX:
        e = np.expm1(x)
        return e, e / a
    ok = np.abs(x) <= _AEXP_MAX
    e = np.where(ok, np.expm1(np.where(ok, x, 0.0)), np.nan)
    zero = a == 0.0
    return e, np.where(zero, lam, e / np.where(zero, 1.0, a))


def _aexpc_float(a, al, be):
    """(Re, Im of E = e^mu - 1, Re, Im of E / a) for mu = a (al + i be) (al + i be at a = 0): with s, c the sine
    and cosine of Im mu / 2 and m = expm1(Re mu), Re E = m cos(Im mu) - 2 s^2 = m - 2 s^2 (m + 1) without
    cancellation and Im E = (m + 1) 2 s c: three calls, where sin and cos of Im mu and of its half took four
    (compiled: 16.6 -> 10.0 ns a call at |mu| <= 0.1, 24.4 -> 17.5 ns at |mu| <= 1); NaN beyond |Re mu| = 700 or
    |Im mu| = 1e15."""
    mr, mi = a * al, a * be
    if not (abs(mr) <= _AEXP_MAX and abs(mi) <= 1e15):
        return math.nan, math.nan, math.nan, math.nan
    em = math.expm1(mr)
    h = math.sin(0.5 * mi)
    c = math.cos(0.5 * mi)
    er = em - 2.0 * h * h * (em + 1.0)
    ei = (em + 1.0) * (2.0 * h * c)
    if a != 0.0:
        return er, ei, er / a, ei / a
    return er, ei, al, be


def _aexpc_array(a, al, be):
    mr, mi = a * al, a * be
    fast = np.all(a) and np.max(np.abs(mr)) <= _AEXP_MAX and np.max(np.abs(mi)) <= 1e15
    if not fast:
        ok = (np.abs(mr) <= _AEXP_MAX) & (np.abs(mi) <= 1e15)
        mr, mi = np.where(ok, mr, 0.0), np.where(ok, mi, 0.0)
    em = np.expm1(mr)
    h = np.sin(0.5 * mi)
    c = np.cos(0.5 * mi)
    ep = em + 1.0
    er = em - 2.0 * h * h * ep
    ei = ep * (2.0 * h * c)
    if fast:
        return er, ei, er / a, ei / a
    bad = np.where(ok, 0.0, np.nan)
    er, ei = er + bad, ei + bad
    zero = a == 0.0
    inv = 1.0 / np.where(zero, 1.0, a)
    return er, ei, np.where(zero, al, er * inv), np.where(zero, be, ei * inv)


def _bern_float(mu):
    """(f, q): f(mu) = mu / (e^mu - 1) and q(mu) = (f(mu) - 1)/mu (q(0) = -1/2), the series of q below
    |mu| = 1/2 (_BERN_P), else from expm1."""
    if abs(mu) < _BERN_SERIES:
        m2 = mu * mu
        q = mu * (_P0 + m2 * (_P1 + m2 * (_P2 + m2 * (_P3 + m2 * (_P4 + m2 * (_P5 + m2 * _P6)))))) - 0.5
        return 1.0 + mu * q, q
    if not abs(mu) <= _AEXP_MAX:
        return math.nan, math.nan
    f = mu / math.expm1(mu)
    return f, (f - 1.0) / mu


def _bern_array(mu):
    # the series on every column (mu^2 powers times the coefficients: one product), the direct formula only
    # where |mu| >= 1/2
    q = (np.power.outer(mu * mu, _BERN_POWERS) @ _BERN_ARRAY) * mu - 0.5
    r = np.abs(mu)
    if np.max(r) >= _BERN_SERIES:
        small, ok = r < _BERN_SERIES, r <= _AEXP_MAX
        m = np.where(small | ~ok, 0.5, mu)
        f = m / np.expm1(m)
        bad = np.where(ok, 0.0, np.nan)
        return np.where(small, 1.0 + mu * q, f) + bad, np.where(small, q, (f - 1.0) / m) + bad
    return 1.0 + mu * q, q


def _bernc_float(mr, mi):
    """bern for complex mu = mr + i mi: (Re f, Im f, Re q, Im q), e^mu - 1 as in aexpc; NaN beyond |mr| = 700
    or |mi| = 1e15."""
    mu = complex(mr, mi)
    if abs(mu) < _BERN_SERIES:
        m2 = mu * mu
        q = mu * (_P0 + m2 * (_P1 + m2 * (_P2 + m2 * (_P3 + m2 * (_P4 + m2 * (_P5 + m2 * _P6)))))) - 0.5
        f = 1.0 + mu * q
        return f.real, f.imag, q.real, q.imag
    if not (abs(mr) <= _AEXP_MAX and abs(mi) <= 1e15):
        return math.nan, math.nan, math.nan, math.nan
    em = math.expm1(mr)   # e^mu - 1 of _aexpc_float, written out (numba compiles this function alone)
    h = math.sin(0.5 * mi)
    c = math.cos(0.5 * mi)
    f = mu / complex(em - 2.0 * h * h * (em + 1.0), (em + 1.0) * (2.0 * h * c))
    q = (f - 1.0) / mu
    return f.real, f.imag, q.real, q.imag


def _bernc_array(mr, mi):
    mu = mr + 1j * mi
    q = (np.power.outer(mu * mu, _BERN_POWERS) @ _BERN_ARRAY) * mu - 0.5
    r = np.abs(mu)
    if np.max(r) >= _BERN_SERIES:
        small = r < _BERN_SERIES
        ok = (np.abs(mr) <= _AEXP_MAX) & (np.abs(mi) <= 1e15)
        m = np.where(small | ~ok, 0.5, mu)
        er, ei, _, _ = _aexpc_array(np.ones(m.shape), m.real, m.imag)
        f = m / (er + 1j * ei)
        bad = np.where(ok | small, 0.0, complex(np.nan, np.nan))
        q = np.where(small, q, (f - 1.0) / m) + bad
        f = np.where(small, 1.0 + mu * q, f) + bad
    else:
        f = 1.0 + mu * q
    return f.real, f.imag, q.real, q.imag


def _fin_float(x):
    return x - x == 0.0


def _fin_array(x):
    return True  # ensembles: the caller checks the saved states


def _mx_float(a, b):
    return a if a > b else b


def _bmax_array(x):
    m = np.max(x)
    return float(m) if m == m else math.inf


def _bmax_float(x):
    return x if x == x else math.inf


def _rmsq(m, s, n):
    """The rms m sqrt(s / n) of n numbers v_i given m = max |v_i| (or 1 when all are 0) and
    s = sum (v_i / m)^2: no overflow for |v_i| up to the float range; NaN when a v_i is NaN or inf
    (then s is NaN)."""
    return m * math.sqrt(s / n)


def _hstart(phase, d0, d1, d2h, h0, order, interval, max_step):
    """Hairer's starting step in two phases around the second evaluation of the field, with
    d0 = rms(y0 / sc), d1 = rms(f0 / sc), sc = atol + rtol |y0|, f0 = f(y0):

    * phase 0: h0 = 0.01 d0 / d1 (1e-6 when d0 or d1 < 1e-5);
    * phase 1, given d2h = rms((f(y0 + h0 f0) - f0) / sc) = d2 h0: h = min(100 h0, h1, |t1 - t0|,
      max_step), h1 = (0.01 / max(d1, d2))^(1 / (order + 1)) through logarithms (d2 can exceed the
      float range while h1 is an ordinary number), h1 = max(1e-6, 1e-3 h0) when d1, d2 <= 1e-15.

    A step that comes out 0 or NaN (d1 or d2h not finite: the derivative at y0 overflowed) is
    replaced by 1e-300, from which the controller either grows or fails with status -1 ("the step
    size fell below 10 eps |t|")."""
    if not d1 < math.inf or (phase == 1 and not d2h < math.inf):
        h = 0.0
    elif phase == 0:
        h = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    elif d1 <= 1e-15 and d2h <= 1e-15 * h0:
        h = min(max(1e-6, h0 * 1e-3), 100.0 * h0, interval, max_step)
    else:
        l1 = math.log(d1) if d1 > 0.0 else -math.inf
        l2 = math.log(d2h) - math.log(h0) if d2h > 0.0 else -math.inf
        h = min(100.0 * h0, math.exp((math.log(0.01) - max(l1, l2)) / (order + 1)), interval, max_step)
    return h if h > 0.0 else min(1e-300, interval)


def _sfac_float(err, expo):
    if err <= 1.0:
        return 10.0 if err == 0.0 else min(10.0, 0.9 * err ** expo)
    return max(0.2, 0.9 * err ** expo) if err < 1e300 else 0.2


def _sfac_array(err, expo):
    with np.errstate(all="ignore"):
        p = 0.9 * err ** expo
        return np.where(err <= 1.0, np.where(err == 0.0, 10.0, np.minimum(10.0, p)),
                        np.where(err < 1e300, np.maximum(0.2, p), 0.2))


def _grow(ts, ys):
    t2 = np.empty(2 * ts.shape[0])
    t2[:ts.shape[0]] = ts
    y2 = np.empty((2 * ys.shape[0],) + ys.shape[1:])
    y2[:ys.shape[0]] = ys
    return t2, y2


def _grow2(ts, ys):
    t2 = np.empty(2 * ts.shape[0])
    t2[:ts.shape[0]] = ts
    y2 = np.empty((2 * ys.shape[0], ys.shape[1]))
    y2[:ys.shape[0]] = ys
    return t2, y2


def _grow3(ts, ys):
    t2 = np.empty(2 * ts.shape[0])
    t2[:ts.shape[0]] = ts
    y2 = np.empty((2 * ys.shape[0], ys.shape[1], ys.shape[2]))
    y2[:ys.shape[0]] = ys
    return t2, y2


#: expphi's plans by ||X||_F: (r, b, q, coefficients) for the Taylor series of phi_1 to degree m on
#: ||X||_F <= r, whose remainder sum_{k>m} r^k/(k+1)! is below 2^-63 (the unit round-off / 1024; the test
#: checks each r in rational arithmetic), in q = ceil((m + 1)/b) blocks of b powers (Paterson and Stockmeyer
#: 1973: X^2..X^b, then q - 1 Horner products with X^b); coefficients[i, k] = 1/(ib + k + 1)! (0 beyond m).
#: Degrees 11, 15, 19, 24: the most that 6, 7, 8, 9 matrix products (X phi_1 included) reach. The stages of
#: an adaptive RKMK step have ||ad theta|| ~ 0.1-2 (the drawn solvable algebras of benchmarks/drawn_systems:
#: median 0.3), where degree 24 for every call cost 2-3 products more; above the last r, its scaling.
def _ps_plan(m, b, r):
    q = -(-(m + 1) // b)
    coef = np.array([[1.0 / math.factorial(i * b + k + 1) if i * b + k <= m else 0.0 for k in range(b)]
                     for i in range(q)])
    return r, b, q, coef


#: (m, b, r) of each plan
_PS_DEGREES = ((11, 3, 0.1719), (15, 4, 0.5287), (19, 4, 1.0865), (24, 5, 2.0148))
_PS_PLANS = tuple(_ps_plan(*p) for p in _PS_DEGREES)
#: identity matrices by size (read-only): the powers' first row and the doublings' e^X = I + D
_EYES = {}


def _expphi(A):
    """(exp(A) - I, phi_1(A), ||A||_F^2) for a matrix or a batch of matrices A (..., k, k) (the largest norm of the
    batch), phi_1(A) = sum_k A^k/(k+1)! (so exp(A) - I = A phi_1(A) without cancellation): the Taylor series of phi_1 of degree m on
    X = A / 2^s, with m in 11, 15, 19, 24 the least whose remainder on ||X||_F (the largest of the batch) is
    below 2^-63 (:data:`_PS_PLANS`; s = 0 unless ||A||_F > 2.0148, then m = 24 and ||X||_F <= 2.0148),
    evaluated by Paterson and Stockmeyer's scheme (the powers X^0..X^(b-1) in one array, the block
    coefficients in one product with them, q - 1 Horner products with X^b instead of m: the cost of a call
    is its number of numpy calls), then s doublings phi_1(2X) = phi_1(X) (e^X + I)/2, e^(2X) = (e^X)^2
    (Moler and Van Loan 2003, method 3; with s > 0, ||X||_F > 1 and exp(A) - I is of order one, read off
    exp(A)). The Frobenius norm is submultiplicative, so ||X^k||_F <= ||X||_F^k bounds the remainder as
    the 1-norm would (one call instead of three; ~0.9 ||X||_1 on a random 9 x 9 matrix). NaN beyond
    ||A||_F = 1e5 or for a NaN entry (as tplan: the step is rejected). The matrix form of the code writer
    (:mod:`integrators.codegen.matrix_source`) calls it; its dexp^-1 reads ||ad theta||_F^2 = ||A||_F^2 from it."""
    if not A.size:
        f2 = 0.0
    elif A.ndim == 2:
        f2 = float(np.vdot(A, A))
    else:
        f2 = float(np.einsum("...ij,...ij->...", A, A).max())
    nrm = math.sqrt(f2)
    if not nrm <= 1e5:
        bad = np.full(A.shape, np.nan)
        return bad, bad, f2
    s = 0
    for r, b, q, coef in _PS_PLANS:
        if nrm <= r:
            break
    else:
        s = math.ceil(math.log2(nrm / r))
    X = A * 0.5 ** s if s else A
    k = A.shape[-1]
    eye = _EYES.get(k)
    if eye is None:
        eye = _EYES[k] = np.eye(k)
        eye.flags.writeable = False
    S = np.empty((b,) + A.shape)                       # I, X, .., X^(b-1)
    S[0] = eye
    S[1] = X
    for j in range(2, b):
        np.matmul(S[j - 1], X, out=S[j])
    top = S[b - 1] @ X                                 # X^b
    B = (coef @ S.reshape(b, -1)).reshape((q,) + A.shape)
    P = B[q - 1]
    for i in range(q - 2, -1, -1):
        P = B[i] + top @ P
    D = X @ P
    if s:    # ||X||_F > 1 here, so e^X - I is not small: the doublings on E = e^X lose nothing to E - I
        E = D + eye
        for _ in range(s):
            P = (P @ E + P) * 0.5
            E = E @ E
        D = E - eye
    return D, P, f2


#: taction's substeps have ||A / s||_1 <= 2 (Al-Mohy and Higham 2011 take up to ~6 at this precision:
#: s m is smallest for large radii; expphi's series runs to the same radius)
_TACTION_RADIUS = 2.0


def _taction(A, Z):
    """exp(A) Z - Z for the columns of Z (n, G) with their matrices A (n, n, G): s substeps of the Taylor series
    of exp(A / s) to m terms, (s, m) = tplan(||A||_F, radius 2) (the largest norm of the columns within range;
    NaN in a column beyond it), t_1 = A y / s, t_k = A t_(k-1) / (k s), the increment summed from the terms (no
    cancellation): the array form of the scalar writer's text (whose substeps have norm <= 1/2)
    (:meth:`integrators.codegen.exp_writer.ExponentialWriter.taylor_substeps`; Al-Mohy and Higham 2011), one
    einsum (A u)_i = sum_j A_ij u_j a term, n^2 products a column where the powers of expphi take n^3. The
    Frobenius norm bounds the terms as the 1-norm does (submultiplicative; one einsum, as :func:`_expphi`)."""
    s, m, bad = _tplan_array(np.sqrt(np.einsum("ijg,ijg->g", A, A)), _TACTION_RADIUS)
    tot = np.zeros(Z.shape)
    cur = Z
    for _ in range(s):
        u = np.einsum("ijg,jg->ig", A, cur) / s
        acc = u.copy()
        for k in range(2, m + 1):
            u = np.einsum("ijg,jg->ig", A, u) / (k * s)
            acc += u
        tot += acc
        cur = cur + acc
    return tot + bad


def _pdinv_float(D, P, v):
    """u + D^T u with P^T u = v (dexp^-1 of the matrix form from the stage's D = exp(A) - I, P = phi_1(A),
    :meth:`integrators.codegen.matrix_source.MatrixSource.dexpinv`, which derives it) for one matrix: LAPACK's
    dgesv (LU with partial pivoting, as numpy.linalg.solve, without its checks: 1.0 against 3.4 us on a
    9 x 9 system); NaN for a singular P (the step is rejected)."""
    _, _, u, info = dgesv(P.T, v)
    if info:
        return np.full(v.shape, np.nan)
    return u + D.T @ u


def _pdinv_array(D, P, V):
    """:func:`_pdinv_float` for a batch: D, P (G, n, n), V (n, G) -> (n, G)."""
    U = np.linalg.solve(P.transpose(0, 2, 1), V.T[:, :, None])
    return (U + D.transpose(0, 2, 1) @ U)[:, :, 0].T


#: per mode: the names the generated code calls
SCALAR = {"co2": _co2_float, "co3": _co3_float, "cq2": _cq2_float, "cq3": _cq3_float, "tplan": _tplan_float, "rinv": _rinv_float, "fin": _fin_float, "mx": _mx_float,
          "bmax": _bmax_float, "sqrt": math.sqrt, "grow": _grow, "hstart": _hstart, "rmsq": _rmsq,
          "sfac": _sfac_float, "tbound": _tbound_float, "sin": _sin_float, "expphi": _expphi, "pdinv": _pdinv_float,
          "aexp": _aexp_float, "aexpc": _aexpc_float, "bern": _bern_float, "bernc": _bernc_float,
          "ptables": monomial_tables, "ppoly": monomial_sum}
ARRAY = {"co2": _co2_array, "co3": _co3_array, "cq2": _cq2_array, "cq3": _cq3_array, "tplan": _tplan_array, "rinv": _rinv_array, "fin": _fin_array, "mx": np.maximum,
         "bmax": _bmax_array, "sqrt": np.sqrt, "grow": _grow, "abs": np.abs, "hstart": _hstart,
         "rmsq": _rmsq, "sfac": _sfac_array, "tbound": _tbound_array, "sin": np.sin, "expphi": _expphi,
         "pdinv": _pdinv_array, "taction": _taction,
         "aexp": _aexp_array, "aexpc": _aexpc_array, "bern": _bern_array, "bernc": _bernc_array,
         "ptables": monomial_tables, "ppoly": monomial_sum}
