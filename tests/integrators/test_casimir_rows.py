"""The compiled Casimirs of the end-of-run check (integrators.backends.casimir_rows) and the check's path for one
trajectory with many saved states (integrators.engine.guard._figures_long, quantity_scale.scales_at).

Expected values: the Casimirs' own numpy evaluation (liegroups.monomials.monomial_sum, another loop order of the
same sums) and the guard's array path (_figures, quantity_scale.scales), each written independently of the code
under test."""

import math

import numpy as np
import pytest

from integrators import integrate
from integrators.backends import casimir_rows, numba_kernels
from integrators.engine import guard, quantity_scale
from liegroups import LieAlgebra, named

numba_only = pytest.mark.skipif(not numba_kernels.available(), reason="needs the extra liedyn[fast] (numba)")


def _random_basis(alg, seed):
    """The algebra in the basis B e_i (structure constants C'_ij^k = sum B_ai B_bj C_ab^c (B^-1)_kc): its Casimirs
    dense polynomials (so(5): a quartic with ~700 terms)."""
    B = np.random.default_rng(seed).standard_normal((alg.dim, alg.dim))
    C = np.einsum("ai,bj,abc,kc->ijk", B, B, alg.structure_constants, np.linalg.inv(B))
    return LieAlgebra(C, name=f"{alg.name} random basis")


@numba_only
@pytest.mark.parametrize("make", [named.so4, named.se3, lambda: _random_basis(named.so(5), 3),
                                  lambda: _random_basis(named.se3(), 4)])
@pytest.mark.parametrize("K", [1, 127, 128, 1001])
def test_compiled_values_are_the_casimirs_numpy_values(make, K):
    casimir_rows.warm()
    alg = make()
    cas = list(alg.casimirs())
    Z = np.random.default_rng(K).standard_normal((K, alg.dim)) * 2.0
    got = casimir_rows.values(cas, Z)
    want = np.array([c(Z) for c in cas])
    assert got.shape == (len(cas), K)
    # the same sums in another order: equal to the round-off of the terms' sizes, sum |c| |m^e| <= sum |c| |z|^d
    for c, g, w in zip(cas, got, want):
        size = sum(abs(cf) for cf, _ in c.terms) * np.max(np.abs(Z), axis=1) ** max(sum(e) for _, e in c.terms)
        assert np.all(np.abs(g - w) <= 64 * np.finfo(float).eps * size)


def _size(c, Z):
    """sum_t |c_t| |z|_inf^deg: a bound of the terms' sizes at each row of Z, the scale of the rounding of C(z)."""
    return sum(abs(cf) for cf, _ in c.terms) * np.max(np.abs(Z), axis=1) ** max(sum(e) for _, e in c.terms)


@numba_only
@pytest.mark.parametrize("make", [lambda: _random_basis(named.so(5), 3), lambda: _random_basis(named.so(5), 4),
                                  lambda: _random_basis(named.sl(3), 6)])
def test_values_in_the_sparse_basis_are_the_casimirs_numpy_values(make):
    """With the sparse basis (T, Chat) of integrators.codegen.projection.sparse_polynomials the compiled values are
    Chat's at zhat = T^T z: C(z) again, up to the change of basis's rounding of the coefficients (a coefficient of
    Chat sums ~cond(T)^d products of C's, themselves accurate to ~1e-13: basis_polynomials keeps a form that agrees
    to 1e-11 of the terms' sizes at its probes); far fewer terms (so(5)'s quartic 714 -> 89)."""
    from integrators.codegen import projection
    casimir_rows.warm()
    alg = make()
    cas = list(alg.casimirs())
    found = projection.sparse_polynomials(alg)
    assert found is not None
    basis = found[0]
    assert sum(len(p) for p in basis[1]) < 0.3 * sum(len(c.terms) for c in cas)
    Z = np.random.default_rng(11).standard_normal((1001, alg.dim)) * 2.0
    got = casimir_rows.values(cas, Z, basis)
    for c, g in zip(cas, got):
        assert np.all(np.abs(g - c(Z)) <= 1e-11 * _size(c, Z))
    T = np.array(basis[0])     # the values are Chat's at Z T, not C's at Z: the same evaluator on Chat's own terms
    from liegroups.casimirs import Casimir
    import sympy
    hats = [Casimir(None, sympy.symbols(f"y1:{alg.dim + 1}"), c.degree, {ex: cf for cf, ex in p})
            for c, p in zip(cas, basis[1])]
    np.testing.assert_allclose(got, [h(Z @ T) for h in hats], rtol=1e-13, atol=1e-13 * np.max(np.abs(got)))


