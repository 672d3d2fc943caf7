"""dexp^-1 of the RKMK methods: the numpy reference (integrators.geometry.spaces.dexpinv_series) and every
generated form of it (codegen.writer.Source.dexpinv: closed forms, the folded loop, the bracket loop;
batchgen's lanes) against independent values.

Expected values: dexp_theta = phi_1(A) = (e^A - 1)/A, A = -ad_theta (the bracket -[x, y] of the
coadjoint space), read off scipy.linalg.expm of the block matrix [[A, I], [0, 0]] (its upper right
block is phi_1(A)), and dexp^-1 = its inverse (np.linalg.solve); the derivative of the coadjoint
action d/de exp(ad(theta + e u))^T z = ad*_{dexp_theta u} exp(ad theta)^T z from
scipy.linalg.expm_frechet; E(q) = ((r/2) coth(r/2) - 1)/q from mpmath at 30 digits; the remainder
bound from the Bernoulli numbers themselves (fractions, exact).
"""

import math
import re

import numpy as np
import pytest
import scipy.linalg
from scipy.integrate import solve_ivp

from integrators import CoadjointProblem, METHODS, integrate
from integrators.backends import loader
from integrators.codegen import batchgen
from integrators.codegen import writer as codegen
from integrators.codegen.dexpinv_writer import LANE_BIG
from integrators.geometry import recognition
from integrators.geometry import closed_dexpinv as cd
from integrators.geometry import spaces
from integrators.geometry.spaces import DEXPINV_X2MAX, ROUNDOFF_TERMS, adnorm_form, dexpinv_series
from integrators.methods import registry
from liegroups import named
from liegroups.closed_forms import _bernoulli_numbers




def _algebras():
    base = dict(named.all_named())
    base["so5"] = named.so(5)
    out = []
    for name in sorted(base):
        g = base[name]
        P = np.eye(g.dim) + 0.3 * np.random.default_rng(5).standard_normal((g.dim, g.dim))
        out += [(name, "named", g), (name, "random", g.change_basis(P))]
    return out


ALL = _algebras()
IDS = [f"{a}-{b}" for a, b, _ in ALL]


def _A(g, x):
    """Matrix of A = -ad_x (column j: -[x, e_j])."""
    return -np.stack([g.bracket(x, e) for e in np.eye(g.dim)], axis=1)


def _exact(g, x, v):
    """dexp^-1_x v = phi_1(A)^-1 v, phi_1 from expm([[A, I], [0, 0]])."""
    n = g.dim
    M = np.zeros((2 * n, 2 * n))
    M[:n, :n] = _A(g, x)
    M[:n, n:] = np.eye(n)
    return np.linalg.solve(scipy.linalg.expm(M)[:n, n:], v)


def _scaled(g, rng, x2):
    """A random x with ||ad_x||_F^2 / (2 pi)^2 = x2."""
    G = adnorm_form(g.structure_constants)
    x = rng.standard_normal(g.dim)
    f2 = x @ G @ x
    return x if f2 == 0.0 else x * math.sqrt(x2 * (2 * math.pi) ** 2 / f2)


X2S = (1e-8, 1e-3, 0.05, 0.2, 0.4)  # K = 4 .. 82


@pytest.mark.parametrize("name,basis,g", ALL, ids=IDS)
def test_reference_inverts_dexp(name, basis, g):
    rng = np.random.default_rng(3)
    for x2 in X2S:
        x, v = _scaled(g, rng, x2), rng.standard_normal(g.dim)
        got = dexpinv_series(lambda a, b: -g.bracket(a, b), x, v, ROUNDOFF_TERMS)
        ex = _exact(g, x, v)
        assert np.max(np.abs(got - ex)) <= 1e-14 * np.max(np.abs(ex)), (name, basis, x2)
    # a batch: one K for all (the largest x^2), each row its own dexp^-1
    X = np.stack([_scaled(g, rng, x2) for x2 in X2S])
    V = rng.standard_normal(X.shape)
    got = dexpinv_series(lambda a, b: -g.bracket(a, b), X, V, ROUNDOFF_TERMS)
    for x, v, r in zip(X, V, got):
        assert np.max(np.abs(r - _exact(g, x, v))) <= 1e-14 * np.max(np.abs(v)) * 10


