"""Kovalevskaya exponents at the Darboux points and the resonance obstruction to polynomial first integrals.

Expected values come from: the definition K = Dv(d) + Id rebuilt here from q.jacobian (characteristic
polynomial (rho + 1) prod (rho - rho_k)); the sphere-flow eigenvalues (rho_k = -s_k / c, a second route);
the physical integrals of the Euler top (energy, Casimir) and of servo systems (Casimir of the second kind,
linear integral of the servo-sleigh) through the identity K^T grad F(d) = m grad F(d) derived in the module
docstring; hand-derived exponents of x' = x^2, y' = y^2; and the exact QQ search for polynomial integrals.
"""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from liegroups import named
from servo import EulerPoincare, Nonholonomic, QuadraticSystem, ServoFirstKind, ServoSecondKind, Vakonomic
from servo.errors import ExactCheckError, QuadraticSystemError
from servo.quadratic.kovalevskaya import (darboux_point, exact_kovalevskaya_exponents, kovalevskaya_exponents,
                                          polynomial_first_integrals, resonances)
from servo.quadratic.kovalevskaya.exact_exponents import exact_roots
from servo.quadratic.kovalevskaya.resonances import exact_resonant
from servo.quadratic.polynomials import rational_tensor


def live(lines):
    return [L for L in lines if not L.is_equilibrium_line]


def same_multiset(a, b, atol):
    """Every a_i matched to a distinct b_j within atol (greedy on the nearest): no reliance on sort order."""
    a, b = list(np.ravel(a).astype(complex)), list(np.ravel(b).astype(complex))
    if len(a) != len(b):
        return False
    for z in a:
        j = int(np.argmin([abs(z - w) for w in b]))
        if abs(z - b[j]) > atol:
            return False
        b.pop(j)
    return True


def K_of(q, L):
    d = darboux_point(L)
    return q.jacobian(d) + np.eye(q.p), d


# ----------------------------------------------------------------------------- the exponents themselves
@pytest.mark.parametrize("p, seed", [(2, 0), (3, 1), (4, 2), (5, 3)])
def test_exponents_are_the_spectrum_of_K_without_the_radial_minus_one(p, seed):
    q = QuadraticSystem(np.random.default_rng([41, seed]).normal(size=(p, p, p)))
    lines = q.invariant_lines()
    assert lines.certified
    nreal = 0
    for L in lines:
        if L.is_equilibrium_line:
            assert L.kovalevskaya_exponents is None
            continue
        K, d = K_of(q, L)
        assert np.linalg.norm(q.v(d) + d) < 1e-10 * np.linalg.norm(d) ** 2          # v(d) = -d
        assert np.linalg.norm(K @ d + d) < 1e-10 * np.linalg.norm(d)                 # K d = -d (Euler)
        rho = L.kovalevskaya_exponents
        assert rho.shape == (p - 1,) and np.iscomplexobj(rho)
        # det(lambda - K) = (lambda + 1) prod (lambda - rho_k), coefficient by coefficient
        assert np.allclose(np.poly(K), np.poly(np.r_[-1.0, rho]), rtol=1e-8, atol=1e-8 * np.abs(np.poly(K)).max())
        if L.is_real:                                                               # rho_k = -s_k / c
            nreal += 1
            assert same_multiset(rho, -L.sphere_eigenvalues / L.c, 1e-9)
    assert nreal > 0


def test_x2_y2_hand_derived_exponents_and_the_skipped_minus_one():
    # x' = x^2, y' = y^2: lines e1, e2 (c = 1) and (1, 1)/sqrt 2 (c = 1/sqrt 2). At d = -e1, Dv(d) = diag(-2, 0),
    # K = diag(-1, 1): exponent 1; likewise at -e2. At d = -(1, 1), K = diag(-1, -1): exponent -1, so -1 is not
    # simple there and the theorem says nothing: that point is skipped. Exponent 1 at e1 gives resonances
    # m = m * 1 for every m, so no degree is ruled out (and indeed no polynomial integral exists: the test is
    # only necessary).
    x, y = sp.symbols("x y")
    q = QuadraticSystem.from_sympy([x ** 2, y ** 2], [x, y])
    got = sorted(complex(L.kovalevskaya_exponents[0]).real for L in live(q.invariant_lines()))
    assert np.allclose(got, [-1, 1, 1], atol=1e-12)
    ob = q.integrability_obstructions(4)
    assert ob.ruled_out == () and ob.darboux_points == 2 and len(ob.skipped) == 1 and "-1" in ob.skipped[0][1]
    assert [len(polynomial_first_integrals(q, m)) for m in (1, 2, 3)] == [0, 0, 0]
    E = exact_kovalevskaya_exponents(q)
    assert sorted(P.exponents[0] for P in E) == [-1, 1, 1] and all(P.exponents[0].is_Rational for P in E)


