"""The compiled ensembles' module text (integrators.codegen.ensemble_source), run as plain Python: numba's
decorators replaced by the identity and numba.prange by range, so the wrappers and the lane kernels the
codegen room writes are checked without numba. Expected values: the generic numpy steppers (fast=False)
of every trajectory alone."""

import math

import numpy as np
import pytest

from integrators import integrate
from integrators.analysis.rigid_body import free_rigid_body
from integrators.backends import fastpath
from integrators.codegen import ensemble_source
from integrators.methods import METHODS
from integrators.reference import genhelpers
from liegroups import named
from servo import EulerPoincare

from ._problems import start


class _NoNumba:
    """numba.njit as the identity (with or without arguments), numba.prange as range."""

    prange = range

    @staticmethod
    def njit(fn=None, **kw):
        return (lambda f: f) if fn is None else fn


def _module(text):
    env = dict(genhelpers.SCALAR, np=np, math=math, numba=_NoNumba, CACHE=False, JIT={}, LANE_JIT={})
    exec(compile(text, "<ensemble module>", "exec"), env)
    return env["ensemble"]


PROBLEMS = {
    "so3": (free_rigid_body((2.0, 1.0, 2.0 / 3.0)), 3),
    "se3": (EulerPoincare(named.se3(), [2.0, 1.0, 0.5, 1.0, 1.0, 1.0]).problem(), 6),
}


@pytest.mark.parametrize("alg", sorted(PROBLEMS))
@pytest.mark.parametrize("lanes", [False, True], ids=["per-trajectory", "lanes"])
def test_fixed_ensemble_modules_step_every_trajectory_alone(alg, lanes):
    P, n = PROBLEMS[alg]
    m = METHODS["rkmk4"]
    Z = start(n, 3, batch=(3,))
    pl = fastpath.plan(P, m.tableau, m.lie, m.terms, Z[0])
    h, nsteps, save_every = 0.05, 6, 3
    K = nsteps // save_every + 1
    YS = np.zeros((K, 3, n))
    YS[0] = Z
    if lanes:
        bad = np.zeros(3, np.bool_)
        _module(ensemble_source.fixed_lanes_source(pl))(h, nsteps, save_every, np.ascontiguousarray(Z), YS, bad)
        assert not bad.any()
    else:
        done, saves = np.zeros(3, np.int64), np.zeros(3, np.int64)
        _module(ensemble_source.fixed_module(pl))(h, nsteps, save_every, 0.0, np.ascontiguousarray(Z), YS, done, saves)
        assert np.all(done == nsteps) and np.all(saves == K)
    for b in range(3):
        ref = integrate(P, Z[b], (0.0, nsteps * h), method="rkmk4", steps=nsteps, save_every=save_every, fast=False)
        assert np.max(np.abs(YS[:, b] - ref.y)) <= 1e-13 * max(1.0, np.max(np.abs(ref.y)))


def test_adaptive_ensemble_module_ends_where_the_single_runs_end():
    P, n = PROBLEMS["so3"]
    m = METHODS["rkmk45"]
    Z = start(n, 4, batch=(2,))
    pl = fastpath.plan(P, m.tableau, m.lie, m.terms, Z[0])
    out, st, te = np.empty_like(Z), np.empty(2, np.int64), np.empty(2)
    ns, nr = np.empty(2, np.int64), np.empty(2, np.int64)
    H0 = np.full(2, 0.01)
    pk = np.zeros((2, 3))
    _module(ensemble_source.adaptive_module(pl))(0.0, 1.0, H0, 1e-9, 1e-12, math.inf, 10 ** 6, np.ascontiguousarray(Z),
                                                 out, st, te, ns, nr, np.zeros((2, 0)), pk)
    assert np.all(st == 0) and np.all(te == 1.0)
    for b in range(2):
        ref = integrate(P, Z[b], (0.0, 1.0), method="rkmk45", rtol=1e-9, atol=1e-12, first_step=0.01, fast=False)
        assert np.max(np.abs(out[b] - ref.y[-1])) <= 1e-9
        # the peak of its accepted steps, as the reference loop tracks it (another loop: the steps to ~1e-9)
        assert pk[b] == pytest.approx(ref.peak, rel=1e-6, abs=1e-6)
