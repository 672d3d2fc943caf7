"""The generated code (integrators.codegen.writer / fastpath) against the generic numpy steppers (the reference).

Expected values: the generic path (fast=False) on the same problem and method; the structure read off
by probing against the matrices the problem was built from; exact invariants (the linear invariant
of a multiplier forcing) for the ambient Runge-Kutta path.
"""

import numpy as np
import pytest

from integrators import CoadjointProblem, IntegrationInputError, MethodError, integrate
from integrators.backends import fastpath
from integrators.backends import numba_kernels
from integrators.geometry import recognition
from integrators.methods import METHODS, RungeKutta
from liegroups import named

from ._problems import quadratic_problem, start, suslov

NAMED = named.all_named()
#: every fixed-step Runge-Kutta method of the registry (the generated code is written from its tableau)
FIXED = tuple(n for n, m in METHODS.items() if isinstance(m, RungeKutta) and m.fixed_step)


def _random_basis(algebra, seed):
    rng = np.random.default_rng(seed)
    P = np.eye(algebra.dim) + 0.3 * rng.standard_normal((algebra.dim, algebra.dim))
    return algebra.change_basis(P)


@pytest.mark.parametrize("name", sorted(NAMED))
@pytest.mark.parametrize("basis", ["named", "random"])
def test_generated_fixed_step_agrees_with_reference(name, basis):
    algebra = NAMED[name] if basis == "named" else _random_basis(NAMED[name], 3)
    P = quadratic_problem(algebra, seed=4)
    for z0 in (start(algebra.dim, 4), start(algebra.dim, 5, batch=(3,))):
        for method in FIXED:
            fast = integrate(P, z0, (0.0, 0.5), method=method, steps=40, backend="numpy")
            ref = integrate(P, z0, (0.0, 0.5), method=method, steps=40, fast=False)
            scale = max(1.0, float(np.max(np.abs(ref.y))))
            assert np.max(np.abs(fast.y - ref.y)) <= 1e-12 * scale, (name, basis, method)
            assert fast.nfev == ref.nfev and fast.nsteps == ref.nsteps


def test_recognises_affine_velocity_and_closed_forms():
    rng = np.random.default_rng(0)
    K = rng.standard_normal((6, 6))
    c = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 2.5])  # heavy top: w = K z + c
    P = CoadjointProblem(named.se3(), lambda z: z @ K.T + c)
    st = recognition.recognise(P, np.ones(6))
    assert st is not None and st.closed == "se3"
    assert np.allclose(st.W, K, atol=1e-14) and np.allclose(st.c, c, atol=1e-14)
    # the same constants under another name still get the closed form (structure, not name)
    P3 = CoadjointProblem(named.su2(), lambda z: 2.0 * z)
    assert recognition.recognise(P3, np.ones(3)).closed == "so3"
    # in another basis so(3) has no cross products, but ad_x^3 = -|x|^2 ad_x still gives a closed form
    assert recognition.recognise(CoadjointProblem(_random_basis(named.so3(), 1), lambda z: z), np.ones(3)).closed == "ad3"
    assert recognition.recognise(CoadjointProblem(named.so4(), lambda z: z), np.ones(6)).closed == "ad3x2"
    assert recognition.recognise(CoadjointProblem(_random_basis(named.se3(), 1), lambda z: z), np.ones(6)).closed is None
    # not affine: no generated path, and integrate still runs the reference
    Q = CoadjointProblem(named.so3(), lambda z: z + 0.1 * z ** 3)
    assert recognition.recognise(Q, np.ones(3)) is None
    r = integrate(Q, np.array([0.3, 0.2, 0.1]), (0.0, 1.0), steps=10)
    assert r.backend == "numpy"
    # backend='numba' is never ignored: there is no compiled path here, and the error says why
    with pytest.raises(MethodError, match="backend='numba'.*not recognise.*affine"):
        integrate(Q, np.array([0.3, 0.2, 0.1]), (0.0, 1.0), steps=10, backend="numba")
    with pytest.raises(MethodError, match="backend='numba'.*not recognise"):
        integrate(Q, np.array([0.3, 0.2, 0.1]), (0.0, 1.0), method="rk853", backend="numba")
    with pytest.raises(MethodError, match="backend='numba'.*midpoint has no generated code"):
        integrate(P3, np.array([0.3, 0.2, 0.1]), (0.0, 1.0), method="midpoint", steps=10, backend="numba")


