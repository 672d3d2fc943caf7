"""Output grids filled inside the generated adaptive loop (integrators.codegen.dense_source) against the
numpy reference of the continuous extension.

Expected values: :func:`integrators.reference.dense_output.at_times` (the definition of the output grid:
the accepted steps recomputed by the generic numpy stages, the interpolant's extra stages, b_i(s) of
Tableau.weights, exp(ad theta(s))^T z for RKMK, the projection for the projected pairs) applied to the
accepted steps of the same run without a grid (same controller, same steps; every accepted step saved),
each trajectory of an ensemble on its own, followed, for an ensemble that lost trajectories, by the rule
that a lost trajectory holds its last finite state past its t_end (engine.adaptive._hold_lost). The generated grid uses the step's own stages instead of
recomputed ones, so the two agree to round-off, not bit for bit.
"""

import numpy as np
import pytest

from integrators import CoadjointProblem, METHODS, integrate
from integrators.backends import fastpath, numba_kernels
from integrators.backends.output_grid import OutputGrid
from integrators.backends.plan import Plan
from integrators.codegen import projection
from integrators.engine import adaptive
from integrators.reference.dense_output import at_times
from integrators.reference.pair import ReferencePair
from integrators.analysis.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body
from liegroups import named

from ._problems import ADAPTIVE_PROJECTED, ADAPTIVE_RK, ADAPTIVE_RKMK, quadratic_problem, start

NUMBA = numba_kernels.available()
PAIRS = ADAPTIVE_RK + ADAPTIVE_RKMK + ADAPTIVE_PROJECTED
RIGID = free_rigid_body((2.0, 1.0, 0.5))
M0 = np.array([1.0, 0.3, 0.2])
REF, REF_M0 = free_rigid_body(REFERENCE_INERTIA), np.array(REFERENCE_M0)   # z_1 in [-0.64, 0.64]
#: a generic algebra (se(3): closed-form exponential, folded dexp^-1) and sl(2) (ad^3 = q ad)
PROBLEMS = {"so3": (RIGID, M0), "se3": (quadratic_problem(named.se3(), 2), start(6, 2)),
            "sl2": (quadratic_problem(named.sl2(), 3), start(3, 3))}
TOL = dict(rtol=1e-8, atol=1e-10, check=False)
ROUNDOFF = 1e-13


def _expected(problem, y0, span, te, method, **kw):
    """The reference grid (module docstring): the run without t_eval, then at_times on its steps (and the
    lost trajectories held), as the engine computed every grid before the generated loop filled it."""
    bare = integrate(problem, y0, span, method=method, **kw)
    m = METHODS[method]
    proj = projection.of_algebra(problem.algebra) if m.project else None
    te = te[(te - bare.t[-1]) * (span[1] - span[0]) <= 0.0]
    last = bare.y[-1]

    def one(rows):   # the trajectory whose first row is rows[0], with its own projection targets
        ref = ReferencePair(problem, m.tableau, m.lie, m.terms, proj,
                                  None if proj is None else proj.values(rows[0]))
        return np.concatenate([at_times(ref, bare.t, rows, te[i:i + 1]) for i in range(len(te))])

    with np.errstate(all="ignore"):   # each trajectory of an ensemble alone (see _by_trajectory)
        bare.y, bare.t = _by_trajectory(one, bare.y), te
    adaptive._hold_lost(bare, last)
    return bare


def _by_trajectory(f, ys):
    """f applied to the rows (K, n) of each trajectory of ys (K, ..., n) on its own. The numpy reference
    takes some sizes as the largest over the batch it is given (the order of the round-off dexp^-1
    series), so it is called here for one trajectory and one output time at a time: a blown-up
    trajectory of the ensemble, or the tiny steps next to its blow-up, would otherwise change the
    reference of the others at 1e-9 to 1e-7 (the generated loop evaluates each point's extension alone)."""
    if ys.ndim == 2:
        return f(ys)
    flat = ys.reshape(len(ys), -1, ys.shape[-1])
    return np.stack([f(flat[:, b]) for b in range(flat.shape[1])], 1).reshape((-1,) + ys.shape[1:])


