"""Invariant lines by homotopy continuation: hand-derived examples, exact cross-checks, families,
multiplicities, stability on the sphere and blow-up times."""
import itertools

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st
from scipy.integrate import solve_ivp

from servo import QuadraticSystem
from servo.quadratic.exact import exact_invariant_lines

x, y, z = sp.symbols("x y z")


def match(lines, expected, tol=1e-8):
    """Every (direction, c, multiplicity) in expected is found in lines (and nothing else)."""
    got = [(L.direction, L.c, L.multiplicity) for L in lines]
    assert sum(m for *_, m in got) == sum(m for *_, m in expected)
    for d, c, m in expected:
        d = np.asarray(d, dtype=complex)
        d = d / np.linalg.norm(d)
        hits = [g for g in got if abs(abs(np.vdot(g[0], d)) - 1) < tol and abs(abs(g[1]) - abs(c)) < tol
                and g[2] == m]
        assert hits, f"line {d} (c = {c}, multiplicity {m}) not found among {got}"


def test_diagonal_system_has_the_seven_indicator_lines():
    # v = (x^2, y^2, z^2): v(1_S) = 1_S for every non-empty S, so xi = 1_S/sqrt|S|, c = 1/sqrt|S|
    q = QuadraticSystem.from_sympy([x**2, y**2, z**2], [x, y, z])
    L = q.invariant_lines()
    expected = [(np.array(S, float), 1 / np.sqrt(sum(S)), 1)
                for S in itertools.product([0, 1], repeat=3) if sum(S)]
    match(L, expected)
    assert L.certified and L.real_count == 7 and L.max_residual < 1e-13


def test_double_equilibrium_lines_counted_with_multiplicity():
    # v = (xy, yz, zx): the axes are equilibria; exact Groebner count gives multiplicity 2 each
    q = QuadraticSystem.from_sympy([x * y, y * z, z * x], [x, y, z])
    L = q.invariant_lines()
    E = exact_invariant_lines(q)
    assert E.zero_dimensional and E.total_multiplicity == 7
    match(L, [(d, c, m) for d, c, m in E.points])
    assert sorted(l.multiplicity for l in L) == [1, 2, 2, 2]
    assert all(l.cycle_numbers == (1, 1) for l in L if l.multiplicity == 2)


def test_triple_root_in_the_plane():
    # v = (0, x^2) ... cubic x*v2 - y*v1 = x^3: the line x = 0 (c = 0) has multiplicity 3
    q = QuadraticSystem.from_sympy([0 * x, x**2], [x, y])
    L = q.invariant_lines()
    assert L.certified and len(L) == 1
    assert L[0].multiplicity == 3 and L[0].is_equilibrium_line
    assert abs(abs(L[0].direction[1]) - 1) < 1e-8


def test_plane_of_equilibria_is_reported_as_a_family():
    # v = x3 * A x vanishes on the plane x3 = 0; isolated lines are the eigenvectors of A with
    # xi_3 != 0, where c = lambda * xi_3 (numpy eig as the independent source)
    A = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 1.0], [0.3, 0.2, 2.0]])
    Q = np.einsum("j,ik->ijk", np.array([0, 0, 1.0]), A)
    L = QuadraticSystem(Q).invariant_lines()
    assert L.positive_dimensional and L.certified
    fam = L.positive_dimensional[0]
    assert fam.is_equilibria and fam.local_dimension == 1
    assert abs(fam.direction[2]) < 1e-8                  # the witness lies in the plane x3 = 0
    lam, V = np.linalg.eig(A)
    expected = [(V[:, i], lam[i] * V[2, i] / np.linalg.norm(V[:, i]), 1) for i in range(3)]
    match(L, expected)


def test_every_line_invariant_is_a_family():
    # v = x1 * x: every direction is invariant (c = xi_1): one family of dimension p - 1
    q = QuadraticSystem.from_sympy([x**2, x * y, x * z], [x, y, z])
    L = q.invariant_lines()
    assert len(L) == 0 and len(L.positive_dimensional) == 1
    assert L.positive_dimensional[0].local_dimension == 2 and L.certified


def test_zero_system_is_a_family_not_an_error():
    L = QuadraticSystem(np.zeros((2, 2, 2))).invariant_lines()
    assert L.positive_dimensional and L.positive_dimensional[0].is_equilibria


@settings(max_examples=10)
@given(st.lists(st.integers(-3, 3), min_size=8, max_size=8))
def test_p2_homotopy_matches_exact_binary_cubic(entries):
    q = QuadraticSystem(np.array(entries, float).reshape(2, 2, 2))
    E = exact_invariant_lines(q)
    L = q.invariant_lines()
    if not E.zero_dimensional:
        assert L.positive_dimensional
        return
    assert L.certified and L.total_multiplicity == 3
    match(L, E.points, tol=1e-6)
    assert L.real_count == E.real_count


@pytest.mark.parametrize("seed", [1, 2])
def test_p3_homotopy_matches_groebner(seed):
    q = QuadraticSystem(np.random.default_rng(seed).integers(-3, 4, size=(3, 3, 3)).astype(float))
    E = exact_invariant_lines(q)
    L = q.invariant_lines()
    assert E.total_multiplicity == L.total_multiplicity == 7
    match(L, E.points, tol=1e-7)


