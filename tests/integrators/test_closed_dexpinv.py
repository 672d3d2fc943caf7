"""dexp^-1 in closed form (integrators.geometry.closed_dexpinv) and the generated code that uses it.

Expected values: H(q) = ((r/2) coth(r/2) - 1)/q (r^2 = q; (t/2) cot(t/2) for q = -t^2) and its
derivative from mpmath (at 50 digits plus the digits the closed form cancels at small t; H' by
mpmath.diff), E = H, alpha = H - q H', beta = H'; dexp^-1 on random se(3) elements from the round-off
series of brackets (integrators.geometry.spaces.dexpinv_series) and from phi_1(A)^-1, phi_1 read off
scipy.linalg.expm of [[A, I], [0, 0]]; the relation A (A^2 - s)^2 = 0 checked on matrices.
"""

import math
import re

import numpy as np
import pytest
import scipy.linalg

from integrators.backends import loader
from integrators.codegen import batchgen
from integrators.codegen import writer as codegen
from integrators.codegen.dexpinv_writer import LANE_BIG
from integrators.geometry import closed_dexpinv as cd
from integrators.geometry import recognition
from integrators.geometry.spaces import DEXPINV_X2MAX, ROUNDOFF_TERMS, adnorm_form, dexpinv_series
from liegroups import named

EPS = 2.0 ** -53


def _structure(g):
    n = g.dim
    return recognition.Structure(g.structure_constants, np.eye(n), np.zeros(n),
                                 closed=recognition.closed_form(g.structure_constants))


def _coefficient_function(S, qmax, names):
    """The generated code of Source._closed_variable and _closed_coefficients as a function of theta
    (scalar mode)."""
    n = S.shape[0]
    src = codegen.Source(_structure(named.se3() if n == 6 else named.so3()))
    x = [f"x{i}" for i in range(n)]
    u, _, form = src._closed_variable(x, S)
    out = [f"c{k}" for k in range(len(names))]
    src._closed_coefficients(u, form, qmax, names, out, "0.0")
    text = f"def f({', '.join(x)}):\n" + "\n".join(src.lines) + f"\n    return ({', '.join(out)},)\n"
    env = loader._env("scalar")
    exec(text, env)
    return env["f"]


def _reference(q):
    """(E, alpha, beta) at q from mpmath's coth / cot, with the precision raised where they cancel."""
    mpmath = pytest.importorskip("mpmath")
    extra = max(0, int(math.ceil(-4.0 * math.log10(abs(q))))) if q else 0
    with mpmath.workdps(50 + extra):
        def H(x):
            if x < 0:
                u = mpmath.sqrt(-x) / 2
                return (u * mpmath.cot(u) - 1) / x
            u = mpmath.sqrt(x) / 2
            return (u * mpmath.coth(u) - 1) / x

        qm = mpmath.mpf(q)
        h, dh = H(qm), mpmath.diff(H, qm)
        return {"E": float(h), "alpha": float(h - qm * dh), "beta": float(dh)}


#: (S, sign of q, the bound on |q|, coefficients): so(3) (q = -|theta|^2 <= 0), an indefinite form (sl(2):
#: q of both signs), a positive one (Bianchi V: q = x_3^2), se(3) (s = -|omega|^2) and an indefinite pair form;
#: each with the full bound (x^2 <= DEXPINV_X2MAX) and those of the shorter polynomials (x^2 <= TIERS_X2)
BOUNDS = [cd.DEXPINV_X2MAX] + list(cd.TIERS_X2)
CASES = [(S, signs, bound(x2), names) for S, signs, bound, names in
         [(-np.eye(3), (-1,), cd.cubic_bound, ("E",)),
          (np.diag([1.0, -1.0, 0.0]), (-1, 1), cd.cubic_bound, ("E",)),
          (np.diag([0.0, 0.0, 1.0]), (1,), cd.cubic_bound, ("E",)),
          (np.diag([-1.0, -1.0, -1.0, 0.0, 0.0, 0.0]), (-1,), cd.pair_bound, ("alpha", "beta")),
          (np.diag([1.0, -1.0, 0.0, 0.0, 0.0, 0.0]), (-1, 1), cd.pair_bound, ("alpha", "beta"))]
         for x2 in BOUNDS]
IDS = [f"{a}-{b:.3g}" for a in ("so3", "indefinite", "positive", "se3", "pair-indefinite") for b in BOUNDS]


