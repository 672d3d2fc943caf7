"""The closed-form exponential of the generated code on 3-dimensional algebras with ad_x^3 = q ad_x
(integrators.codegen.writer "ad3": exp(ad x) = 1 + s1(q) ad x + s2(q) ad_x^2, genhelpers cq2) and on
6-dimensional direct sums of two such ideals ("ad3x2": so(4) = so(3) + so(3), so(2,2), so(3) + sl(2)).

Expected values come from elsewhere:
* s1 = sinh(r)/r, s2 = (cosh r - 1)/r^2 (r^2 = q, both signs) from mpmath at 40 digits;
* the action exp(ad x)^T z from mpmath's matrix exponential of ad(x) at 40 digits (independent of
  the Cayley-Hamilton identity), on sl(2), so(2,1), su(2), se(2) and random changes of basis, with
  elliptic (q < 0), hyperbolic (q > 0), parabolic (q = 0) and nearly parabolic x;
* the ideals of so(4): the eigenspaces of the Hodge star on bivectors (self-dual L12 + L34,
  L13 - L24, L14 + L23 and anti-self-dual), written down by hand;
* the integrations against the generic numpy steppers (fast=False: scipy's expm of ad);
* the Casimir of a long sl(2) run against a round-off bound derived in the test from the sizes of
  the step's increments (not from a printed result), with the Casimir m^T K^-1 m written from the
  Killing form K (an invariant of every semisimple algebra).
"""

import math

import mpmath
import numpy as np
import pytest

from integrators import CoadjointProblem, integrate

from integrators.backends import numba_kernels
from integrators.codegen import writer as codegen
from integrators.reference import genhelpers
from integrators.backends import loader
from integrators.geometry import recognition
from liegroups import LieAlgebra, named

from ._problems import quadratic_problem, start

EPS = np.finfo(float).eps
NUMBA = numba_kernels.available()


def _random_basis(algebra, seed):
    rng = np.random.default_rng(seed)
    return algebra.change_basis(np.eye(3) + 0.4 * rng.standard_normal((3, 3)))


ALGEBRAS = {"sl2": named.sl2(), "so21": named.so21(), "su2": named.su2(), "se2": named.se2(),
            "heisenberg": named.heisenberg(), "sl2 random basis": _random_basis(named.sl2(), 1),
            "so3 random basis": _random_basis(named.so3(), 2)}


def _exact_coefficients(q):
    with mpmath.workdps(40):
        q = mpmath.mpf(q)
        if q == 0:
            return 1.0, 0.5
        r = mpmath.sqrt(q) if q > 0 else mpmath.sqrt(-q) * 1j
        return float(mpmath.re(mpmath.sinh(r) / r)), float(mpmath.re((mpmath.cosh(r) - 1) / q))


QS = sorted({s * 10.0 ** k * f for s in (-1.0, 1.0) for k in range(-12, 6) for f in (1.0, 3.7)}
            | {0.0, 9.999e-3, 1.0001e-2, -9.999e-3, -1.0001e-2, 4.0 * math.pi ** 2, -4.0 * math.pi ** 2})


def test_cq2_coefficients_are_sinh_and_cosh_to_a_few_ulp():
    qs = [q for q in QS if q <= genhelpers.CQ2_MAX]
    exact = np.array([_exact_coefficients(q) for q in qs])
    scalar = np.array([genhelpers.SCALAR["cq2"](q) for q in qs])
    array = np.stack(genhelpers.ARRAY["cq2"](np.array(qs)), axis=-1)
    t = np.sqrt(np.abs(qs))
    # sizes: s1 ~ 1/t and s2 ~ 1/t^2 where sin t / t and (1 - cos t)/t^2 oscillate through 0
    scale = np.maximum(np.abs(exact), np.stack([1.0 / np.maximum(1.0, t), 1.0 / np.maximum(1.0, t * t)], -1))
    # the rounding of t = sqrt|q| alone moves sinh t, sin t by eps t relative (condition number ~t)
    tol = 4 * EPS * (1.0 + t)[:, None]
    for got in (scalar, array):
        assert np.all(np.abs(got - exact) / scale <= tol)