@settings(max_examples=10)
@given(st.integers(0, 10_000), st.integers(2, 5))
def test_random_real_systems_are_certified_with_small_residual(seed, p):
    q = QuadraticSystem(np.random.default_rng(seed).normal(size=(p, p, p)))
    L = q.invariant_lines()
    assert L.certified and L.total_multiplicity == 2 ** p - 1
    assert L.max_residual < 1e-12
    # complex lines come in conjugate pairs (Q real)
    for l in L:
        if not l.is_real:
            assert any(abs(abs(np.vdot(m.direction, l.direction.conj())) - 1) < 1e-8 for m in L)


def test_line_solution_and_blowup_time_against_integration():
    q = QuadraticSystem.from_sympy([x**2 - y**2 / 2, x * y + y**2 / 3], [x, y])
    L = [l for l in q.invariant_lines().real if not l.is_equilibrium_line][0]
    s0 = 0.7
    T = L.blowup_time(s0)
    assert T == pytest.approx(1 / (L.c * s0))
    sol = solve_ivp(lambda t, u: q.v(u), (0, 0.9 * T), s0 * L.direction, rtol=1e-12, atol=1e-14)
    assert np.allclose(sol.y[:, -1], L.solution(s0, 0.9 * T), rtol=1e-8)
    assert np.isinf(L.blowup_time(-s0))                # the opposite ray decays like 1/t


def test_sphere_stability_against_finite_differences():
    q = QuadraticSystem(np.random.default_rng(7).normal(size=(3, 3, 3)))

    def sphere_field(u):
        w = q.v(u)
        return w - (u @ w) * u
    for L in q.invariant_lines().real:
        xi = L.direction
        B = np.linalg.svd(xi[None])[2][1:].T
        h = 1e-6
        Jt = np.column_stack([(B.T @ (sphere_field(xi + h * b) - sphere_field(xi - h * b))) / (2 * h)
                              for b in B.T])
        assert np.allclose(np.sort_complex(np.linalg.eigvals(Jt)),
                           np.sort_complex(L.sphere_eigenvalues), atol=1e-6)


def test_complex_line_has_no_blowup_time():
    q = QuadraticSystem.from_sympy([x**2 - y**2, 2 * x * y], [x, y])
    cplx = [l for l in q.invariant_lines() if not l.is_real]
    assert len(cplx) == 2 and cplx[0].stability is None
    with pytest.raises(ValueError, match="real lines only"):
        cplx[0].blowup_time(1.0)


def test_double_line_with_nearly_coincident_branches():
    # v = (x3^2, -(x1 - x2)^2, -x1 x2 + x2^2 - x3^2): the two paths to the double equilibrium line
    # (1, 1, 0) stay 1e-7 apart at t = 1 - 1e-4; the end game must widen its radius. Expected
    # lines from the exact Groebner computation.
    x1, x2, x3 = sp.symbols("x1:4")
    q = QuadraticSystem.from_sympy([x3**2, -(x1 - x2)**2, -x1 * x2 + x2**2 - x3**2], [x1, x2, x3])
    E = exact_invariant_lines(q)
    L = q.invariant_lines()
    assert E.total_multiplicity == 7 and L.certified
    match(L, E.points, tol=1e-6)
    assert any(l.multiplicity == 2 and l.is_equilibrium_line for l in L)


def test_line_records_in_a_batch_match_the_closed_forms():
    """make_lines on v_i = x_i^2 (+ a complex and a c = 0 row): the unit line e_1 + e_2 has v = (1, 1, 0) =
    c xi with c = 1 / |xi| after normalising (xi = (1, 1, 0) / sqrt 2, c = 1 / sqrt 2); sphere eigenvalues
    eig(B^T J B) - c with J = 2 diag(xi): on xi-perp spanned by (1, -1, 0) / sqrt 2 and e_3, B^T J B =
    diag(sqrt 2, 0), minus c: (1 / sqrt 2, -1 / sqrt 2). A batch gives the same records as one row at a time."""
    from servo.quadratic.certify import equilibrate
    from servo.quadratic.line_records import make_lines
    Q = np.zeros((3, 3, 3))
    for i in range(3):
        Q[i, i, i] = 1.0
    q = QuadraticSystem(Q)
    Qs, w, d, s = equilibrate(q.Q)
    Z = np.array([[1, 1, 0, 1], [1j, 2, 0, 0.5 + 0.5j], [0, 0, 3, 0]], dtype=complex)   # (y, c') rows
    Z[:, :3] /= d
    Z[:, 3] /= s
    args = ([1, 1, 2], [None, None, True], [(1,), (1,), (2,)], [0.1, 0.2, np.inf], 1e-8)
    batch = make_lines(q, Qs, w, d, s, Z, *args)
    one = [make_lines(q, Qs, w, d, s, Z[k:k + 1], *[[a[k]] for a in args[:4]], 1e-8)[0] for k in range(3)]
    L = batch[0]
    assert L.is_real and L.c == pytest.approx(1 / np.sqrt(2), rel=1e-15)
    assert L.direction == pytest.approx([1 / np.sqrt(2), 1 / np.sqrt(2), 0], rel=1e-15)
    assert sorted(np.real(L.sphere_eigenvalues)) == pytest.approx([-1 / np.sqrt(2), 1 / np.sqrt(2)], abs=1e-14)
    assert not batch[1].is_real and batch[1].sphere_eigenvalues is None        # (i, 2, 0) is not a real line
    assert batch[2].c == 0 and batch[2].multiplicity == 2 and np.array_equal(batch[2].direction, [0, 0, 1])
    for a, b in zip(batch, one):
        assert np.array_equal(a.direction, b.direction) and a.c == b.c and a.tol == b.tol
        assert a.is_real == b.is_real and a.multiplicity == b.multiplicity and a.alpha == b.alpha