@pytest.mark.parametrize("S,signs,qmax,names", CASES, ids=IDS)
def test_generated_coefficients_against_mpmath(S, signs, qmax, names):
    # relative error of the generated polynomials over t in [1e-8, the bound], q = -+t^2: a few ulp
    f = _coefficient_function(S, qmax, names)
    n = S.shape[0]
    worst = 0.0
    for sign in signs:
        axis = int(np.flatnonzero(np.diag(S) == sign)[0])
        for t in np.concatenate([np.geomspace(1e-8, math.sqrt(qmax), 25), [math.sqrt(qmax)]]):
            theta = np.zeros(n)
            theta[axis] = t
            q = float(theta @ S @ theta)
            ref = _reference(q)
            got = f(*map(float, theta))
            for name, value in zip(names, got):
                worst = max(worst, abs(value - ref[name]) / abs(ref[name]))
    assert worst <= 2.5 * EPS, worst / EPS


def test_the_intervals_cover_every_admissible_theta():
    # Schur: |q| <= ||ad||_F^2 / 2 on A^3 = q A, |s| <= ||ad||_F^2 / 4 on the pair shape; at x^2 = DEXPINV_X2MAX
    # (||ad||_F^2 = (2 pi)^2 x^2) every element must lie in the coefficient's interval
    rng = np.random.default_rng(7)
    B = np.eye(6) + 0.3 * rng.standard_normal((6, 6))
    for g, kind in ((named.so3(), "E"), (named.sl2(), "E"), (named.so21(), "E"), (named.all_named()["bianchi_V"], "E"),
                    (named.se3(), "pair"), (named.se3().change_basis(B), "pair")):
        C = g.structure_constants
        G = adnorm_form(C)
        S = cd.pair_form(C) if kind == "pair" else recognition.killing_half(C)
        lo, hi = cd.quadratic_interval(S, cd.PAIR_SMAX if kind == "pair" else cd.CUBIC_QMAX)
        for x in rng.standard_normal((200, g.dim)):
            x *= math.sqrt(DEXPINV_X2MAX * (2 * math.pi) ** 2 / (x @ G @ x))
            assert lo <= x @ S @ x <= hi, (g.name, x @ S @ x, lo, hi)


def _A(g, x):
    return -np.stack([g.bracket(x, e) for e in np.eye(g.dim)], axis=1)


def test_pair_form_is_the_relation_of_se3():
    rng = np.random.default_rng(3)
    S = cd.pair_form(named.se3().structure_constants)
    np.testing.assert_array_equal(S, np.diag([-1.0, -1.0, -1.0, 0.0, 0.0, 0.0]))  # s = -|omega|^2
    B = np.eye(6) + 0.3 * rng.standard_normal((6, 6))
    g = named.se3().change_basis(B)
    S = cd.pair_form(g.structure_constants)
    assert S is not None
    for x in rng.standard_normal((5, 6)):
        A, s = _A(g, x), x @ S @ x
        M = A @ A - s * np.eye(6)
        size = np.linalg.norm(A) ** 5
        assert np.linalg.norm(A @ M @ M) <= 1e-12 * size
        assert abs(np.trace(A @ A) - 4 * s) <= 1e-12 * np.linalg.norm(A) ** 2
        assert np.linalg.norm(A @ M) > 1e-3 * np.linalg.norm(A) ** 3     # the square is needed
    # not this shape: ad^3 = q ad (so(3), sl(2)), two different pairs (so(4)), no relation of degree 5
    for h in (named.so3(), named.sl2(), named.so4(), named.so(5), named.all_named()["bianchi_IV"], named.heisenberg()):
        assert cd.pair_form(h.structure_constants) is None, h.name


def _generated(g, mode="scalar", cls=codegen.Source, lanes=False, floats=False):
    n = g.dim
    src = cls(_structure(g))
    src.lanes = lanes
    src.floats = floats
    if lanes:
        src.emit("_big = 0.0")
    x, v = [f"x{i}" for i in range(n)], [f"v{i}" for i in range(n)]
    out = src.dexpinv(x, v, ROUNDOFF_TERMS)
    ret = out + (["_big"] if lanes else [])   # the lanes also return what they recorded in _big
    text = f"def f({', '.join(x + v)}):\n" + "\n".join(src.lines) + f"\n    return ({', '.join(ret)},)\n"
    assert "for _" not in text and "while" not in text and "co2(" not in text and "cq2(" not in text
    env = loader._env(mode)
    exec(text, env)
    return env["f"]