def test_cq2_overflow_and_nan_give_nan():
    for q in (2e5, math.inf, -math.inf, math.nan):
        assert all(math.isnan(v) for v in genhelpers.SCALAR["cq2"](q))
        assert np.all(np.isnan(genhelpers.ARRAY["cq2"](np.array([q, 0.5]))[0][:1]))


def test_recognised_from_the_structure_not_the_name():
    for name, alg in ALGEBRAS.items():
        kind = recognition.closed_form(alg.structure_constants)
        assert kind == ("so3" if name == "su2" else "ad3"), name
    # ad_x^3 != q ad_x: Bianchi III ([e1, e3] = e1 only), IV
    # (III is almost abelian: its own closed form, tests/integrators/test_almost_abelian.py)
    assert not recognition.cubic_ad(named.bianchi("III").structure_constants)
    assert recognition.closed_form(named.bianchi("III").structure_constants) == "almost_abelian"
    assert not recognition.cubic_ad(named.bianchi("IV").structure_constants)
    assert not recognition.cubic_ad(named.so4().structure_constants)


def _so_pq(signs, name):
    """so(p, q) from the matrices X with X^T eta + eta X = 0, eta = diag(signs): so(3,1) = sl(2, C)
    is simple over R (no ideals), so(2,2) = sl(2) + sl(2)."""
    eta = np.diag(np.asarray(signs, dtype=float))
    mats = []
    for i in range(4):
        for j in range(i + 1, 4):
            E = np.zeros((4, 4))
            E[i, j] = 1.0
            mats.append(E - eta @ E.T @ eta)
    return LieAlgebra.from_matrices(mats, name=name)


def _so31():
    return _so_pq([1, 1, 1, -1], "so(3,1)")


def _so22():
    return _so_pq([1, 1, -1, -1], "so(2,2)")


def _direct_sum(a, b):
    C = np.zeros((6, 6, 6))
    C[:3, :3, :3] = a.structure_constants
    C[3:, 3:, 3:] = b.structure_constants
    return LieAlgebra(C, name=f"{a.name} + {b.name}")


SPLIT = {"so4": named.so4(), "so4 random basis": named.so4().change_basis(
    np.eye(6) + 0.3 * np.random.default_rng(3).standard_normal((6, 6))),
    "so22": _so22(), "so3 + sl2": _direct_sum(named.so3(), _random_basis(named.sl2(), 4))}


def test_so4_splits_into_the_self_dual_and_anti_self_dual_ideals():
    P1 = recognition.ideal_split(named.so4().structure_constants)
    # basis (L12, L13, L14, L23, L24, L34); Hodge star: L12 <-> L34, L13 <-> -L24, L14 <-> L23
    H = _hodge()
    assert min(np.max(np.abs(P1 - 0.5 * (np.eye(6) + s * H))) for s in (1.0, -1.0)) == 0.0
    for name, alg in SPLIT.items():
        assert recognition.closed_form(alg.structure_constants) == "ad3x2", name
    # simple over R (sl(2, C)), or not semisimple: no split
    assert recognition.ideal_split(_so31().structure_constants) is None
    assert recognition.closed_form(_so31().structure_constants) is None
    assert recognition.ideal_split(named.se3().structure_constants) is None
    assert recognition.ideal_split(named.sl2().structure_constants) is None  # not 6-dimensional


def _act_function(C, mode, kind="ad3"):
    """act(x..., z...) -> exp(ad x)^T z, written by codegen.Source with the closed form ``kind``."""
    n = C.shape[0]
    st = recognition.Structure(C, np.eye(n), np.zeros(n), closed=kind)
    src = codegen.Source(st)
    xs, zs = [f"x{i}" for i in range(n)], [f"z{i}" for i in range(n)]
    y = src.act(xs, zs, delta=False)
    text = (f"def act({', '.join(xs + zs)}):\n" + "\n".join(src.lines)
            + f"\n    return ({', '.join(y)},)\n")
    if mode == "numba":
        return numba_kernels.compile_cached(text, "act")
    env = loader._env(mode)
    exec(compile(text, "<test act>", "exec"), env)
    return env["act"]


