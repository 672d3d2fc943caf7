"""Families of invariant lines above p = 3, where the exact path is too slow to confirm them: a family is
certified only when a linear space of lines through each witness is proved in exact arithmetic
(servo.quadratic.families.linear_family_proof); a root of high multiplicity that the numerical local
dimension test takes for a family is shown isolated by its local ring (servo.quadratic.multiplicity)."""
import importlib
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("flint")

from servo import QuadraticSystem  # noqa: E402
from servo.quadratic.certify import equilibrate  # noqa: E402
from servo.quadratic.dimension import coefficient_bits, solution_set_dimension  # noqa: E402
from servo.quadratic.families import linear_family_proof, local_family  # noqa: E402
from servo.quadratic.homotopy import QuadraticEigenHomotopy  # noqa: E402


def _system(terms, p):
    """v from {(i, j, k): coefficient of x_j x_k in v_i}, Q symmetric."""
    Q = np.zeros((p, p, p))
    for (i, j, k), c in terms.items():
        Q[i, j, k] += c / 2
        Q[i, k, j] += c / 2
    return QuadraticSystem(Q)


# the degenerate p = 5 system of the fuzz (seed 305) that was certified "alpha+multiplicity" in its own
# coordinates and "family" in the coordinates x = T y of the second solve:
# v = (2 x1^2, -2 x1 x4, -2 x1 x4 - 4 x3 x4 - x4^2, 3 x0^2 + 6 x0 x1 - 2 x0 x2 + 6 x2 x4,
#      6 x0 x1 + 6 x0 x3 + 6 x1 x2 + 3 x2^2 + 2 x4^2)
WRONG = {(0, 1, 1): 2, (1, 1, 4): -2, (2, 1, 4): -2, (2, 3, 4): -4, (2, 4, 4): -1, (3, 0, 0): 3, (3, 0, 1): 6,
         (3, 0, 2): -2, (3, 2, 4): 6, (4, 0, 1): 6, (4, 0, 3): 6, (4, 1, 2): 6, (4, 2, 2): 3, (4, 4, 4): 2}
T = np.array([[0, 0, 0, 2.0 ** -7, 0], [0, 0, 0, 0, -0.125], [0.5, 0, 0, 0, 0], [0, 0, 0.5, 0, 0], [0, 32.0, 0, 0, 0]])


def _transformed(q, T):
    Ti = np.linalg.inv(T)                   # a signed permutation of powers of 2: exact
    return QuadraticSystem(np.einsum("ia,ajk,jb,kc->ibc", Ti, q.Q, T, T))


def test_the_fuzz_system_is_the_same_finite_set_in_both_coordinates():
    q = _system(WRONG, 5)
    L, L2 = q.invariant_lines(), _transformed(q, T).invariant_lines(seed=3)
    for res in (L, L2):
        # before the fix the second was "family" with 20 isolated lines: a root of multiplicity 11 at e_3 taken
        # for a family by the numerical local dimension test (it tells apart multiplicities <= 6 only)
        # the simple lines proved by the alpha test, or in balls where its ball is wide in xi = d y (the second
        # coordinates scale by up to 2^7)
        assert res.certificate in ("alpha+multiplicity", "krawczyk+multiplicity") and not res.positive_dimensional
        assert res.total_multiplicity == 2 ** 5 - 1
        assert sorted(m.multiplicity for m in res if m.multiplicity > 1) == [3, 11]
    # the same lines: eta = T^-1 xi
    for l2 in L2:
        xi = T @ l2.direction
        assert any(abs(abs(np.vdot(l.direction, xi / np.linalg.norm(xi))) - 1) < 1e-9
                   and l.multiplicity == l2.multiplicity for l in L)
    # the c = 0 lines derived by hand: v = 0 forces x1 = 0, then x4 (4 x3 + x4) = 0; x4 = 0 gives
    # x0 (3 x0 - 2 x2) = 0 and 2 x0 x3 + x2^2 = 0: e_3 and (8, 0, 12, -9, 0) (real); x4 = -4 x3 gives two conics
    # in (x0, x2, x3): 4 more points, not real (checked below by the certificate's reality flags)
    eq = [l for l in L if l.c == 0]
    real = sorted([np.round(l.direction / l.direction[np.argmax(abs(l.direction))], 12).real.tolist()
                   for l in eq if l.is_real])
    assert real == sorted([[0, 0, 0, 1, 0], np.round(np.array([8, 0, 12, -9, 0]) / 12, 12).tolist()])
    assert sum(not l.is_real for l in eq) == 4


