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
    with pytest.raises(ExactCheckError, match="p <= 6, got p = 7"):
        exact_invariant_lines(QuadraticSystem(np.ones((7, 7, 7))))
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



def _tiny_pair(p):
    """v = (2 x^2 + 2^90 y^2, x y [, z^2]). By hand: x v2 - y v1 = -y (x^2 + 2^90 y^2), so in the (x, y)
    plane the lines are (1, 0) with c = 2 and (1, +-i 2^-45) with c = 1: a complex pair whose imaginary parts
    (2.8e-14) are below 1e-12. For p = 3, v3 = z^2 adds (0, 0, 1) with c = 1 and, for each plane line d with
    its c_d, the line (d / c_d, 1) with c = 1 (v_12(d / c_d) = c_d d / c_d^2 = d / c_d, v3 = 1): 7 = 2^3 - 1
    lines, 3 of them real. Returns the system and [(direction, c, real)]."""
    Q = np.zeros((p, p, p))
    Q[0, 0, 0], Q[0, 1, 1], Q[1, 0, 1], Q[1, 1, 0] = 2.0, 2.0 ** 90, 0.5, 0.5
    s = 1j * 2.0 ** -45
    plane = [(np.array([1, 0], complex), 2.0, True), (np.array([1, s]), 1.0, False), (np.array([1, -s]), 1.0, False)]
    if p == 2:
        return QuadraticSystem(Q), plane
    Q[2, 2, 2] = 1.0
    lines = [(np.append(d, 0), c, r) for d, c, r in plane] + [(np.array([0, 0, 1], complex), 1.0, True)]
    lines += [(np.append(d / c, 1), 1.0, r) for d, c, r in plane]
    return QuadraticSystem(Q), lines


def _same_line(d, c, e, f):
    """(d, c) and (e, f) are proportional: the same line with the same c (v(s d) = s^2 v(d))."""
    a, b = np.append(d, c).astype(complex), np.append(e, f).astype(complex)
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    ph = np.vdot(a, b) / abs(np.vdot(a, b))
    return np.abs(a * ph - b).max() < 4e-16  # the pair differs by 5.7e-14 in one component


@pytest.mark.parametrize("p", [2, 3])
def test_reality_is_exact_below_1e_12(p):
    """A complex pair with imaginary parts of 2.8e-14 is complex in the exact path (a 1e-12 threshold called
    it real), and the c of every line is right, none rounded to 0 (the Groebner path set c below 1e-12 of
    the scaled system to 0)."""
    q, expected = _tiny_pair(p)
    E = exact_invariant_lines(q)
    assert E.reality is not None and E.real_count == sum(r for *_, r in expected) == (1 if p == 2 else 3)
    assert E.total_multiplicity == len(expected) == 2 ** p - 1
    for d, c, real in expected:
        hits = [k for k, (e, f, m) in enumerate(E.points) if m == 1 and _same_line(d, c, e, f)]
        assert len(hits) == 1 and E.is_real(hits[0]) == real, (d, c, E.points)
        if real:
            assert not np.asarray(E.points[hits[0]][0]).imag.any() and np.imag(E.points[hits[0]][1]) == 0


@pytest.mark.parametrize("method", ["cubic", "groebner"])
def test_equilibrium_line_c_is_exactly_zero(method):
    """v = (x y, x y + y^2): v(1, 0) = 0, so (1, 0) is a line of equilibria (c = 0 exactly); x v2 - y v1 =
    x^2 y, so (0, 1) is a double line, v(0, 1) = (0, 1): c = 1. Both real."""
    E = exact_invariant_lines(QuadraticSystem.from_sympy([x * y, x * y + y**2], [x, y]), method=method)
    assert E.total_multiplicity == 3 and E.real_count == 3
    (k0,) = [k for k, (e, f, m) in enumerate(E.points) if abs(e[1]) < 1e-12]
    (k1,) = [k for k, (e, f, m) in enumerate(E.points) if abs(e[0]) < 1e-12]
    assert E.points[k0][1] == 0 and E.points[k0][2] == 1
    assert abs(E.points[k1][1] - 1) < 1e-12 and E.points[k1][2] == 2


