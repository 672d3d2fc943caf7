"""The matrix form of the code writer (integrators.codegen.matrix_source) against the scalar text.

Expected values: the scalar text of the same program (one Python term per non-zero structure constant),
the path every sparse algebra keeps; both forms compute the same sums in exact arithmetic, so a run of the
adaptive loop (the same controller, the same steps) and its output grid agree to round-off. The matrix form
is forced on a sparse algebra (sl(3) in its own basis, no closed form: Taylor action, dexp^-1 series) and
compared on a dense one (R x_D R^5 in a random basis, where the numpy backend chooses it).
"""

import numpy as np
import pytest

from integrators import METHODS, integrate
from integrators.backends import fastpath, loader, plan as plan_mod
from integrators.codegen import matrix_source
from integrators.codegen.programs import source
from integrators.geometry import recognition
from liegroups import LieAlgebra, named

from ._problems import quadratic_problem, start


def _one_step(problem, y0, method, matrix, monkeypatch, t_eval=None):
    """One accepted step of h = 0.05 by the generated numpy loop (budget 1), with the matrix form on
    (threshold below every count) or off (above every count), from empty caches of generated functions.
    One step from the same state and h: the adaptive controller's next h reads the error estimate, a
    difference of near-equal sums whose relative round-off is ~1e-6, so longer runs take steps that
    differ at that level and are compared at their common end only."""
    monkeypatch.setattr(matrix_source, "MATRIX_TERMS", -1 if matrix else 10**9)
    monkeypatch.setattr(loader, "_CACHE", {})
    monkeypatch.setattr(plan_mod, "_PLANS", {})
    m = METHODS[method]
    pl = plan_mod.plan(problem, m.tableau, m.lie, m.terms, y0)
    res, nsteps, _ = fastpath.run_adaptive(pl, y0, 0.0, 1.0, 0.05, 1e-6, 1e-8, None, 1, "numpy", max_steps=1,
                                           t_eval=t_eval)
    assert nsteps == 1
    return res


def _almost_abelian(n, seed):
    """R x_D R^(n-1) in a random basis: [e_n, e_i] = D e_i (D random), then P = Q diag(s): every structure
    constant non-zero (n^3 of them); no closed form, no polynomial Casimir to derive."""
    rng = np.random.default_rng(seed)
    C = np.zeros((n, n, n))
    D = rng.uniform(-1.0, 1.0, (n - 1, n - 1))
    C[n - 1, :n - 1, :n - 1], C[:n - 1, n - 1, :n - 1] = D, -D
    alg = LieAlgebra(C, name="almost abelian")
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    return alg.change_basis(Q * rng.uniform(0.5, 2.0, n)[None, :], name=f"{alg.name} (random basis)")


def _so4_random():
    rng = np.random.default_rng(5)
    Q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    return named.so4().change_basis(Q * rng.uniform(0.5, 2.0, 6)[None, :], name="so(4) (random basis)")


ALGEBRAS = {"sl3": named.sl3 if hasattr(named, "sl3") else (lambda: named.sl(3)),
            "almost abelian": lambda: _almost_abelian(6, 3), "so4 random": _so4_random,
            "so4 random forced": _so4_random}


def _problem(basis, alg):
    """The quadratic problem of seed 4; "forced": with the multiplier force of a servo-constraint of the first
    kind keeping (c, z), -(c, g) / (c, b) b with g = ad*_w z, so the field is (I - P) g with P = b c^T / (c, b),
    every entry non-zero (the matrix form writes g - P g as one product, the scalar text its n^2 terms)."""
    if not basis.endswith("forced"):
        return quadratic_problem(alg, 4)
    rng = np.random.default_rng(11)
    c, b = rng.standard_normal(alg.dim), rng.standard_normal(alg.dim)
    M = quadratic_problem(alg, 4).velocity(np.eye(alg.dim))

    def forcing(z):
        g = alg.coad(z @ M, z)
        return -((g @ c) / (b @ c))[..., None] * b
    return quadratic_problem(alg, 4, forcing=forcing, linear_invariants=c)


@pytest.mark.parametrize("basis, method", [("sl3", "rkmk853"), ("sl3", "rk853"), ("sl3", "rk853_projected"),
                                           ("almost abelian", "rkmk853"), ("almost abelian", "rk853"),
                                           ("so4 random", "rk853_projected"), ("so4 random", "rkmk853"),
                                           ("so4 random forced", "rk853")])
