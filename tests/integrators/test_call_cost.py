"""The fixed cost of one ``integrate`` call: the recognised structure kept on the problem, the scalar
starting step, the one-pass end-of-run check.

Expected values: a fresh recognition (the cache deleted) and a freshly built problem, bit for bit;
the structure a problem was built from (W, the multiplier projector a c^T / (c, a) of Suslov's
problem); scipy's own ``select_initial_step`` (an independent implementation of Hairer's starting
step) and the same algorithm evaluated in 60-digit mpmath arithmetic where floats overflow; the
scaling z_lam(t) = lam z(lam t) of a homogeneous quadratic field; the per-quantity formulas of the
guard's docstring, written out here one quantity at a time.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy.integrate._ivp.common import select_initial_step

from integrators import CoadjointProblem, integrate, tableaux

from integrators.backends import fastpath

from integrators.engine import guard

from integrators.geometry import recognition
from integrators.engine.starting_step import initial_step
from integrators.methods import CASIMIRS, LINEAR, QUADRATIC
from integrators.core.result import finish
from liegroups import named
from servo.lie import Nonholonomic

from ._problems import quadratic_problem

INERTIA = np.array([2.0, 1.0, 2.0 / 3.0])
A = np.array([1.0, 0.5, -0.2])


def _suslov():
    s = Nonholonomic(named.so3(), np.diag(INERTIA), a=A)
    return s, s.problem(), s.state_from(w=[0.6, 0.4, 0.0], project=True)


def _run(P, z0, method="rk853", **kw):
    return integrate(P, z0, (0.0, 5.0), method=method, rtol=1e-8, atol=1e-10, backend="numpy", **kw)


def test_second_call_does_no_probing_and_is_bit_identical(monkeypatch):
    s, P, m0 = _suslov()
    derived = []
    real = recognition._derive
    monkeypatch.setattr(recognition, "_derive", lambda p: derived.append(p) or real(p))
    first = _run(P, m0)
    second = _run(P, m0)
    other = _run(P, 0.5 * m0)                  # another initial state of the same problem: no probing either
    assert len(derived) == 1 and first.backend == "numpy"
    assert np.array_equal(first.t, second.t) and np.array_equal(first.y, second.y)
    st = recognition.recognise(P, m0)
    c = A / INERTIA                            # the constraint covector I^-1 a; forcing along a
    assert np.allclose(st.P, np.outer(A, c) / (c @ A), atol=1e-12)
    # a plan cached at another y0 is the plan a fresh recognition at m0 finds: bit-identical runs
    fresh = _run(s.problem(), m0)
    assert np.array_equal(fresh.t, first.t) and np.array_equal(fresh.y, first.y) and other.status == 0
    Q = s.problem()
    _run(Q, -2.0 * m0)
    assert np.array_equal(_run(Q, m0).y, fresh.y)


def test_changed_problem_gets_a_new_plan():
    W1, W2 = np.diag([1.0, 2.0, 3.0]), np.diag([1.0, 0.5, 3.0])
    P = CoadjointProblem(named.so3(), lambda z: z @ W1.T)
    z0 = np.array([0.3, 0.5, 0.7])
    one = integrate(P, z0, (0.0, 5.0), method="rkmk853", rtol=1e-8, atol=1e-10, backend="numpy")
    P.velocity = lambda z: z @ W2.T            # a new velocity object: the fingerprint changes
    two = integrate(P, z0, (0.0, 5.0), method="rkmk853", rtol=1e-8, atol=1e-10, backend="numpy")
    ref = integrate(CoadjointProblem(named.so3(), lambda z: z @ W2.T), z0, (0.0, 5.0), method="rkmk853",
                    rtol=1e-8, atol=1e-10, backend="numpy")
    assert np.array_equal(two.y, ref.y) and np.max(np.abs(two.y[-1] - one.y[-1])) > 1e-2
    assert np.array_equal(recognition.recognise(P, z0).W, W2)
    # a velocity that changes in place (a closure over a mutable matrix) is caught at a new y0
    M = W1.copy()
    R = CoadjointProblem(named.so3(), lambda z: z @ M.T)
    integrate(R, z0, (0.0, 5.0), method="rkmk853", rtol=1e-8, atol=1e-10, backend="numpy")
    M[1, 1] = 0.5
    moved = integrate(R, 2.0 * z0, (0.0, 5.0), method="rkmk853", rtol=1e-8, atol=1e-10, backend="numpy")
    ref2 = integrate(CoadjointProblem(named.so3(), lambda z: z @ W2.T), 2.0 * z0, (0.0, 5.0),
                     method="rkmk853", rtol=1e-8, atol=1e-10, backend="numpy")
    assert np.array_equal(moved.y, ref2.y)
    # a forcing replaced by one that is not a multiplier force: no generated path any more
    s, S, m0 = _suslov()
    assert _run(S, m0).backend == "numpy"
    S.forcing = lambda m: 0.1 * m
    assert recognition.recognise(S, m0) is None
    assert _run(S, m0, check=False).backend.startswith("numpy (generic reference: the generator does not recognise")
    # linear invariants changed in place: the multiplier projector is read off again (and refused)
    _, U, m1 = _suslov()
    assert recognition.recognise(U, m1) is not None
    U.linear_invariants[0] = [0.0, 0.0, 1.0]
    assert recognition.recognise(U, m1) is None


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("order", [4, 7])
def test_initial_step_is_hairers_as_scipy_takes_it(seed, order):
    rng = np.random.default_rng(seed)
    P = quadratic_problem(named.se3() if seed % 2 else named.so3(), seed)
    y0 = rng.standard_normal(P.dim) * 10.0 ** rng.integers(-3, 3)
    atol = 1e-10 if seed < 2 else 10.0 ** rng.uniform(-12, -6, P.dim)
    rtol = 10.0 ** -rng.integers(3, 11)
    rhs = lambda y: P.rhs(0.0, y)  # noqa: E731
    ours = initial_step(rhs, y0, 0.0, 1e3, order, rtol, atol, None)
    theirs = select_initial_step(lambda t, y: rhs(y), 0.0, y0, 1e3, np.inf, rhs(y0), 1.0, order, rtol, atol)
    assert ours == pytest.approx(theirs, rel=1e-13)
    # the ensemble path: one row gives the same step, and max_step caps it
    assert initial_step(rhs, y0[None], 0.0, 1e3, order, rtol, atol, None) == pytest.approx(theirs, rel=1e-13)
    assert initial_step(rhs, y0, 0.0, 1e3, order, rtol, atol, 0.5 * theirs) == 0.5 * theirs


@pytest.mark.parametrize("alg", ["so3", "se2", "se3", "so4"])
def test_structure_field_is_the_rhs(alg):
    # the starting step of a generated run evaluates the recognised structure, not problem.rhs
    rng = np.random.default_rng(3)
    g = getattr(named, alg)()
    s = Nonholonomic(g, np.diag(rng.uniform(0.5, 2.0, g.dim)), a=rng.standard_normal(g.dim))
    for P in (s.problem(), quadratic_problem(g, 1)):
        z = rng.standard_normal(g.dim)
        pl = fastpath.plan(P, tableaux.get("dop853"), False, 1, z)
        assert pl is not None
        assert np.max(np.abs(fastpath.field(pl)(z) - P.rhs(0.0, z))) <= 1e-13 * (1 + np.max(np.abs(P.rhs(0.0, z))))


def _sl2():
    M = np.diag([1.0, 2.0, 3.0])
    return CoadjointProblem(named.sl2(), lambda z: z @ M, velocity_matrix=M), M


def _hairer_mp(P, M, y0, order, rtol, atol):
    """Hairer's starting step in 60-digit arithmetic (no overflow): the reference where floats overflow."""
    mpmath.mp.dps = 60
    C = P.algebra.structure_constants
    n = P.dim

    def f(z):
        w = [sum(mpmath.mpf(M[j, i]) * z[j] for j in range(n)) for i in range(n)]   # w = z @ M
        return [sum(w[i] * mpmath.mpf(C[i, j, k]) * z[k] for i in range(n) for k in range(n)) for j in range(n)]

    def rms(v):
        return mpmath.sqrt(sum(x * x for x in v) / n)

    y = [mpmath.mpf(v) for v in y0]
    sc = [atol + abs(v) * rtol for v in y]
    f0 = f(y)
    d0, d1 = rms([a / s for a, s in zip(y, sc)]), rms([a / s for a, s in zip(f0, sc)])
    h0 = mpmath.mpf("1e-6") if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    f1 = f([a + h0 * b for a, b in zip(y, f0)])
    d2 = rms([(b - a) / s for a, b, s in zip(f0, f1, sc)]) / h0
    h1 = max(mpmath.mpf("1e-6"), h0 * 1e-3) if d1 <= 1e-15 and d2 <= 1e-15 else (0.01 / max(d1, d2)) ** (
        mpmath.mpf(1) / (order + 1))
    return float(min(100 * h0, h1, 1))