@pytest.mark.parametrize("coeffs, real", [
    ([-2, 0, 0, 1], [True, False, False]),                       # x^3 - 2: 2^(1/3) and 2^(1/3) e^(+-2 pi i / 3)
    ([1, 0, 2 ** 200], [False, False]),                          # 2^200 x^2 + 1: +-i 2^-100, non-real however small
    ([2 ** 201 - 1, -2 ** 202, 2 ** 201], [True, True]),         # (x - 1)^2 = 2^-201: 1 +- 2^-100.5, real, distinct
])
def test_factor_roots_exact_reality_with_and_without_flint(coeffs, real, monkeypatch):
    """The roots of an irreducible factor (python-flint's certified isolation, or sympy's CRootOf without it):
    values against the closed forms in the parametrisation, reality decided exactly, the two ways agree."""
    from servo.quadratic import exact
    x = sp.Symbol("x")
    fac = sp.Poly(sum(c * x ** k for k, c in enumerate(coeffs)), x)
    assert fac.is_irreducible
    closed = [complex(sp.N(r, 30)) for r in sp.solve(fac.as_expr(), x)]
    ways = []
    for flint in ([True, False] if exact.have_flint() else [False]):
        monkeypatch.setattr(exact, "have_flint", lambda flint=flint: flint)
        roots = exact._factor_roots(fac)
        assert sorted(is_real for _, is_real in roots) == sorted(real)
        vals = [complex(sp.N(r, 30)) for r, _ in roots]
        for v, (_, is_real) in zip(vals, roots):
            assert min(abs(v - c) for c in closed) <= 1e-25 * abs(v)
            assert (v.imag == 0) == is_real
        ways.append(sorted(vals, key=lambda v: (v.real, v.imag)))
    if len(ways) == 2:
        assert all(abs(a - b) <= 1e-25 * abs(a) for a, b in zip(*ways))


def test_quadratic_roots_with_c_in_the_support_is_none():
    """A numerical root supported on {xi_1, c} (fuzz seed 7 reached one: an IndexError before): on the line
    z = x e_1 + e_c every form is Q_i11 x^2 - w_i x [i = 1], divisible by x, so their gcd is never an irreducible
    quadratic and there is nothing to prove in a quadratic field."""
    from servo.quadratic.multiplicity import quadratic_roots
    Q = np.zeros((2, 2, 2))
    Q[0, 0, 0], Q[1, 0, 0], Q[1, 1, 1] = 3.0, 5.0, 1.0
    assert quadratic_roots(Q, np.ones(2), np.array([0.7, 0.0, 1.0], dtype=complex)) is None


def test_box_tight_in_original_coordinates_fuzz_regression():
    """Fuzz seed 300 (mixed scale, p = 2): the Krawczyk box of the equilibrium line e_2 was tight in the scaled
    y but, mapped back through d (entries 2^27 .. 2^-37), put the direction 1.5e-4 off (0, 1). Exact answer
    (the exact path): e_2 with c = 0 is a line (v(e_2) = (Q[0, 1, 1], Q[1, 1, 1]) = 0)."""
    Q = np.array([[[134217728.0, -6755399441055744.0], [-6755399441055744.0, 0.0]],
                  [[0.0, -5.4569682106375694e-12], [-5.4569682106375694e-12, 0.0]]])
    q = QuadraticSystem(Q)
    L = q.invariant_lines()
    assert L.certified
    from servo.quadratic.exact import compare_with_exact
    assert compare_with_exact(L, exact_invariant_lines(q, dyadic=True)) == []
    assert any(ln.c == 0 and abs(ln.direction[0]) < 1e-12 for ln in L)