def test_one_dimensional_system_has_no_exponents_and_no_integrals():
    # x' = 3 x^2: d = -1/3, K = Dv(d) + 1 = 6 d + 1 = -1 only; F = x^m gives F' = 3 m x^(m+1) != 0
    q = QuadraticSystem([[[3.0]]])
    (L,) = q.invariant_lines()
    assert L.kovalevskaya_exponents.shape == (0,) and darboux_point(L) == pytest.approx([-1 / 3])
    ob = q.integrability_obstructions(3)
    assert ob.ruled_out == (1, 2, 3)
    assert all(polynomial_first_integrals(q, m) == [] for m in (1, 2, 3))


# ----------------------------------------------------------------------------- known integrals => exponents
@pytest.mark.parametrize("inertia", [(1, 2, 3), (1.0, 1.7, 4.2), (2.5, 0.8, 1.3)])
def test_euler_top_has_exponents_2_2_at_every_darboux_point(inertia):
    q = EulerPoincare(named.so3(), list(inertia)).reduced().system
    Iinv = np.diag(1 / np.asarray(inertia, float))
    pts = live(q.invariant_lines())
    assert len(pts) == 4
    for L in pts:
        K, d = K_of(q, L)
        # H = m.I^-1 m / 2 and C = |m|^2 / 2: K^T grad F(d) = 2 grad F(d) for both (independent gradients)
        for g in (Iinv @ d, d):
            assert np.linalg.norm(K.T @ g - 2 * g) < 1e-10 * np.linalg.norm(g)
        assert np.allclose(L.kovalevskaya_exponents, [2, 2], atol=1e-8)
    ob = q.integrability_obstructions(5)
    assert ob.ruled_out == (1, 3, 5) and ob.open_degrees == (2, 4)                # odd m is no sum of 2's


def _servo_cases():
    rng = np.random.default_rng(12)
    A = rng.normal(size=(3, 3))
    I = A @ A.T + 3 * np.eye(3)
    return [
        ("second kind, Casimir |m + lambda b|^2", ServoSecondKind(named.so3(), I, a=[0.2, -0.4, 1.0], b=[0.5, 1.0, 0.7]), 2),
        ("vakonomic", Vakonomic(named.so3(), I, a=[0.3, 1.0, -0.5]), 2),
        ("nonholonomic (Suslov), energy", Nonholonomic(named.so3(), I, a=[0.1, 0.2, 1.0]), 2),
        ("servo-sleigh, linear integral", ServoFirstKind(named.se2(), [1.0, 1.0, 0.5], a=[0, 1, 0], b=[0.4, 1.0, -0.3]), 1),
    ]


@pytest.mark.parametrize("label, system, m", _servo_cases(), ids=[c[0] for c in _servo_cases()])
def test_servo_integrals_appear_among_the_exponents(label, system, m):
    q = system.reduced().system
    grads = ([lambda d, l=l: l for l in np.atleast_2d(q.linear_first_integrals())] if m == 1 else
             [lambda d, S=S: 2 * S @ d for S in q.quadratic_first_integrals()])
    assert grads, f"{label}: the reduced system should have a degree-{m} integral"
    pts = live(q.invariant_lines())
    assert pts
    checked = 0
    for L in pts:
        K, d = K_of(q, L)
        for grad in grads:
            g = np.asarray(grad(d), dtype=complex)
            if np.linalg.norm(g) < 1e-8 * np.linalg.norm(d) ** (m - 1):
                continue
            checked += 1
            assert np.linalg.norm(K.T @ g - m * g) < 1e-8 * np.linalg.norm(g)
            assert np.min(np.abs(L.kovalevskaya_exponents - m)) < 1e-8
    assert checked >= len(pts)
    assert not q.integrability_obstructions(4).rules_out(m)