@pytest.mark.parametrize("name", ["so4", "se3", "so5", "sl2"])
def test_reference_is_the_derivative_of_the_coadjoint_action(name):
    # d/de exp(ad(theta + e u))^T z = ad*_{dexp_theta u} (exp(ad theta)^T z): with u = dexp^-1_theta(v)
    # the derivative is ad*_v of the moved point (the equation RKMK integrates)
    g = dict((a, h) for a, b, h in ALL if b == "random")[name]
    n = g.dim
    adT = lambda x: np.stack([g.coad(x, e) for e in np.eye(n)], axis=1)  # noqa: E731
    rng = np.random.default_rng(8)
    theta, v, z = _scaled(g, rng, 0.1), rng.standard_normal(n), rng.standard_normal(n)
    u = dexpinv_series(lambda a, b: -g.bracket(a, b), theta, v, ROUNDOFF_TERMS)
    E, dE = scipy.linalg.expm_frechet(adT(theta), adT(u))
    assert np.max(np.abs(dE @ z - adT(v) @ (E @ z))) <= 1e-13 * np.max(np.abs(E)) * np.max(np.abs(z)) * (1 + np.max(np.abs(v)))


def test_reference_beyond_the_bound_solves_with_dexp():
    # no K <= KMAX: the reference solves phi_1(A) u = v (the generated code answers NaN: rejected step)
    g = named.so4()
    rng = np.random.default_rng(1)
    for x2 in (1.01 * DEXPINV_X2MAX, 0.8):
        x, v = _scaled(g, rng, x2), rng.standard_normal(6)
        got = dexpinv_series(lambda a, b: -g.bracket(a, b), x, v, ROUNDOFF_TERMS)
        assert np.max(np.abs(got - _exact(g, x, v))) <= 1e-13 * np.max(np.abs(got))


def test_order_bounds_the_remainder():
    # the rest of sum_k B_k/k! x^k (2 pi)^k after K (exact Bernoulli numbers) is below 2^-53 and K is
    # the smallest even such K for which the bound holds; beyond DEXPINV_X2MAX no K <= KMAX
    B = _bernoulli_numbers(400)
    coef = [abs(float(B[k] / math.factorial(k))) if B[k] else 0.0 for k in range(401)]
    for x2 in (1e-6, 1e-3, 0.02, 0.1, 0.3, 0.45):
        K = spaces.dexpinv_order(x2)
        y = 2 * math.pi * math.sqrt(x2)
        rest = sum(c * y ** k for k, c in enumerate(coef) if k > K)
        assert rest <= 2.0 ** -53, (x2, K, rest)
        assert K == 2 or sum(c * y ** k for k, c in enumerate(coef) if k > K - 2) > 0.0
    assert spaces.dexpinv_order(DEXPINV_X2MAX * 1.001) is None
    assert spaces.dexpinv_order(DEXPINV_X2MAX) == spaces.DEXPINV_KMAX


def _structure(g):
    n = g.dim
    st = recognition.Structure(g.structure_constants, np.eye(n), np.zeros(n))
    st.closed = recognition.closed_form(g.structure_constants)
    return st


def _compiled(g, terms, mode="scalar", cls=codegen.Source, lanes=False):
    n = g.dim
    src = cls(_structure(g))
    src.lanes = lanes
    if lanes:
        src.emit("_big = 0.0")
    x, v = [f"x{i}" for i in range(n)], [f"v{i}" for i in range(n)]
    out = src.dexpinv(x, v, terms)
    text = f"def f({', '.join(x + v)}):\n" + "\n".join(src.lines) + f"\n    return ({', '.join(out)},)\n"
    if lanes:   # the lanes record the size in _big (the caller refuses past LANE_BIG) instead of a NaN
        text += f"def big({', '.join(x + v)}):\n" + "\n".join(src.lines) + "\n    return _big\n"
    env = loader._env(mode)
    exec(text, env)
    if lanes:
        env["f"].big = env["big"]
    return env["f"], src


#: one algebra of every generated form: closed so(3), "ad3" (sl(2), Bianchi V), "ad3x2" (so(4) in any
#: basis), the folded loop (se(3) random, Bianchi IV, se(3) named), the bracket loop (so(5), bianchi_VI? no
#: relation needed: so(5) has none)
KINDS = [(a, b, g) for a, b, g in ALL if (a, b) in {("so3", "named"), ("sl2", "random"), ("bianchi_V", "named"),
                                                    ("so4", "named"), ("so4", "random"), ("se3", "named"),
                                                    ("se3", "random"), ("bianchi_IV", "random"), ("so5", "named"),
                                                    ("so5", "random")}]


