"""The generated straight-line loops of dlas_* and lie_rattle_* (integrators.codegen.nonholonomic_source, simplified
Newton): the same map as the generic compiled loop (full Newton, analytic Jacobian) to round-off, the constraint at
every step, the refresh of a stale Jacobian, a Newton failure reported, and the generated analytic Jacobian against
central differences of the generated residual."""

import functools

import numpy as np
import pytest

import liegroups
from liegroups import named
from integrators import ConvergenceError, integrate
from integrators.methods import METHODS
from integrators.reference.nonholonomic import compiled, suslov_problem
from integrators.reference.stepping import make_stepper

from ._generated_harness import central_jacobian, residual_and_jacobian

numba_kernels = pytest.importorskip("integrators.backends.numba_kernels")
pytestmark = pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")

SLEIGH_I = np.array([[1.0, 0, 0], [0, 1.0, 0.7], [0, 0.7, 0.99]])


def _problem(which):
    if which == "sleigh":
        return suslov_problem(named.se2(), SLEIGH_I, [0.0, 1.0, 0.0], group=liegroups.SE2)
    if which == "so3":
        return suslov_problem(named.so3(), np.diag([1.0, 2.0, 3.0]) + 0.3 * (np.ones((3, 3)) - np.eye(3)), [0, 0, 1.0],
                              group=liegroups.SO3)
    return suslov_problem(named.se3(), np.diag([1.0, 2.0, 3.0, 1.5, 1.2, 1.1]) + 0.1,
                          [[0, 0, 1.0, 0, 0, 0], [0, 0, 0, 0, 1.0, 0]], group=liegroups.SE3)


W = {"sleigh": [[0.3, 0.0, 1.2], [-0.5, 0.0, 0.4]], "so3": [[1.0, 0.5, 0.0], [0.2, -1.0, 0.0]],
     "se3": [[1.0, 0.5, 0.0, 0.3, 0.0, 0.2], [0.1, -0.4, 0.0, 0.2, 0.0, -0.3]]}


def _runs(which, name, steps, theta_refresh=None):
    """(generated, generic) runs of ``steps`` steps of h = 0.05 from the two states of W (a batch), each with its
    stepper; the generic loop runs as plain Python (the same code numba compiles for the engine)."""
    from integrators.backends import nonholonomic_loops
    p = _problem(which)
    m0 = np.asarray(W[which]) @ p.discrete.I
    out = []
    for gen in (functools.partial(nonholonomic_loops.dlas_loop, theta_refresh=theta_refresh), None):
        st = make_stepper(METHODS[name], p)
        assert st.compiled_reason is None
        if name.startswith("lie_rattle"):
            res, lam = compiled.run_dlas(st, m0, 0.0, 0.05, steps, 1, None, lam0=st._lambda(m0), generated=gen)
        else:
            res, lam = compiled.run_dlas(st, m0, 0.0, 0.05, steps, 1, None, generated=gen), None
        out.append((res, lam, st))
    return p, out


@pytest.mark.parametrize("which, name", [("sleigh", "dlas_exp"), ("se3", "dlas_cay")])
def test_generated_dlas_equals_the_generic_loop(which, name):
    # 1000 steps: the moving phase (Jacobian refreshed) and the approach to the steady motion (one residual a
    # step, the output from the last residual's u1); the same stop tolerance, so the same map to round-off.
    # se(3): 300 steps (its motion amplifies round-off: the numpy stepper and the generic loop differ by 3.7e-12
    # after 1000 steps, the generated and the generic loop by 2.5e-13)
    steps = 300 if which == "se3" else 1000
    p, ((new, _, st_new), (old, _, st_old)) = _runs(which, name, steps)
    assert new.status == 0 and st_new.jacobians >= 1
    np.testing.assert_allclose(new.y, old.y, rtol=0, atol=1e-13)
    d = p.discrete
    assert np.max(np.abs(new.y @ d.Iinv @ d.A.T)) <= 1e-14        # (a, w) = 0 at every saved step
    assert st_new.nfev_total <= 3 * steps * 2                     # a few residuals a step, not 30