def test_matrix_form_equals_scalar_text(method, basis, monkeypatch):
    """sl(3): no closed form (the matrix exponential, dexp^-1 by a solve), Casimirs of degree 2 and 3 in
    the projected pair's loop and grid; R x_D R^5: dense, no Casimir; so(4) in a random basis: a closed
    form (the scalar writer's, with the matrix products) and dense quadratic Casimirs; forced: the field
    (I - P) g of a multiplier force."""
    alg = ALGEBRAS[basis]()
    P, z0 = _problem(basis, alg), start(alg.dim, 4)
    if basis.endswith("forced"):   # the field's projector is recognised and written as one product
        st, m = recognition.recognise(P, z0), METHODS[method]
        assert st.P is not None and "_MP @ " in source("adaptive", st, m.tableau, m.lie, m.terms, None, "scalar")
    for te in (None, np.array([0.0, 0.01, 0.025, 0.04, 0.05])):
        a = _one_step(P, z0, method, False, monkeypatch, te)
        b = _one_step(P, z0, method, True, monkeypatch, te)
        assert np.array_equal(a.t, b.t) and a.y.shape == b.y.shape == (2 if te is None else 5, alg.dim)
        assert np.max(np.abs(a.y - b.y)) <= 1e-14 * np.max(np.abs(a.y)), (method, basis, te)
    # a longer run: the steps differ at the estimate's round-off, the end state at the tolerance's level
    whole = [integrate(P, z0, (0.0, 1.0), method=method, backend="numpy", rtol=1e-10, atol=1e-12, check=False)
             for _ in range(1)]
    monkeypatch.setattr(matrix_source, "MATRIX_TERMS", -1)
    monkeypatch.setattr(loader, "_CACHE", {})
    monkeypatch.setattr(plan_mod, "_PLANS", {})
    whole.append(integrate(P, z0, (0.0, 1.0), method=method, backend="numpy", rtol=1e-10, atol=1e-12, check=False))
    assert np.max(np.abs(whole[0].y[-1] - whole[1].y[-1])) <= 1e-11


@pytest.mark.parametrize("basis, method", [("sl3", "rkmk853"), ("sl3", "rk853_projected"), ("almost abelian", "rk853"),
                                           ("so4 random", "rk853"), ("so4 random forced", "rk853")])
def test_shared_ensemble_matrix_form_equals_scalar_text(method, basis, monkeypatch):
    """The numpy columns of a shared ensemble (three trajectories, one step and an output grid): the matrix form
    (integrators.codegen.row_source.MatrixRowSource for the ambient pairs, MatrixSource for the RKMK pairs, the
    products over the stacked columns) against the scalar text's term-by-term ufuncs: the same step, the same states
    to round-off."""
    alg = ALGEBRAS[basis]()
    P, Z = _problem(basis, alg), start(alg.dim, 4, batch=(3,))
    st, m = recognition.recognise(P, Z), METHODS[method]
    monkeypatch.setattr(matrix_source, "MATRIX_TERMS", -1)
    assert "_MC = " in source("adaptive", st, m.tableau, m.lie, m.terms, None, "array")
    for te in (None, np.array([0.0, 0.01, 0.025, 0.04, 0.05])):
        a = _one_step(P, Z, method, False, monkeypatch, te)
        b = _one_step(P, Z, method, True, monkeypatch, te)
        assert np.array_equal(a.t, b.t) and a.y.shape == b.y.shape == ((2 if te is None else 5),) + Z.shape
        assert np.max(np.abs(a.y - b.y)) <= 1e-14 * np.max(np.abs(a.y)), (method, basis, te)


@pytest.mark.parametrize("basis, method", [("sl3", "rkmk4"), ("sl3", "rk4"), ("sl3", "cf4"), ("so4 random forced", "rk4"),
                                           ("almost abelian", "rk4")])