def _directions(alg):
    """x of every kind: q < 0, q > 0, q = 0 (a nilpotent x, when there is one) and q near 0."""
    rng = np.random.default_rng(5)
    Q = 0.5 * alg.killing_form()
    xs = list(rng.standard_normal((6, alg.dim)))
    w, V = np.linalg.eigh(Q)
    if w[0] < 0 < w[-1]:  # a null direction of the indefinite q: a nilpotent element
        null = V[:, 0] * math.sqrt(-1.0 / w[0]) + V[:, -1] * math.sqrt(1.0 / w[-1])
        xs += [null, null + 1e-7 * V[:, 0], null + 1e-7 * V[:, -1], null + 3e-4 * V[:, -1]]
    return [x / np.linalg.norm(x) for x in xs]


def _exact_action(alg, x, z):
    A = mpmath.matrix(alg.ad(x).T.tolist())
    with mpmath.workdps(40):
        E = mpmath.expm(A)
        y = E * mpmath.matrix(z.tolist())
    return np.array([float(v) for v in y])


MODES = ["scalar", "array"] + (["numba"] if NUMBA else [])


def _check_against_expm(alg, kind):
    fns = {m: _act_function(alg.structure_constants, m, kind) for m in MODES}
    z = np.array([0.7, -0.4, 1.1, 0.3, -0.9, 0.5][:alg.dim])
    for u in _directions(alg):
        for size in (1e-9, 1e-4, 0.05, 0.7, 3.0, 9.0):
            x = size * u
            ref = _exact_action(alg, x, z)
            A = np.linalg.norm(alg.ad(x), 2)
            # rounding of A z, A^2 z and the sum: a few eps of |z| + s1 |A z| + s2 |A^2 z| <= |z| e^|A|
            tol = 30 * EPS * np.linalg.norm(z) * math.exp(A)
            for mode, fn in fns.items():
                if mode == "array":
                    got = np.array([v[0] for v in fn(*(np.full(2, c) for c in np.concatenate([x, z])))])
                else:
                    got = np.array(fn(*x, *z))
                assert np.max(np.abs(got - ref)) <= tol, (alg.name, mode, size, np.max(np.abs(got - ref)) / tol)


@pytest.mark.parametrize("name", sorted(ALGEBRAS))
def test_closed_form_agrees_with_the_matrix_exponential(name):
    _check_against_expm(ALGEBRAS[name], "ad3")


@pytest.mark.parametrize("name", sorted(SPLIT))
def test_split_closed_form_agrees_with_the_matrix_exponential(name):
    _check_against_expm(SPLIT[name], "ad3x2")


@pytest.mark.parametrize("name", ["sl2", "sl2 random basis", "so21", "so4", "so4 random basis"])
def test_generated_path_agrees_with_the_generic_reference(name):
    alg = {**ALGEBRAS, **SPLIT}[name]
    n = alg.dim
    P = quadratic_problem(alg, seed=8)
    z0 = start(n, 8)
    # numba compiles each new structure for a minute in a generic basis: only sl(2) (the numba
    # scalar code is the numpy scalar code jitted; test_closed_form_* run the numba act alone)
    backends = ["numpy"] + (["numba"] if NUMBA and name == "sl2" else [])
    ref = integrate(P, z0, (0.0, 3.0), method="rkmk4", steps=150, fast=False)
    refa = integrate(P, z0, (0.0, 3.0), method="rkmk45", rtol=1e-9, atol=1e-12, fast=False)
    for be in backends:
        fast = integrate(P, z0, (0.0, 3.0), method="rkmk4", steps=150, backend=be)
        assert fast.backend == be and np.max(np.abs(fast.y - ref.y)) <= 1e-13
        fa = integrate(P, z0, (0.0, 3.0), method="rkmk45", rtol=1e-9, atol=1e-12, backend=be)
        assert fa.nsteps == refa.nsteps and np.max(np.abs(fa.y[-1] - refa.y[-1])) <= 1e-12
    ens = start(n, 9, batch=(4,))  # an ensemble (numpy columns: both signs of q in one array)
    fast = integrate(P, ens, (0.0, 3.0), method="rkmk4", steps=150, backend="numpy")
    ref = integrate(P, ens, (0.0, 3.0), method="rkmk4", steps=150, fast=False)
    assert np.max(np.abs(fast.y - ref.y)) <= 1e-13