def test_isolation_at_e3_is_proved_by_the_local_ring_not_by_the_local_test():
    from servo.quadratic.families import isolation_exactly
    q = _system(WRONG, 5)
    Qs, wsc, dsc, ssc = equilibrate(q.Q)
    z = np.zeros(6, dtype=complex)
    z[3] = 1 / dsc[3]                                    # e_3 with c = 0, in the equilibrated coordinates
    assert isolation_exactly(Qs, wsc, z) == (True, False)
    # a point of a true family: v = x1 * (x0, x1, x2, x3, x4) vanishes on the hyperplane x1 = 0, so the local
    # ring at e_0 is infinite: its Hilbert function passes 2^5 - 1, more than any isolated root's multiplicity
    qf = _system({(i, 1, i): 1 for i in range(5)}, 5)
    Qs, wsc, dsc, ssc = equilibrate(qf.Q)
    z = np.zeros(6, dtype=complex)
    z[0] = 1 / dsc[0]
    assert isolation_exactly(Qs, wsc, z) == (False, True)


def test_a_linear_family_is_proved_and_spans_the_hyperplane():
    # v = l(x) A x with l = (1, -1, 2, 0, 1): the hyperplane l = 0 is a family of equilibria (c = 0)
    p = 5
    rng = np.random.default_rng(4)
    l = np.array([1, -1, 2, 0, 1])
    A = rng.integers(-2, 3, (p, p))
    q = QuadraticSystem(np.einsum("j,ik->ijk", l, A).astype(float))
    L = q.invariant_lines()
    assert L.certificate == "family" and L.positive_dimensional
    assert all(f.proved for f in L.positive_dimensional)
    Qs, wsc, dsc, ssc = equilibrate(q.Q)
    hom = QuadraticEigenHomotopy(Qs, rng=0, w=wsc)
    # a point of the family in the equilibrated coordinates: y = x / d with l(x) = 0, c' = 0
    x = np.array([1.0, 1.0, 0.0, 3.0, 0.0])
    z = np.append(x / dsc, 0).astype(complex)
    dim, near = local_family(hom, z)
    assert dim == p - 2
    basis = linear_family_proof(Qs, wsc, z, near)
    assert basis is not None and len(basis) == p - 1
    for row in basis:                         # every basis vector lies in {l(d y) = 0, c' = 0}, exactly
        assert row[p] == (0, 0)
        assert sum(Fraction(int(li)) * Fraction(float(di)) * re for li, di, (re, im) in zip(l, dsc, row[:p])) == 0
        assert all(im == 0 for _, im in row)


def test_a_curved_family_is_proved_at_a_rational_witness_only():
    # v = (x0^2 + x1^2 - x2^2, 0, 0, 0): c = 0 on the quadric cone x0^2 + x1^2 = x2^2 (curved)
    q = _system({(0, 0, 0): 1, (0, 1, 1): 1, (0, 2, 2): -1}, 4)
    Qs, wsc, dsc, ssc = equilibrate(q.Q)
    hom = QuadraticEigenHomotopy(Qs, rng=0, w=wsc)
    x = np.array([3.0, 4.0, 5.0, 1.0])                        # 9 + 16 = 25: on the cone, a generic point
    z = np.append(x / dsc, 0).astype(complex)
    dim, near = local_family(hom, z)
    assert dim == 2
    assert linear_family_proof(Qs, wsc, z, near) is None     # the points near it span no linear family
    # the paths end at the cone's vertex e_3 (rational): there the local ring is infinite, a proof
    L = q.invariant_lines(retries=0)
    assert L.certificate == "family" and all(f.proved for f in L.positive_dimensional)