def _same(r, expected, big=np.inf):
    """Equal to round-off (relative to the largest state); states above ``big`` (next to a blow-up, where the
    steps are tiny against t) to 1e-6 relative: there the reference's own step size t_(n+1) - t_n, rounded by
    eps |t|, is off by eps |t| / h relative (5e-7 at t = 0.5, h = 1e-10) from the step the loop took."""
    assert np.array_equal(r.t, expected.t)
    assert r.y.shape == expected.y.shape and np.all(np.isfinite(r.y))
    near = np.abs(expected.y) > big
    scale = max(1.0, np.abs(np.where(near, 0.0, expected.y)).max())
    np.testing.assert_allclose(r.y[~near], expected.y[~near], rtol=0, atol=ROUNDOFF * scale)
    np.testing.assert_allclose(r.y[near], expected.y[near], rtol=1e-6)


@pytest.mark.parametrize("batch", [(), (3,)], ids=["single", "ensemble"])
@pytest.mark.parametrize("system", sorted(PROBLEMS))
@pytest.mark.parametrize("method", PAIRS)
def test_generated_grid_is_the_reference_extension(method, system, batch):
    """Every pair, every form (rk, rkmk, projected), one trajectory (Python floats) and a shared ensemble
    (numpy columns); grid points at t0, inside steps and at t1."""
    problem, y0 = PROBLEMS[system]
    Y = y0 if not batch else np.stack([y0, 0.5 * y0, -0.8 * y0])
    te = np.linspace(0.0, 2.0, 53)
    r = integrate(problem, Y, (0.0, 2.0), method=method, t_eval=te, backend="numpy", **TOL)
    assert r.status == 0 and "numpy" in r.backend
    _same(r, _expected(problem, Y, (0.0, 2.0), te, method, backend="numpy", **TOL))
    assert np.array_equal(r.y[0], Y)


@pytest.mark.parametrize("method", PAIRS)
def test_backward_grid(method):
    problem, y0 = PROBLEMS["se3"]
    te = np.linspace(1.5, -0.5, 41)
    r = integrate(problem, y0, (1.5, -0.5), method=method, t_eval=te, backend="numpy", **TOL)
    _same(r, _expected(problem, y0, (1.5, -0.5), te, method, backend="numpy", **TOL))
    one = np.array([0.7])   # a single output time: the direction comes from t_span, not from t_eval
    r = integrate(problem, y0, (1.5, -0.5), method=method, t_eval=one, backend="numpy", **TOL)
    _same(r, _expected(problem, y0, (1.5, -0.5), one, method, backend="numpy", **TOL))


def _spy_extra_stages(monkeypatch, fail_on_floats=False):
    """Record how each flush evaluated the extra stages ("rows": a logged step at a time on Python floats,
    "columns": one call on numpy columns); with ``fail_on_floats`` the evaluator raises ZeroDivisionError on
    floats (what Python floats do where numpy gives inf)."""
    seen, function = [], Plan.function

    def spy(self, kind, mode):
        fn = function(self, kind, mode)
        if kind != "dense_stages":
            return fn

        def stages(hs, *args):
            floats = isinstance(hs, float)
            seen.append("rows" if floats else "columns")
            if floats and fail_on_floats:
                raise ZeroDivisionError("float division by zero")
            return fn(hs, *args)
        return stages
    monkeypatch.setattr(Plan, "function", spy)
    return seen


@pytest.mark.parametrize("system,method", [("se3", "rk853"), ("se3", "rk853_projected"), ("sl2", "rkmk853"),
                                           ("so3", "rk853")])