def test_values_answer_none_until_loaded(monkeypatch):
    monkeypatch.setattr(casimir_rows, "_NS", {})
    assert casimir_rows.values(list(named.so4().casimirs()), np.ones((3, 6))) is None
    assert not casimir_rows.loaded()


@numba_only
def test_the_check_records_the_same_values_and_figures_with_and_without_the_compiled_casimirs(monkeypatch):
    casimir_rows.warm()
    alg = _random_basis(named.so(5), 7)
    from servo import EulerPoincare
    rng = np.random.default_rng(1)
    A = rng.standard_normal((10, 10))
    s = EulerPoincare(alg, A @ A.T / 10 + np.eye(10))
    P = s.problem()
    z0 = rng.standard_normal(10)
    res = integrate(P, z0, (0.0, 2.0), method="rk853_projected", steps=300, check=False, backend="numpy")
    checked = []
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(casimir_rows, "values", lambda *a: None)
        r = integrate(P, z0, (0.0, 2.0), method="rk853_projected", steps=300, backend="numpy")
        checked.append(r)
    a, b = checked
    assert a.status == b.status == 0
    assert a.invariants.keys() == b.invariants.keys() == res.invariants.keys()
    cas = dict(zip(P.invariants, P.invariants.values()))
    for k in a.invariants:      # the compiled values read the Casimirs in the sparse basis: the same to 1e-11 of the
        if k in cas and hasattr(cas[k], "terms"):    # terms' sizes (test_values_in_the_sparse_basis_...)
            assert np.all(np.abs(a.invariants[k] - b.invariants[k]) <= 1e-11 * _size(cas[k], r.y))
        else:
            np.testing.assert_allclose(a.invariants[k], b.invariants[k], rtol=1e-12, atol=1e-12)
    for k in a.checks:
        name = k.partition(":")[2]
        if k.startswith("invariant:") and name in cas and hasattr(cas[name], "terms"):
            # a drift figure is max |v_k - v_0| / d with d >= |v_0|: two evaluations that differ by at most delta
            # give figures within 2 delta / |v_0| (the projected run keeps Chat to ~1e-17, C to ~1e-14)
            delta = np.max(np.abs(a.invariants[name] - b.invariants[name]))
            assert abs(a.checks[k] - b.checks[k]) <= 2 * delta / abs(b.invariants[name][0]) + 1e-15, k
        else:
            assert a.checks[k] == pytest.approx(b.checks[k], rel=1e-6, abs=1e-14), k


def test_scales_at_are_the_scales_of_the_array_path():
    """scales_at (Python floats) against scales (arrays) for a homogeneous Casimir, a declared polynomial with
    constant and linear terms, an undeclared function and one whose value overflows on an axis (that term counts 0)."""
    from integrators.core.quantities import polynomial_quantity
    cas = list(named.so4().casimirs())
    c = np.array([0.5, -1.0, 2.0, 0.0, 1.0, 3.0])
    poly = polynomial_quantity(2)(lambda z: np.asarray(z) @ c + np.sum(np.asarray(z) ** 2, axis=-1) - 4.0)

    def plain(z):
        return np.asarray(z)[..., 1] ** 3 - np.asarray(z)[..., 4]

    def huge(z):
        return np.exp(800.0 * np.asarray(z)[..., 0])
    qs = cas + [poly, plain, huge]
    rs = [0.5, 3.0]
    with np.errstate(all="ignore"):
        got = quantity_scale.scales_at(qs, rs, 6)
        want = quantity_scale.scales(qs, np.array(rs), 6)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert got[-1][1] == 5.0 and got[-1][0] == pytest.approx(math.exp(400.0) + 5.0)   # exp(2400) = inf counts 0


