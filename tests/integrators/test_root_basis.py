"""The root basis of a reductive algebra in a dense basis (integrators.geometry.root_basis), the Casimir
projection written in it (integrators.codegen.projection.basis_polynomials) and the coadjoint products the code
writer takes through it.

Expected values come from elsewhere:
* the basis: [f_a, f_b] computed with the algebra's own bracket from the given C, against the sparse constants;
  the root space decomposition read off ad of the Cartan part (each root pair an invariant plane of every
  element of ker ad_x);
* the Casimirs in the new coordinates: against ``Casimir.value`` of liegroups (the library's polynomial in the
  user's basis) at random points, and invariant under the coadjoint action (the defining property:
  grad C . ad*_y z = 0 for every y);
* the projection: the orthogonal projection written from the dense polynomials (the projection without the
  basis), and the user's Casimirs at the projected points;
* the coadjoint product: numpy's einsum of C; whole runs against the generic numpy steppers (fast=False).
"""

import numpy as np
import pytest

from integrators import integrate
from integrators.backends import loader, numba_kernels
from integrators.backends import plan as plan_mod
from integrators.codegen import matrix_source, projection
from integrators.codegen import writer as codegen
from integrators.geometry import recognition
from integrators.geometry.almost_abelian import AlmostAbelian
from integrators.geometry.root_basis import COND_MAX, root_basis
from integrators.geometry.sparse_basis import sparse_basis
from liegroups import LieAlgebra, named

from tests.algebras import random_basis, sp4

from ._problems import quadratic_problem, start

EPS = np.finfo(float).eps


def _random_basis(alg, seed):
    return random_basis(alg, np.random.default_rng(seed))


ALGEBRAS = {
    "so(5) random basis": _random_basis(named.so(5), 1),
    "sp(4) random basis": _random_basis(sp4(), 2),
    "sl(3) random basis": _random_basis(named.sl(3), 3),
    "so(4) random basis": _random_basis(named.so4(), 4),
}


@pytest.mark.parametrize("name", list(ALGEBRAS))
def test_root_basis_brackets_and_root_planes(name):
    alg = ALGEBRAS[name]
    C, n = alg.structure_constants, alg.dim
    form = root_basis(C)
    assert form is not None and np.linalg.cond(form.T) <= COND_MAX
    Ch = form.constants()
    # sparser than the dense basis by a wide margin (the weights forbid most brackets)
    assert np.count_nonzero(Ch) <= np.count_nonzero(np.abs(C) > 1e-12 * np.abs(C).max()) // 3
    # [f_a, f_b] with the bracket of the given constants, against sum_c Ch[a, b, c] f_c
    F = form.T
    for a in range(n):
        for b in range(n):
            direct = np.einsum("i,j,ijk->k", F[:, a], F[:, b], C)
            assert np.allclose(direct, F @ Ch[a, b], atol=1e-12 * np.abs(C).max() * COND_MAX), (a, b)
    # the Cartan subalgebra (the first ``rank`` columns) is abelian and each of its elements maps every root
    # plane (a real root vector, or the pair Re v, Im v) into itself: ad_h is block diagonal in the new basis
    r = form.rank
    assert r >= 1 and sum(size for _, size in form.blocks) == n - r
    for a in range(r):
        A = Ch[a].T                        # ad_{f_a}: column b holds [f_a, f_b]
        assert np.all(A[:, :r] == 0.0)
        mask = np.ones((n, n), dtype=bool)
        for first, size in form.blocks:
            mask[first:first + size, first:first + size] = False
        assert np.all(A[mask] == 0.0), a