def test_extra_stages_by_rows_and_by_columns(system, method, monkeypatch):
    """The interpolant's extra stages of a short run (at most OutputGrid.ROW_STAGES logged steps) are evaluated
    a logged step at a time on Python floats, those of a longer run on numpy columns: both grids equal the
    reference extension, and the same run gives the same grid either way (the same text: the same operations
    on floats as on columns, to round-off where a helper differs by mode); a ZeroDivisionError on floats falls
    back to the columns."""
    problem, y0 = PROBLEMS[system]
    te = np.linspace(0.0, 1.0, 27)
    seen = _spy_extra_stages(monkeypatch)
    rows = integrate(problem, y0, (0.0, 1.0), method=method, t_eval=te, backend="numpy", **TOL)
    assert rows.status == 0 and set(seen) == {"rows"}
    seen.clear()
    monkeypatch.setattr(OutputGrid, "ROW_STAGES", 0)
    cols = integrate(problem, y0, (0.0, 1.0), method=method, t_eval=te, backend="numpy", **TOL)
    assert set(seen) == {"columns"}
    _same(rows, _expected(problem, y0, (0.0, 1.0), te, method, backend="numpy", **TOL))
    np.testing.assert_allclose(rows.y, cols.y, rtol=0, atol=ROUNDOFF * np.abs(cols.y).max())
    monkeypatch.undo()
    seen = _spy_extra_stages(monkeypatch, fail_on_floats=True)
    fell = integrate(problem, y0, (0.0, 1.0), method=method, t_eval=te, backend="numpy", **TOL)
    assert seen[-1] == "columns" and "rows" in seen
    assert np.array_equal(fell.y, cols.y)


@pytest.mark.parametrize("method", ["rk45", "rkmk853", "rk853_projected"])
def test_grid_at_the_accepted_steps_is_the_saved_state(method):
    """A grid time equal to an accepted step's end takes the step's state itself, bit for bit; a grid of
    h / steps (simulate's default) is a t_eval."""
    bare = integrate(RIGID, M0, (0.0, 3.0), method=method, backend="numpy", **TOL)
    r = integrate(RIGID, M0, (0.0, 3.0), method=method, t_eval=bare.t, backend="numpy", **TOL)
    assert np.array_equal(r.y, bare.y)
    g = integrate(RIGID, M0, (0.0, 3.0), method=method, steps=299, backend="numpy", **TOL)
    _same(g, _expected(RIGID, M0, (0.0, 3.0), np.linspace(0.0, 3.0, 300), method, backend="numpy", **TOL))


class _Crossing:
    """g = z_1 - 0.3 (z_1 of M0 oscillates in [-0.46, 0.46], that of (0.5, 0.1, 0.1) in [-0.2, 0.2])."""

    def __init__(self, terminal=False):
        self.terminal, self.direction = terminal, 0

    def __call__(self, t, y):
        return np.asarray(y)[..., 1] - 0.3


@pytest.mark.parametrize("method", ["rk45", "rkmk853", "tsit5_projected"])
def test_events_and_grid(method):
    """Events run the loop in segments (8, 16, ... steps, each continued from the last): the grid goes on
    across them. A terminal event ends the grid at the event time, the part of the last step before
    it from the reference on the rows the events leave (as before); in an ensemble the trajectory it
    stops holds its event state (the rows after the stop are the reference's)."""
    te = np.linspace(0.0, 20.0, 401)
    kw = dict(method=method, backend="numpy", **TOL)
    # non-terminal: many segments, the grid as without events
    r = integrate(RIGID, M0, (0.0, 20.0), t_eval=te, events=_Crossing(), **kw)
    assert r.nsteps > 8 + 16 and len(r.t_events[0]) >= 4
    _same(r, _expected(RIGID, M0, (0.0, 20.0), te, events=_Crossing(), **kw))
    # terminal, one trajectory: the grid stops at the event
    r = integrate(RIGID, M0, (0.0, 20.0), t_eval=te, events=_Crossing(True), **kw)
    assert r.status == 1 and r.t[-1] <= r.t_events[0][0] < r.t[-1] + 0.05
    _same(r, _expected(RIGID, M0, (0.0, 20.0), te, events=_Crossing(True), **kw))
    # terminal in one trajectory of an ensemble (the other never reaches 0.3)
    Y = np.stack([M0, [0.5, 0.1, 0.1]])
    r = integrate(RIGID, Y, (0.0, 20.0), t_eval=te, events=_Crossing(True), **kw)
    assert len(r.t_events[0]) == 1 and r.t[-1] == 20.0
    _same(r, _expected(RIGID, Y, (0.0, 20.0), te, events=_Crossing(True), **kw))