# ----------------------------------------------------------------------------- resonance search
def test_resonance_margins_respect_the_bound_on_k():
    # (1/2, 3/2): 1 = 1/2 + 1/2 needs |k| = 2 > 1, so m = 1 misses by 1/2; 2 = 1/2 + 3/2, 3 = 3/2 + 3/2,
    # 4 = 3/2 + 3/2 + 1/2 + 1/2 are resonant
    margin, tol = resonances([[0.5, 1.5]], 4)
    assert margin[0, 0] == pytest.approx(0.5) and np.all(margin[0, 1:] <= tol[0, 1:])
    # (1/2, -1/2): m = 1 would need k = (2, 0) or (3, 1), longer than |k| <= 1: the sums 1/2, -1/2 miss by 1/2;
    # m = 2 would need k = (4, 0), (5, 1), ...: with |k| <= 2 the sums are 1/2, -1/2, 1, 0, -1, closest miss 1
    margin, tol = resonances([[0.5, -0.5]], 2)
    assert margin[0, 0] == pytest.approx(0.5) and margin[0, 1] == pytest.approx(1.0)
    # (3, 2 + i): only k = (1, 0) at m = 3 lands on a real integer
    margin, tol = resonances([[3.0, 2.0 + 1.0j]], 3)
    assert margin[0, 2] <= tol[0, 2] and margin[0, 0] == pytest.approx(np.sqrt(2))


# ----------------------------------------------------------------------------- the exact search
def _rational_v(q, xs):
    R = rational_tensor(q, snap=True)
    p = len(xs)
    return [sum(R[i][j][k] * xs[j] * xs[k] for j in range(p) for k in range(p)) for i in range(p)]


@pytest.mark.parametrize("q", [
    EulerPoincare(named.so3(), [1, 2, 4]).reduced().system,
    ServoFirstKind(named.se2(), [1.0, 1.0, 0.5], a=[0, 1, 0], b=[0.5, 1.0, -0.25]).reduced().system,
    QuadraticSystem(np.random.default_rng(5).integers(-2, 3, size=(3, 3, 3)).astype(float)),
])
def test_exact_search_agrees_with_the_float_null_spaces_and_integrals_are_exact(q):
    xs = [sp.Symbol(v) for v in q.variables]
    v = _rational_v(q, xs)
    for m in (1, 2, 3):
        Fs = polynomial_first_integrals(q, m)
        for F in Fs:                                                # grad F . v == 0 in exact arithmetic
            assert sp.Poly(F, *xs).total_degree() == m
            assert sp.expand(sum(sp.diff(F, x) * vi for x, vi in zip(xs, v))) == 0
        if m == 1:
            assert len(Fs) == np.atleast_2d(q.linear_first_integrals()).shape[0]
        if m == 2:                                                  # includes products of linear integrals
            nl = np.atleast_2d(q.linear_first_integrals()).shape[0]
            assert len(Fs) == len(q.quadratic_first_integrals()) or nl > 0


def test_euler_top_degree_four_integrals_are_the_quadratic_monomials_in_H_and_C():
    q = EulerPoincare(named.so3(), [1, 2, 3]).reduced().system
    dims = [len(polynomial_first_integrals(q, m)) for m in (1, 2, 3, 4)]
    assert dims == [0, 2, 0, 3]                                     # H, C; then H^2, H C, C^2


# ----------------------------------------------------------------------------- obstruction vs exact search
def _catalog_systems():
    from catalog import registry
    from catalog.output.describe import quadratic_system

    out = []
    for name in registry.names():
        try:
            q = quadratic_system(registry.get(name))
        except ValueError:                       # e.g. the heavy top: w = K m + c is not homogeneous
            continue
        if q is not None:
            out.append((name, q))
    return out


def test_catalog_obstructions_never_contradict_the_exact_search():
    systems = _catalog_systems()
    some_integral = some_obstruction = compared = 0
    for name, q in systems:
        try:                                     # the exact search needs rational Q
            polynomial_first_integrals(q, 1)
        except ExactCheckError:
            continue
        compared += 1
        ob = q.integrability_obstructions(4)
        ob_exact = q.integrability_obstructions(4, exact=True) if q.p <= 3 and q.invariant_lines().is_finite else None
        for m in range(1, 5):
            n = len(polynomial_first_integrals(q, m))
            some_integral += n > 0
            some_obstruction += ob.rules_out(m)
            assert not (ob.rules_out(m) and n), f"{name}: degree {m} ruled out but {n} integral(s) found"
            if ob_exact is not None:
                assert not (ob_exact.rules_out(m) and n), f"{name}: exact test rules out degree {m}"
                assert not ob.rules_out(m) or ob_exact.rules_out(m), f"{name}: numeric and exact disagree at {m}"
    assert compared >= 8 and some_integral and some_obstruction


