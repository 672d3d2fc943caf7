"""Adaptive embedded pairs rkmk45, rkmk853 (RKMK form) and rk45, rk853 (ambient).

Expected values: the exact elliptic solution of the free rigid body (integrators.analysis.rigid_body), the
algebra's Casimirs at t = 0, a root of the exact solution found by brentq for event times, counted
calls of the velocity for nfev, and the generic numpy reference for the generated code.
"""

import numpy as np
import pytest
import scipy.optimize

from integrators import IntegrationInputError, MethodError, ODEProblem, integrate, tableaux
from integrators.reference.pair import ReferencePair
from integrators.backends.fastpath import plan, step_function
from integrators.methods import METHODS
from integrators.analysis.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body, rigid_body_exact
from liegroups import named

from ._problems import ADAPTIVE_RK, ADAPTIVE_RKMK, ALGEBRAS, quadratic_problem, start

ADAPTIVE = tuple(ADAPTIVE_RKMK + ADAPTIVE_RK)


@pytest.mark.parametrize("name", ADAPTIVE)
def test_error_follows_rtol_on_the_exact_rigid_body(name):
    body = free_rigid_body(REFERENCE_INERTIA)
    m0 = np.array(REFERENCE_M0)
    exact = rigid_body_exact(REFERENCE_INERTIA, m0, 10.0)
    errs = []
    for rtol in (1e-6, 1e-10):
        r = integrate(body, m0, (0.0, 10.0), method=name, rtol=rtol, atol=rtol * 1e-2)
        assert r.status == 0 and r.t[-1] == 10.0
        errs.append(float(np.max(np.abs(r.y[-1] - exact))))
    assert errs[1] < 1e-8 and errs[1] < errs[0] / 100, errs


@pytest.mark.parametrize("name", ADAPTIVE)
@pytest.mark.parametrize("rtol", [1e-7, 1e-9])
def test_final_error_is_of_the_size_of_rtol(name, rtol):
    # The estimate of a pair cannot see an error both of its solutions share, such as a dexp^-1
    # series cut too early (at ad^(q-2) the RKMK pairs ended 10-13x above rtol); the truncation
    # must stay below the controlled error: final error <= 3 rtol |m| against the exact solution
    body = free_rigid_body(REFERENCE_INERTIA)
    m0 = np.array(REFERENCE_M0)
    exact = rigid_body_exact(REFERENCE_INERTIA, m0, 10.0)
    r = integrate(body, m0, (0.0, 10.0), method=name, rtol=rtol, atol=rtol * 1e-3)
    err = float(np.max(np.abs(r.y[-1] - exact)))
    assert err <= 3.0 * rtol * np.linalg.norm(m0), (name, rtol, err)


@pytest.mark.parametrize("alg", sorted(ALGEBRAS))
@pytest.mark.parametrize("name", ADAPTIVE_RKMK)
def test_adaptive_rkmk_keeps_casimirs(alg, name):
    P = quadratic_problem(ALGEBRAS[alg](), seed=5)
    z0 = start(P.dim, 5, batch=(3,))
    r = integrate(P, z0, (0.0, 5.0), method=name, rtol=1e-10, atol=1e-12)
    assert "casimirs" in r.preserves
    for k in (k for k in r.invariants if k.startswith("casimir:")):
        v = r.invariants[k]
        drift = np.max(np.abs(v - v[0]) / np.maximum(np.abs(v[0]), 1e-3))
        assert drift <= 1e-14, (k, drift)


@pytest.mark.parametrize("name", sorted(named.all_named()))
@pytest.mark.parametrize("method", ["rkmk853", "rk45"])
def test_generated_step_agrees_with_reference(name, method):
    """One step of the pair (the continuous extension used for events) from the generated code and
    from the generic numpy stages, in the named basis and in a random one."""
    m = METHODS[method]
    tab = m.tableau
    for dense, algebra in enumerate((named.all_named()[name],
                    named.all_named()[name].change_basis(np.eye(3 if name != "so4" and name != "se3" else 6)
                                                         + 0.3 * np.random.default_rng(1).standard_normal(
                                                             (named.all_named()[name].dim,) * 2)))):
        P = quadratic_problem(algebra, seed=2)
        z0 = start(P.dim, 2, batch=(2,))
        pl = plan(P, tab, m.lie, m.terms, z0)
        fast = step_function(pl, "numpy")
        ref = ReferencePair(P, tab, m.lie, m.terms)
        # in a dense basis the generated text may take the coadjoint products through a sparse one
        # (integrators.geometry.root_basis: three n x n maps of condition <= 100), a few more roundings
        tol = 1e-13 if dense else 1e-14
        for y in (z0[0], z0):
            a, b = fast(0.0, y, 0.13), ref.step(0.0, y, 0.13)
            assert np.max(np.abs(a - b)) <= tol * max(1.0, float(np.max(np.abs(b)))), name