def _exact(g, x, v):
    n = g.dim
    M = np.zeros((2 * n, 2 * n))
    M[:n, :n] = _A(g, x)
    M[:n, n:] = np.eye(n)
    return np.linalg.solve(scipy.linalg.expm(M)[:n, n:], v)


def _se3_elements(rng, g):
    """Random elements at sizes x^2 from 1e-16 to the bound, with rotation and translation parts of
    very different sizes too."""
    G = adnorm_form(g.structure_constants)
    out = []
    for x2 in (1e-16, 1e-8, 1e-4, 0.01, 0.1, 0.3, (1 - 1e-9) * DEXPINV_X2MAX) + tuple(
            t * f for t in cd.TIERS_X2 for f in (1 - 1e-9, 1 + 1e-9)):
        for w, t in ((1.0, 1.0), (1.0, 1e-6), (1e-6, 1.0)):
            x = rng.standard_normal(6) * np.array([w] * 3 + [t] * 3)
            out.append(x * math.sqrt(x2 * (2 * math.pi) ** 2 / (x @ G @ x)))
    return np.array(out)


@pytest.mark.parametrize("basis", ["named", "random"])
def test_se3_closed_dexpinv_is_the_series_to_round_off(basis):
    rng = np.random.default_rng(11)
    g = named.se3()
    if basis == "random":
        g = g.change_basis(np.eye(6) + 0.3 * rng.standard_normal((6, 6)))
    f, fa = _generated(g), _generated(g, mode="array")
    X = _se3_elements(rng, g)
    V = rng.standard_normal(X.shape)
    worst = 0.0
    for x, v in zip(X, V):
        got = np.array(f(*map(float, x), *map(float, v)))
        ref = dexpinv_series(lambda a, b: -g.bracket(a, b), x, v, ROUNDOFF_TERMS)
        # the round-off of a sum of terms B_k/k! A^k v, |A^k v| <= ||A||^k |v|
        scale = np.linalg.norm(v) * (1.0 + np.linalg.norm(_A(g, x), 2)) ** 4
        worst = max(worst, np.max(np.abs(got - ref)) / scale)
        assert np.max(np.abs(got - _exact(g, x, v))) <= 1e-14 * np.max(np.abs(ref))
    assert worst <= 4 * EPS, worst / EPS
    # an ensemble (numpy columns) gives the same numbers as one trajectory
    got = np.array(fa(*X.T, *V.T)).T
    one = np.array([f(*map(float, x), *map(float, v)) for x, v in zip(X, V)])
    np.testing.assert_allclose(got, one, rtol=0, atol=4 * EPS * np.max(np.abs(one)))


def test_se3_closed_dexpinv_is_nan_beyond_the_bound():
    # the pair shape's rule reads |s| / pi^2 = |w|^2 / pi^2 (named se(3): s = -|w|^2), not x^2: NaN (the
    # lanes: _big past LANE_BIG) just past DEXPINV_X2MAX, a value just below it; and a small rotation with
    # a large translation part (x^2 far past the bound, which the series cannot sum) is exact
    rng = np.random.default_rng(5)
    g = named.se3()
    G = adnorm_form(g.structure_constants)
    f, fl = _generated(g), _generated(g, cls=batchgen.EnsembleSource, lanes=True)
    for w, t in ((1.0, 1.0), (1e-3, 1.0), (1.0, 0.0), (1.0, 30.0)):
        x = rng.standard_normal(6) * np.array([w] * 3 + [t] * 3)
        v = rng.standard_normal(6)
        for size, bad in (((1 - 1e-9) * DEXPINV_X2MAX, False), (1.001 * DEXPINV_X2MAX, True)):
            y = x * math.sqrt(size * math.pi ** 2 / (x[:3] @ x[:3]))
            assert abs(cd.pair_size(-(y[:3] @ y[:3])) / size - 1.0) < 1e-12
            out = np.array(f(*map(float, y), *map(float, v)))
            assert np.all(np.isnan(out)) if bad else np.all(np.isfinite(out))
            # the lanes (no branch, no NaN): _big past LANE_BIG, which makes the caller refuse the attempt
            *lo, big = fl(*map(float, y), *map(float, v))
            assert np.all(np.isfinite(lo)) and (big > LANE_BIG) == bad
            if not bad:
                ex = _exact(g, y, v)
                assert np.max(np.abs(out - ex)) <= 1e-13 * np.max(np.abs(ex))
                if t >= 1.0:
                    assert (y @ G @ y) / (2 * math.pi) ** 2 > DEXPINV_X2MAX   # refused by the x^2 rule
        # the reference (integrators.geometry.closed_dexpinv.space_dexpinv) follows the same rule
        space = _space(g)
        y = x * math.sqrt(0.5 * DEXPINV_X2MAX * math.pi ** 2 / (x[:3] @ x[:3]))
        np.testing.assert_allclose(cd.space_dexpinv(space, y, v, ROUNDOFF_TERMS), f(*map(float, y), *map(float, v)),
                                   rtol=0, atol=1e-13 * np.max(np.abs(v)) * (1 + np.max(np.abs(y)) ** 4))


