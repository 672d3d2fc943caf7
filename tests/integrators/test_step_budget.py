"""The step budget of the adaptive pairs (``max_steps``) and the continuation of a long Python run in the
compiled loop.

Expected values: a run stopped by its budget at time t_b must equal a second, unbudgeted run of the
same method over (t0, t_b) (an independent call that stops there because t_b is its end), up to the
pair's tolerance; the continued (chunked) run must give the same output times as the unchunked one
and states equal to round-off, since only the first stage's generator after a chunk is recomputed.
"""

import numpy as np
import pytest

from integrators import CoadjointProblem, integrate

from integrators.backends import numba_kernels
from integrators.backends import fastpath
from integrators.analysis.rigid_body import free_rigid_body
from liegroups import named

Y0 = np.array([1.0, 0.2, 0.3])


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("method", ["rkmk853", "rkmk45", "rk853"])
def test_a_spent_budget_ends_with_status_minus_one_and_says_so(method, fast):
    P = free_rigid_body((2.0, 1.0, 0.5))
    r = integrate(P, Y0, (0.0, 1000.0), method=method, rtol=1e-11, atol=1e-13, max_steps=40, fast=fast,
                  backend="numpy")
    assert r.status == -1 and r.nsteps == 40
    assert "step budget of 40 accepted steps" in r.message and "max_steps" in r.message
    tb = float(r.t[-1])
    assert 0.0 < tb < 1000.0 and np.all(np.isfinite(r.y))
    again = integrate(P, Y0, (0.0, tb), method=method, rtol=1e-11, atol=1e-13, fast=fast, backend="numpy")
    assert again.status == 0
    np.testing.assert_allclose(r.y[-1], again.y[-1], rtol=0, atol=1e-9)


def test_the_budget_stops_a_run_that_would_need_1e150_steps():
    # sl(2) from |z| = 1e150 oscillates with frequency ~1e150: the correct steps are ~1e-150 long
    M = np.diag([1.0, 2.0, 0.7])
    P = CoadjointProblem(named.sl2(), lambda z: z @ M, velocity_matrix=M)
    r = integrate(P, np.array([0.3, -0.2, 0.5]) * 1e150, (0.0, 1.0), method="rkmk853", max_steps=2000,
                  backend="numpy")
    assert r.status == -1 and r.nsteps == 2000 and "step budget" in r.message
    assert r.t[-1] < 1e-140 and np.all(np.isfinite(r.y))


def test_budget_must_be_a_positive_integer():
    from integrators import IntegrationInputError
    with pytest.raises(IntegrationInputError, match="max_steps"):
        integrate(free_rigid_body((2.0, 1.0, 0.5)), Y0, (0.0, 1.0), method="rkmk853", max_steps=0)


@pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")
def test_a_long_python_run_continues_compiled_with_the_same_output(monkeypatch):
    P = free_rigid_body((2.0, 1.0, 0.5))
    kw = dict(method="rkmk853", rtol=1e-12, atol=1e-14, save_every=7)
    whole = integrate(P, Y0, (0.0, 200.0), backend="numpy", **kw)
    monkeypatch.setattr(fastpath, "NUMPY_CHUNK", 50)
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")   # compile in the call (not the background default)
    chunked = integrate(P, Y0, (0.0, 200.0), backend="auto", **kw)
    assert whole.nsteps > 150 and chunked.backend.startswith("numpy for the first 50 steps, then numba")
    assert chunked.nsteps == whole.nsteps and chunked.status == whole.status == 0
    np.testing.assert_array_equal(chunked.t[:8], whole.t[:8])  # before the first chunk ends: identical
    np.testing.assert_allclose(chunked.t, whole.t, rtol=1e-12, atol=0)  # every 7th step, across chunks
    np.testing.assert_allclose(chunked.y, whole.y, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["rkmk853", "rk853", "rk853_projected"])
def test_independent_ensembles_have_the_budget_per_trajectory(method):
    # one trajectory of the ensemble needs ~1e150 steps (sl(2) from |z| = 1e150), the other a few tens:
    # the first stops at its budget (status -1, the message says so) and the second still reaches t1.
    # Expected: the stopped trajectory equals the shared-steps single run of the same method with the
    # same budget and first step (the same steps: the ensemble's code rounds the error estimates
    # differently, so the times agree to ~1e-9, and with a frequency ~1e150 the states to ~1e-8); the
    # finished one equals its own single run
    M = np.diag([1.0, 2.0, 0.7])
    P = CoadjointProblem(named.sl2(), lambda z: z @ M, velocity_matrix=M)
    Y = np.array([[0.3, -0.2, 0.5], [0.3e150, -0.2e150, 0.5e150]])
    backends = ("numpy", "numba") if numba_kernels.available() else ("numpy",)
    for be in backends:
        r = integrate(P, Y, (0.0, 1.0), method=method, max_steps=300, ensemble="independent", backend=be,
                      first_step=1e-152)
        assert r.status == -1 and "1 of 2 trajectories" in r.message, (be, r.message)
        assert "step budget of 300 accepted steps" in r.message
        assert r.nsteps_each[1] == 300 and 0.0 < r.t_end[1] < 1.0 and r.t_end[0] == 1.0
        big = integrate(P, Y[1], (0.0, 1.0), method=method, max_steps=300, backend=be, first_step=1e-152)
        assert big.status == -1 and big.nsteps == 300 and big.t[-1] == pytest.approx(r.t_end[1], rel=1e-7)
        np.testing.assert_allclose(r.y[-1, 1], big.y[-1], rtol=1e-6, atol=0)
        small = integrate(P, Y[0], (0.0, 1.0), method=method, max_steps=300, backend=be, first_step=1e-152)
        np.testing.assert_allclose(r.y[-1, 0], small.y[-1], rtol=0, atol=1e-12)