@settings(max_examples=20, deadline=None, derandomize=True)
@given(p=st.sampled_from([2, 3]), seed=st.integers(0, 10 ** 6), spread=st.sampled_from([1, 2, 4]))
def test_random_integer_systems_obstruction_implies_no_integral(p, seed, spread):
    rng = np.random.default_rng(seed)
    Q = rng.integers(-spread, spread + 1, size=(p, p, p)).astype(float)
    if spread == 1:                                      # sparse: more systems with integrals and multiple lines
        Q[rng.random(Q.shape) < 0.5] = 0
    q = QuadraticSystem(Q)
    lines = q.invariant_lines()
    ob = q.integrability_obstructions(4, lines=lines)
    for m in range(1, 5):
        if ob.rules_out(m):
            assert polynomial_first_integrals(q, m) == [], f"degree {m} ruled out, yet an integral exists"
    if p == 2 and lines.is_finite and lines.certified:
        E = exact_kovalevskaya_exponents(q, lines=lines)          # raises if numeric and exact disagree
        for P, L in zip(E, live(lines)):
            assert same_multiset([complex(e) for e in P.exponents], L.kovalevskaya_exponents, 1e-8)


def test_exact_exponents_of_a_random_p3_system_match_the_numeric_ones():
    q = QuadraticSystem(np.random.default_rng(1).integers(-3, 4, size=(3, 3, 3)).astype(float))
    lines = q.invariant_lines()
    E = exact_kovalevskaya_exponents(q, lines=lines)
    assert len(E) == len(live(lines)) == 7
    for P, L in zip(E, live(lines)):
        assert same_multiset([complex(e) for e in P.exponents], L.kovalevskaya_exponents, 1e-10)
        assert np.allclose(P.darboux_point, darboux_point(L))
    ex = q.integrability_obstructions(4, exact=True)
    assert ex.ruled_out == q.integrability_obstructions(4, lines=lines).ruled_out == (1, 2, 3, 4)
    assert [len(polynomial_first_integrals(q, m)) for m in (1, 2, 3, 4)] == [0, 0, 0, 0]


def test_exact_euler_top_exponents_are_the_rational_two():
    q = EulerPoincare(named.so3(), [1, 2, 3]).reduced().system
    E = exact_kovalevskaya_exponents(q)
    assert len(E) == 4 and all(P.exponents == (sp.Integer(2), sp.Integer(2)) for P in E)
    ob = q.integrability_obstructions(4, exact=True)
    assert ob.ruled_out == (1, 3) and ob.exact
    c = ob.certificates[3]
    assert c.margin == pytest.approx(1.0) and "degree 3" in str(c) and "(2, 2)" in str(c)


# ----------------------------------------------------------------------------- output and errors
def test_result_object_reads_well():
    q = EulerPoincare(named.so3(), [1, 2, 3]).reduced().system
    ob = q.integrability_obstructions(4)
    r = repr(ob)
    assert "ruled_out=(1, 3)" in r and "open=(2, 4)" in r
    s = str(ob)
    assert "degree 2: not ruled out" in s and "degree 1: no homogeneous polynomial first integral" in s
    c = ob.certificates[1]
    assert np.linalg.norm(q.v(c.darboux_point) + c.darboux_point) < 1e-10 and c.margin == pytest.approx(1.0)


