"""servo.quadratic.certify_roots against published certified results, and its error paths.

Published examples:
* HomotopyContinuation.jl's certification example (Breiding, Rose and Timme, "Certifying zeros of
  polynomial systems using interval arithmetic", 2023; the ``certify`` docstring of HomotopyContinuation.jl):
  f1 = (x^4 + y^4 - 1)(x^2 + y^2 - 2) + x^5 y, f2 = x^2 + 2 x y^2 - 2 y^2 - 1/2 has 18 distinct certified
  solutions, 4 of them real. The approximate points here come independently from the resultant
  Res_y(f1, f2) (degree 18) and, for each x, the root y of f2 (quadratic in y) that makes f1 smallest.
* Macaulay2's NumericalCertification (Lee 2022; the package documentation, DocNumericalCertification.m2):
  f = {3 y1 + 2 y2 - 1, 3 x1 + 2 x2 - 7/2, x1^2 + y1^2 - 1, x2^2 + y2^2 - 1} in (x1, x2, y1, y2); the
  points p1 = (.954379, .318431, -.298633, .947949), p2 = (.95, .32, -.30, .95), p3 = (.652567, .77115,
  .757776, -.636663), p4 = (.65, .77, .76, -.64) are certified and p5 = (.31, .30, .72, -.60) ("poorly
  approximated solution") is not (alphaTheoryCertification); (.9, .3, -.3, 1) is "not an approximate
  solution" (certifyRegularSolution); (.6525, .7712, .7577, -.6366) and (.653, .771, .758, -.637) are not
  distinct (certifyDistinctSolutions). Those verdicts are on the points as given: refine=False.
"""
import numpy as np
import pytest
import sympy as sp

flint = pytest.importorskip("flint")

from servo.errors import QuadraticSystemError  # noqa: E402
from servo.quadratic import certify_roots  # noqa: E402

x, y = sp.symbols("x y")
x1, x2, y1, y2 = sp.symbols("x1 x2 y1 y2")
M2 = [3 * y1 + 2 * y2 - 1, 3 * x1 + 2 * x2 - sp.Rational(7, 2), x1 ** 2 + y1 ** 2 - 1, x2 ** 2 + y2 ** 2 - 1]
M2_VARS = [x1, x2, y1, y2]


def hc_points():
    f1 = (x ** 4 + y ** 4 - 1) * (x ** 2 + y ** 2 - 2) + x ** 5 * y
    f2 = x ** 2 + 2 * x * y ** 2 - 2 * y ** 2 - sp.Rational(1, 2)
    r = sp.Poly(sp.resultant(f1, f2, y), x)
    assert r.degree() == 18
    F1 = sp.lambdify((x, y), f1)
    pts = []
    for xv in (complex(v) for v in r.nroots(n=30, maxsteps=200)):
        ys = np.roots([complex(c) for c in sp.Poly(f2.subs(x, xv), y).all_coeffs()])
        pts.append((xv, min(ys, key=lambda t: abs(F1(xv, t)))))
    return [f1, f2], pts


def test_homotopycontinuation_example_18_distinct_4_real():
    eqs, pts = hc_points()
    R = certify_roots(eqs, [x, y], pts)
    assert len(R) == 18 and R.certified == 18
    assert R.distinct == 18 and R.distinct_real == 4 and R.distinct_proved
    # every enclosure holds its root: the residual of the midpoint, evaluated exactly at 60 digits, is tiny
    for rec in R:
        assert rec.precision == 64 and rec.radius < 1e-15
        vals = [complex(sp.N(e.subs({x: sp.Float(rec.midpoint[0].real, 30) + sp.I * sp.Float(rec.midpoint[0].imag, 30),
                                     y: sp.Float(rec.midpoint[1].real, 30) + sp.I * sp.Float(rec.midpoint[1].imag, 30)}),
                             40)) for e in eqs]
        assert max(abs(v) for v in vals) < 1e-12
    # the real ones are exactly those with a real x root of the resultant
    assert sum(abs(p[0].imag) < 1e-12 for p in pts) == 4
    assert all(rec.real is (abs(p[0].imag) < 1e-12) for rec, p in zip(R, pts))