@pytest.mark.parametrize("name,basis,g", KINDS, ids=[f"{a}-{b}" for a, b, _ in KINDS])
def test_generated_dexpinv_is_the_reference(name, basis, g):
    n = g.dim
    f, _ = _compiled(g, ROUNDOFF_TERMS)
    fa, _ = _compiled(g, ROUNDOFF_TERMS, mode="array")
    rng = np.random.default_rng(4)
    X = np.stack([_scaled(g, rng, x2) for x2 in X2S])
    V = rng.standard_normal(X.shape)
    for x, v in zip(X, V):
        ex = _exact(g, x, v)
        got = np.array(f(*map(float, x), *map(float, v)))
        assert np.max(np.abs(got - ex)) <= 1e-14 * np.max(np.abs(ex)), (name, basis)
    got = np.array(fa(*X.T, *V.T)).T  # an ensemble: one K for all
    assert np.max(np.abs(got - dexpinv_series(lambda a, b: -g.bracket(a, b), X, V, ROUNDOFF_TERMS))) <= 1e-14 * np.max(np.abs(V)) * 10
    big = _scaled(g, rng, 1.01 * DEXPINV_X2MAX)
    S = cd.pair_form(g.structure_constants)
    if S is not None:   # the pair shape's bound is on its size |s| / pi^2 (closed_dexpinv.pair_size)
        big *= 1.01 * math.sqrt(DEXPINV_X2MAX / float(cd.pair_size(big @ S @ big)))
    assert np.all(np.isnan(f(*map(float, big), *map(float, V[0]))))


def test_generated_forms_are_the_intended_ones():
    # the closed forms (so(4): two ideals; se(3) in both bases: the pair form) take no loop and no call,
    # 3 and 4 brackets; the folded loop runs on a relation of another shape, the bracket loop without one
    se3r = dict(((a, b), h) for a, b, h in ALL)[("se3", "random")]
    for g, brackets in ((named.so4(), 3), (named.se3(), 4), (se3r, 4)):
        _, src = _compiled(g, ROUNDOFF_TERMS)
        text = "\n".join(src.lines)
        assert "for _" not in text and "while" not in text and "cq2(" not in text and "co2(" not in text
        assert len(set(re.findall(r"^ *(q\d+)_\d+ =", text, re.M))) == brackets
    _, src = _compiled(dict(((a, b), h) for a, b, h in ALL)[("bianchi_IV", "random")], ROUNDOFF_TERMS)
    assert "for _k in range(3, " in "\n".join(src.lines)
    _, src = _compiled(named.so(5), ROUNDOFF_TERMS)
    assert "for _m in range(" in "\n".join(src.lines)


def test_lanes_so3_dexpinv_is_the_closed_form():
    # batchgen's lanes (no call, no branch) give the same as the one-trajectory closed form
    g = named.so3()
    f, _ = _compiled(g, ROUNDOFF_TERMS)
    fl, src = _compiled(g, ROUNDOFF_TERMS, cls=batchgen.EnsembleSource, lanes=True)
    assert not any(" if " in ln or "co2(" in ln or "bmax(" in ln for ln in src.lines)
    rng = np.random.default_rng(2)
    for x2 in X2S + (1.01 * DEXPINV_X2MAX,):
        x, v = _scaled(g, rng, x2), rng.standard_normal(3)
        a, b = np.array(f(*map(float, x), *map(float, v))), np.array(fl(*map(float, x), *map(float, v)))
        big = fl.big(*map(float, x), *map(float, v))
        if x2 > DEXPINV_X2MAX:   # NaN on the one-trajectory path; the lanes refuse it through _big
            assert np.all(np.isnan(a)) and big > LANE_BIG
        else:
            assert np.max(np.abs(a - b)) <= 4e-16 * np.max(np.abs(v)) * (1 + 10 * x2) and big <= LANE_BIG


@pytest.mark.parametrize("mode", ["lanes", "scalar", "array"])
def test_so3_dexpinv_from_the_stage_exponential(mode):
    # in an RKMK stage exp(theta) is written first; dexp^-1 of the same theta then takes E from its
    # trigonometric values: the lanes' half-angle s = sin(t/2)/(t/2), c = cos(t/2), E = (s - c)/(s t^2)
    # (dexpinv_writer._dexpinv_so3_lanes), the other paths' Rodrigues a, b, E = (2b - a)/(2b t^2)
    # (dexpinv_writer._dexpinv_so3_trig): the same as the closed form's polynomial to a few ulps of |v| at every
    # size, theta = 0 included, and refused past DEXPINV_X2MAX as there
    g = named.so3()
    f, _ = _compiled(g, ROUNDOFF_TERMS)
    lanes = mode == "lanes"
    src = (batchgen.EnsembleSource if lanes else codegen.Source)(_structure(g))
    src.lanes = lanes
    src.floats = mode == "scalar"
    src.emit("_big = 0.0")
    x, v = ["x0", "x1", "x2"], ["v0", "v1", "v2"]
    src.so3_ab(x)
    out = src.dexpinv(x, v, ROUNDOFF_TERMS)
    text = "\n".join(src.lines)
    assert "E" in text and repr(cd.TIERS_X2[0]) not in text and "pw" not in text and text.count("x0*x0") == 1
    env = loader._env("array" if mode == "array" else "scalar")
    exec("def fl(x0, x1, x2, v0, v1, v2):\n" + text + f"\n    return ({', '.join(out)},), _big\n", env)
    rng = np.random.default_rng(7)
    sizes = (0.0, 1e-300, 1e-40) + X2S + (1.01 * DEXPINV_X2MAX,)
    ths, vs = [], []
    for x2 in sizes:
        th = _scaled(g, rng, x2) if x2 > 0.0 else np.zeros(3)
        if 0.0 < x2 < 1e-30:
            th = th / np.linalg.norm(th) * np.sqrt(x2)
        ths.append(th)
        vs.append(rng.standard_normal(3))
    for x2, th, vv in zip(sizes, ths, vs):
        a = np.array(f(*map(float, th), *map(float, vv)))
        b, big = env["fl"](*map(float, th), *map(float, vv))
        b = np.array(b, dtype=float).ravel()
        if x2 > DEXPINV_X2MAX:
            assert np.all(np.isnan(a))
            assert big > LANE_BIG if lanes else np.all(np.isnan(b))
        else:
            assert np.all(np.isfinite(b)) and (not lanes or big <= LANE_BIG)
            assert np.max(np.abs(a - b)) <= 4e-16 * np.max(np.abs(vv)) * (1 + 10 * x2), x2
    if mode == "array":   # an ensemble: every row at once, each as its own run (none past the bound)
        T, V = np.array(ths[:-1]), np.array(vs[:-1])
        got = np.array(env["fl"](*T.T, *V.T)[0]).T
        one = np.array([f(*map(float, t), *map(float, w)) for t, w in zip(T, V)])
        assert np.max(np.abs(got - one)) <= 4e-16 * np.max(np.abs(V)) * 11