def test_fixed_step_ensemble_matrix_form_equals_scalar_text(method, basis, monkeypatch):
    """The numpy columns of a fixed-step ensemble (more trajectories than fastpath.SMALL_BATCH, which run one after
    another) in matrix form against the scalar text's term-by-term ufuncs: the same states to round-off."""
    alg = ALGEBRAS[basis]()
    P = _problem(basis, alg)
    Z = 0.2 * start(alg.dim, 4, batch=(fastpath.SMALL_BATCH + 3,))     # (the forced motions of larger states
    st, m = recognition.recognise(P, Z), METHODS[method]                # blow up before t = 0.5)
    runs = []
    for matrix in (False, True):
        monkeypatch.setattr(matrix_source, "MATRIX_TERMS", -1 if matrix else 10**9)
        monkeypatch.setattr(loader, "_CACHE", {})
        monkeypatch.setattr(plan_mod, "_PLANS", {})
        tab, lie, terms = (m.tableau, m.lie, m.terms) if hasattr(m, "tableau") else (m, True, 1)   # (cf4: itself)
        assert ("_MC = " in source("fixed", st, tab, lie, terms, None, "array")) == matrix
        runs.append(integrate(P, Z, (0.0, 0.5), method=method, steps=20, backend="numpy", check=False))
    a, b = runs
    assert a.status == b.status == 0 and a.y.shape == b.y.shape == (21,) + Z.shape and np.max(np.abs(a.y)) < 10.0
    assert np.max(np.abs(a.y - b.y)) <= 1e-13 * np.max(np.abs(a.y))


def test_matrix_form_steps_against_reference(monkeypatch):
    """Several steps of the matrix form's loop (rkmk853 on R x_D R^8 in a random basis, with and without an output
    grid), each end state against a tight DOP853 run of the field (scipy, an independent integrator) to the
    same time: the arrays the text reuses (a step's state stacked once for its stages, an unpacked result as
    the next product's operand) are those of the current step (a stack kept across the loop's passes would
    hold the first step's state)."""
    from scipy.integrate import solve_ivp
    alg = _almost_abelian(9, 6)
    P, z0 = quadratic_problem(alg, 5), start(9, 5)
    monkeypatch.setattr(loader, "_CACHE", {})
    monkeypatch.setattr(plan_mod, "_PLANS", {})
    m = METHODS["rkmk853"]
    pl = plan_mod.plan(P, m.tableau, m.lie, m.terms, z0)
    for te in (None, np.linspace(0.0, 0.2, 9)):
        res, nsteps, _ = fastpath.run_adaptive(pl, z0, 0.0, 1.0, 0.05, 1e-9, 1e-11, None, 1, "numpy", max_steps=5,
                                               t_eval=te)
        assert nsteps == 5 and len(res.t) >= 6     # the steps' ends, or the grid's times they passed
        ref = solve_ivp(P.rhs, (0.0, float(res.t[-1])), z0, method="DOP853", rtol=1e-13, atol=1e-15, t_eval=res.t)
        assert np.max(np.abs(res.y - ref.y.T)) <= 1e-8 * np.max(np.abs(z0)), te


def test_choice_by_term_count(monkeypatch):
    """The numpy texts are in matrix form exactly when C has more than MATRIX_TERMS non-zero entries; the
    compiled text never is; the Lie-group steps on an almost abelian algebra's orbits (integrators.codegen.
    orbit_source, one n x n map a stage) are the scalar text, but for the dense output's numpy columns."""
    own, rand = named.sl(3), _almost_abelian(6, 3)
    for alg in (own, rand):
        P, z0 = quadratic_problem(alg, 4), start(alg.dim, 4)
        st = recognition.recognise(P, z0)
        dense = np.count_nonzero(st.C) > matrix_source.MATRIX_TERMS
        assert dense == (alg is rand)
        for name in ("rkmk853", "rk853"):
            m = METHODS[name]
            orbit = m.lie and alg is rand
            for kind, mode in (("adaptive", "scalar"), ("dense", "array"), ("adaptive", "numba")):
                text = source(kind, st, m.tableau, m.lie, m.terms, None, mode)
                matrix = dense and mode != "numba" and not (orbit and kind == "adaptive")
                assert text.startswith("_MC = ") == matrix, (alg.name, name, kind, mode)