def test_numpy_coefficients_and_their_range():
    mpmath = pytest.importorskip("mpmath")  # noqa: F841 - the reference needs it
    q = np.array([-cd.CUBIC_QMAX, -1.0, -1e-9, 0.0, 2.0, cd.CUBIC_QMAX])
    E = cd.cubic_coefficient(q)
    for qi, e in zip(q, E):
        ref = 1.0 / 12.0 if qi == 0 else _reference(float(qi))["E"]
        assert abs(e - ref) <= 2.5 * EPS * abs(ref)
    s = np.array([-cd.PAIR_SMAX, -0.5, 0.0, 1e-7, cd.PAIR_SMAX])
    a, b = cd.pair_coefficients(s)
    for si, ai, bi in zip(s, a, b):
        ref = {"alpha": 1 / 12, "beta": -1 / 720} if si == 0 else _reference(float(si))
        assert abs(ai - ref["alpha"]) <= 2.5 * EPS * abs(ref["alpha"])
        assert abs(bi - ref["beta"]) <= 2.5 * EPS * abs(ref["beta"])
    assert np.isnan(cd.cubic_coefficient(1.001 * cd.CUBIC_QMAX))
    assert all(np.isnan(c) for c in cd.pair_coefficients(-1.001 * cd.PAIR_SMAX))


def test_bad_requests_are_named():
    with pytest.raises(ValueError, match="gamma"):
        cd.economized("gamma", -1.0, 0.0)
    with pytest.raises(ValueError, match="empty interval"):
        cd.economized("E", 1.0, 1.0)
    with pytest.raises(ValueError, match="pole"):
        cd.economized("E", -30.0, 0.0)


def _space(g):
    from integrators import CoadjointProblem
    from integrators.geometry.spaces import CoadjointSpace
    return CoadjointSpace(CoadjointProblem(g, lambda z: z, record_casimirs=False))


@pytest.mark.parametrize("name", ["so3", "sl2", "se3", "se3-random"])
def test_reference_space_dexpinv_is_the_series_to_round_off(name):
    # the numpy reference's closed forms (one trajectory and a batch) against its own round-off series
    rng = np.random.default_rng(13)
    g = named.se3().change_basis(np.eye(6) + 0.3 * rng.standard_normal((6, 6))) if name == "se3-random" \
        else named.all_named()[name]
    space = _space(g)
    G = adnorm_form(g.structure_constants)
    X = rng.standard_normal((12, g.dim))
    X2 = np.geomspace(1e-16, (1 - 1e-9) * DEXPINV_X2MAX, 12)
    X *= np.sqrt(X2 * (2 * math.pi) ** 2 / np.einsum("bi,ij,bj->b", X, G, X))[:, None]
    V = rng.standard_normal(X.shape)
    for x, v in zip(X, V):
        got = cd.space_dexpinv(space, x, v, ROUNDOFF_TERMS)
        ref = dexpinv_series(space.bracket, x, v, ROUNDOFF_TERMS)
        scale = np.linalg.norm(v) * (1.0 + np.linalg.norm(_A(g, x), 2)) ** 4
        assert np.max(np.abs(got - ref)) <= 4 * EPS * scale
    got = cd.space_dexpinv(space, X, V, ROUNDOFF_TERMS)
    one = np.array([cd.space_dexpinv(space, x, v, ROUNDOFF_TERMS) for x, v in zip(X, V)])
    np.testing.assert_allclose(got, one, rtol=0, atol=4 * EPS * np.max(np.abs(one)))
    # beyond the bound (anywhere in the batch) and truncated: the series itself (the pair shape's bound
    # is on |s| / pi^2, closed_dexpinv.pair_size)
    S = cd.pair_form(g.structure_constants)
    size = X2[3] if S is None else float(cd.pair_size(X[3] @ S @ X[3]))
    X[3] *= 1.01 * math.sqrt(DEXPINV_X2MAX / size)
    np.testing.assert_array_equal(cd.space_dexpinv(space, X, V, ROUNDOFF_TERMS),
                                  dexpinv_series(space.bracket, X, V, ROUNDOFF_TERMS))
    np.testing.assert_array_equal(cd.space_dexpinv(space, X, V, 9), dexpinv_series(space.bracket, X, V, 9))