def test_a_family_with_an_irrational_witness_is_proved_by_its_exact_dimension(monkeypatch):
    # v = (x0^2 + x1^2 - 2 x2^2, 0, 0, x3^2): c = 0 on the conic x0^2 + x1^2 = 2 x2^2 in the plane x3 = 0; the
    # paths end at points such as (sqrt 2, 0, -1, 0): no linear space of lines, no rational point to prove an
    # infinite local ring, and the exact path stops at p = 3. The solution set's exact dimension proves it
    conic = {(0, 0, 0): 1, (0, 1, 1): 1, (0, 2, 2): -2, (3, 3, 3): 1}
    q = _system(conic, 4)
    assert solution_set_dimension(q.Q) == 1                 # a curve of lines [xi : 0] (the derivation above)
    L = q.invariant_lines(retries=0)
    assert L.certificate == "family" and "projective dimension is 1" in L.reason
    assert not all(f.proved for f in L.positive_dimensional)
    # beyond DIMENSION_MAX_BITS (or DIMENSION_MAX_P) the Groebner basis is not tried: nothing is claimed, and why
    il = importlib.import_module("servo.quadratic.invariant_lines")
    res = il._solve_once(q, 5, 1e-8, 1e-6)
    assert res.certificate == "family" and not all(f.proved for f in res.positive_dimensional)
    fb = importlib.import_module("servo.quadratic.line_fallbacks")
    monkeypatch.setattr(fb, "DIMENSION_MAX_BITS", 1)
    fb.family_by_dimension(q, res, {})
    assert not res.certified and "not proved there" in res.reason and "1-bit coefficients" in res.reason
    assert coefficient_bits(q.Q) == 2                       # the largest entry made integral: -2


def test_the_exact_dimension_of_finite_and_positive_dimensional_sets():
    # finite: v = (x0^2, x1^2, x2^2): v(xi) = c xi has 2^3 = 8 solutions [xi : c] (each xi_i in {0, c}), the
    # trivial one included; a family: v = x0 (x0, x1, x2) is c xi on the plane x0 = 0 (c = 0) and on all xi with
    # c = x0, a P^2 of solutions
    assert solution_set_dimension(_system({(i, i, i): 1 for i in range(3)}, 3).Q) == 0
    assert solution_set_dimension(_system({(i, 0, i): 1 for i in range(3)}, 3).Q) == 2
    assert solution_set_dimension(np.zeros((3, 3, 3))) == 2     # v = 0: c xi = 0, so c = 0 and xi anything