def test_initial_step_at_zero_and_at_1e150():
    P, M = _sl2()
    rhs = lambda y: P.rhs(0.0, y)  # noqa: E731
    # y0 = 0: d0 = d1 = d2 = 0, so h0 = 1e-6 and h1 = max(1e-6, 1e-9): the step is 1e-6
    assert initial_step(rhs, np.zeros(3), 0.0, 1.0, 4, 1e-9, 1e-12, None) == 1e-6
    r = integrate(P, np.zeros(3), (0.0, 1.0), method="rk45")
    assert r.status == 0 and np.all(r.y == 0.0)
    # y0 = 1e150: |f| ~ 1e300 and d2 ~ 1e309 overflow a float; a previous version divided by h0 = 0
    big = np.full(3, 1e150)
    with np.errstate(all="raise"):
        for order in (4, 7):
            h = initial_step(rhs, big, 0.0, 1.0, order, 1e-9, 1e-12, None)
            assert h == pytest.approx(_hairer_mp(P, M, big, order, 1e-9, 1e-12), rel=1e-12)
    # the run itself: w = M z is homogeneous, so z_lam(t) = lam z(lam t); with atol scaled by lam too
    # the controller sees the same relative errors
    lam, z1, T = 1e150, np.array([1.0, 0.3, -0.2]), 2.0
    unit = integrate(P, z1, (0.0, T), method="rk45", rtol=1e-9, atol=1e-12)
    huge = integrate(P, lam * z1, (0.0, T / lam), method="rk45", rtol=1e-9, atol=1e-12 * lam)
    assert unit.status == 0 and huge.status == 0
    assert np.max(np.abs(huge.y[-1] / lam - unit.y[-1])) <= 1e-7 * np.max(np.abs(unit.y[-1]))