def test_heavy_top_linear_term_agrees_with_reference():
    rng = np.random.default_rng(2)
    B = rng.standard_normal((6, 6))
    K = B @ B.T / 6 + np.eye(6)
    c = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.5])
    P = CoadjointProblem(named.se3(), lambda z: z @ K + c)
    z0 = start(6, 2)
    for method in ("rkmk4", "rk4"):
        fast = integrate(P, z0, (0.0, 2.0), method=method, steps=100, backend="numpy")
        ref = integrate(P, z0, (0.0, 2.0), method=method, steps=100, fast=False)
        assert np.max(np.abs(fast.y - ref.y)) <= 1e-13


def test_multiplier_forcing_is_recognised_and_keeps_the_constraint():
    P, m0, c, a = suslov()
    st = recognition.recognise(P, m0)
    # P = a c^T / (c, a): the multiplier of (c, z)' = 0 along the force direction a
    assert np.allclose(st.P, np.outer(a, c) / (c @ a), atol=1e-12)
    for method in ("rk4", "rk45", "rk853"):
        kw = {"steps": 400} if method == "rk4" else {"rtol": 1e-8, "atol": 1e-10}
        fast = integrate(P, m0, (0.0, 10.0), method=method, backend="numpy", **kw)
        assert fast.backend == "numpy"
        assert np.max(np.abs(fast.y @ c)) <= 1e-15
    fast = integrate(P, m0, (0.0, 10.0), method="rk4", steps=400, backend="numpy")
    ref = integrate(P, m0, (0.0, 10.0), method="rk4", steps=400, fast=False)
    assert np.max(np.abs(fast.y - ref.y)) <= 1e-13
    # a forcing that is not a multiplier force of the declared invariant gets no generated path
    Q = CoadjointProblem(named.so3(), lambda m: m, forcing=lambda m: 0.1 * m, linear_invariants=c)
    assert recognition.recognise(Q, m0) is None


@pytest.mark.parametrize("batch", [(), (4,)])
def test_overflow_keeps_the_last_finite_state(batch):
    # rk4 with a step far beyond its stability bound on an unbounded sl(2)* orbit: the iterates explode
    P = quadratic_problem(named.sl2(), seed=1)
    z0 = 3.0 * np.ones(batch + (3,))
    with np.errstate(all="ignore"):  # the recorded Casimirs of the huge last states overflow
        res = integrate(P, z0, (0.0, 400.0), method="rk4", steps=200, backend="numpy")
    assert res.status == -1 and "overflow" in res.message
    assert np.all(np.isfinite(res.y)) and len(res.t) == len(res.y) >= 1


def test_bad_backend_and_missing_numba(monkeypatch):
    P = quadratic_problem(named.so3(), seed=1)
    with pytest.raises(MethodError, match="backends: auto, numpy, numba"):
        integrate(P, start(3, 1), (0.0, 1.0), steps=5, backend="fortran")
    with pytest.raises(IntegrationInputError, match="fast=False"):
        integrate(P, start(3, 1), (0.0, 1.0), steps=5, backend="numba", fast=False)
    monkeypatch.setattr(numba_kernels, "available", lambda: False)
    with pytest.raises(MethodError, match="numba, which is not installed.*'numpy'"):
        integrate(P, start(3, 1), (0.0, 1.0), method="rkmk4", steps=5, backend="numba")
    assert fastpath.resolve_backend("auto") == "numpy"


@pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")
def test_numba_agrees_with_numpy():
    algebra = _random_basis(named.so3(), 7)  # the ad^3 = q ad closed form in a generic basis
    P = quadratic_problem(algebra, seed=7)
    for z0 in (start(3, 7), start(3, 8, batch=(3,))):
        a = integrate(P, z0, (0.0, 2.0), method="rkmk4", steps=100, backend="numba")
        b = integrate(P, z0, (0.0, 2.0), method="rkmk4", steps=100, backend="numpy")
        assert a.backend == "numba" and b.backend == "numpy"
        assert np.max(np.abs(a.y - b.y)) <= 1e-13
    Q = quadratic_problem(named.so3(), seed=7)
    for z0 in (start(3, 9),):  # (the compiled ensemble loop is exercised by the benchmark)
        a = integrate(Q, z0, (0.0, 5.0), method="rk45", rtol=1e-9, atol=1e-12, backend="numba")
        b = integrate(Q, z0, (0.0, 5.0), method="rk45", rtol=1e-9, atol=1e-12, backend="numpy")
        assert a.backend == "numba"
        assert a.nsteps == b.nsteps and np.max(np.abs(a.y - b.y)) <= 1e-12


