"""The generated straight-line loop of dvak_exp / dvak_cay (integrators.codegen.nonholonomic_source.DvakSource,
simplified Newton in (eta, lambda)): the same map as the numpy stepper (full Newton on eq. (2) of
integrators.reference.nonholonomic.lie_schemes, its output Ad*_x z by the retraction) to round-off, the Casimirs
and the constraint kept, a Newton failure reported, no loop where dexp^-1 has no closed form."""

import numpy as np
import pytest

from liegroups import named
from integrators import ConvergenceError, MethodError
from servo.lie import ServoSecondKind, Vakonomic

from ._generated_harness import central_jacobian, residual_and_jacobian

numba_kernels = pytest.importorskip("integrators.backends.numba_kernels")
pytestmark = pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")


def _system(which):
    if which == "so3":
        return Vakonomic(named.so3(), [1.0, 2.0, 3.0], a=[1, 1, 0]), [1.0, -1.0, 0.5]
    if which == "se2":
        return ServoSecondKind(named.se2(), [1.0, 2.0, 3.0], a=[0, 1, 0], b=[0, 1, 0.5]), [0.3, 0.0, 1.2]
    return (ServoSecondKind(named.se3(), [1.0, 2.0, 3.0, 1.5, 1.2, 1.1], a=[0, 0, 1, 0, 0.5, 0],
                            b=[0, 1, 1, 0, 0.5, 0.3]), [1.0, 0.5, 0.0, 0.3, 0.1, 0.2])


@pytest.mark.parametrize("which, name", [("so3", "dvak_exp"), ("so3", "dvak_cay"), ("se2", "dvak_exp"),
                                         ("se3", "dvak_cay")])
def test_generated_dvak_equals_the_numpy_stepper(which, name):
    # the same map with the same stop tolerance: the numpy stepper (full Newton, z_{k+1} = Ad*_x z by the
    # retraction's matrices) and the loop (simplified Newton, z_{k+1} = z + ad_x^T w at the root, an identity of
    # exp and cay) agree to round-off over 200 steps; the Casimirs F(m + lambda b) stay on z's coadjoint orbit
    v, w0 = _system(which)
    st = v.state_from(w=w0, lam=0.3, project=True)
    rn = v.simulate(st, 10.0, steps=200, method=name, backend="numba")
    rp = v.simulate(st, 10.0, steps=200, method=name, backend="numpy")
    assert rn.backend == "numba" and rp.backend == "numpy" and rn.status == 0
    assert np.max(np.abs(rn.y - rp.y)) <= 5e-13 * max(1.0, np.max(np.abs(rp.y)))
    assert np.max(np.abs(rn.y[-1] - rn.y[0])) > 1e-2                         # it moved
    cas = [k for k in rn.invariants if k.startswith("casimir")]
    assert cas
    for c in cas:
        assert rn.drift(c) < 1e-13
    for g in rn.constraints.values():
        assert np.max(np.abs(g)) <= 1e-12


def test_newton_failure_in_the_generated_dvak_loop_is_reported():
    v, w0 = _system("so3")
    st = v.state_from(w=w0, lam=0.3, project=True)
    for be in ("numpy", "numba"):                      # h = 50: no root near the predictor, both fail
        with pytest.raises(ConvergenceError):
            v.simulate(st, 500.0, steps=10, method="dvak_exp", backend=be)


def test_no_generated_dvak_exp_where_dexp_inverse_has_no_closed_form():
    v, w0 = _system("se3")
    st = v.state_from(w=w0, lam=0.3, project=True)
    with pytest.raises(MethodError, match="closed form of dexp"):
        v.simulate(st, 1.0, steps=10, method="dvak_exp", backend="numba")


@pytest.mark.parametrize("name", ["dvak_exp", "dvak_cay"])
def test_a_stale_or_always_fresh_jacobian_finds_the_same_root(name):
    # the Jacobian only steers the iteration: refreshed every step (threshold 0) or never after the first
    # (0.49, below the restart at theta >= 1/2) the loop finds the same z_k to round-off, with fewer
    # Jacobians and more residuals when stale
    import functools
    from integrators.backends import nonholonomic_loops
    from integrators.methods import METHODS
    from integrators.reference.nonholonomic import compiled
    from integrators.reference.stepping import make_stepper
    v, w0 = _system("so3")
    p = v.problem()
    z = np.asarray(v.to_problem(v.state_from(w=w0, lam=0.3, project=True)))
    out = []
    for th in (0.0, 0.49):
        st = make_stepper(METHODS[name], p)
        res = compiled.run_dvak_lie(st, z, 0.0, 0.05, 300, 1,
                                    functools.partial(nonholonomic_loops.dvak_loop, theta_refresh=th))
        out.append((res.y, st.jacobians, st.nfev_total))
    assert np.max(np.abs(out[0][0] - out[1][0])) <= 1e-12
    assert out[0][1] >= 300 > out[1][1] and out[1][2] > out[0][2]


@pytest.mark.parametrize("which, name", [("so3", "dvak_exp"), ("so3", "dvak_cay"), ("se3", "dvak_cay")])
def test_dvak_analytic_jacobian_equals_central_differences(which, name):
    # the loop's Jacobian Jm = -dr/de (derived by sympy from DvakSource's x = h X e, w = W e and the unprojected
    # D_x w, the machinery DlasSource.jacobian shares) against central differences of the generated residual at
    # random (e, z) and steps h |e| from 0.01 to ~3, run as plain Python (numba's decorator stubbed out)
    from integrators.codegen.nonholonomic_source import DvakSource
    from integrators.methods.registry import METHODS
    from integrators.reference.nonholonomic import compiled
    from integrators.reference.stepping import make_stepper
    v, w0 = _system(which)
    st = make_stepper(METHODS[name], v.problem())
    d = st.d
    mode, C, S, N, _ = compiled.dlas_data_of(st.retraction, d, st.tau)
    G0 = np.concatenate([N.T @ st.W, np.linalg.solve(d.R, d.A @ d.Iinv)], axis=0)
    src = DvakSource(mode, C, S, N, d.I, d.B, G0)
    f = residual_and_jacobian(src)["f"]
    q = src.p
    rng = np.random.default_rng(11)
    dd = 1e-5
    for trial in range(12):
        e, m = rng.normal(size=q), rng.normal(size=src.n)
        h = [0.01, 0.3, 0.7][trial % 3] * (4.0 if trial >= 9 else 1.0)
        Jfd = -central_jacobian(lambda x: f(x, h, m)[0], e, dd)
        assert np.max(np.abs(f(e, h, m)[1] - Jfd)) <= 1e-8 * max(1.0, np.max(np.abs(Jfd))), trial