def test_expphi_against_expm():
    """genhelpers.expphi: exp(A) - I against scipy's expm (Pade, an independent algorithm), phi_1(A) against the
    corner of expm([[A, I], [0, 0]]) (= [[e^A, phi_1(A)], [0, I]]; Higham 2008, 10.7) and against
    A phi_1(A) = exp(A) - I, for norms in each band of degrees (below 0.17, 0.53, 1.09, 2.01) and above the
    scaling radius, batched, and NaN beyond 1e5."""
    from scipy.linalg import expm
    from integrators.reference.genhelpers import SCALAR
    expphi = SCALAR["expphi"]
    rng = np.random.default_rng(7)
    for size in (1e-3, 0.1, 0.17, 0.3, 0.52, 0.8, 1.08, 1.5, 2.0, 3.0, 40.0):
        A = rng.standard_normal((3, 9, 9))
        A *= size / np.abs(A).sum(axis=-2).max()
        D, P, F = expphi(A)
        assert np.isclose(F, np.max(np.sum(A * A, axis=(1, 2))), rtol=1e-14)
        E = np.array([expm(a) for a in A])
        aug = np.zeros((3, 18, 18))
        aug[:, :9, :9], aug[:, :9, 9:] = A, np.eye(9)
        phi = np.array([expm(a) for a in aug])[:, :9, 9:]
        assert np.max(np.abs(D + np.eye(9) - E)) <= 1e-14 * np.max(np.abs(E)), size
        assert np.max(np.abs(P - phi)) <= 1e-14 * np.max(np.abs(phi)), size
        assert np.max(np.abs(A @ P - D)) <= 1e-14 * max(1.0, np.max(np.abs(D))), size
        D1, P1, _ = expphi(A[1])                      # one matrix = its row of the batch (up to the common plan)
        assert np.max(np.abs(D1 - D[1])) <= 1e-14 * max(1.0, np.max(np.abs(D1)))
        assert np.max(np.abs(P1 - phi[1])) <= 1e-14 * np.max(np.abs(phi[1])), size
    small = 1e-9 * rng.standard_normal((9, 9))     # e^A - I without cancellation at a tiny A
    D, _, _ = expphi(small)
    assert np.max(np.abs(D - (small + small @ small / 2))) <= 1e-15 * np.max(np.abs(small))
    D, P, _ = expphi(np.full((4, 4), 1e5))
    assert np.isnan(D).all() and np.isnan(P).all()