def test_macaulay2_points_certified_and_rejected_as_published():
    P = [(.954379, .318431, -.298633, .947949), (.95, .32, -.30, .95), (.652567, .77115, .757776, -.636663),
         (.65, .77, .76, -.64), (.31, .30, .72, -.60), (.9, .3, -.3, 1)]
    R = certify_roots(M2, M2_VARS, P, refine=False)
    assert [r.certified for r in R] == [True, True, True, True, False, False]
    assert R.distinct == 2 and R.distinct_real == 2
    assert R[0].root_index == R[1].root_index != R[2].root_index == R[3].root_index
    assert R[4].reason and R[4].enclosure is None and R[4].real is None
    # the roots in closed form (sympy.solve, exact radicals): each enclosure holds the real root it names
    exact = [np.array([complex(sp.N(s[v], 30)) for v in M2_VARS]) for s in sp.solve(M2, M2_VARS, dict=True)]
    real_roots = [r for r in exact if np.all(np.abs(r.imag) < 1e-25)]
    assert len(exact) == 2 and len(real_roots) == 2          # both finite solutions are real
    for rec in R.records[:4]:
        assert all(e.imag.contains(0) for e in rec.enclosure)        # real: imaginary parts [+/- r]
        hits = [k for k, r in enumerate(real_roots) if np.abs(r - rec.midpoint).max() <= rec.radius]
        assert len(hits) == 1 and rec.radius < 0.05


def test_macaulay2_close_points_are_one_root():
    R = certify_roots(M2, M2_VARS, [(.6525, .7712, .7577, -.6366), (.653, .771, .758, -.637)], refine=False)
    assert R.certified == 2 and R.distinct == 1 and R[0].root_index == R[1].root_index == 0


def test_refine_reaches_the_root_a_rough_point_approximates():
    # (.9, .3, -.3, 1) fails as given but Newton from it converges to p1's root
    R = certify_roots(M2, M2_VARS, [(.9, .3, -.3, 1), (.954379, .318431, -.298633, .947949)])
    assert R.certified == 2 and R.distinct == 1


def test_a_complex_point_is_not_replaced_by_a_real_root_nearby():
    # x^2 + 1 = 0 near +-i: the real projection is tried first on a real system and must not win
    R = certify_roots([x ** 2 + 1], [x], [[1j + 1e-3], [-1j]])
    assert R.distinct == 2 and [r.real for r in R] == [False, False]
    assert abs(R[0].midpoint[0] - 1j) < 1e-15


def test_singular_root_is_not_certified():
    R = certify_roots([x ** 2, y - 1], [x, y], [(1e-9, 1.0)])
    assert not R[0].certified and "Newton" in R[0].reason and R.distinct == 0


def test_complex_system_has_no_reality_claim():
    R = certify_roots([x - (3 + sp.I * sp.Rational(1, 10 ** 14))], [x], [[3.0]])
    assert R[0].certified and R[0].real is None
    # a real system: the same point proved real
    R = certify_roots([x - 3], [x], [[3.0 + 1e-20j]])
    assert R[0].real is True


def test_ill_conditioned_root_needs_more_bits():
    # (x - 1)(x - 1 - 2^-80): two simple roots 2^-80 apart; 64 bits cannot separate them
    a = 1 + sp.Rational(1, 2 ** 80)
    R = certify_roots([sp.expand((x - 1) * (x - a))], [x], [[1.0], [1.0 + 2.0 ** -52]])
    ok = [r for r in R if r.certified]
    assert ok and all(r.precision >= 128 for r in ok)


@pytest.mark.parametrize("eqs, vars_, pts, match", [
    ([x + y], [x, y], [(0, 0)], "not square"),
    ([sp.sin(x)], [x], [[0]], "not a polynomial"),
    ([sp.sqrt(2) * x - 1], [x], [[0.7]], "no exact ball"),
    ([x - 1, y - 1], [x, y], [(1, 2, 3)], "shape"),
    ([x - 1, y - 1], [x, x], [(1, 2)], "distinct sympy Symbols"),
    ([x * sp.Symbol("a") - 1], [x], [[1]], "not variables"),
])
def test_bad_input_is_named(eqs, vars_, pts, match):
    with pytest.raises(QuadraticSystemError, match=match):
        certify_roots(eqs, vars_, pts)


def test_bad_options_are_named():
    with pytest.raises(QuadraticSystemError, match="max_precision"):
        certify_roots([x - 1], [x], [[1]], max_precision=32)
    with pytest.raises(QuadraticSystemError, match="refine"):
        certify_roots([x - 1], [x], [[1]], refine="yes")


def test_without_python_flint_the_error_says_how_to_install(monkeypatch):
    import servo.quadratic.krawczyk as kr
    monkeypatch.setattr(kr, "_flint", None)
    with pytest.raises(ModuleNotFoundError, match="python-flint"):
        certify_roots([x - 1], [x], [[1]])