@pytest.mark.parametrize("which, name", [("so3", "lie_rattle_cay"), ("so3", "lie_rattle_exp"),
                                         ("sleigh", "lie_rattle_exp"), ("sleigh", "lie_rattle_cay")])
def test_generated_lie_rattle_equals_the_generic_loop(which, name):
    # 100 steps: the RATTLE's parasitic mode amplifies round-off differences over long runs (its docstring).
    # The generated loop predicts from the same-parity extrapolation of degree 8 (the generic loop: degree 2)
    # with a kept Jacobian per parity: another starting point, the same root to the same tolerance.
    p, ((new, lam_new, st), (old, lam_old, _)) = _runs(which, name, 100)
    assert new.status == 0 and len(new.t) == 101
    np.testing.assert_allclose(new.y, old.y, rtol=0, atol=1e-13)
    np.testing.assert_allclose(lam_new, lam_old, rtol=0, atol=1e-10)
    d = p.discrete
    assert np.max(np.abs(new.y @ d.Iinv @ d.A.T)) <= 1e-12
    # residuals a step, each Jacobian counted as p + 1 (what forward differences cost; the analytic one is cheaper):
    # under 4 on two moving trajectories (measured 2.9-3.7; 5.1-5.2 with the quadratic same-parity predictor and the
    # refresh at 1e-4)
    assert (st.nfev_total + (d.n + 1) * st.jacobians) / (2 * 100) < 4.0


@pytest.mark.parametrize("d", [0, 1, 2, 5, 8])
def test_parity_extrapolation_is_exact_for_smooth_plus_alternating_polynomials(d):
    # eta_k = P(k) + (-1)^k Q(k), P and Q of degree d with random coefficients: the prediction from eta_(k-1),
    # ..., eta_(k-2d-2) is eta_k; with degree d + 1 in the alternating part it is not (the test can fail)
    from integrators.codegen.nonholonomic_source import parity_extrapolation
    rng = np.random.default_rng(d)
    c = np.array(parity_extrapolation(d))
    assert len(c) == 2 * (d + 1) and np.all(c[0::2] == 0.0)
    k = 3.0
    past = k - 1.0 - np.arange(len(c))
    for degP, degQ, exact in [(d, d, True), (d, d + 1, False)]:
        P, Q = rng.normal(size=degP + 1), rng.normal(size=degQ + 1)
        Q[-1] = 1.0                                   # its top coefficient non-zero
        f = lambda t: np.polyval(P, t) + (-1.0) ** np.abs(t) * np.polyval(Q, t)
        err = abs(c @ f(past) - f(k))
        assert (err <= 1e-9 * np.sum(np.abs(c)) * max(1.0, abs(f(past)).max())) == exact


@pytest.mark.parametrize("theta_refresh", [1e300, 0.0])
def test_a_stale_or_always_fresh_jacobian_finds_the_same_root(theta_refresh):
    # 1e300: the Jacobian of the first step is kept while the iteration contracts (refreshed only when it stops
    # contracting); 0: refreshed before every step. Simplified Newton converges to the same root either way.
    p, ((new, _, st), (old, _, _)) = _runs("sleigh", "dlas_exp", 300, theta_refresh)
    np.testing.assert_allclose(new.y, old.y, rtol=0, atol=1e-13)
    if theta_refresh == 0.0:
        assert st.jacobians >= 299
    else:
        assert st.jacobians < 30


@pytest.mark.parametrize("name", ["dlas_exp", "lie_rattle_exp"])
def test_newton_failure_in_the_generated_loop_is_reported(name):
    p = _problem("sleigh")
    m = np.array([0.3, 0.0, 1.2]) @ SLEIGH_I * 1e3
    with pytest.raises(ConvergenceError, match=f"{name}.*did not converge in step 1 "):
        integrate(p, m, (0.0, 10.0), method=name, h=5.0, check=False, backend="numba")