def _figures_one_by_one(problem, res, tol):
    """The guard's figures (module docstring of integrators.engine.guard), one quantity at a time: returns
    {key: figure} and the (k, name) of the first quantity beyond its tolerance."""
    raw = res.y
    own = problem.tolerances
    size = np.max(np.abs(raw).reshape(len(raw), -1), axis=1)
    kbig = int(np.argmax(np.where(np.isfinite(size), size, -1.0)))
    out, first = {}, None
    for kind, table in (("invariant", res.invariants), ("constraint", res.constraints)):
        for name, vals in table.items():
            q = getattr(problem, kind + "s")[name]
            S = []
            for k in (0, kbig):
                r = np.max(np.abs(raw[k]), axis=-1)
                S.append(sum(np.abs(q(r[..., None] * e)) for e in np.eye(raw.shape[-1])))
            kept = kind == "constraint" or (name.startswith("casimir:") and CASIMIRS in res.preserves) or (
                name.startswith("linear:") and (LINEAR in res.preserves or QUADRATIC in res.preserves))
            if kind == "invariant":
                rt = own.get(name, tol["kept_invariant"] if kept else tol["invariant"])
                base = np.maximum(np.abs(vals[0]), S[0])
                fig = np.abs(vals - vals[0]) / np.maximum(np.maximum(base, S[1]) if kept else base, 1e-300)
            else:
                rt = own.get(name, tol["constraint"])
                sz = np.max(np.abs(raw), axis=-1)
                fig = np.abs(vals) / np.maximum(np.maximum(np.maximum(S[0], S[1]), sz), 1e-300)
            per_k = fig.reshape(len(fig), -1).max(axis=1)
            out[f"{kind}:{name}"] = float(per_k.max())
            bad = np.flatnonzero(~(per_k <= rt))
            if bad.size and (first is None or bad[0] < first[0]):
                first = (int(bad[0]), name)
    return out, first