# the lost trajectories of a shared ensemble: the blow-up line of tests/integrators/test_lost_trajectories.py
# (s' = 2 s^2 on z = (0, s, 0) of sl(2)*, s0 = 1: t* = 0.5)
_M = np.array([[1.0, 0.0, 0.2], [1.0, 0.0, 0.3], [0.2, 0.3, 1.0]])
BLOWUP = CoadjointProblem(named.sl2(), lambda z: z @ _M, velocity_matrix=_M, name="sl2 with a blow-up line")
Z = np.array([[0.3, -0.2, 0.5], [0.0, 1.0, 0.0], [-0.3, 0.05, 0.2]])


@pytest.mark.parametrize("method", ["rk45", "rkmk45", "rk853_projected", "tsit5"])
def test_lost_trajectory_holds_its_last_state_on_the_grid(method):
    te = np.linspace(0.0, 2.0, 81)
    kw = dict(method=method, backend="numpy", rtol=1e-9, atol=1e-12, check=False)
    r = integrate(BLOWUP, Z, (0.0, 2.0), t_eval=te, **kw)
    assert list(r.failed) == [1] and r.t_end[1] == pytest.approx(0.5, rel=1e-6)
    late = r.t > r.t_end[1]
    assert np.all(r.y[late, 1] == r.y[-1, 1])
    _same(r, _expected(BLOWUP, Z, (0.0, 2.0), te, **kw), big=1e3)