def test_cli_rows_and_report_verdict_show_the_exponents():
    from catalog import registry
    from catalog.cli.lines import lines_data, lines_of
    from catalog.output.describe import integrability_verdict

    entry = registry.get("euler_top")
    q, lines = lines_of(entry)
    d = lines_data(entry, q, lines)
    for r in d["lines"]:
        if r["is_equilibrium_line"]:
            assert r["kovalevskaya_exponents"] is None
        else:
            assert np.allclose(np.array(r["kovalevskaya_exponents"], dtype=complex), [2, 2], atol=1e-8)
    assert d["integrability_obstructions"]["ruled_out"] == [1, 3]
    v = integrability_verdict(entry)
    assert [r[1] for r in v["rows"]] == ["ruled out", "not ruled out", "ruled out", "not ruled out"]
    assert v["rows"][0][3] == "(2, 2)"


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "4"])
def test_bad_max_degree_is_named(bad):
    q = QuadraticSystem(np.random.default_rng(0).normal(size=(2, 2, 2)))
    with pytest.raises(QuadraticSystemError, match="max_degree must be an integer >= 1"):
        q.integrability_obstructions(bad)
    with pytest.raises(QuadraticSystemError, match="degree must be an integer >= 1"):
        polynomial_first_integrals(q, bad)


def test_exact_paths_refuse_what_they_cannot_do():
    q = QuadraticSystem(np.full((2, 2, 2), np.pi))
    with pytest.raises(ExactCheckError, match=r"Q\[0,0,0\] = 3.14159.* not a fraction"):
        polynomial_first_integrals(q, 2)
    with pytest.raises(ExactCheckError, match="p <= 4, got p = 5"):
        exact_kovalevskaya_exponents(QuadraticSystem(np.ones((5, 5, 5))))
    x, y = sp.symbols("x y")
    plane = QuadraticSystem.from_sympy([x * (x + y), y * (x + y)], [x, y])       # v = (x + y) x: every line
    with pytest.raises(ExactCheckError, match="positive-dimensional"):
        exact_kovalevskaya_exponents(plane)


def test_equilibrium_lines_have_no_darboux_point():
    x, y = sp.symbols("x y")
    q = QuadraticSystem.from_sympy([x * y, -x * y], [x, y])
    eq = [L for L in q.invariant_lines() if L.is_equilibrium_line][0]
    with pytest.raises(QuadraticSystemError, match="c = 0"):
        darboux_point(eq)
    with pytest.raises(QuadraticSystemError, match="c = 0 at row 1"):
        kovalevskaya_exponents(q.Q, np.eye(2), [1.0, 0.0])


def test_double_line_is_skipped_numerically_and_has_exponent_zero_exactly():
    # x' = x^2, y' = x y + y^2: v(xi) = c xi gives xi = e1 (c = 1) twice (the second equation reduces to xi2^2 = 0)
    # and e2 (c = 1). At d = -e1, K = Id - J(e1) = Id - diag(2, 1) = diag(-1, 0): exponent 0, and K singular is
    # exactly the double root. At d = -e2, J(e2) = [[0, 0], [1, 2]]: eigenvalues 2 = 2c and 0, so rho = 1 - 0 = 1.
    x, y = sp.symbols("x y")
    q = QuadraticSystem.from_sympy([x ** 2, x * y + y ** 2], [x, y])
    lines = q.invariant_lines()
    ob = q.integrability_obstructions(3, lines=lines)
    assert ob.darboux_points == 1 and len(ob.skipped) == 1 and "multiplicity 2" in ob.skipped[0][1]
    E = {P.multiplicity: P.exponents for P in exact_kovalevskaya_exponents(q, lines=lines)}
    assert E == {2: (sp.Integer(0),), 1: (sp.Integer(1),)}


def test_exact_resonances_of_irrational_exponents():
    # 1 + sqrt 2 and 1 - sqrt 2: their sum is 2 (|k| = 2 <= 2) while no single one is 1
    surds = (1 + sp.sqrt(2), 1 - sp.sqrt(2))
    assert exact_resonant(surds, 2)[0] and not exact_resonant(surds, 1)[0]
    # the three roots of x^3 - 3 x^2 + 3 (irreducible, Eisenstein at 3) sum to 3 (Vieta): resonance at m = 3 with
    # k = (1, 1, 1) only; ~ -0.879, 1.347, 2.532 give no resonance at m = 1 or 2
    x = sp.Symbol("x")
    roots = exact_roots(sp.Poly(x ** 3 - 3 * x ** 2 + 3, x))
    assert len(roots) == 3 and abs(sum(complex(r) for r in roots) - 3) < 1e-14
    assert exact_resonant(tuple(roots), 3)[0]
    assert not exact_resonant(tuple(roots), 1)[0] and not exact_resonant(tuple(roots), 2)[0]