@pytest.mark.parametrize("small", [0, 10 ** 6])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_one_pass_check_gives_the_figures_of_each_quantity(batch, small, monkeypatch):
    # small = 0: every run through the numpy arrays; 10^6: one trajectory through the Python floats
    monkeypatch.setattr(guard, "SMALL_RUN", small)
    rng = np.random.default_rng(5)
    P = quadratic_problem(named.se3(), 2, constraints={"z0": lambda z: z[..., 0] - 0.1})
    z0 = 0.5 * rng.standard_normal(batch + (6,))
    strict = {"kept_invariant": 1e-6, "invariant": 1e-7, "constraint": 5.0}
    for kw, tol, nan_from in ((dict(method="rkmk4", steps=40), guard.TOLERANCES, None),          # passes
                              (dict(method="rk4", steps=15), strict, None),       # energy / Casimirs drift
                              (dict(method="rkmk4", steps=40), dict(guard.TOLERANCES, constraint=1e-3), None),
                              (dict(method="rkmk4", steps=12), guard.TOLERANCES, 7)):   # NaN from the 7th state
        res = integrate(P, z0, (0.0, 4.0), check=False, **kw)
        if nan_from is not None:
            res.y[nan_from:] = np.nan
            finish(P, res)
        want, first = _figures_one_by_one(P, res, tol)
        guard.check_quantities(P, res, tol)
        got = {k: v for k, v in res.checks.items() if not k.endswith(":tolerance")}
        assert got.keys() == want.keys()
        for k in want:
            assert got[k] == pytest.approx(want[k] if want[k] == want[k] else math.inf, rel=1e-12, abs=1e-300), k
        if first is None:
            assert res.status == 0
        else:
            k, name = first
            assert res.status == -1 and repr(name) in res.message and len(res.t) == max(k, 1)
            figure = res.checks[f"{'constraint' if name == 'z0' else 'invariant'}:{name}"]
            assert math.isfinite(figure) or nan_from is not None
        if nan_from is not None:                 # NaN counts as beyond every tolerance: all are inf
            assert all(v == math.inf for v in got.values())


def _generated_start(P, y0, tab, lie, terms, rtol, atol, mode, t1=1e3, max_step=math.inf):
    """The starting step the generated loop takes when called with h = 0 and a budget of 0 steps: it
    returns (status -2, t0, h) before its first step."""
    pl = fastpath.plan(P, tableaux.get(tab), lie, terms, y0)
    ts, ys = np.empty(4), np.empty((4, P.dim))
    with np.errstate(all="ignore"):
        out = pl.function("adaptive", mode)(0.0, t1, 0.0, rtol, atol, max_step, 1, 0, 0, ts, ys,
                                            *y0.tolist(), *[0.0] * P.dim)
    assert out[0] == -2 and out[1] == 0.0
    return out[2]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tab, order, lie, terms", [("dp5", 4, False, 1), ("dop853", 6, True, 9)])
def test_generated_starting_step_is_hairers(seed, tab, order, lie, terms):
    # the generated loop takes the starting step itself (one compiled call, no Python before it);
    # expected: scipy's select_initial_step on the same field, and in the numba mode the same number; with
    # the order of the pair's error norm in the step rule (DOP853 in RKMK form: 6, integrators.core.controller)
    rng = np.random.default_rng(seed)
    P = quadratic_problem(named.se3() if seed % 2 else named.so3(), seed)
    y0 = rng.standard_normal(P.dim) * 10.0 ** rng.integers(-3, 3)
    rtol, atol = 10.0 ** -rng.integers(3, 11), 10.0 ** -rng.integers(8, 13)
    rhs = lambda y: P.rhs(0.0, y)  # noqa: E731
    theirs = select_initial_step(lambda t, y: rhs(y), 0.0, y0, 1e3, np.inf, rhs(y0), 1.0, order, rtol, atol)
    modes = ("scalar", "numba") if fastpath.numba_kernels.available() else ("scalar",)
    for mode in modes:
        assert _generated_start(P, y0, tab, lie, terms, rtol, atol, mode) == pytest.approx(theirs, rel=1e-13)
    # max_step caps it; backwards in time the same size
    assert _generated_start(P, y0, tab, lie, terms, rtol, atol, "scalar", max_step=0.5 * theirs) == 0.5 * theirs
    # a whole run: the step the loop chose equals a run given that step as first_step, bit for bit
    kw = dict(method="rk45" if tab == "dp5" else "rkmk853", rtol=rtol, atol=atol, backend="numpy")
    a = integrate(P, y0, (0.0, 0.5), **kw)
    b = integrate(P, y0, (0.0, 0.5), first_step=_generated_start(P, y0, tab, lie, terms, rtol, atol, "scalar",
                                                                  t1=0.5), **kw)
    assert a.nfev == b.nfev + 2 and np.array_equal(a.y, b.y) and np.array_equal(a.t, b.t)