def test_reference_space_dexpinv_elsewhere_is_the_series():
    # so(4) (two ideals: no reference closed form) and the affine space of a forced problem
    from integrators import CoadjointProblem
    from integrators.geometry.spaces import AffineCoadjointSpace
    rng = np.random.default_rng(2)
    space = _space(named.so4())
    x, v = 0.3 * rng.standard_normal(6), rng.standard_normal(6)
    np.testing.assert_array_equal(cd.space_dexpinv(space, x, v, ROUNDOFF_TERMS),
                                  dexpinv_series(space.bracket, x, v, ROUNDOFF_TERMS))
    P = CoadjointProblem(named.so3(), lambda z: z, forcing=lambda z: 0.0 * z, record_casimirs=False)
    aff = AffineCoadjointSpace(P)
    x, v = 0.3 * rng.standard_normal(6), rng.standard_normal(6)
    np.testing.assert_array_equal(cd.space_dexpinv(aff, x, v, ROUNDOFF_TERMS),
                                  dexpinv_series(aff.bracket, x, v, ROUNDOFF_TERMS))


def test_bernoulli_ratios_from_tangent_numbers():
    # the integer tangent-number route against liegroups' recurrence sum_k C(j+1, k) B_k = 0, and B_2 .. B_8
    from fractions import Fraction

    from liegroups.closed_forms import _bernoulli_numbers
    B = _bernoulli_numbers(80)
    b = cd._bernoulli_ratios(41)
    assert all(b[k] == B[2 * k] / math.factorial(2 * k) for k in range(41))
    assert [b[k] * math.factorial(2 * k) for k in range(1, 5)] == [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42),
                                                                   Fraction(-1, 30)]


@pytest.mark.parametrize("name", ["so3", "se3"])
def test_float_only_text_keeps_the_nan_rule(name):
    # the adaptive loops on floats write x^2 without the ensemble's largest (bmax): a NaN or overflowed theta,
    # or one beyond the bound, still gives NaN in every component, and the values are those of the shared text
    g = named.all_named()[name]
    f, shared = _generated(g, floats=True), _generated(g)
    from integrators.codegen.programs import adaptive_source
    from integrators.tableaux import DP5
    text = adaptive_source(_structure(g), DP5, True, ROUNDOFF_TERMS)
    columns = adaptive_source(_structure(g), DP5, True, ROUNDOFF_TERMS, columns=True)
    x2_lines = [re.findall(r"^ *(?:x2|sz)\d+_ = .*$", t, re.M) for t in (text, columns)]   # sz: the pair's size
    assert x2_lines[0] and not any("bmax(" in ln for ln in x2_lines[0])
    assert x2_lines[1] and all("bmax(" in ln for ln in x2_lines[1])
    rng = np.random.default_rng(8)
    G = adnorm_form(g.structure_constants)
    v = rng.standard_normal(g.dim)
    for x2 in (1e-6, 0.01, 0.2):
        x = rng.standard_normal(g.dim)
        x *= math.sqrt(x2 * (2 * math.pi) ** 2 / (x @ G @ x))
        assert f(*map(float, x), *map(float, v)) == shared(*map(float, x), *map(float, v))
    for bad in (math.nan, math.inf, 1e200, 1.01 * math.sqrt(DEXPINV_X2MAX * (2 * math.pi) ** 2 / G[0, 0])):
        x = np.zeros(g.dim)
        x[0] = bad
        assert np.all(np.isnan(f(*map(float, x), *map(float, v))))
