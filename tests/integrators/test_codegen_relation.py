"""The relation A^d = sum_j c_j(x) A^j of A = -ad_x (integrators.geometry.relations.ad_relation) and the folded
dexp^-1 series and exponential written from it.

Expected values: the invariance identities written out with the algebra's own bracket; matrix
powers of ad_x built column by column from algebra.bracket; the cross-product identity
a x (a x (a x v)) = -|a|^2 a x v on so(3); scipy.linalg.expm of the matrix of ad(x)^T built from
algebra.coad; the plain Bernoulli series of integrators.geometry.spaces.dexpinv_series with the bracket
-[x, y]; the degrees d from the eigenvalues of ad_x (so(4) = so(3) + so(3): 0, +-i|a|, +-i|b|,
minimal polynomial l (l^2 + |a|^2)(l^2 + |b|^2); se(3): l (l^2 + |w|^2)^2; a 3-dimensional simple
algebra: l (l^2 + k); Heisenberg: ad_x^2 = 0; abelian: ad_x = 0).
"""

import numpy as np
import pytest
import scipy.linalg

from integrators import integrate

from integrators.codegen import writer as codegen

from integrators.backends import loader

from integrators.geometry import recognition

from integrators.geometry import relations
from integrators.geometry.spaces import dexpinv_series
from liegroups import named

from ._problems import quadratic_problem

NAMED = named.all_named()
DEGREE = {"so3": 3, "su2": 3, "sl2": 3, "so21": 3, "se2": 3, "se3": 5, "so4": 5, "heisenberg": 2, "bianchi_I": 1}


def _algebras():
    out = []
    for name in sorted(NAMED):
        g = NAMED[name]
        P = np.eye(g.dim) + 0.3 * np.random.default_rng(5).standard_normal((g.dim, g.dim))
        out += [(name, "named", g), (name, "random", g.change_basis(P))]
    return out


ALL = _algebras()


def _ad(g, x):
    """Matrix of ad_x: column j is [x, e_j] (algebra.bracket)."""
    return np.stack([g.bracket(x, e) for e in np.eye(g.dim)], axis=1)


@pytest.mark.parametrize("name,basis,g", ALL, ids=[f"{a}-{b}" for a, b, _ in ALL])
def test_invariant_forms_are_invariant(name, basis, g):
    L, Qs = relations.invariant_forms(g.structure_constants)
    rng = np.random.default_rng(1)
    x, y, z = rng.standard_normal((3, g.dim))
    for f in L:  # f([x, y]) = 0
        assert abs(f @ g.bracket(x, y)) <= 1e-10 * np.max(np.abs(f))
    for Q in Qs:  # Q([z, x], y) + Q(x, [z, y]) = 0
        assert abs(g.bracket(z, x) @ Q @ y + x @ Q @ g.bracket(z, y)) <= 1e-9 * np.max(np.abs(Q))
    if name == "so4":  # two simple ideals: two invariant forms (Killing forms of the two so(3))
        assert (len(L), len(Qs)) == (0, 2)
    if name in ("so3", "sl2"):
        assert (len(L), len(Qs)) == (0, 1)
    if name == "bianchi_I":  # abelian: every linear form vanishes on [g, g] = 0
        assert len(L) == 3


@pytest.mark.parametrize("name,basis,g", ALL, ids=[f"{a}-{b}" for a, b, _ in ALL])
def test_relation_holds_for_the_powers_of_ad(name, basis, g):
    rel = relations.ad_relation(g.structure_constants, g.dim)
    if name in DEGREE:
        assert rel is not None and rel[0] == DEGREE[name], (name, basis, rel and rel[0])
    if rel is None:
        return
    d, gens, poly = rel
    rng = np.random.default_rng(99)
    for scale in (0.1, 1.0, 3.0):
        x = scale * rng.standard_normal(g.dim)
        A = -_ad(g, x)
        gv = [x @ F if k == 1 else x @ F @ x for k, F in gens]
        rhs = np.zeros_like(A)
        for j, terms in poly.items():
            cj = sum(a * np.prod([gv[i] for i in mono]) for mono, a in terms)
            rhs = rhs + cj * np.linalg.matrix_power(A, j)
        lhs = np.linalg.matrix_power(A, d)
        assert np.max(np.abs(lhs - rhs)) <= 1e-11 * max(1.0, np.max(np.abs(lhs))), (name, basis, scale)


def test_so3_relation_is_the_cross_product_identity():
    # a x (a x (a x v)) = -|a|^2 a x v: A^3 = -|x|^2 A with the Euclidean form
    d, gens, poly = relations.ad_relation(named.so3().structure_constants, 3)
    assert d == 3 and list(poly) == [1]
    (kind, Q), = gens
    assert kind == 2 and np.array_equal(Q, np.eye(3))
    assert poly[1] == [((0,), -1.0)]


def _compile(st, body, args, result):
    src = codegen.Source(st)
    out = body(src)
    text = f"def f({', '.join(args)}):\n" + "\n".join(src.lines) + f"\n    return ({', '.join(out)},)\n"
    env = loader._env("scalar")
    exec(text, env)
    return env["f"], text