def _hodge():
    """Hodge star on so(4) in the basis (L12, L13, L14, L23, L24, L34): L12 <-> L34, L13 <-> -L24,
    L14 <-> L23; m^T H m = 2 (m12 m34 - m13 m24 + m14 m23) is the Pfaffian Casimir of so(4)*."""
    H = np.zeros((6, 6))
    for a, b, sgn in ((0, 5, 1.0), (1, 4, -1.0), (2, 3, 1.0)):
        H[a, b] = H[b, a] = sgn
    return H


LONG = {  # algebra, backend, steps, roundings per component of the increment (see the test)
    "sl2": (named.sl2, "numba", 10 ** 5, 12),
    "so4": (named.so4, "numpy", 2 * 10 ** 4, 24),
}


@pytest.mark.parametrize("name", sorted(LONG))
def test_long_run_keeps_the_casimirs_to_round_off(name):
    """N RKMK4 steps: the exponential is exact on the orbit, so a Casimir moves only by the rounding
    of each increment d = s1 A z + s2 A^2 z (sl(2): k = 12 roundings per component; so(4): two such
    sums plus the projection, k = 24), each <= eps/2 of |d| <= |A| |z| (1 + |A|), A = ad(theta)^T,
    |A| <= sqrt(n) max_i |ad e_i| |theta|, |theta| <= 1.1 h |M| max|z|, and of the compensated sum
    (O(eps^2)); for C(m) = m^T G m that is |dC| <= 2 |G| |z| (k eps/2) |A| (1 + |A|) |z| per step.
    Rounding to nearest has no bias, so after N steps the sum is a random walk: 6 standard deviations
    give 6 sqrt(N) times the per-step bound, plus 2 eps |G| |z|^2 for rounding z + e to the saved
    state. (A systematic error of relative size e per step would instead give N e.) Casimirs: the
    dual Killing form m^T K^-1 m (every semisimple algebra) and, on so(4), the Pfaffian m^T H m."""
    make, backend, N, k = LONG[name]
    if backend == "numba" and not NUMBA:
        pytest.skip("numba not installed")
    alg = make()
    n = alg.dim
    rng = np.random.default_rng(21)
    B = rng.standard_normal((n, n))
    M = B @ B.T / n + np.eye(n)
    P = CoadjointProblem(alg, lambda z: z @ M, velocity_matrix=M)
    z0 = 0.4 * rng.standard_normal(n)
    h = 0.01
    r = integrate(P, z0, (0.0, N * h), method="rkmk4", steps=N, save_every=N // 100, backend=backend)
    assert r.status == 0 and r.backend == backend
    zmax = float(np.max(np.linalg.norm(r.y, axis=1)))
    ad_norm = max(np.linalg.norm(alg.ad(e), 2) for e in np.eye(n))
    A = 1.1 * h * np.linalg.norm(M, 2) * zmax * ad_norm * math.sqrt(n)
    Gs = [np.linalg.inv(alg.killing_form())] + ([_hodge()] if name == "so4" else [])
    for G in Gs:
        Cas = np.einsum("ti,ij,tj->t", r.y, G, r.y)
        Gn = np.linalg.norm(G, 2)
        per_step = 2 * Gn * zmax * (k * EPS / 2) * A * (1 + A) * zmax
        bound = 6 * math.sqrt(N) * per_step + 2 * EPS * Gn * zmax ** 2
        drift = float(np.max(np.abs(Cas - Cas[0])))
        assert drift <= bound, (drift, bound)