# a degenerate p = 6 system of the fuzz (seed 602): v does not depend on x0 and v(e_1) = 0 (no x1^2 term), so
# v(a e_0 + b e_1) = b^2 v(e_1) = 0: the line through e_0 and e_1 is a family of equilibria; e_0 is on it, not isolated
ON_FAMILY = {(0, 1, 2): 2, (0, 1, 3): 2, (0, 1, 4): -4, (0, 1, 5): 4, (0, 2, 2): -3, (0, 2, 3): -2, (0, 2, 4): 4,
             (0, 2, 5): 6, (0, 3, 3): -3, (0, 3, 4): -4, (0, 4, 4): 3, (0, 4, 5): 4, (0, 5, 5): 2, (1, 1, 2): -6,
             (1, 1, 3): 6, (1, 1, 4): 2, (1, 2, 2): 3, (1, 2, 3): 2, (1, 2, 4): 6, (1, 2, 5): 4, (1, 3, 3): -2,
             (1, 3, 4): 2, (1, 3, 5): 6, (1, 4, 4): 2, (1, 4, 5): 4, (2, 1, 3): -4, (2, 1, 4): -6, (2, 1, 5): 2,
             (2, 2, 3): 2, (2, 2, 4): -2, (2, 2, 5): -4, (2, 3, 3): 3, (2, 3, 4): 6, (2, 3, 5): 2, (2, 4, 4): -3,
             (2, 4, 5): 2, (3, 1, 2): -4, (3, 1, 3): 2, (3, 1, 4): 4, (3, 1, 5): -4, (3, 2, 2): -3, (3, 2, 3): 2,
             (3, 2, 4): 4, (3, 3, 5): -4, (3, 4, 4): -1, (3, 4, 5): -4, (3, 5, 5): 2, (4, 1, 2): 6, (4, 1, 3): 2,
             (4, 1, 4): -6, (4, 2, 3): -4, (4, 2, 4): -2, (4, 2, 5): 2, (4, 3, 3): -2, (4, 3, 4): -4, (4, 3, 5): 2,
             (4, 4, 4): 3, (4, 4, 5): -4, (4, 5, 5): -2, (5, 1, 2): -4, (5, 1, 3): 6, (5, 2, 2): 3, (5, 2, 3): -4,
             (5, 2, 5): 2, (5, 3, 3): -1, (5, 3, 4): 6, (5, 3, 5): 4, (5, 4, 4): -3, (5, 4, 5): 4, (5, 5, 5): -2}

def test_a_point_on_a_family_is_not_listed_as_an_isolated_line():
    q = _system(ON_FAMILY, 6)
    assert not np.any(q.Q[:, 0, :]) and not np.any(q.Q[:, 1, 1])          # the derivation's two facts
    L = q.invariant_lines()
    assert L.certificate == "family" and all(f.proved for f in L.positive_dimensional)
    # before the fix e_0 was listed as an isolated line of multiplicity 31 (31 paths ended there)
    for line in L:
        d = line.direction / np.linalg.norm(line.direction)
        assert np.linalg.norm(d[2:]) > 1e-8, f"a line in span(e_0, e_1) listed as isolated: {d}"
    assert "not listed" in L.reason
    # the second solve in other coordinates lists the same isolated lines (simple, alpha-certified)
    T = np.diag([2.0, -0.5, 4.0, 1.0, -2.0, 0.25])[[3, 0, 5, 1, 4, 2]]
    L2 = _transformed(q, T).invariant_lines(seed=5)
    assert L2.certificate == "family"
    assert (L.total_multiplicity, L.real_count) == (L2.total_multiplicity, L2.real_count)


def test_a_family_is_proved_where_two_branches_cross():
    # v = x0 x1 a vanishes on the hyperplanes x0 = 0 and x1 = 0: two linear families of equilibria (c = 0),
    # crossing in the line x0 = x1 = 0. At e_2, on both, the points near it lie on both branches, and their joint
    # span holds points with x0 x1 != 0 (no family); the span of e_2 with each near point alone is one branch
    a = (1, -2, 3, 1)
    q = _system({(i, 0, 1): a[i] for i in range(4)}, 4)
    Qs, wsc, dsc, ssc = equilibrate(q.Q)
    z = np.append(np.eye(4)[2] / dsc, 0).astype(complex)
    on0 = np.append(np.array([0, 0.3, 1, 0.2]) / dsc, 0).astype(complex)       # x0 = 0
    on1 = np.append(np.array([0.4, 0, 1, -0.1]) / dsc, 0).astype(complex)      # x1 = 0
    joint = z + on0 + on1                       # in the joint span: x0 x1 = 0.12 != 0, so v != 0 there
    assert np.prod((joint[:4] * dsc)[:2]) != 0
    basis = linear_family_proof(Qs, wsc, z, [on0, on1])
    assert basis is not None and len(basis) == 2
    # the proved span is one branch: every basis row has y0 = 0, or every row has y1 = 0 (exactly)
    assert all(row[0] == (0, 0) for row in basis) or all(row[1] == (0, 0) for row in basis)
    L = q.invariant_lines()
    assert L.certificate == "family" and all(f.proved for f in L.positive_dimensional)