def test_closed_coefficient_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    for q in (-30.0, -9.0, -4.0, -3.999, -1.0, -0.3, -1e-6, 0.0, 1e-6, 0.4, 1.0, 3.999, 4.0, 9.0, 40.0):
        if q == 0.0:
            ref = mpmath.mpf(1) / 12
        else:
            r = mpmath.sqrt(mpmath.mpf(q))  # complex for q < 0: (r/2) coth(r/2) real
            ref = mpmath.re((r / 2 * mpmath.coth(r / 2) - 1) / q)
        assert abs(float(spaces.dexpinv_closed_coefficient(q)) - float(ref)) <= 1e-15 * abs(float(ref)), q
    # the generated code's polynomial for E: tests/integrators/test_closed_dexpinv.py


@pytest.mark.parametrize("terms", [2, 3, 5, 7, 9, ROUNDOFF_TERMS])
@pytest.mark.parametrize("cls", [codegen.Source, batchgen.EnsembleSource], ids=["Source", "EnsembleSource"])
def test_so3_dexpinv_follows_terms(terms, cls):
    # the one dexp^-1 writer on so(3) (the fixed-step steps of every so(3) run and the ensembles' stages):
    # the truncated series has exactly ``terms`` terms (the old so(3) generator wrote at most the ad^2 term
    # whatever terms said), against the numpy series with the cross product written here
    f, _ = _compiled(named.so3(), terms, cls=cls)
    rng = np.random.default_rng(terms)
    for x2 in (1e-4, 0.05, 0.3):
        th = _scaled(named.so3(), rng, x2)
        v = rng.standard_normal(3)
        ref = dexpinv_series(lambda a, b: -np.cross(a, b), th, v, terms)
        assert np.max(np.abs(np.array(f(*map(float, th), *map(float, v))) - ref)) <= 1e-15 * np.max(np.abs(ref)) * 4


def test_registry_terms():
    assert registry.ROUNDOFF_TERMS == ROUNDOFF_TERMS
    for name in ("rkmk45", "rkmk853", "rkmk_tsit5"):
        assert METHODS[name].terms == ROUNDOFF_TERMS
    # the fixed-step methods keep the truncation their order needs (ad^(q-2))
    assert (METHODS["rkmk4"].terms, METHODS["lie_euler"].terms) == (3, 1)


def test_rkmk853_on_so5_follows_rtol():
    # |z| = 3, random SPD inertia: with dexp^-1 truncated after 9 terms the final error was 7.8x rtol at
    # rtol 1e-6 (the truncation is shared by both solutions of the pair); summed to round-off 1.6x
    g = named.so(5)
    rng = np.random.default_rng(1)
    B = rng.standard_normal((10, 10))
    W = np.linalg.inv(B @ B.T / 10 + np.eye(10))
    z0 = rng.standard_normal(10)
    z0 *= 3.0 / np.linalg.norm(z0)
    P = CoadjointProblem(g, lambda z: z @ W.T, velocity_matrix=W, record_casimirs=False)
    ref = solve_ivp(lambda t, z: P.rhs(t, z), (0.0, 10.0), z0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
    for fast in (True, False):
        r = integrate(P, z0, (0.0, 10.0), method="rkmk853", rtol=1e-6, atol=1e-8, backend="numpy", fast=fast)
        assert np.linalg.norm(r.y[-1] - ref) / 3.0 <= 3e-6, fast