def test_generated_and_reference_solutions_agree_to_the_tolerance():
    P = quadratic_problem(named.so4(), seed=3)
    z0 = start(6, 3)
    a = integrate(P, z0, (0.0, 5.0), method="rkmk853", rtol=1e-9, atol=1e-11, backend="numpy")
    b = integrate(P, z0, (0.0, 5.0), method="rkmk853", rtol=1e-9, atol=1e-11, fast=False)
    assert a.backend == "numpy" and b.backend.startswith("numpy (generic")
    assert abs(a.nsteps - b.nsteps) <= 1
    assert np.max(np.abs(a.y[-1] - b.y[-1])) <= 1e-7


def test_nfev_counts_velocity_calls_and_step_controls():
    calls = []
    M = np.diag(1.0 / np.array(REFERENCE_INERTIA))
    body = free_rigid_body(REFERENCE_INERTIA)
    vel = body.velocity
    body.velocity = lambda z: (calls.append(1), vel(z))[1]
    r = integrate(body, np.array(REFERENCE_M0), (0.0, 5.0), method="rkmk45", rtol=1e-8, atol=1e-10,
                  fast=False, max_step=0.05)
    assert r.nfev == len(calls)
    assert np.max(np.diff(r.t)) <= 0.05 + 1e-15 and r.nrejected >= 0
    r = integrate(body, np.array(REFERENCE_M0), (0.0, 5.0), method="rkmk45", rtol=1e-8, first_step=1e-3)
    assert r.t[1] - r.t[0] <= 1e-3 + 1e-18
    assert M.shape == (3, 3)


def test_events_located_by_the_continuous_extension():
    """m_1 changes sign along the exact solution; the event time from rkmk853 matches brentq on the
    exact solution to 1e-10."""
    m0 = np.array(REFERENCE_M0) + np.array([0.3, 0.2, 0.0])
    body = free_rigid_body(REFERENCE_INERTIA)

    def ev(t, y):
        return y[..., 1]

    ev.terminal = True
    r = integrate(body, m0, (0.0, 20.0), method="rkmk853", rtol=1e-12, atol=1e-14, events=ev)
    assert r.status == 1
    te = r.t_events[0][0]
    g = lambda t: rigid_body_exact(REFERENCE_INERTIA, m0, t)[1]  # noqa: E731
    ts = np.linspace(0.0, 20.0, 2001)
    vals = np.array([g(t) for t in ts])
    k = int(np.argmax(np.sign(vals[1:]) != np.sign(vals[:-1])))
    exact = scipy.optimize.brentq(g, ts[k], ts[k + 1], xtol=1e-15)
    assert abs(te - exact) <= 1e-10 and r.t[-1] == te


def test_overflow_and_bad_input():
    blow = ODEProblem(lambda t, y: y * y, dim=1)  # y = 1/(1 - t) blows up at t = 1
    r = integrate(blow, np.array([1.0]), (0.0, 2.0), method="rk45", rtol=1e-8)
    assert r.status == -1 and np.all(np.isfinite(r.y)) and 0.99 < r.t[-1] < 1.001
    body = free_rigid_body(REFERENCE_INERTIA)
    m0 = np.array(REFERENCE_M0)
    with pytest.raises(IntegrationInputError, match="rtol must be a positive"):
        integrate(body, m0, (0.0, 1.0), method="rkmk45", rtol=-1.0)
    # a forcing only as a callable (not a multiplier force the generator writes): the reference loop in g x g*,
    # and the result says so (tests/integrators/test_forced_generated.py)
    forced = quadratic_problem(named.so3(), seed=1, forcing=lambda z: 0.1 * z)
    r = integrate(forced, m0, (0.0, 1.0), method="rkmk45")
    assert r.status == 0 and r.backend.startswith("numpy (generic reference: the generator does not recognise")