# a degenerate p = 6 system of the fuzz (seed 701): no term of v has x2^2, x2 x3 or x3^2, so v = 0 on span(e_2, e_3),
# a line of equilibria. Half the paths (32 of 64) end on it, slowly (a non-reduced component: their end points are
# ~1e-6 off it, not at round-off) and were counted as lost ("11 of 64 paths failed"): not certified
LOST_ON_FAMILY = {
    (0, 0, 0): 1, (0, 0, 1): -2, (0, 0, 2): 2, (0, 0, 3): -2, (0, 1, 1): 2, (0, 1, 2): -4, (0, 1, 3): 4, (1, 0, 0): 1,
    (1, 0, 1): 4, (1, 0, 3): -2, (1, 0, 4): 4, (1, 0, 5): 2, (1, 1, 1): -4, (1, 1, 3): 4, (1, 1, 4): -8,
    (1, 1, 5): -4, (1, 4, 4): -2, (1, 4, 5): -2, (1, 5, 5): 2, (2, 0, 0): -1, (2, 0, 1): 4, (2, 0, 3): 4,
    (2, 0, 4): 4, (2, 1, 1): -4, (2, 1, 3): -8, (2, 1, 4): -8, (2, 4, 4): -2, (3, 0, 0): -2, (3, 0, 1): 2,
    (3, 0, 2): 2, (3, 0, 3): -4, (3, 0, 4): 2, (3, 0, 5): -4, (3, 1, 1): -2, (3, 1, 2): -4, (3, 1, 3): 8,
    (3, 1, 4): -4, (3, 1, 5): 8, (3, 4, 4): -1, (3, 4, 5): 4, (3, 5, 5): -4, (4, 0, 0): 2, (4, 0, 1): -4,
    (4, 0, 2): -2, (4, 0, 3): 2, (4, 0, 4): -2, (4, 0, 5): -2, (4, 1, 1): 4, (4, 1, 2): 4, (4, 1, 3): -4,
    (4, 1, 4): 4, (4, 1, 5): 4, (4, 4, 4): 1, (4, 4, 5): 2, (4, 5, 5): -2, (5, 0, 1): -4, (5, 0, 2): 4,
    (5, 0, 3): 2, (5, 1, 1): 4, (5, 1, 2): -8, (5, 1, 3): -4}


def test_paths_that_stop_short_of_a_family_are_not_lost():
    q = _system(LOST_ON_FAMILY, 6)
    assert not np.any(q.Q[:, 2:4, 2:4])                                   # the derivation's fact
    L = q.invariant_lines()
    assert L.certificate == "family" and L.failed_paths == 0
    assert all(f.proved for f in L.positive_dimensional)
    # a witness on the family span(e_2, e_3): the proved family is the derived one
    assert any(np.linalg.norm(np.delete(f.direction, [2, 3])) < 1e-8 for f in L.positive_dimensional)
    T = np.diag([2.0, -0.5, 4.0, 1.0, -2.0, 0.25])[[3, 0, 5, 1, 4, 2]]
    L2 = _transformed(q, T).invariant_lines(seed=5)
    assert L2.certificate == "family"
    assert (L.total_multiplicity, L.real_count) == (L2.total_multiplicity, L2.real_count)


