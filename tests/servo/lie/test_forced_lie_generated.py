"""Servo-constraints of the first kind with the Lie-group methods on the generated path: the generator (w, f) in
g x g* (integrators.codegen.affine_source) against the numpy reference loop (AffineCoadjointSpace, fast=False),
on so(4) with one and two constraints, on so(4) in a random basis (the writer sums dexp^-1 in the root basis) and
on a seeded random algebra (a solvable R x_D R^3 in a random basis: no closed-form exponential, a dense
structure), and against an independent tight DOP853 (scipy) solution of
m' = ad*_w m + B^T lambda written here from the structure constants."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm, solve

from integrators import integrate
from integrators.backends import numba_kernels
from integrators.codegen.affine_source import AffineSource
from integrators.geometry import recognition
from integrators.geometry.spaces import ROUNDOFF_TERMS
from integrators.reference import genhelpers
from liegroups import named
from servo.lie import ServoFirstKind
from tests.algebras import random_basis, semidirect_r_rn
from tests.integrators.test_generic_kernel_forced import MODE, _kernel_run, _plan

FIXED = ("lie_euler", "rkmk2", "rkmk4", "cf4", "cg3")


def _drawn_algebra(seed):
    """R x_D R^3 (D uniform in [-1, 1]) in a random basis, seeded."""
    rng = np.random.default_rng(seed)
    return random_basis(semidirect_r_rn(rng.uniform(-1.0, 1.0, (3, 3))), rng, name="R x_D R^3 (random basis)")


def _algebra(name):
    if name == "so(4)":
        return named.so4()
    if name == "so(4) random basis":
        return random_basis(named.so4(), np.random.default_rng(11), name="so(4) (random basis)")
    return _drawn_algebra(2)


def _system(name, k):
    rng = np.random.default_rng(2 if name == "drawn" else 7)   # seed 2: a drawn system whose |m| stays within 3x
    alg = _algebra(name)
    n = alg.dim
    Bm = rng.standard_normal((n, n))
    I = Bm @ Bm.T / n + np.eye(n)
    A, B = rng.standard_normal((k, n)), rng.standard_normal((k, n))
    s = ServoFirstKind(alg, I, a=A[0] if k == 1 else A, b=B[0] if k == 1 else B)
    m0 = s.state_from(m=rng.standard_normal(n), project=True)
    return s, m0


def _field(s):
    """m' = ad*_w m + B^T lambda, lambda = -R^-1 A I^-1 ad*_w m (R = A I^-1 B^T), written from C:
    (ad*_w m)_j = sum_ik w_i C[i, j, k] m_k."""
    C = s.algebra.structure_constants
    Iinv = np.linalg.inv(s.I)
    A, B = np.atleast_2d(s.A), np.atleast_2d(s.B)
    R = A @ Iinv @ B.T

    def f(t, m):
        g = np.einsum("i,ijk,k->j", Iinv @ m, C, m)
        return g - B.T @ np.linalg.solve(R, A @ Iinv @ g)
    return f


def _exact(s, m0, t_end, t_eval=None):
    """DOP853 at rtol 1e-13 on :func:`_field`."""
    return solve_ivp(_field(s), (0.0, t_end), m0, method="DOP853", rtol=1e-13, atol=1e-15, t_eval=t_eval).y.T


def _bracket(C, a, b):
    """[(x1, v1), (x2, v2)] = (-[x1, x2], ad*_x1 v2 - ad*_x2 v1) in g x g*, from C."""
    n = C.shape[0]
    return np.concatenate([-np.einsum("i,j,ijk->k", a[:n], b[:n], C),
                           np.einsum("i,ijk,k->j", a[:n], C, b[n:]) - np.einsum("i,ijk,k->j", b[:n], C, a[n:])])


CASES = [("so(4)", 1), ("so(4)", 2), ("so(4) random basis", 1), ("drawn", 1), ("drawn", 2)]


@pytest.mark.parametrize("name", ["so(4) random basis", "drawn"])
def test_the_dense_bases_sum_dexpinv_in_their_sparse_basis(name):
    """The cases above cover the writer's route through a sparse basis (AffineSource._sum_basis), and that route
    is the series of the algebra's own bracket: for random theta and v of g x g*, the generated text of
    dexp^-1_theta(v) (its first terms) against the same terms summed here with the bracket from C."""
    s, m0 = _system(name, 1)
    st = recognition.recognise(s.problem(), m0)
    src = AffineSource(st)
    assert src._sum_basis() is not None
    n = st.n
    th, v = [f"th{i}" for i in range(2 * n)], [f"v{i}" for i in range(2 * n)]
    out = src.dexpinv(th, v, 6)
    text = f"def f({', '.join(th + v)}):\n" + "\n".join(src.lines) + f"\n    return ({', '.join(out)},)\n"
    env = {}
    exec(text, env)
    C = st.C
    rng = np.random.default_rng(4)
    x = rng.standard_normal(2 * n)
    u = rng.standard_normal(2 * n)

    want, term = u.copy(), u.copy()
    for c in (-0.5, 1.0 / 12.0, 0.0, -1.0 / 720.0, 0.0):   # B_k / k!, k = 1..5
        term = _bracket(C, x, term)
        want = want + c * term
    got = np.array(env["f"](*x, *u))
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want))


@pytest.mark.parametrize("name, k", CASES)
@pytest.mark.parametrize("method", FIXED)
def test_fixed_step_generated_equals_the_reference_loop(name, k, method):
    s, m0 = _system(name, k)
    P = s.problem()
    gen = integrate(P, m0, (0.0, 4.0), method=method, steps=800, backend="numpy")
    ref = integrate(P, m0, (0.0, 4.0), method=method, steps=800, fast=False)
    assert gen.backend == "numpy" and ref.backend == "numpy"   # the generated text ran (not the reference)
    scale = np.max(np.abs(ref.y))
    assert np.max(np.abs(gen.y - ref.y)) <= 1e-12 * scale
    # the constraints (a_i, w) = 0 kept to round-off (the increment's projection), as by the reference's projection
    for v in gen.constraints.values():
        assert np.max(np.abs(v)) <= 1e-13 * scale
    assert "linear_invariants" in gen.preserves and "casimirs" not in gen.preserves
    # and the method is the method: its error against the independent solution is of its order
    err = np.max(np.abs(gen.y[-1] - _exact(s, m0, 4.0)[-1])) / scale
    assert err < {"lie_euler": 0.3, "rkmk2": 1e-3, "cg3": 1e-5}.get(method, 1e-8)


@pytest.mark.parametrize("name, k", CASES)
@pytest.mark.parametrize("method", ["rkmk45", "rkmk853"])
def test_adaptive_rkmk_generated_agrees_with_the_reference_to_the_tolerance(name, k, method):
    s, m0 = _system(name, k)
    P = s.problem()
    rtol = 1e-9
    gen = integrate(P, m0, (0.0, 5.0), method=method, rtol=rtol, atol=1e-12, backend="numpy")
    ref = integrate(P, m0, (0.0, 5.0), method=method, rtol=rtol, atol=1e-12, fast=False)
    assert gen.backend == "numpy" and ref.backend == "numpy (generic reference)"
    scale = np.max(np.abs(ref.y))
    exact = _exact(s, m0, 5.0)[-1]
    # both end within a few hundred rtol of the exact solution (an RKMK pair's error norm, controller.py) and of
    # each other; the same steps unless round-off flips an accept near err = 1
    for r in (gen, ref):
        assert np.max(np.abs(r.y[-1] - exact)) <= 300 * rtol * scale
        for v in r.constraints.values():
            assert np.max(np.abs(v)) <= 1e-13 * scale
    assert abs(gen.nsteps - ref.nsteps) <= 1
    if gen.nsteps == ref.nsteps and gen.nrejected == ref.nrejected:
        assert np.max(np.abs(gen.y[-1] - ref.y[-1])) <= 1e-12 * scale


def test_the_output_grid_of_a_forced_rkmk_pair_is_the_reference_continuous_extension():
    s, m0 = _system("so(4)", 2)
    P = s.problem()
    te = np.linspace(0.0, 5.0, 201)
    gen = integrate(P, m0, (0.0, 5.0), method="rkmk853", rtol=1e-9, atol=1e-12, t_eval=te, backend="numpy")
    ref = integrate(P, m0, (0.0, 5.0), method="rkmk853", rtol=1e-9, atol=1e-12, t_eval=te, fast=False)
    assert gen.backend == "numpy" and gen.y.shape == ref.y.shape == (201, 6)
    scale = np.max(np.abs(ref.y))
    assert np.max(np.abs(gen.y - ref.y)) <= 1e-12 * scale
    assert np.max(np.abs(gen.y - _exact(s, m0, 5.0, te))) <= 1e-6 * scale
    for v in gen.constraints.values():     # the grid's states are projected onto the constraints too
        assert np.max(np.abs(v)) <= 1e-13 * scale


def test_simulate_with_a_lie_group_method_runs_the_generated_loop():
    s, m0 = _system("so(4)", 1)
    r = s.simulate(m0, 5.0, method="rkmk4", h=0.01)
    assert r.backend == "numpy" and r.status == 0
    assert np.max(np.abs(r.y[-1] - _exact(s, m0, 5.0)[-1])) <= 1e-7 * np.max(np.abs(m0))


def test_a_fixed_step_ensemble_steps_every_trajectory_as_its_single_run():
    s, m0 = _system("so(4)", 2)
    P = s.problem()
    rng = np.random.default_rng(3)
    Z = s.check_state(m0 + 0.1 * rng.standard_normal((12, 6)), project=True)   # > SMALL_BATCH: numpy columns
    ens = integrate(P, Z, (0.0, 2.0), method="rkmk4", steps=200, backend="numpy")
    for b in (0, 5, 11):
        one = integrate(P, Z[b], (0.0, 2.0), method="rkmk4", steps=200, fast=False)
        assert np.max(np.abs(ens.y[:, b] - one.y)) <= 1e-12 * np.max(np.abs(one.y))


def test_an_adaptive_ensemble_of_a_forced_rkmk_pair_runs_the_reference_and_says_so():
    s, m0 = _system("so(4)", 1)
    Z = np.stack([m0, 1.1 * m0])
    r = integrate(s.problem(), Z, (0.0, 1.0), method="rkmk45", rtol=1e-8, atol=1e-11, backend="numpy")
    assert r.backend.startswith("numpy (generic reference: an adaptive RKMK pair has generated code")
    assert np.max(np.abs(r.y[-1, 1] - _exact(s, 1.1 * m0, 1.0)[-1])) <= 1e-5


@pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")
def test_the_numba_backend_runs_the_same_text(monkeypatch):
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")
    s, m0 = _system("so(4)", 2)
    P = s.problem()
    gen = integrate(P, m0, (0.0, 2.0), method="rkmk2", steps=400, backend="numba")
    ref = integrate(P, m0, (0.0, 2.0), method="rkmk2", steps=400, fast=False)
    assert gen.backend.startswith("numba")
    assert np.max(np.abs(gen.y - ref.y)) <= 1e-12 * np.max(np.abs(ref.y))


@pytest.mark.parametrize("method, kw", [("rkmk853", dict(rtol=1e-10, atol=1e-12)), ("rkmk4", dict(steps=1000))])
def test_events_of_a_forced_lie_group_run_are_located_as_by_the_reference(method, kw):
    s, m0 = _system("so(4)", 2)
    P = s.problem()

    def ev(t, z):
        return z[..., 0] - 0.9 * m0[0]

    gen = integrate(P, m0, (0.0, 5.0), method=method, events=ev, backend="numpy", **kw)
    ref = integrate(P, m0, (0.0, 5.0), method=method, events=ev, fast=False, **kw)
    assert gen.status == ref.status == 0 and len(gen.t_events[0]) == len(ref.t_events[0]) >= 1
    assert np.max(np.abs(np.asarray(gen.t_events[0]) - np.asarray(ref.t_events[0]))) <= 1e-9
    # the event times are those of the exact solution (the method's accuracy)
    te = np.asarray(gen.t_events[0])
    assert np.max(np.abs(_exact(s, m0, 5.0, te)[:, 0] - 0.9 * m0[0])) <= 1e-6


def test_the_round_off_dexpinv_takes_its_bound_from_the_algebra_part():
    """The adaptive pairs' dexp^-1 in g x g* (summed to round-off) at theta = (x, u) with |u| = 1e3 |x|, as a force
    growing as |m|^2 makes it near a blow-up: the generated text against the exact dexp^-1, phi_1(A)^-1 v with
    A = ad_theta (the 2n x 2n matrix of the bracket from C) and phi_1(A) the upper right block of
    exp([[A, I], [0, 0]]) (scipy's expm). The Frobenius norm of ad_theta is ~1e3 there, far beyond the series'
    bound, but its spectrum is ad_x's: the sum converges, and the text must give it, not the NaN that rejects the
    step (what it did while it took the bound from the norm of all of theta)."""
    s, m0 = _system("so(4) random basis", 1)
    st = recognition.recognise(s.problem(), m0)
    src = AffineSource(st)
    n = st.n
    th, v = [f"th{i}" for i in range(2 * n)], [f"v{i}" for i in range(2 * n)]
    out = src.dexpinv(th, v, ROUNDOFF_TERMS)
    text = f"def f({', '.join(th + v)}):\n" + "\n".join(src.lines) + f"\n    return ({', '.join(out)},)\n"
    env = dict(genhelpers.SCALAR)
    exec(text, env)
    C = st.C
    rng = np.random.default_rng(8)
    for scale_u in (1.0, 1e3):
        x = rng.standard_normal(n)
        x *= 0.8 / np.linalg.norm(np.array([_bracket(C, np.r_[x, 0 * x], e)[:n] for e in np.eye(2 * n)]))  # ||ad_x||_F
        theta = np.r_[x, scale_u * rng.standard_normal(n)]
        w = rng.standard_normal(2 * n)
        A = np.array([_bracket(C, theta, e) for e in np.eye(2 * n)]).T
        M = np.zeros((4 * n, 4 * n))
        M[:2 * n, :2 * n], M[:2 * n, 2 * n:] = A, np.eye(2 * n)
        want = solve(expm(M)[:2 * n, 2 * n:], w)
        got = np.array(env["f"](*theta, *w))
        assert np.all(np.isfinite(got)), scale_u
        assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want)), scale_u


def test_the_adaptive_rkmk_pairs_stop_at_a_finite_time_blow_up_as_dop853():
    """A servo-constraint of the first kind on so(4) in a random basis whose motion blows up at t* ~ 6.905 (the
    multiplier force grows as |m|^2): DOP853 on m' = ad*_w m + B^T lambda written from C (:func:`_field`) stops at
    t*, and so must the Lie-group pairs, with status -1 and the step-size message, in a few thousand attempts.
    Before the rescaled bound of dexp^-1 (AffineSource.dexpinv) their steps shrank as 1/|m|^2: the 20,000-step
    budget ran out at t = 6.90480, 1.5e-4 before t*, after 45,000 attempts (27-51 s). The generic kernel (the
    structure as data) reaches t* the same way."""
    s, m1 = _system("so(4) random basis", 1)
    m0 = 4.0 * m1
    ref = solve_ivp(_field(s), (0.0, 10.0), m0, method="DOP853", rtol=1e-12, atol=1e-14)
    tstar = ref.t[-1]
    assert ref.status == -1 and 6.0 < tstar < 8.0 and np.max(np.abs(ref.y[:, -1])) > 1e10
    for method in ("rkmk45", "rkmk853"):
        r = s.simulate(m0, 10.0, steps=None, method=method, backend="numpy", rtol=1e-9, atol=1e-11, max_steps=20000)
        assert r.status == -1 and "step size fell below" in r.message, (method, r.message)
        assert abs(r.t[-1] - tstar) <= 1e-6 * tstar, (method, r.t[-1], tstar)
        assert r.nsteps + r.nrejected <= 5000, (method, r.nsteps, r.nrejected)
        pl = _plan(s.problem(), method, m0)
        status, t, ns, nr, _, _, _ = _kernel_run(pl, m0, 10.0, 1e-9, 1e-11, mode=MODE)
        assert status == -1 and abs(t - tstar) <= 1e-6 * tstar and ns + nr <= 5000, (method, status, t, ns, nr)