def test_expphi_plans():
    """Each of expphi's plans: its coefficients are 1/(k+1)! for k = 0..m in blocks of b (m its degree), and
    its radius r keeps the remainder sum_{k>m} r^k/(k+1)! below 2^-63, summed in exact rational arithmetic
    (an independent check of the radii, which the module writes as decimals); the next radius up would not
    be needed if r were larger: the radii increase with the degree."""
    from fractions import Fraction
    from math import factorial
    from integrators.reference.genhelpers import _PS_DEGREES, _PS_PLANS
    radii = []
    for (m, b, r), (r2, b2, q, coef) in zip(_PS_DEGREES, _PS_PLANS):
        assert (r2, b2, q) == (r, b, -(-(m + 1) // b))
        flat = coef.ravel()
        assert np.array_equal(flat[:m + 1], [1.0 / factorial(k + 1) for k in range(m + 1)])
        assert not flat[m + 1:].any()
        R = Fraction(r)
        tail = sum(R ** k / factorial(k + 1) for k in range(m + 1, m + 80))
        assert tail <= Fraction(1, 2 ** 63), (m, r, float(tail))
        radii.append(r)
    assert radii == sorted(radii)


def test_taction_against_expm():
    """genhelpers.taction (the Taylor action on numpy columns): exp(A) z - z against A phi_1(A) z with phi_1 from
    scipy's expm (the corner of expm([[A, I], [0, 0]])), a column per matrix, at norms that take one and several substeps; a column whose norm is beyond 1e5 is
    NaN alone."""
    from scipy.linalg import expm
    from integrators.reference.genhelpers import ARRAY
    taction = ARRAY["taction"]
    rng = np.random.default_rng(11)
    for size in (1e-6, 0.4, 1.9, 7.0):
        A = rng.standard_normal((9, 9, 6))
        A *= size / np.abs(A).sum(axis=0).max()
        Z = rng.standard_normal((9, 6))
        got = taction(A, Z)
        want = []
        for g in range(6):     # e^A z - z = A phi_1(A) z, phi_1(A) the corner of expm([[A, I], [0, 0]]): no cancellation
            aug = np.zeros((18, 18))
            aug[:9, :9], aug[:9, 9:] = A[:, :, g], np.eye(9)
            want.append(A[:, :, g] @ (expm(aug)[:9, 9:] @ Z[:, g]))
        want = np.stack(want, axis=1)     # the series stops below 2^-54 |z| (tplan), not relative to e^A z - z
        assert np.max(np.abs(got - want)) <= 1e-14 * np.max(np.abs(want)) + 1e-16 * np.max(np.abs(Z)), size
    A[:, :, 2] = 1e6
    got = taction(A, Z)
    assert np.isnan(got[:, 2]).all() and np.isfinite(np.delete(got, 2, axis=1)).all()


def test_pdinv_is_dexp_inverse():
    """genhelpers.pdinv (dexp^-1 of the matrix form from expphi's pair of A = ad(theta)^T): dexp_(-theta) of its
    result is v, dexp_(-theta) = phi_1(-ad theta) by the algebra's own matrix function (liegroups, independent
    of the generated code), i.e. the result is sum_k B_k/k! (-ad theta)^k v; one matrix and a batch; NaN for a
    singular P (one matrix)."""
    from integrators.reference.genhelpers import ARRAY, SCALAR
    alg = _almost_abelian(9, 4)
    rng = np.random.default_rng(13)
    for size in (0.05, 0.5, 4.0):   # ||ad theta||_F; the generated code rejects x^2 = ||ad theta||_F^2 / (2 pi)^2 > 0.46
        th = rng.standard_normal((4, 9))
        th *= size / np.linalg.norm(alg.ad(th), axis=(1, 2))[:, None]
        v = rng.standard_normal((4, 9))
        A = np.swapaxes(alg.ad(th), -1, -2)
        D, P, _ = SCALAR["expphi"](A)
        K = ARRAY["pdinv"](D, P, v.T).T
        for g in range(4):
            k1 = SCALAR["pdinv"](*SCALAR["expphi"](A[g])[:2], v[g])
            assert np.max(np.abs(k1 - K[g])) <= 1e-14 * np.max(np.abs(K[g]))
            back = alg.dexp(-th[g], k1)
            assert np.max(np.abs(back - v[g])) <= 1e-13 * np.max(np.abs(v[g])), size
    assert np.isnan(SCALAR["pdinv"](np.zeros((3, 3)), np.zeros((3, 3)), np.ones(3))).all()


@pytest.mark.parametrize("floats", [True, False])
def test_casimir_polynomials_against_sympy(floats):
    """The matrix form's Casimirs and their gradients (monomials once each, one product with the
    coefficients) against the algebra's Casimirs evaluated by sympy's lambdified polynomials and their
    sympy derivatives (sl(3): degrees 2 and 3), on floats and on numpy columns."""
    from integrators.codegen.projection import of_algebra
    from integrators.reference.genhelpers import ARRAY, SCALAR
    alg = named.sl(3)
    proj = of_algebra(alg)
    P, z0 = quadratic_problem(alg, 4), start(8, 4)
    st = recognition.recognise(P, z0)
    src = matrix_source.MatrixSource(st)
    src.floats = floats
    z = [f"z{i}" for i in range(8)]
    vals = src.casimir_polynomials(proj, z)
    grads = src.casimir_polynomials(proj, z, grad=True)
    text = (matrix_source.preamble(st, proj) + f"def f({', '.join(z)}):\n" + "\n".join(src.lines)
            + f"\n    return ({', '.join(vals)},), ({', '.join(g for row in grads for g in row)},)\n")
    env = dict(SCALAR if floats else ARRAY, np=np)
    exec(text, env)
    Z = start(8, 9, batch=(5,))
    for zz in (Z if floats else [Z]):
        v, g = env["f"](*(zz if floats else zz.T))
        v, g = np.array(v), np.array(g).reshape((len(proj.polys), 8) + np.shape(v)[1:])
        cas = alg.casimirs()
        want_v = np.array([c(zz) for c in cas])
        want_g = np.moveaxis(np.array([c.grad(zz) for c in cas]), -1, 1)
        assert np.max(np.abs(v - want_v)) <= 1e-14 * np.max(np.abs(want_v))
        assert np.max(np.abs(g - want_g)) <= 1e-14 * np.max(np.abs(want_g))