FOLDED = [(a, b, g) for a, b, g in ALL if a in ("sl2", "se2", "so4", "heisenberg", "bianchi_IV", "so3")]


@pytest.mark.parametrize("name,basis,g", FOLDED, ids=[f"{a}-{b}" for a, b, _ in FOLDED])
def test_folded_exponential_is_the_coadjoint_action(name, basis, g):
    n = g.dim
    st = recognition.Structure(g.structure_constants, np.eye(n), np.zeros(n))
    st.closed = None  # the folded series also where a closed form exists (so(3))
    src = codegen.Source(st)
    assert src.foldable()
    x = [f"x{i}" for i in range(n)]
    z = [f"z{i}" for i in range(n)]
    stage, _ = _compile(st, lambda s: s.stage_act(x, z), x + z, None)
    delta, _ = _compile(st, lambda s: s.fold_act(x, z, delta=True), x + z, None)
    rng = np.random.default_rng(7)
    E = np.eye(n)
    for scale in (1e-3, 0.3, 2.5, 7.0):  # 2.5, 7: several substeps
        xv = scale * rng.standard_normal(n)
        zv = rng.standard_normal(n)
        Bt = np.stack([g.coad(xv, e) for e in E], axis=1)  # ad(x)^T
        exact = scipy.linalg.expm(Bt) @ zv
        a = np.array(stage(*xv, *zv))
        b = np.array(delta(*xv, *zv))
        # round-off of a sum of terms as large as ||e^B||: the error is bounded normwise (the
        # Taylor action of Source._act_taylor measured 2e-14 of ||e^B|| |z| on sl(2) at scale 7)
        tol = 1e-13 * np.linalg.norm(scipy.linalg.expm(Bt), 1) * np.max(np.abs(zv))
        assert np.max(np.abs(a - exact)) <= tol, (name, basis, scale)
        assert np.max(np.abs(b - (exact - zv))) <= tol, (name, basis, scale)
    # the increment of a tiny x is computed without cancellation: relative accuracy, not |z| eps
    xv = 1e-9 * rng.standard_normal(n)
    Bt = np.stack([g.coad(xv, e) for e in E], axis=1)
    inc = (Bt + Bt @ Bt / 2.0) @ zv
    b = np.array(delta(*xv, *zv))
    assert np.max(np.abs(b - inc)) <= 1e-13 * np.max(np.abs(inc)) + 1e-30
    # a bound beyond 1e5 (overflow) gives NaN, not a huge finite state
    assert np.all(np.isnan(stage(*(1e6 * np.ones(n)), *zv))) or name in ("bianchi_I",)


@pytest.mark.parametrize("name,basis,g", ALL[::3], ids=[f"{a}-{b}" for a, b, _ in ALL[::3]])
@pytest.mark.parametrize("terms", [5, 9])
def test_folded_dexpinv_is_the_bernoulli_series(name, basis, g, terms):
    n = g.dim
    st = recognition.Structure(g.structure_constants, np.eye(n), np.zeros(n))
    x = [f"x{i}" for i in range(n)]
    v = [f"v{i}" for i in range(n)]
    fn, _ = _compile(st, lambda s: s.dexpinv(x, v, terms), x + v, None)
    rng = np.random.default_rng(3)
    for scale in (0.05, 0.5, 1.5):
        xv, vv = scale * rng.standard_normal(n), rng.standard_normal(n)
        ref = dexpinv_series(lambda a, b: -g.bracket(a, b), xv, vv, terms)
        assert np.max(np.abs(np.array(fn(*xv, *vv)) - ref)) <= 1e-14 * max(1.0, np.max(np.abs(ref))) * (1 + scale) ** terms


def test_folded_dexpinv_uses_fewer_brackets():
    # so(4), 9 terms: ad^1..ad^4 (d = 5) instead of ad^1..ad^8
    g = named.so4()
    st = recognition.Structure(g.structure_constants, np.eye(6), np.zeros(6))
    src = codegen.Source(st)
    src.dexpinv([f"x{i}" for i in range(6)], [f"v{i}" for i in range(6)], 9)
    assert sum(1 for line in src.lines if line.strip().startswith("q")) == 4 * 6


@pytest.mark.parametrize("batch", [(), (2,)])
def test_overflow_on_a_folded_algebra_ends_with_status_minus_one(batch):
    # sl(2) has no closed form: the stages and the update run the folded exponential; with |z| = 1e3
    # and h = 2.5 the exponent's bound exceeds 1e5, the plan answers NaN and the run stops at once
    P = quadratic_problem(named.sl2(), seed=1)
    with np.errstate(all="ignore"):
        r = integrate(P, 1e3 * np.ones(batch + (3,)), (0.0, 50.0), method="rkmk4", steps=20, backend="numpy")
    assert r.status == -1 and "overflow" in r.message
    assert np.all(np.isfinite(r.y)) and np.all(r.y[-1] == 1e3)