# fuzz_system("degenerate", 6, ...) of the seed-720 run at p = 4..6, left uncertified ("6 line(s) not at
# round-off"): x_1 appears in no v_i, so e_1 is an equilibrium, and a line of equilibria runs through e_1 and
# e_4; about six paths stop short of it (backward errors 1e-5..1e-3, elsewhere for another gamma), beside 23
# isolated lines at round-off
LINE_OF_EQUILIBRIA6 = [
    [[0, 0, 0, 0, 0, 0], [0, -1, -2, 1, 2, -2], [0, -2, 4, -2, -4, 4], [0, 1, -2, 0, 0, 0], [0, 2, -4, 0, 4, -4],
     [0, -2, 4, 0, -4, 2]],
    [[0, 0, 0, 0, 0, 0], [0, 2, 0, -2, -1, 0], [0, 0, 0, 4, 2, 0], [0, -2, 4, 0, 0, 0], [0, -1, 2, 0, -2, 0],
     [0, 0, 0, 0, 0, 0]],
    [[0, 0, 0, 0, 0, 0], [0, -1, 2, 0, 2, -1], [0, 2, -4, 0, -4, 2], [0, 0, 0, 0, 0, 0], [0, 2, -4, 0, 4, -2],
     [0, -1, 2, 0, -2, 1]],
    [[0, 0, 0, 0, 0, 0], [0, -1, -1, -2, 1, 2], [0, -1, 2, 4, -2, -4], [0, -2, 4, 0, 0, 0], [0, 1, -2, 0, 2, 4],
     [0, 2, -4, 0, 4, -2]],
    [[0, 0, 0, 0, 0, 0], [0, 0, -1, -2, 1, -1], [0, -1, 2, 4, -2, 2], [0, -2, 4, 0, 0, 0], [0, 1, -2, 0, 2, -2],
     [0, -1, 2, 0, -2, 1]],
    [[0, 0, 0, 0, 0, 0], [0, 2, 2, -1, -1, 1], [0, 2, -4, 2, 2, -2], [0, -1, 2, 0, 0, 0], [0, -1, 2, 0, -2, 2],
     [0, 1, -2, 0, 2, -1]]]


def test_end_points_that_stop_short_of_a_family_are_left_out_of_a_family_answer():
    """The family is proved (its witnesses in exact arithmetic; and, independently, the exact dimension of the
    solution set is 1), every listed line is at round-off, and the isolated lines are the same in other
    coordinates (a second solve, x = T y with T a signed permutation times powers of 2, and another seed)."""
    Q = np.array(LINE_OF_EQUILIBRIA6, dtype=float)
    q = QuadraticSystem(Q)
    # the line of equilibria, by hand: v does not involve x_1, and v(e_4) = Q[:, 3, 3] = 0, so
    # v(a e_1 + b e_4) = b^2 v(e_4) = 0 for all a, b
    assert not np.any(Q[:, 0, :]) and not np.any(Q[:, 3, 3])
    assert solution_set_dimension(Q) == 1
    L = q.invariant_lines()
    assert L.certified and L.certificate == "family", L.reason
    assert L.positive_dimensional and all(w.proved and w.is_equilibria for w in L.positive_dimensional)
    assert all(ln.backward_error <= 1e-12 for ln in L)
    assert "end point(s) next to the family not listed" in L.reason
    T = np.array([[0, 0, 0, 2.0 ** -3, 0, 0], [0, 0, 0, 0, -4.0, 0], [0.5, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 2.0],
                  [0, -1.0, 0, 0, 0, 0], [0, 0, 8.0, 0, 0, 0]])
    L2 = _transformed(q, T).invariant_lines(seed=3)
    assert L2.certified and L2.certificate == "family", L2.reason
    assert L2.total_multiplicity == L.total_multiplicity and L2.real_count == L.real_count
    for l2 in L2:
        d = T @ l2.direction
        c = l2.c / np.linalg.norm(d)
        d = d / np.linalg.norm(d)
        assert any(abs(abs(np.vdot(ln.direction, d)) - 1) < 1e-8 and abs(ln.c - c) < 1e-8 * max(1, abs(c))
                   for ln in L), (d, c)