def test_refused_where_no_sparser_basis_is_diagonal():
    # se(3): the generic ad_x has Jordan blocks (ill-conditioned eigenvectors); the Heisenberg algebra: ad_x
    # nilpotent; so(5) in its own basis: already sparser than any root basis
    heis = LieAlgebra(_heisenberg(), name="heisenberg")
    for alg in (_random_basis(named.se3(), 5), _random_basis(heis, 6), named.so(5)):
        assert root_basis(alg.structure_constants) is None, alg.name
    C = ALGEBRAS["so(5) random basis"].structure_constants
    assert sparse_basis(C) is root_basis(C)
    # an almost abelian algebra keeps its own adapted basis (the closed forms use it): R x_D R^2, D = diag(1, -2)
    Caa = np.zeros((3, 3, 3))
    Caa[0, 1, 1], Caa[0, 2, 2] = 1.0, -2.0
    Caa[1, 0, 1], Caa[2, 0, 2] = -1.0, 2.0
    aa = _random_basis(LieAlgebra(Caa, name="R x_D R^2"), 7).structure_constants
    assert isinstance(sparse_basis(aa), AlmostAbelian)


def _heisenberg():
    C = np.zeros((3, 3, 3))
    C[0, 1, 2], C[1, 0, 2] = 1.0, -1.0
    return C


def rng_points(n):
    return np.random.default_rng(17).standard_normal((4, n))


def _terms_value(poly, z):
    return sum(c * np.prod(z ** np.array(ex)) for c, ex in poly), sum(abs(c * np.prod(z ** np.array(ex))) for c, ex in poly)


def _terms_grad(poly, z):
    g = np.zeros(z.size)
    for c, ex in poly:
        ex = np.array(ex)
        for j in np.flatnonzero(ex):
            e = ex.copy()
            e[j] -= 1
            g[j] += c * ex[j] * np.prod(z ** e)
    return g


@pytest.mark.parametrize("name", ["so(5) random basis", "sp(4) random basis", "sl(3) random basis"])
def test_casimirs_in_the_root_basis(name):
    alg = ALGEBRAS[name]
    C, n = alg.structure_constants, alg.dim
    proj = projection.of_algebra(alg)
    assert proj.basis is not None
    T = np.array(proj.basis[0])
    hat = proj.basis[1]
    assert sum(len(h) for h in hat) <= sum(len(q) for q in projection.polynomials(alg)) // 3
    # the dense forms (generic kernel, numpy matrix form) read Chat(T^T z) expanded: the same function
    for z in rng_points(n):
        for hpoly, back in zip(hat, proj.polys):
            got, size = _terms_value(back, z)
            assert abs(got - _terms_value(hpoly, T.T @ z)[0]) <= 1e-13 * size
    rng = np.random.default_rng(7)
    for z in rng.standard_normal((6, n)):
        zh = T.T @ z
        for cas, poly in zip(alg.casimirs(), hat):
            got, size = _terms_value(poly, zh)
            # the library's Casimir in the user's basis (its terms), to ~1e-12 of the terms (the library's
            # coefficients in a dense basis are accurate to ~1e-13; the change of basis sums cond^d of them)
            assert abs(got - _terms_value(cas.terms, z)[0]) <= 1e-11 * size
            # invariant: dC/dz . ad*_y z = 0 for every y, with dC/dz = T dChat/dzhat
            G = T @ _terms_grad(poly, zh)
            y = rng.standard_normal(n)
            v = np.einsum("i,ijk,k->j", y, C, z)
            assert abs(G @ v) <= 1e-11 * (np.abs(G) @ np.abs(v))


@pytest.mark.parametrize("name", ["so(5) random basis", "sl(3) random basis"])
def test_projection_written_in_the_root_basis(name):
    alg = ALGEBRAS[name]
    n = alg.dim
    proj = projection.of_algebra(alg)
    dense = projection.CasimirProjection(projection.polynomials(alg), n)   # the library's Casimirs, user's basis
    assert proj.basis is not None and dense.basis is None
    assert "_pzh" in proj.rows_source() and "_pzh" not in dense.rows_source()
    rng = np.random.default_rng(8)
    z0 = rng.standard_normal((40, n))
    targets = dense.values(z0)
    z = z0 + 1e-6 * rng.standard_normal(z0.shape)
    inc, ref = proj.increment(z, targets), dense.increment(z, targets)
    # both move z orthogonally onto the same level set (the polynomials agree to ~1e-13 of their terms):
    # the same point to round-off of z, far below the increments' size (1e-6)
    assert np.max(np.abs(inc - ref)) <= 1e-11 * np.max(np.abs(z))
    # the user's Casimirs (their terms, in the user's basis) at the projected points: at their targets to the
    # two polynomials' difference (above)
    for k in range(proj.p):
        for zp, t in zip(z + inc, targets[:, k]):
            got, size = _terms_value(dense.polys[k], zp)
            assert abs(got - t) <= 1e-11 * size
    if numba_kernels.available():     # the compiled rows (the dense output's projection) write the same text
        from integrators.backends.projection_rows import compiled_projection
        got = compiled_projection(proj)(z, targets)
        assert np.max(np.abs(got - inc)) <= 1e-12 * np.max(np.abs(z))