@pytest.mark.parametrize("grow", [3.0, 0.5])
def test_figures_of_one_long_trajectory_are_those_of_the_array_path(grow):
    """_figures_long against _figures on one trajectory of 40 saved states: kept and not kept invariants and a
    constraint, within tolerance and beyond it (the first offending state and its figure), the largest state
    last or first; a NaN state goes to the array path (beyond every tolerance)."""
    rng = np.random.default_rng(9)
    c = np.array([0.5, -1.0, 2.0])
    qs = [lambda z: np.asarray(z) @ c, lambda z: np.sum(np.asarray(z) ** 2, axis=-1),
          lambda z: np.asarray(z)[..., 0] * np.asarray(z)[..., 2] + 0.1]
    inv, kept = [True, True, False], [True, False, True]
    raw = rng.standard_normal((40, 3)) * np.linspace(1.0, grow, 40)[:, None]
    quantities = [("invariant" if i else "constraint", f"q{a}", q(raw), q) for a, (q, i) in enumerate(zip(qs, inv))]
    for rts in ([1e9] * 3, [1e-3] * 3, [1e9, 0.2, 1e9]):
        worst, firsts, per_k = guard._figures_long(quantities, raw, inv, kept, rts)
        w2, f2, p2 = guard._figures(quantities, raw, np.array(inv), np.array(kept), rts)
        np.testing.assert_allclose(worst, w2, rtol=1e-13)
        assert firsts == f2
        for i, k in enumerate(firsts):
            if k < len(raw):
                assert per_k[i][k] == pytest.approx(p2[i][k], rel=1e-13)
    bad = raw.copy()
    bad[17] = np.nan
    quantities = [(kind, name, q(bad), q) for kind, name, _, q in quantities]
    worst, firsts, _ = guard._figures_long(quantities, bad, inv, kept, [1e9] * 3)
    assert all(math.isnan(w) for w in worst) and firsts == [17, 17, 17]


@pytest.mark.parametrize("compiled", [True, False])
def test_check_false_records_the_same_values(compiled, monkeypatch):
    """check=False skips the figures, not the recorded invariants and constraints: the same values as a checked run
    (through the compiled Casimirs when loaded, numpy else), and no figures."""
    if compiled and not numba_kernels.available():
        pytest.skip("needs the extra liedyn[fast] (numba)")
    if compiled:
        casimir_rows.warm()
    else:
        monkeypatch.setattr(casimir_rows, "values", lambda *a: None)
    from servo import ServoSecondKind
    alg = named.so4()
    rng = np.random.default_rng(2)
    s = ServoSecondKind(alg, np.diag([1.0, 2.0, 3.0, 1.5, 2.5, 3.5]), a=rng.standard_normal(6), b=rng.standard_normal(6))
    x0 = s.check_state(np.append(rng.standard_normal(6), 0.1), project=True)
    a = s.simulate(x0, 2.0, rtol=1e-9, atol=1e-11)
    b = s.simulate(x0, 2.0, rtol=1e-9, atol=1e-11, check=False)
    assert np.array_equal(a.y, b.y) and a.checks and not b.checks
    P = s.problem()
    assert a.invariants.keys() == b.invariants.keys() == P.invariants.keys()
    assert a.constraints.keys() == b.constraints.keys() == P.constraints.keys()
    z = a.outputs["z"]
    for table, decl in ((b.invariants, P.invariants), (b.constraints, P.constraints)):
        for k, q in decl.items():                  # against each quantity's own numpy evaluation
            np.testing.assert_allclose(table[k], q(z), rtol=1e-12, atol=1e-12 * max(1.0, np.max(np.abs(q(z)))))


def test_the_check_queues_the_load_of_the_compiled_casimirs_once_it_is_taken(monkeypatch):
    """Not loaded but on disk: the first check queues its load in the background (numpy meanwhile), the next checks
    do not again; a queue that refused it (full) is asked again at the next check."""
    from integrators.backends import background
    calls, answers = [], [False, True]
    monkeypatch.setattr(casimir_rows, "values", lambda *a: None)
    monkeypatch.setattr(casimir_rows, "on_disk", lambda: True)
    monkeypatch.setattr(background, "submit", lambda key, job: calls.append((key, job)) or
                        (answers.pop(0) if answers else True))
    monkeypatch.setattr(guard, "_ROWS_LOAD", [])
    from servo import EulerPoincare
    s = EulerPoincare(named.so4(), np.diag([1.0, 2.0, 3.0, 1.5, 2.5, 3.5]))
    for _ in range(4):
        r = s.simulate(np.array([0.3, -0.2, 0.5, 0.1, 0.4, -0.3]), 1.0, backend="numpy")
        assert r.status == 0 and len(r.t) == 1001
    assert [k for k, _ in calls] == ["casimir-rows-load"] * 2 and all(j is casimir_rows.warm for _, j in calls)
