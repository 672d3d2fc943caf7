"""Kovalevskaya exponents as proved discs and obstructions proved with them (servo.quadratic.kovalevskaya.enclosures).

Expected values:
* Euler top (free rigid body on so(3), inertia (1, 2, 3)): H and |m|^2 are quadratic integrals with independent
  gradients at every Darboux point, so 2 is a double exponent (K^T grad F = 2 grad F; test_kovalevskaya checks
  it numerically). Odd m is no sum of 2's: 1, 3, 5 ruled out; 2, 4 stay open.
* v = (x1^2, 3 x1 x2): at xi = (1, 0), c = 1, the Darboux point d = (-1, 0) is rational; Dv(d) = [[2 d1, 0],
  [3 d2, 3 d1]] = diag(-2, -3), so K = Dv(d) + Id = diag(-1, -2): the exponent is exactly -2, and no m >= 1 is
  a sum of k (-2), k >= 0: every degree is ruled out. Independently, the exact null-space search finds no
  homogeneous polynomial integral (y / x^3 is an integral, not a polynomial one).
"""
import numpy as np
import pytest

flint = pytest.importorskip("flint")

from liegroups import named  # noqa: E402
from servo import EulerPoincare, QuadraticSystem  # noqa: E402
from servo.errors import QuadraticSystemError  # noqa: E402
from servo.quadratic.kovalevskaya import (certified_exponents, polynomial_first_integrals,  # noqa: E402
                                          proved_obstructions)


def test_euler_top_exponents_are_discs_around_2_of_radius_below_1e_30():
    q = EulerPoincare(named.so3(), [1, 2, 3]).reduced().system
    encs = certified_exponents(q, precision=128)
    assert len(encs) == 4 and all(not E.reason for E in encs)
    for E in encs:
        assert E.precision >= 128 and E.radius <= 1e-30
        assert len(E.exponents) == 2 and all(e.real.contains(2) and e.imag.contains(0) for e in E.exponents)
    ob = proved_obstructions(q, 5)
    assert ob.proved and ob.ruled_out == (1, 3, 5) and ob.open_degrees == (2, 4)


def test_exact_integer_exponent_and_every_degree_ruled_out():
    Q = np.zeros((2, 2, 2))
    Q[0, 0, 0] = 1.0
    Q[1, 0, 1] = Q[1, 1, 0] = 1.5
    q = QuadraticSystem(Q)
    encs = certified_exponents(q)
    at = [E for E in encs if np.allclose(E.darboux_point, [-1, 0])]
    assert len(at) == 1 and at[0].exact == {0: -2} and at[0].exponents[0].real.contains(-2)
    ob = proved_obstructions(q, 4)
    assert ob.ruled_out == (1, 2, 3, 4)
    assert all(polynomial_first_integrals(q, m) == [] for m in (1, 2, 3, 4))


def test_numeric_exponents_lie_in_the_discs_and_proved_verdicts_hold():
    Q = np.random.default_rng(3).integers(-3, 4, size=(3, 3, 3)).astype(float)
    q = QuadraticSystem((Q + Q.transpose(0, 2, 1)) / 2)            # rational: the exact search can check
    L = q.invariant_lines()
    encs = certified_exponents(q, L)
    assert encs and all(not E.reason for E in encs)
    for E in encs:
        num = L[E.line_index].kovalevskaya_exponents
        for e in E.exponents:                  # each disc is within 1e-10 of one numeric exponent
            assert np.min(np.abs(num - complex(e.mid()))) < 1e-10
    ob = proved_obstructions(q, 3, lines=L)
    for m in ob.ruled_out:                     # a proof must never contradict the exact search
        assert polynomial_first_integrals(q, m) == []


def test_precision_out_of_range_is_named():
    q = EulerPoincare(named.so3(), [1, 2, 3]).reduced().system
    with pytest.raises(QuadraticSystemError, match="precision"):
        certified_exponents(q, precision=32)


def _hamiltonian_sqrt2():
    """v = (H_y, -H_x), H = x^3 - 2 x y^2. By hand: x v2 - y v1 = -(x H_x + y H_y) = -3 H, so the lines are the
    roots of H: (0, 1) and (+-sqrt 2, 1); at (sqrt 2, 1) v = (-4 sqrt 2, -4), c = -4, so the Darboux points
    +-(sqrt 2, 1) / 4 are irrational. For p = 2, tr K = 2 + 2 tr A(d) = -1 + rho and 2 tr A(d) = div v(d) = 0
    (a Hamiltonian field): rho = 3 at every Darboux point, exactly."""
    import sympy as sp
    x, y = sp.symbols("x y")
    H = x**3 - 2 * x * y**2
    return QuadraticSystem.from_sympy([sp.diff(H, y), -sp.diff(H, x)], [x, y])


def test_integer_exponent_proved_exactly_at_irrational_darboux_points(monkeypatch):
    import importlib
    q = _hamiltonian_sqrt2()
    E = certified_exponents(q)
    irrational = [e for e in E if abs(abs(e.darboux_point[0]) - np.sqrt(2) / 4) < 1e-12]
    assert len(irrational) == 2 and len(E) == 3
    assert all(e.exact == {0: 3} and e.radius < 1e-30 for e in E)
    enc = importlib.import_module("servo.quadratic.kovalevskaya.enclosures")
    monkeypatch.setattr(enc, "ALGEBRAIC_MAX_P", 0)           # without the number field: only the rational point
    E0 = certified_exponents(q)
    assert sum(e.exact == {0: 3} for e in E0) == 1


def test_darboux_ideal_decides_both_ways():
    """At d = (sqrt 2, 1) / 4 the exponents are -1 and 3 (above): 3 and -1 are exponents, 4 and 0 are not."""
    from servo.quadratic.kovalevskaya.algebraic_exponents import DarbouxIdeal
    from servo.quadratic.krawczyk import working_precision
    from servo.quadratic.polynomials import rational_tensor
    ideal = DarbouxIdeal(rational_tensor(_hamiltonian_sqrt2()))
    with working_precision(128):
        s2 = flint.arb(2).sqrt()
        d = [flint.acb(s2 / 4), flint.acb(flint.arb(1) / 4)]
        assert ideal.has_integer_exponent(d, 3) is True and ideal.has_integer_exponent(d, -1) is True
        assert ideal.has_integer_exponent(d, 4) is False and ideal.has_integer_exponent(d, 0) is False
        # a ball that is not a Darboux point (no factor vanishes on it): not decided
        assert ideal.has_integer_exponent([flint.acb(1), flint.acb(1)], 3) is None