def _coad_function(alg, mode):
    n = alg.dim
    st = recognition.Structure(alg.structure_constants, np.eye(n), np.zeros(n),
                               closed=recognition.closed_form(alg.structure_constants))
    src = codegen.Source(st)
    xs, zs = [f"x{i}" for i in range(n)], [f"z{i}" for i in range(n)]
    out = src.coad(xs, zs)
    text = f"def f({', '.join(xs + zs)}):\n" + "\n".join(src.lines) + f"\n    return ({', '.join(out)},)\n"
    env = loader._env(mode)
    exec(compile(text, "<test root basis>", "exec"), env)
    return env["f"], text


@pytest.mark.parametrize("name", ["so(5) random basis", "sp(4) random basis", "so(4) random basis"])
def test_coadjoint_product_through_the_root_basis(name):
    alg = ALGEBRAS[name]
    C, n = alg.structure_constants, alg.dim
    for mode in ("scalar", "array"):
        fn, text = _coad_function(alg, mode)
        assert "xa" in text             # the route through the basis was taken
        for x, m in np.random.default_rng(9).standard_normal((5, 2, n)):
            ref = np.einsum("i,ijk,k->j", x, C, m)
            args = np.concatenate([x, m])
            got = np.array([v[0] for v in fn(*(np.full(2, c) for c in args))]) if mode == "array" else np.array(fn(*args))
            assert np.max(np.abs(got - ref)) <= 100 * EPS * COND_MAX * np.abs(x).sum() * np.abs(m).sum() * np.abs(C).max()


@pytest.mark.parametrize("name, matrix", [("so(5) random basis", False), ("so(4) random basis", False),
                                          ("so(5) random basis", True)])
def test_scalar_text_runs_agree_with_the_generic_steppers(monkeypatch, name, matrix):
    # the numpy backend writes a dense basis in matrix form (matrix: its projection's values by the sparse
    # polynomials at zhat = T^T z); the scalar text (what numba compiles) takes the coadjoint products and the
    # projection through the root basis
    monkeypatch.setattr(matrix_source, "MATRIX_TERMS", 100 if matrix else 10 ** 6)
    monkeypatch.setattr(loader, "_CACHE", {})
    monkeypatch.setattr(plan_mod, "_PLANS", {})
    alg = ALGEBRAS[name]
    n = alg.dim
    P = quadratic_problem(alg, seed=5)
    z0 = start(n, 5)
    # with an output grid the dense output's evaluator projects its points too (matrix form: values by the
    # sparse polynomials on the columns)
    for method, te in (("rk853_projected", None), ("rkmk853", None), ("rk853_projected", np.linspace(0.0, 3.0, 31))):
        ref = integrate(P, z0, (0.0, 3.0), method=method, rtol=1e-10, atol=1e-12, fast=False, t_eval=te)
        got = integrate(P, z0, (0.0, 3.0), method=method, rtol=1e-10, atol=1e-12, backend="numpy", t_eval=te)
        assert got.status == 0 and got.backend == "numpy", got.message
        assert np.max(np.abs(got.y[-1] - ref.y[-1])) <= 1e-9 * np.max(np.abs(ref.y[-1])), method
        assert te is None or np.max(np.abs(got.y - ref.y)) <= 1e-9 * np.max(np.abs(ref.y))
        if method == "rk853_projected":
            for cas in alg.casimirs():
                vals = np.array([_terms_value(cas.terms, y)[0] for y in got.y])
                size = max(_terms_value(cas.terms, y)[1] for y in got.y)
                assert np.max(np.abs(vals - vals[0])) <= 1e-11 * size
