"""Multiplicities of singular invariant lines proved in exact arithmetic (servo.quadratic.multiplicity), against
multiplicities derived by hand here, and the certificates built on them.

1. v = (0, x0^2): v(xi) = c xi gives c xi0 = 0 and xi0^2 = c xi1. c = 0 forces xi0 = 0; xi0 = 0 forces c xi1 = 0,
   c = 0. One line, (0, 1) with c = 0. In the chart xi1 = 1 with unknowns (x0, c): f0 = -c x0, f1 = x0^2 - c;
   c = x0^2 from f1, then f0 = -x0^3: the local ring is C[x0] / (x0^3), multiplicity 3 = 2^2 - 1.
2. The same system in the coordinates x = R y, R = [[i, -1], [1, 0]] (R^-1 = [[0, 1], [-1, i]]):
   v'(y) = R^-1 v(R y) = ((i y0 - y1)^2, i (i y0 - y1)^2), the line y = R^-1 (0, 1) ~ (1, i), non-real
   coordinates, multiplicity 3 again.
3. v = (a x1^2, b x1^2), b != 0 (x0 absent from v): the line e0 = (1, 0) with c = 0; chart x0 = 1, unknowns
   (x1, c): c = a x1^2, then b x1^2 - a x1^3 = x1^2 (b - a x1): multiplicity 2. The other line: x1 = 1 gives
   (a, b) = c (x0, 1), c = b, x0 = a / b, simple. 2 + 1 = 3 = 2^2 - 1.
4. v = (x0^2, x0 x1) = x0 x: every xi with xi0 != 0 is a line (c = xi0): a family, no finite multiplicity.
"""
import numpy as np
import pytest

pytest.importorskip("flint")

from servo import QuadraticSystem  # noqa: E402
from servo.quadratic.multiplicity import local_multiplicity  # noqa: E402


def q_cube():
    Q = np.zeros((2, 2, 2))
    Q[1, 0, 0] = 1.0
    return Q


def test_multiplicity_three_at_a_real_point():
    assert local_multiplicity(q_cube(), np.ones(2), np.array([0, 1, 0], dtype=complex)) == 3


def test_multiplicity_three_at_a_point_with_non_real_coordinates():
    Q = np.zeros((2, 2, 2), dtype=complex)
    Q[0, 0, 0], Q[0, 0, 1], Q[0, 1, 0], Q[0, 1, 1] = -1, -1j, -1j, 1       # (i y0 - y1)^2
    Q[1] = 1j * Q[0]
    assert local_multiplicity(Q, np.ones(2), np.array([1, 1j, 0])) == 3


def test_a_simple_root_has_multiplicity_one_and_a_non_root_is_refused():
    Q = np.zeros((2, 2, 2))
    Q[0, 1, 1], Q[1, 1, 1] = 3.0, 2.0                     # a = 3, b = 2 (case 3)
    assert local_multiplicity(Q, np.ones(2), np.array([1.5, 1, 2], dtype=complex)) == 1   # (a / b, 1), c = b
    assert local_multiplicity(Q, np.ones(2), np.array([1, 0, 0], dtype=complex)) == 2     # e0, c = 0
    with pytest.raises(ValueError, match="not an exact root"):
        local_multiplicity(Q, np.ones(2), np.array([1, 1, 0], dtype=complex))


def test_a_point_on_a_family_has_no_finite_multiplicity():
    Q = np.zeros((2, 2, 2))
    Q[0, 0, 0] = 1.0
    Q[1, 0, 1] = Q[1, 1, 0] = 0.5                          # v = (x0^2, x0 x1)
    assert local_multiplicity(Q, np.ones(2), np.array([1, 1, 1], dtype=complex), kmax=6) is None


def test_invariant_lines_proves_the_multiplicity_three():
    L = QuadraticSystem(q_cube()).invariant_lines()
    assert L.certificate in ("alpha+multiplicity", "krawczyk+multiplicity"), L.reason
    assert len(L) == 1 and L.total_multiplicity == 3
    (line,) = list(L)
    assert np.allclose(np.abs(line.direction), [0, 1]) and line.c == 0 and line.multiplicity == 3
    assert "proved in exact arithmetic" in L.reason


