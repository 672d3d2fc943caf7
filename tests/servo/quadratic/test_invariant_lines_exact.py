"""The exact (sympy) invariant lines: two exact methods agree, families are detected, bad input raises."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from servo import QuadraticSystem
from servo.quadratic.exact import ExactCheckError, exact_invariant_lines

x, y = sp.symbols("x y")


def same_points(A, B, tol=1e-9):
    assert A.total_multiplicity == B.total_multiplicity
    for d, c, m in A.points:
        assert any(abs(abs(np.vdot(d, e)) - 1) < tol and abs(c - f) < tol and m == n
                   for e, f, n in B.points), (d, c, m, B.points)


@settings(max_examples=6)
@given(st.lists(st.integers(-2, 2), min_size=8, max_size=8))
def test_binary_cubic_and_groebner_agree(entries):
    q = QuadraticSystem(np.array(entries, float).reshape(2, 2, 2))
    cubic = exact_invariant_lines(q, method="cubic")
    if not cubic.zero_dimensional:
        assert not exact_invariant_lines(q, method="groebner").zero_dimensional
        return
    same_points(cubic, exact_invariant_lines(q, method="groebner"))
    assert cubic.total_multiplicity == 3


def test_multiplicity_from_the_multiplication_matrix():
    # v = (0, x^2): x*v2 - y*v1 = x^3, a triple root at direction (0, 1) with c = 0
    E = exact_invariant_lines(QuadraticSystem.from_sympy([0 * x, x**2], [x, y]), method="groebner")
    assert E.zero_dimensional and E.quotient_dimension == 4
    assert len(E.points) == 1 and E.points[0][2] == 3 and abs(E.points[0][1]) < 1e-12


def test_family_is_detected():
    E = exact_invariant_lines(QuadraticSystem.from_sympy([x**2, x * y], [x, y]), method="groebner")
    assert not E.zero_dimensional


def test_bad_inputs_raise():
    with pytest.raises(ExactCheckError, match="not a short rational"):
        exact_invariant_lines(QuadraticSystem(np.full((2, 2, 2), np.pi)))
    with pytest.raises(ExactCheckError, match="complex"):
        exact_invariant_lines(QuadraticSystem(np.full((2, 2, 2), 1j)))
    with pytest.raises(ExactCheckError, match="p <= 4"):
        exact_invariant_lines(QuadraticSystem(np.ones((5, 5, 5))))
    with pytest.raises(ExactCheckError, match="p = 2 only"):
        exact_invariant_lines(QuadraticSystem(np.ones((3, 3, 3))), method="cubic")


def test_resultant_groebner_and_homotopy_agree_p3():
    q = QuadraticSystem(np.random.default_rng(4).integers(-3, 4, size=(3, 3, 3)).astype(float))
    res = exact_invariant_lines(q, method="resultant")
    gb = exact_invariant_lines(q, method="groebner")
    assert res.total_multiplicity == gb.total_multiplicity == 7
    same_points(res, gb, tol=1e-8)
    L = q.invariant_lines()
    assert L.total_multiplicity == 7 and L.real_count == res.real_count


def test_resultant_detects_a_family():
    z = sp.Symbol("z")
    E = exact_invariant_lines(QuadraticSystem.from_sympy([x**2, x * y, x * z], [x, y, z]),
                              method="resultant")
    assert not E.zero_dimensional