def test_step_budget_ends_the_grid_where_the_run_stopped():
    te = np.linspace(0.0, 5.0, 101)
    kw = dict(method="rk45", backend="numpy", max_steps=20, **TOL)
    r = integrate(RIGID, M0, (0.0, 5.0), t_eval=te, **kw)
    assert r.status == -1 and "budget" in r.message and 0.0 < r.t[-1] < 5.0
    _same(r, _expected(RIGID, M0, (0.0, 5.0), te, **kw))


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
@pytest.mark.parametrize("method", ["rk45", "rkmk45", "tsit5_projected"])
def test_compiled_grids(method, monkeypatch):
    """The jitted loop (one trajectory; a terminal event, so the loop runs in segments; the chunked run that
    starts in Python and continues compiled): the rigid body of tests/integrators/test_events.py (whose runs
    compile the loops without a grid)."""
    te = np.linspace(0.0, 2.0, 53)
    kw = dict(method=method, backend="numba", **TOL)
    r = integrate(REF, REF_M0, (0.0, 2.0), t_eval=te, **kw)
    assert r.backend == "numba"
    _same(r, _expected(REF, REF_M0, (0.0, 2.0), te, **kw))
    r = integrate(REF, REF_M0, (0.0, 20.0), t_eval=te * 10, events=_Crossing(True), **kw)
    assert r.status == 1
    _same(r, _expected(REF, REF_M0, (0.0, 20.0), te * 10, events=_Crossing(True), **kw))
    chunk = fastpath.NUMPY_CHUNK
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")   # starts in Python, continues compiled after a chunk
    try:
        fastpath.NUMPY_CHUNK = 7
        r = integrate(REF, REF_M0, (0.0, 2.0), t_eval=te, method=method, backend="auto", **TOL)
        assert "then numba" in r.backend
        _same(r, _expected(REF, REF_M0, (0.0, 2.0), te, method=method, backend="auto", **TOL))
    finally:
        fastpath.NUMPY_CHUNK = chunk


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_ensemble_grid_with_a_lost_trajectory():
    """The compiled shared ensemble (one loop over the trajectories in every stage), whole and in segments
    (events)."""
    te = np.linspace(0.0, 2.0, 53)
    kl = dict(method="rk45", backend="numba", rtol=1e-9, atol=1e-12, check=False)
    r = integrate(BLOWUP, Z, (0.0, 2.0), t_eval=te, **kl)
    assert list(r.failed) == [1] and r.backend == "numba"
    _same(r, _expected(BLOWUP, Z, (0.0, 2.0), te, **kl), big=1e3)
    # in segments (events), with the lost trajectory (a run with events reports no `failed`, so the
    # reference interpolates past its loss: compared before it; the grid holds it after)
    ev = lambda t, y: np.asarray(y)[..., 0] - 0.7   # noqa: E731  (trajectory 0 crosses it)
    r = integrate(BLOWUP, Z, (0.0, 2.0), t_eval=te, events=ev, **kl)
    e = _expected(BLOWUP, Z, (0.0, 2.0), te, events=ev, **kl)
    assert len(r.t_events[0]) >= 1 and np.array_equal(r.t, e.t) and np.all(np.isfinite(r.y))
    # the first row is y0 (the segmented compiled ensemble once overwrote it with its running state)
    assert np.array_equal(r.y[0], Z) and np.array_equal(e.y[0], Z)
    early = r.t < 0.45
    np.testing.assert_allclose(r.y[:, [0, 2]], e.y[:, [0, 2]], rtol=0, atol=ROUNDOFF)
    np.testing.assert_allclose(r.y[early, 1], e.y[early, 1], rtol=0, atol=ROUNDOFF * np.abs(e.y[early, 1]).max())
    assert np.all(r.y[r.t > 0.5, 1] == r.y[-1, 1])


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_the_queued_ensemble_grid_loop_is_the_one_the_run_takes(monkeypatch):
    """The warm call that "auto" and a cold backend="numba" call queue for a shared-step ensemble with an output
    grid (auto_compile._warm_batch with the grid) compiles the function that run calls and writes its marker: a
    backend="numba" run in the background policy is then not cold, and its grid is the reference extension.
    (The loop of test_compiled_ensemble_grid_with_a_lost_trajectory: numba's disk cache has it.)"""
    from integrators.backends import auto_compile
    M = METHODS["rk45"]
    pl = fastpath.plan(BLOWUP, M.tableau, M.lie, M.terms, Z)
    auto_compile._warm_batch(pl, 2.0, 1e-9, 1e-12, None, True)
    assert auto_compile.compiled(pl, "adaptive_batch_grid")
    assert auto_compile.specialised_on_disk(pl, "adaptive_batch_grid")
    monkeypatch.delenv("LIEDYN_AUTO_COMPILE", raising=False)
    assert not auto_compile.numba_cold(pl, "adaptive_batch_grid")
    te = np.linspace(0.0, 2.0, 53)
    kl = dict(method="rk45", backend="numba", rtol=1e-9, atol=1e-12, check=False)
    r = integrate(BLOWUP, Z, (0.0, 2.0), t_eval=te, **kl)
    assert r.backend == "numba"
    _same(r, _expected(BLOWUP, Z, (0.0, 2.0), te, **kl), big=1e3)


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_independent_ensemble_fills_its_grid():
    """Each trajectory's compiled loop fills its column (with the blow-up one stopped early and held):
    the numpy engine's grid (dense_output.extension on each trajectory's own steps) to round-off."""
    te = np.linspace(0.0, 2.0, 41)
    kw = dict(method="rk45", ensemble="independent", rtol=1e-9, atol=1e-12, check=False, t_eval=te)
    a = integrate(BLOWUP, Z, (0.0, 2.0), backend="numba", **kw)
    b = integrate(BLOWUP, Z, (0.0, 2.0), backend="numpy", **kw)
    assert a.backend == "numba" and list(a.failed) == list(b.failed) == [1]
    assert np.array_equal(a.nsteps_each, b.nsteps_each) and np.all(a.y[-1, 1] == a.y[a.t > a.t_end[1], 1])
    _same(a, b, big=1e3)