def _residual_and_jacobian(which, name):
    """(ns, src): ns["f"](e, h, m) -> (r, Jm) run as plain Python from the generated lines of the residual and of the
    analytic Jacobian (beta and dbeta from the generated text, numba's decorator stubbed out)."""
    from integrators.codegen.nonholonomic_source import DlasSource
    p = _problem(which)
    st = make_stepper(METHODS[name], p)
    d = p.discrete
    mode, C, S, N, Pc = compiled.dlas_data_of(st.retraction, d, st.tau)
    if name.startswith("lie_rattle"):
        N, Pc = np.eye(d.n), 2.0 * Pc - np.eye(d.n)
    src = DlasSource(mode, C, S, N, Pc, Pc, d.I, d.Iinv, 2 if name.startswith("lie_rattle") else 1)
    return residual_and_jacobian(src), src


@pytest.mark.parametrize("which, name", [("sleigh", "lie_rattle_exp"), ("sleigh", "dlas_exp"),
                                         ("so3", "lie_rattle_cay"), ("se3", "dlas_cay"), ("so3", "lie_rattle_exp")])
def test_analytic_jacobian_equals_central_differences(which, name):
    # Jm = -dr/de (the matrix simplified Newton inverts) against central differences of the generated residual
    # (error ~ d^2 |r'''| ~ 1e-10) at random points; h |e| from 0.01 to ~3 so that s = x^T Q x lies on both sides
    # of beta's series / closed-form switch at s = 0.04. For exp the beta'(s) term is checked to matter: with
    # dbeta set to 0 the same comparison fails by far more than the tolerance (at h |e| ~ 3).
    ns, src = _residual_and_jacobian(which, name)
    f = ns["f"]
    rng = np.random.default_rng(7)
    q, dd = src.p, 1e-5
    for trial in range(16):
        e, m = rng.normal(size=q), rng.normal(size=src.n)
        h = [0.01, 0.05, 0.3, 0.7][trial % 4]
        if trial >= 12:
            e *= 4.0                                    # h |e| ~ 3: s ~ 9 (beta's pole at s = 4 pi^2)
        Jfd = -central_jacobian(lambda x: f(x, h, m)[0], e, dd)
        tol = 1e-8 * max(1.0, np.max(np.abs(Jfd)))       # measured: at most 3e-10
        assert np.max(np.abs(f(e, h, m)[1] - Jfd)) <= tol, trial
        if src.mode == 0 and trial == 15:
            dbeta = ns["dbeta"]
            ns["dbeta"] = lambda s: 0.0
            wrong = np.max(np.abs(f(e, h, m)[1] - Jfd))
            ns["dbeta"] = dbeta
            assert wrong > 1e4 * tol, (trial, wrong)

def test_generated_dbeta_is_the_derivative_of_beta():
    # beta(s) = (1 - (t/2) cot(t/2)) / s, t = sqrt(s) (the closed form, written here): its derivative by sympy,
    # evaluated with 30 digits, against the generated dbeta on both sides of the series switch at s = 0.04
    import sympy as sp
    ns, _ = _residual_and_jacobian("sleigh", "lie_rattle_exp")
    s = sp.Symbol("s", positive=True)
    dref = sp.diff((1 - sp.sqrt(s) / 2 * sp.cot(sp.sqrt(s) / 2)) / s, s)
    for v in ["1e-3", "0.02", "0.0399", "0.0401", "0.3", "1", "4", "9"]:
        ref = float(dref.subs(s, sp.Rational(v)).evalf(30))
        assert abs(ns["dbeta"](float(v)) - ref) <= 1e-10 * abs(ref), v     # series end: 5e-12 at s = 0.04
    assert ns["dbeta"](0.0) == 1.0 / 720                      # beta = 1/12 + s/720 + ...