def test_a_variable_absent_from_v_gives_a_proved_multiple_line_p3():
    """p = 3, v independent of x0: v_1 = x1^2 - x2^2 + x1 x2, v_2 = x1 x2 + 2 x2^2 - x1^2 and v_0 = x1 x2. The
    lowest forms at e0 (chart x0 = 1, c = v_0 = O(u^2)) are v_1, v_2 restricted, which have no common zero
    other than 0 (the resultant of the binary quadratics, computed here exactly, is not 0), so the
    multiplicity of e0 is 2^2 = 4 (tangent cones meeting properly, Fulton 1984, Corollary 12.4); the other
    2^3 - 1 - 4 = 3 lines are the lifts of the three lines of (v_1, v_2) in the plane."""
    import sympy as sp
    a, b = sp.symbols("a b")
    v1, v2 = a ** 2 - b ** 2 + a * b, a * b + 2 * b ** 2 - a ** 2
    assert sp.resultant(v1.subs(b, 1), v2.subs(b, 1), a) != 0 and sp.Poly(v1, a).LC() * sp.Poly(v2, a).LC() != 0
    Q = np.zeros((3, 3, 3))
    Q[0, 1, 2] = Q[0, 2, 1] = 0.5
    Q[1, 1, 1], Q[1, 2, 2], Q[1, 1, 2], Q[1, 2, 1] = 1, -1, 0.5, 0.5
    Q[2, 1, 2] = Q[2, 2, 1] = 0.5
    Q[2, 2, 2], Q[2, 1, 1] = 2, -1
    assert local_multiplicity(Q, np.ones(3), np.array([1, 0, 0, 0], dtype=complex)) == 4
    L = QuadraticSystem(Q).invariant_lines()
    assert L.certified and L.total_multiplicity == 7, L.reason
    e0 = [ln for ln in L if ln.multiplicity > 1]
    assert len(e0) == 1 and e0[0].multiplicity == 4 and np.allclose(np.abs(e0[0].direction), [1, 0, 0])


def q_quadratic_field():
    """p = 4 (a fuzz system): v0 = 2 x1 x2 + 6 x1 x3, v1 = -x0^2 + 4 x0 x1 + 6 x0 x3 - 2 x1^2 - 2 x1 x3,
    v2 = -4 x1 x3, v3 = -2 x0 x3 - x2^2. On x2 = x3 = 0 with c = 0 only v1 is left: x0^2 - 4 x0 x1 + 2 x1^2 = 0,
    x0 / x1 = 2 +- sqrt 2, two conjugate lines (irrational, real)."""
    Q = np.zeros((4, 4, 4))
    for i, terms in enumerate([{(1, 2): 2, (1, 3): 6}, {(0, 0): -1, (0, 1): 4, (0, 3): 6, (1, 1): -2, (1, 3): -2},
                               {(1, 3): -4}, {(0, 3): -2, (2, 2): -1}]):
        for (j, k), c in terms.items():
            if j == k:
                Q[i, j, j] = c
            else:
                Q[i, j, k] = Q[i, k, j] = c / 2
    return Q


def test_conjugate_multiple_lines_in_a_quadratic_field_are_proved():
    from servo.quadratic.multiplicity import quadratic_roots
    Q = q_quadratic_field()
    r = quadratic_roots(Q, np.ones(4), np.array([2 - np.sqrt(2), 1, 0, 0, 0], dtype=complex))
    assert r is not None
    pts, mu, real = r
    assert real and mu >= 2
    assert sorted(z[0].real for z in pts) == pytest.approx([2 - np.sqrt(2), 2 + np.sqrt(2)], rel=1e-14)
    L = QuadraticSystem(Q).invariant_lines()
    assert L.certificate == "krawczyk+multiplicity", L.reason
    assert L.total_multiplicity == 15
    conj = [ln for ln in L if ln.multiplicity > 1 and abs(ln.direction[2]) + abs(ln.direction[3]) < 1e-12
            and abs(ln.direction[1]) > 1e-3]
    ratios = sorted(abs(ln.direction[0] / ln.direction[1]) for ln in conj)
    assert ratios == pytest.approx([2 - np.sqrt(2), 2 + np.sqrt(2)], rel=1e-12)
    assert conj[0].multiplicity == conj[1].multiplicity == mu and all(ln.c == 0 and ln.is_real for ln in conj)
    # a second solve in other coordinates, x = T y (T a signed permutation times powers of 2), other seed:
    # the same lines, eta = T^-1 xi
    T = np.array([[0, 2.0, 0, 0], [0, 0, 0, -0.5], [4.0, 0, 0, 0], [0, 0, -1.0, 0]])
    Ti = np.linalg.inv(T)
    L2 = QuadraticSystem(np.einsum("ia,ajk,jb,kc->ibc", Ti, Q, T, T)).invariant_lines(seed=7)
    assert L2.certified and L2.total_multiplicity == 15
    got = sorted((ln.multiplicity, tuple(np.round(np.abs(T @ ln.direction) / np.linalg.norm(T @ ln.direction), 8)))
                 for ln in L2)
    want = sorted((ln.multiplicity, tuple(np.round(np.abs(ln.direction), 8))) for ln in L)
    assert got == want


def test_field_multiplicity_refuses_a_complex_system_outside_q_i():
    from fractions import Fraction

    from servo.quadratic.multiplicity import field_multiplicity
    Q = np.zeros((2, 2, 2), dtype=complex)
    Q[1, 0, 0] = 1j
    P = [(Fraction(0), Fraction(0)), (Fraction(1), Fraction(0)), (Fraction(0), Fraction(0))]
    with pytest.raises(ValueError, match="complex Q needs the field Q"):
        field_multiplicity(Q, np.ones(2), P, (Fraction(-2), Fraction(0)))      # Q(sqrt 2)
    assert field_multiplicity(Q, np.ones(2), P, (Fraction(1), Fraction(0))) == 3  # Q(i): v = (0, i x0^2), as case 1