#: the commutator-free methods and the splittings: written by the same generator (fixed_programs.fixed_source)
CF = tuple(n for n, m in METHODS.items() if type(m).__name__ == "CommutatorFree")
SPLITTINGS = tuple(n for n, m in METHODS.items() if type(m).__name__ == "Splitting")


@pytest.mark.parametrize("name", ["so3", "se3", "sl2", "so4", "heisenberg"])
@pytest.mark.parametrize("basis", ["named", "random"])
def test_generated_commutator_free_agrees_with_reference(name, basis):
    # the closed forms (so(3), se(3), ad3, ad3x2) and the Taylor action of the generic basis; one trajectory
    # (Python floats) and an ensemble of 12 (numpy columns), against the generic CFStepper (fast=False)
    algebra = NAMED[name] if basis == "named" else _random_basis(NAMED[name], 3)
    P = quadratic_problem(algebra, seed=4)
    for z0 in (start(algebra.dim, 4), start(algebra.dim, 5, batch=(12,))):
        for method in CF:
            fast = integrate(P, z0, (0.0, 0.5), method=method, steps=40, backend="numpy")
            ref = integrate(P, z0, (0.0, 0.5), method=method, steps=40, fast=False)
            scale = max(1.0, float(np.max(np.abs(ref.y))))
            assert np.max(np.abs(fast.y - ref.y)) <= 1e-12 * scale, (name, basis, method)
            assert fast.nfev == ref.nfev and fast.nsteps == ref.nsteps


def test_generated_splitting_agrees_with_reference():
    from integrators.analysis.rigid_body import free_rigid_body

    P = free_rigid_body((2.0, 1.0, 2.0 / 3.0))
    for z0 in (start(3, 6), start(3, 7, batch=(12,))):
        for method in SPLITTINGS:
            fast = integrate(P, z0, (0.0, 5.0), method=method, steps=200, backend="numpy")
            ref = integrate(P, z0, (0.0, 5.0), method=method, steps=200, fast=False)
            assert np.max(np.abs(fast.y - ref.y)) <= 1e-13 * np.max(np.abs(ref.y)), method
            # the Casimir |m|^2 is kept to round-off by every rotation
            c = np.sum(fast.y ** 2, axis=-1)
            assert np.max(np.abs(c - c[0])) <= 1e-14 * np.max(c)
    # a body whose W is not diagonal in the problem's basis has no splitting program: the writer says no
    st = recognition.recognise(quadratic_problem(named.so3(), seed=2), np.ones(3))
    from integrators.codegen import fixed_programs
    assert not fixed_programs.writes(st, METHODS["splitting"]) and fixed_programs.writes(st, METHODS["cf4"])


@pytest.mark.parametrize("method", ["rkmk4", "cf4", "cg3", "splitting"])
def test_events_of_so3_fixed_steps_use_the_generated_step(method):
    # the event of a fixed-step so(3) run is located with the generated one-step map: same event time and
    # states as the generic steppers (fast=False) to round-off, one trajectory and an ensemble
    from integrators.analysis.rigid_body import free_rigid_body

    P = free_rigid_body((2.0, 1.0, 2.0 / 3.0))
    plain = integrate(P, start(3, 6), (0.0, 20.0), method=method, steps=400, fast=False).y[:, 0]
    level = 0.5 * (plain.min() + plain.max())   # a level the first component crosses

    def g(t, y):
        return y[..., 0] - level

    g.terminal = True
    for z0 in (start(3, 6), start(3, 7, batch=(3,))):
        fast = integrate(P, z0, (0.0, 20.0), method=method, steps=400, events=g, backend="numpy")
        ref = integrate(P, z0, (0.0, 20.0), method=method, steps=400, events=g, fast=False)
        assert fast.status == ref.status and fast.t.shape == ref.t.shape
        np.testing.assert_allclose(fast.t, ref.t, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fast.y, ref.y, rtol=0, atol=1e-12)
        if z0.ndim == 1:
            assert fast.status == 1 and abs(fast.y[-1, 0] - level) < 1e-9


@pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")
@pytest.mark.parametrize("method", ["cf4", "splitting"])
def test_numba_runs_the_commutator_free_and_splitting_programs(method):
    from integrators.analysis.rigid_body import free_rigid_body

    P = free_rigid_body((2.0, 1.0, 2.0 / 3.0))
    for z0 in (start(3, 6), start(3, 7, batch=(3,))):
        a = integrate(P, z0, (0.0, 2.0), method=method, steps=100, backend="numba")
        b = integrate(P, z0, (0.0, 2.0), method=method, steps=100, fast=False)
        assert a.backend == "numba"
        assert np.max(np.abs(a.y - b.y)) <= 1e-13