def test_generated_starting_step_at_zero_and_at_1e150():
    # the norms of the generated start are scaled by their largest entry: no overflow where |f| ~ 1e300
    # and d2 ~ 1e309 (expected: the 60-digit evaluation); y0 = 0 gives 1e-6 (h0 = 1e-6, h1 = 1e-6)
    P, M = _sl2()
    modes = ("scalar", "numba") if fastpath.numba_kernels.available() else ("scalar",)
    big = np.full(3, 1e150)
    for mode in modes:
        assert _generated_start(P, np.zeros(3), "dp5", False, 1, 1e-9, 1e-12, mode, t1=1.0) == 1e-6
        for tab, order, lie, terms in (("dp5", 4, False, 1), ("dop853", 7, True, 9)):
            h = _generated_start(P, big, tab, lie, terms, 1e-9, 1e-12, mode, t1=1.0)
            assert h == pytest.approx(_hairer_mp(P, M, big, order, 1e-9, 1e-12), rel=1e-12)
    # a field that is not finite at y0: the step is 1e-300 and the run fails with status -1 at once
    with np.errstate(all="ignore"):
        huge = np.full(3, 1e200)
        assert _generated_start(P, huge, "dp5", False, 1, 1e-9, 1e-12, "scalar", t1=1.0) == 1e-300


def test_outputs_are_computed_when_read_and_once_per_callable():
    # expected: the number of calls of a counting output, and its value on the saved raw states
    calls = []

    def energy(z):
        calls.append(len(z))
        return 0.5 * np.sum(z * z / INERTIA, axis=-1)

    s, P, z0 = _suslov()
    Q = CoadjointProblem(P.algebra, P.velocity, forcing=P.forcing, linear_invariants=P.linear_invariants,
                         outputs={"T": energy, "T again": energy})
    r = integrate(Q, z0, (0.0, 5.0), method="rk853", rtol=1e-8, atol=1e-10)
    assert calls == [] and set(r.outputs) == {"T", "T again"}
    want = 0.5 * np.sum(r.y * r.y / INERTIA, axis=-1)
    assert np.array_equal(r.outputs["T"], want) and r["T again"] is r.outputs["T"] and calls == [len(r.t)]
    # a truncated result computes the outputs on the states it keeps; a pickle is a plain dict
    guard.truncate(r, 3)
    assert np.array_equal(r.outputs["T"], want[:3]) and len(calls) == 1
    import pickle
    back = pickle.loads(pickle.dumps(r.outputs))
    assert type(back) is dict and np.array_equal(back["T again"], want[:3])
    r.outputs["user"] = np.ones(3)
    assert list(r.outputs) == ["T", "T again", "user"] and len(r.outputs) == 3
    del r.outputs["T"]
    with pytest.raises(KeyError):
        r.outputs["T"]


def test_a_quantity_read_by_row_of_a_time_grid_is_checked_apart():
    # the check evaluates each quantity once on the saved states and its probe rows stacked; one
    # that reads a grid by row (here it fails with more rows than saved states) is called on the two
    # apart. Expected: the same values and figures as the plain row-wise twin (the same formula).
    a = 1.0 / INERTIA
    grid = np.zeros(11)                                   # 10 steps saved every step: 11 states

    def energy(m):
        return 0.5 * np.sum(m * m * a, axis=-1)

    def by_grid(m):
        # one grid entry per state along the first axis: (17,) + (11,) does not broadcast
        return energy(m) + grid[:len(m)].reshape((-1,) + (1,) * (m.ndim - 2))

    def build(q):
        return CoadjointProblem(named.so3(), lambda m: m * a, velocity_matrix=np.diag(a), invariants={"E": q})

    m0 = np.array([0.3, -0.8, 0.5])
    plain = integrate(build(energy), m0, (0.0, 1.0), method="rkmk4", steps=10)
    grid_run = integrate(build(by_grid), m0, (0.0, 1.0), method="rkmk4", steps=10)
    assert len(plain.t) == 11 and np.array_equal(grid_run.invariants["E"], energy(plain.y))
    assert grid_run.checks["invariant:E"] == plain.checks["invariant:E"] > 0.0
