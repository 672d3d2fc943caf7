"""Time-dependent problems on the generated path (integrators.backends.timed_runner and timed_adaptive, the
timed tangent flow of integrators.codegen.timed_source): against the numpy reference loop (fast=False), and against independent
values: the sleighs' equations in (v, omega) derived by hand (tests/servo/lie/test_time_dependent_systems.py
derives them), the gyrostat with isotropic inertia in closed form, and the exact sum of the Lorenz spectrum."""

import numpy as np
import pytest
import sympy as sp
from liegroups import named
from scipy.integrate import solve_ivp

import integrators
from integrators import MethodError, ODEProblem
from integrators.backends import numba_kernels
from integrators.geometry import timed_quadratic
from servo import TimeDependentSystem

t = sp.Symbol("t")
needs_numba = pytest.mark.skipif(not numba_kernels.available(), reason="numba is not installed")
BACKENDS = ["numpy", pytest.param("numba", marks=needs_numba)]
M, J, ELL, MM, XI, ETA0, A, OM = 1.0, 1.0, 0.5, 0.5, 0.5, 0.3, 2.0, 1.0


def oscillating_mass():
    """The sleigh with a point mass at (xi, eta(t)) (builder) and its equations in (v, omega) by hand."""
    eta = ETA0 + A * sp.sin(OM * t)
    mu, S1, S2 = M + MM, M * ELL + MM * XI, MM * eta
    IO = J + M * ELL ** 2 + MM * (XI ** 2 + eta ** 2)
    S = TimeDependentSystem(named.se2(), sp.Matrix([[mu, 0, -S2], [0, mu, S1], [-S2, S1, IO]]),
                            gyrostat=MM * eta.diff(t) * sp.Matrix([0, 1, XI]), a=[0, 1, 0], period=2 * np.pi / OM)

    def by_hand(tt, y):
        # mu v' - S2 omega' = S1 omega^2 + 2 m eta' omega; -S2 v' + IO omega' = -S1 v omega - 2 m eta eta' omega - m xi eta''
        v, w = y[..., 0], y[..., 1]
        e, e1, e2 = ETA0 + A * np.sin(OM * tt), A * OM * np.cos(OM * tt), -A * OM ** 2 * np.sin(OM * tt)
        s2, io = MM * e, J + M * ELL ** 2 + MM * (XI ** 2 + e ** 2)
        r1 = S1 * w ** 2 + 2 * MM * e1 * w
        r2 = -S1 * v * w - 2 * MM * e * e1 * w - MM * XI * e2
        det = mu * io - s2 ** 2
        return np.stack([(io * r1 + s2 * r2) / det, (s2 * r1 + mu * r2) / det], -1)

    return S, by_hand


@pytest.mark.parametrize("backend", BACKENDS)
def test_builders_sleigh_on_the_generated_path_follows_the_hand_equations(backend):
    S, by_hand = oscillating_mass()
    p = S.problem()
    w0 = np.array([0.5, 0.0, 0.2])
    m0 = S.state_from(w0)
    T = S.period
    h = T / 400
    gen = integrators.integrate(p, m0, (0.0, 4 * T), method="rk4", h=h, save_every=100, backend=backend)
    ref = integrators.integrate(p, m0, (0.0, 4 * T), method="rk4", h=h, save_every=100, fast=False)
    assert gen.backend == backend and gen.status == 0
    np.testing.assert_allclose(gen.y, ref.y, rtol=0, atol=1e-12)        # the same steps as the numpy loop
    w = S.velocity(gen.t, gen.y)
    hand = solve_ivp(by_hand, (0.0, gen.t[-1]), w0[[0, 2]], method="DOP853", rtol=1e-13, atol=1e-14, t_eval=gen.t)
    assert np.max(np.abs(w[:, [0, 2]] - hand.y.T)) < 1e-7               # rk4's error at h = T/400
    assert np.max(np.abs(w[:, 1])) < 1e-8      # the blade v2 = 0 (in m, A(t) w = 0 moves: kept to rk4's error)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gyrostat_on_the_generated_path_rotates_in_closed_form(backend):
    # I = 2 Id, k = cos(t) e3: m' = (cos t / 2) e3 x m, a rotation about e3 by sin(t)/2
    S = TimeDependentSystem(named.so3(), [2.0, 2.0, 2.0], gyrostat=[0, 0, sp.cos(t)], period=2 * np.pi)
    m0 = np.array([[0.3, 0.4, 1.2], [1.0, -0.5, 0.1]] * 6)             # 12 orbits: numpy columns
    res = integrators.integrate(S.problem(), m0, (0.0, 7.0), method="rk4", h=1e-3, save_every=500, backend=backend)
    assert res.backend == backend
    ang = np.sin(res.t)[:, None] / 2
    x, y = m0[None, :, 0], m0[None, :, 1]
    exact = np.stack([x * np.cos(ang) - y * np.sin(ang), x * np.sin(ang) + y * np.cos(ang),
                      np.broadcast_to(m0[None, :, 2], ang.shape[:1] + (12,))], -1)
    assert np.max(np.abs(res.y - exact)) < 1e-11


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduced_sleigh_spectrum_on_the_generated_path_equals_the_reference(backend):
    _, by_hand = oscillating_mass()
    T = 2 * np.pi / OM
    red = ODEProblem(by_hand, 2, period=T)
    Y = np.array([[0.5, 0.0], [0.3, 0.2], [1.0, -0.4]])
    kw = dict(dt=T, h=T / 30, transient=2 * T)
    ref = integrators.lyapunov_spectrum(red, Y, 30 * T, fast=False, **kw)
    gen = integrators.lyapunov_spectrum(red, Y, 30 * T, backend=backend, **kw)
    one = integrators.lyapunov_spectrum(red, Y[1], 30 * T, backend=backend, **kw)
    assert ref.backend == "reference" and gen.backend == backend and gen.jacobian.startswith("quadratic")
    np.testing.assert_allclose(gen.exponents, ref.exponents, rtol=0, atol=1e-9)
    np.testing.assert_allclose(gen.running, ref.running, rtol=0, atol=1e-9)
    np.testing.assert_allclose(one.exponents, ref.exponents[1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(gen.megno, ref.megno, rtol=0, atol=1e-8)


def test_a_period_that_is_not_a_whole_number_of_steps_tables_the_whole_run():
    # the Lorenz field with a periodic forcing term; T / h not an integer: the table covers every step
    def f(tt, y):
        x, v, z = y[..., 0], y[..., 1], y[..., 2]
        return np.stack([10 * (v - x) + np.sin(3.0 * tt), x * (28 - z) - v, x * v - 8 / 3 * z], -1)

    p = ODEProblem(f, 3, period=2 * np.pi / 3.0)
    S, times = timed_quadratic.table_layout([0.0, 0.5, 0.5, 1.0], 0.01, 500, p.period)
    assert S == 500 and times.shape == (500, 4)
    ref = integrators.lyapunov_spectrum(p, [1.0, 1.0, 1.0], 5.0, dt=0.1, h=0.01, fast=False)
    gen = integrators.lyapunov_spectrum(p, [1.0, 1.0, 1.0], 5.0, dt=0.1, h=0.01, backend="numpy")
    assert gen.backend == "numpy"
    np.testing.assert_allclose(gen.exponents, ref.exponents, rtol=0, atol=1e-9)
    # the divergence is -(sigma + 1 + beta) everywhere: the sum of the exponents, exactly
    assert abs(gen.exponents.sum() + (10 + 1 + 8 / 3)) < 1e-3   # (the method's map: O(h^4))


def test_a_coefficient_table_too_large_runs_the_numpy_loop_and_says_so_for_numba(monkeypatch):
    _, by_hand = oscillating_mass()
    red = ODEProblem(by_hand, 2)         # no period: the table covers the whole run
    monkeypatch.setattr(timed_quadratic, "MAX_TABLE", 1000)
    r = integrators.lyapunov_spectrum(red, [0.5, 0.0], 20.0, dt=1.0, h=0.05)
    assert r.backend == "reference"
    res = integrators.integrate(red, [0.5, 0.0], (0.0, 20.0), method="rk4", h=0.05)
    ref = integrators.integrate(red, [0.5, 0.0], (0.0, 20.0), method="rk4", h=0.05, fast=False)
    np.testing.assert_array_equal(res.y, ref.y)
    if numba_kernels.available():
        with pytest.raises(MethodError, match="too large"):
            integrators.lyapunov_spectrum(red, [0.5, 0.0], 20.0, dt=1.0, h=0.05, backend="numba")
        with pytest.raises(MethodError, match="too large"):
            integrators.integrate(red, [0.5, 0.0], (0.0, 20.0), method="rk4", h=0.05, backend="numba")


def test_the_recognised_polynomial_reproduces_the_field_and_refuses_a_non_polynomial():
    _, by_hand = oscillating_mass()
    red = ODEProblem(by_hand, 2, period=2 * np.pi)
    tq = timed_quadratic.recognise(red, [0.5, 0.0], 0.0, red.period)
    rng = np.random.default_rng(1)
    Y = 3 * rng.standard_normal((5, 2))
    for tt in (0.3, 2.0, 17.5):
        np.testing.assert_allclose(tq.evaluate(tq.coefficients([tt])[0], Y), by_hand(tt, Y), rtol=1e-12, atol=1e-12)
    cubic = ODEProblem(lambda tt, y: np.stack([y[..., 1], -y[..., 0] ** 3 * np.cos(tt)], -1), 2)
    assert timed_quadratic.recognise(cubic, [1.0, 0.0]) is None


@needs_numba
def test_auto_takes_the_compiled_tangent_flow_without_waiting_on_a_compiler(monkeypatch, tmp_path):
    from integrators.backends import auto_compile, tangent_runner

    monkeypatch.setenv("LIEDYN_CACHE_DIR", str(tmp_path))          # a cache without the compiled flow
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "background")
    jobs = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: jobs.append(job))
    monkeypatch.setattr(tangent_runner, "_PLANS", {})
    _, by_hand = oscillating_mass()
    T = 2 * np.pi / OM
    red = ODEProblem(by_hand, 2, period=T)
    run = lambda: integrators.lyapunov_spectrum(red, [0.5, 0.0], 250 * T, dt=T, h=T / 30)   # work 22,500
    first = run()
    assert first.backend == "numpy" and len(jobs) == 1              # numpy now, the compile queued
    small = integrators.lyapunov_spectrum(red, [0.5, 0.0], 10 * T, dt=T, h=T / 30)
    assert small.backend == "numpy" and len(jobs) == 1              # too small to queue anything
    jobs[0]()                                                       # the background job (run here)
    second = run()
    assert second.backend == "numba" and len(jobs) == 1
    np.testing.assert_allclose(second.exponents, first.exponents, rtol=0, atol=1e-12)
    # a new process (no plan, no module loaded) finds the disk cache's marker and loads it in the call
    monkeypatch.setattr(tangent_runner, "_PLANS", {})
    monkeypatch.setattr(numba_kernels, "_NAMESPACES", {})
    assert run().backend == "numba" and len(jobs) == 1
    # policy "off": nothing queued, the compiled flow only when it needs no compiler
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "off")
    monkeypatch.setenv("LIEDYN_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(tangent_runner, "_PLANS", {})
    monkeypatch.setattr(numba_kernels, "_NAMESPACES", {})
    assert run().backend == "numpy" and len(jobs) == 1


@pytest.mark.parametrize("method", ["rk45", "rk853", "tsit5"])
def test_adaptive_pairs_on_the_generated_path_take_the_reference_steps_and_follow_the_hand_equations(method):
    S, by_hand = oscillating_mass()
    p = S.problem()
    w0 = np.array([0.5, 0.0, 0.2])
    m0 = S.state_from(w0)
    kw = dict(method=method, rtol=1e-10, atol=1e-12)
    gen = integrators.integrate(p, m0, (0.0, 12.0), backend="numpy", **kw)
    ref = integrators.integrate(p, m0, (0.0, 12.0), fast=False, **kw)
    assert gen.backend == "numpy" and ref.backend == "numpy (generic reference)"
    # the same controller from the same first step (the error estimate is a difference at the tolerance's
    # size, whose last bits differ between the two writings of the field: the steps agree to ~1e-7)
    assert gen.nsteps == ref.nsteps and gen.nrejected == ref.nrejected and gen.nfev == ref.nfev
    np.testing.assert_allclose(gen.t, ref.t, rtol=0, atol=1e-5)
    assert gen.t[-1] == ref.t[-1] == 12.0
    np.testing.assert_allclose(gen.y[-1], ref.y[-1], rtol=0, atol=1e-9)
    # the output grid of simulate (the pair's continuous extension) on the generated steps
    res = S.simulate(m0, 12.0, steps=24, method=method, rtol=1e-11, atol=1e-13)
    assert res.backend in ("numpy", "numba")
    hand = solve_ivp(by_hand, (0.0, 12.0), w0[[0, 2]], method="DOP853", rtol=1e-13, atol=1e-14, t_eval=res.t)
    assert np.max(np.abs(res.outputs["w"][:, [0, 2]] - hand.y.T)) < 1e-8


@needs_numba
def test_compiled_adaptive_pair_follows_the_gyrostat_closed_form():
    S = TimeDependentSystem(named.so3(), [2.0, 2.0, 2.0], gyrostat=[0, 0, sp.cos(t)], period=2 * np.pi)
    m0 = np.array([0.3, 0.4, 1.2])
    res = integrators.integrate(S.problem(), m0, (0.0, 7.0), method="rk45", rtol=1e-12, atol=1e-13,
                                backend="numba", save_every=10)
    assert res.backend == "numba" and res.status == 0
    ang = np.sin(res.t) / 2
    exact = np.stack([0.3 * np.cos(ang) - 0.4 * np.sin(ang), 0.3 * np.sin(ang) + 0.4 * np.cos(ang),
                      np.full_like(ang, 1.2)], -1)
    assert np.max(np.abs(res.y - exact)) < 1e-10


def test_a_coefficient_source_that_disagrees_with_the_field_is_refused():
    S, _ = oscillating_mass()
    p = S.problem()
    good = p.coefficient_source()
    p.coefficient_source = lambda derive=True: good.replace("math.sin(", "1.001*math.sin(")   # not this field
    m0 = S.state_from([0.5, 0.0, 0.2])
    r = integrators.integrate(p, m0, (0.0, 2.0), method="rk45")
    assert r.backend == "numpy (generic reference)"
    if numba_kernels.available():
        with pytest.raises(MethodError, match="coefficient_source"):
            integrators.integrate(p, m0, (0.0, 2.0), method="rk45", backend="numba")


@pytest.mark.parametrize("backend", BACKENDS)
def test_trajectories_that_blow_up_are_lost_as_in_the_reference_loop(backend):
    # v' = (1 + sin(t)/2) v^2 blows up in finite time from v = 2 (before t = 0.5), not from 0.1 or 0.2 within t = 3
    p = ODEProblem(lambda tt, y: np.stack([(1 + 0.5 * np.sin(tt)) * y[..., 0] ** 2, -y[..., 1] + 0 * y[..., 0]], -1),
                   2, period=2 * np.pi)
    Y = np.array([[0.1, 1.0], [2.0, 1.0], [0.2, 0.5]] * 4)          # 12 orbits: numpy columns
    for y0 in (Y, Y[1]):
        gen = integrators.integrate(p, y0, (0.0, 3.0), method="rk4", h=0.01, save_every=50, backend=backend)
        ref = integrators.integrate(p, y0, (0.0, 3.0), method="rk4", h=0.01, save_every=50, fast=False)
        assert gen.backend == backend and gen.status == ref.status == -1
        np.testing.assert_array_equal(gen.t, ref.t)
        np.testing.assert_allclose(gen.y, ref.y, rtol=1e-14, atol=0)
        if y0.ndim == 2:
            np.testing.assert_array_equal(gen.failed, [1, 4, 7, 10])
            np.testing.assert_array_equal(gen.t_end, ref.t_end)


def test_a_field_changed_in_place_is_recognised_again():
    # a closure over a mutable coefficient: the cached polynomial is checked at the run's start
    c = np.array([1.0])
    p = ODEProblem(lambda tt, y: np.stack([c[0] * np.sin(tt) * y[..., 1], -y[..., 0] * y[..., 1]], -1), 2)
    a = integrators.integrate(p, [1.0, 0.5], (0.0, 2.0), method="rk4", h=0.01, backend="numpy")
    c[0] = 3.0
    b = integrators.integrate(p, [1.0, 0.5], (0.0, 2.0), method="rk4", h=0.01, backend="numpy")
    ref = integrators.integrate(p, [1.0, 0.5], (0.0, 2.0), method="rk4", h=0.01, fast=False)
    np.testing.assert_allclose(b.y, ref.y, rtol=0, atol=1e-13)
    assert np.max(np.abs(b.y[-1] - a.y[-1])) > 1e-2


@pytest.mark.parametrize("backend", BACKENDS)
def test_rkmk_on_the_generated_path_keeps_the_casimir_and_follows_the_closed_form(backend):
    # the velocity W(t) m + c(t) tabled at the stage times; the stages' exponentials keep |m|^2 exactly
    S = TimeDependentSystem(named.so3(), [2.0, 2.0, 2.0], gyrostat=[0, 0, sp.cos(t)], period=2 * np.pi)
    m0 = np.array([[0.3, 0.4, 1.2], [1.0, -0.5, 0.1]] * 6)
    res = integrators.integrate(S.problem(), m0, (0.0, 7.0), method="rkmk4", h=1e-3, save_every=500, backend=backend)
    ref = integrators.integrate(S.problem(), m0[:2], (0.0, 7.0), method="rkmk4", h=1e-3, save_every=500, fast=False)
    assert res.backend == backend
    np.testing.assert_allclose(res.y[:, :2], ref.y, rtol=0, atol=1e-13)
    ang = np.sin(res.t)[:, None] / 2
    x, y = m0[None, :, 0], m0[None, :, 1]
    exact = np.stack([x * np.cos(ang) - y * np.sin(ang), x * np.sin(ang) + y * np.cos(ang),
                      np.broadcast_to(m0[None, :, 2], ang.shape[:1] + (12,))], -1)
    assert np.max(np.abs(res.y - exact)) < 1e-11
    r2 = np.sum(res.y ** 2, -1)
    assert np.max(np.abs(r2 - r2[0])) < 1e-13


def test_hyperplane_section_of_a_time_dependent_problem_matches_scipy_events():
    # the orbits stepped by the generated loop (integrate), the crossings located on the one-step map at
    # the step's own times; against the event finder of solve_ivp on the hand-derived equations
    _, by_hand = oscillating_mass()
    T = 2 * np.pi / OM
    red = ODEProblem(by_hand, 2, period=T)
    y0 = np.array([0.5, 0.0])
    sec = integrators.poincare_section(red, y0, (np.array([0.0, 1.0]), 0.0), 40.0, h=T / 400, direction=0,
                                       backend="numpy")
    ev = lambda tt, y: y[1]
    ref = solve_ivp(by_hand, (0.0, 40.0), y0, method="DOP853", rtol=1e-12, atol=1e-13, events=ev)
    te = ref.t_events[0][ref.t_events[0] > 1e-9]          # (omega = 0 at t = 0 itself is not a crossing)
    assert len(sec.times) == len(te) >= 5
    np.testing.assert_allclose(sec.times, te, rtol=0, atol=1e-6)
    assert np.max(np.abs(sec.points[:, 1])) < 1e-12


def test_a_short_adaptive_run_does_not_pay_for_deriving_the_coefficients():
    S, _ = oscillating_mass()
    m0 = S.state_from([0.5, 0.0, 0.2])
    short = integrators.integrate(S.problem(), m0, (0.0, 0.05), method="rk45", rtol=1e-6, atol=1e-9)
    assert short.backend == "numpy (generic reference)" and getattr(S, "_coef_source", None) is None
    long = integrators.integrate(S.problem(), m0, (0.0, 20.0), method="rk45", rtol=1e-10, atol=1e-12)
    assert long.backend == "numpy" and S.coefficient_source(derive=False) is not None
    # derived once, the generated loop serves the short runs too
    assert integrators.integrate(S.problem(), m0, (0.0, 0.05), method="rk45", rtol=1e-6, atol=1e-9).backend == "numpy"


def test_a_field_singular_at_the_probes_is_refused_without_a_warning():
    # the Kepler field is singular at 0 (a probe of the recognition): the reference runs, no RuntimeWarning
    kepler = ODEProblem(lambda tt, y: np.stack([y[..., 1], -y[..., 0] / np.abs(y[..., 0]) ** 3], -1), 2)
    assert timed_quadratic.recognise(kepler, [1.0, 0.3]) is None
    with np.errstate(all="raise"):
        a = integrators.integrate(kepler, [1.0, 0.3], (0.0, 0.5), method="rk4", h=0.01)
    b = integrators.integrate(kepler, [1.0, 0.3], (0.0, 0.5), method="rk4", h=0.01, fast=False)
    np.testing.assert_array_equal(a.y, b.y)


def _square_wave(tt, y):
    # x'' = -x + sign(sin t): a periodic forcing with a jump (its Fourier series decays like 1/k)
    return np.stack([y[..., 1], -y[..., 0] + np.sign(np.sin(tt)) + 0.0 * y[..., 1]], -1)


def test_fourier_fit_of_a_periodic_field_resolves_its_coefficients_and_its_text_is_the_same_function():
    from integrators.codegen import timed_source
    from integrators.geometry import timed_fourier
    _, by_hand = oscillating_mass()
    T = 2 * np.pi / OM
    tq = timed_quadratic.recognise(ODEProblem(by_hand, 2, period=T), [0.5, 0.2], 0.0, T)
    fit = timed_fourier.fit(tq, T)
    assert fit is not None and fit.samples <= timed_fourier.NMAX
    times = np.random.default_rng(5).uniform(-40.0, 40.0, 50)     # any t: the fit is periodic
    want = tq.coefficients(times).reshape(len(times), -1)        # read off the field itself
    scale = 1.0 + np.max(np.abs(want))
    assert np.max(np.abs(fit.evaluate(times) - want)) <= 1e-12 * scale
    env = {"math": __import__("math")}
    exec(timed_source.fourier_coef_source(fit), env)             # the text numba compiles
    py = timed_fourier.coefficients_function(fit)                # the Python loop's numpy version
    for tt in times[:10]:
        np.testing.assert_allclose(env["coef"](float(tt)), want[list(times).index(tt)], rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(py(float(tt)), want[list(times).index(tt)], rtol=0, atol=1e-12 * scale)
    # a jump is not resolved by NMAX samples: no fit
    sq = timed_quadratic.recognise(ODEProblem(_square_wave, 2, period=2 * np.pi), [0.5, 0.2], 0.0, 2 * np.pi)
    assert sq is not None and timed_fourier.fit(sq, 2 * np.pi) is None


@pytest.mark.parametrize("method", ["rk45", "rk853", "tsit5"])
def test_adaptive_pairs_on_a_periodic_ode_problem_take_the_reference_steps_and_follow_the_hand_equations(method):
    # the sleigh's equations in (v, omega) by hand as an ODE problem with a period: its coefficients a Fourier
    # fit over one period (integrators.geometry.timed_fourier), the generated adaptive loop
    _, by_hand = oscillating_mass()
    p = ODEProblem(by_hand, 2, period=2 * np.pi / OM)
    y0 = np.array([0.5, 0.2])
    kw = dict(method=method, rtol=1e-10, atol=1e-12)
    gen = integrators.integrate(p, y0, (0.0, 12.0), backend="numpy", **kw)
    ref = integrators.integrate(p, y0, (0.0, 12.0), fast=False, **kw)
    assert gen.backend == "numpy" and ref.backend == "numpy (generic reference)"
    assert gen.nsteps == ref.nsteps and gen.nrejected == ref.nrejected and gen.nfev == ref.nfev
    np.testing.assert_allclose(gen.y[-1], ref.y[-1], rtol=0, atol=1e-9)
    hand = solve_ivp(by_hand, (0.0, 12.0), y0, method="DOP853", rtol=1e-13, atol=1e-14, t_eval=gen.t)
    assert np.max(np.abs(gen.y - hand.y.T)) < 1e-7
    # the output grid from the pair's continuous extension on the generated steps
    te = np.linspace(0.0, 12.0, 25)
    grid = integrators.integrate(p, y0, (0.0, 12.0), backend="numpy", t_eval=te, **kw)
    hand = solve_ivp(by_hand, (0.0, 12.0), y0, method="DOP853", rtol=1e-13, atol=1e-14, t_eval=te)
    assert grid.backend == "numpy" and np.max(np.abs(grid.y - hand.y.T)) < 1e-7
    # the reference loop's grid: its continuous extension evaluates f with a time per output step (t shaped
    # like y[..., 0]: a field written with np.stack raised on (m, 1) times before)
    grid_ref = integrators.integrate(p, y0, (0.0, 12.0), fast=False, t_eval=te, **kw)
    np.testing.assert_allclose(grid_ref.y, grid.y, rtol=0, atol=1e-9)


def test_lagrangian_system_with_a_period_runs_the_generated_adaptive_loop():
    from sympy.physics.mechanics import dynamicsymbols
    from servo import LagrangianSystem
    q = dynamicsymbols("q")
    tt = dynamicsymbols._t
    P = LagrangianSystem(q.diff(tt) ** 2 / 2, (0.3 + 0.6 * sp.cos(tt)) * q ** 2 / 2, [q], period=2 * np.pi).problem()
    y0 = np.array([0.1, 0.0])
    res = integrators.integrate(P, y0, (0.0, 20.0), method="rk853", rtol=1e-11, atol=1e-13, backend="numpy")
    assert res.backend == "numpy"
    mathieu = solve_ivp(lambda s, y: [y[1], -(0.3 + 0.6 * np.cos(s)) * y[0]], (0.0, 20.0), y0, method="DOP853",
                        rtol=1e-13, atol=1e-14, t_eval=res.t)
    assert np.max(np.abs(res.y - mathieu.y.T)) < 1e-9


def test_a_periodic_field_the_fit_does_not_resolve_runs_the_reference_loop_and_says_so_for_numba():
    p = ODEProblem(_square_wave, 2, period=2 * np.pi)
    r = integrators.integrate(p, [0.5, 0.2], (0.0, 30.0), method="rk45", rtol=1e-8, atol=1e-10)
    assert r.backend == "numpy (generic reference)" and r.status == 0
    if numba_kernels.available():
        with pytest.raises(MethodError):
            integrators.integrate(p, [0.5, 0.2], (0.0, 30.0), method="rk45", backend="numba")


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ensemble_of_a_periodic_ode_problem_runs_generated_with_the_reference_steps(backend):
    # Mathieu's equation x'' + (0.3 + 0.6 cos t) x = 0 (one Fourier mode) for 12 initial states sharing one step:
    # numpy columns or the compiled ensemble against the reference loop (the same controller: the same steps)
    # and against solve_ivp per trajectory
    def mathieu(tt, y):
        return np.stack([y[..., 1], -(0.3 + 0.6 * np.cos(tt)) * y[..., 0]], -1)

    p = ODEProblem(mathieu, 2, period=2 * np.pi)
    Y = np.random.default_rng(2).uniform(-1.0, 1.0, (12, 2))
    kw = dict(method="rk45", rtol=1e-9, atol=1e-12)
    gen = integrators.integrate(p, Y, (0.0, 15.0), backend=backend, **kw)
    ref = integrators.integrate(p, Y, (0.0, 15.0), fast=False, **kw)
    assert gen.backend == backend and ref.backend == "numpy (generic reference)"
    assert gen.nsteps == ref.nsteps and gen.nrejected == ref.nrejected and gen.y.shape == ref.y.shape
    assert gen.t[-1] == ref.t[-1] == 15.0
    np.testing.assert_allclose(gen.y[-1], ref.y[-1], rtol=0, atol=1e-10)
    for b in (0, 7):
        hand = solve_ivp(mathieu, (0.0, 15.0), Y[b], method="DOP853", rtol=1e-13, atol=1e-14)
        assert np.max(np.abs(gen.y[-1, b] - hand.y[:, -1])) < 1e-6


def test_an_ensemble_loses_a_trajectory_that_blows_up_as_the_reference_loop_does():
    # y' = y^2 + 0.1 cos t: from y0 = 2 the solution blows up before t = 1, the others stay bounded; the generated
    # columns lose it alone (the same index, its last finite state kept) and carry the others to t1 as the
    # reference loop does (after the loss the parked trajectory moves from 0 under 0.1 cos t: the steps may differ)
    p = ODEProblem(lambda tt, y: y * y + 0.1 * np.cos(tt), 1, period=2 * np.pi)
    Y = np.array([[0.1], [2.0], [-0.3]])
    kw = dict(method="rk45", rtol=1e-9, atol=1e-12)
    gen = integrators.integrate(p, Y, (0.0, 3.0), backend="numpy", **kw)
    ref = integrators.integrate(p, Y, (0.0, 3.0), fast=False, **kw)
    assert gen.backend == "numpy" and gen.status == ref.status == -1
    assert list(gen.failed) == list(ref.failed) == [1]
    assert gen.t[-1] == ref.t[-1] == 3.0
    np.testing.assert_allclose(gen.y[-1, [0, 2]], ref.y[-1, [0, 2]], rtol=0, atol=1e-9)
    np.testing.assert_allclose(gen.y[-1, 1], ref.y[-1, 1], rtol=1e-6)


@pytest.mark.parametrize("case", ["so3 random basis", "se3"])
def test_free_coefficients_in_closed_form_equal_sympys_derivatives_and_the_field(case):
    """The coefficient source of a free system with a constant inertia comes from the closed form
    (TimeDependentSystem._free_coefficients: L = -C^T K k(t), q from C and K = I^-1): its coef(t) equals the
    sympy derivatives of the whole field at m = 0 (_derived_coefficients, the general path), and the quadratic
    polynomial it defines equals the system's own rhs at random (t, m) (a wrong sign or a missing symmetrisation of
    q fails both). A gyrostat k(t) and a torque f(t) make every block time-dependent. (The sympy path takes ~40 s
    on so(4) in a random basis, 51 s on so(5) in one: a dense 3-dimensional basis and se(3) here.)"""
    from tests.algebras import random_basis
    rng = np.random.default_rng(5)
    alg = random_basis(named.so3(), rng) if case == "so3 random basis" else named.se3()
    n = alg.dim
    B = rng.standard_normal((n, n))
    k = [sp.Rational(1, 3) * sp.cos(t + j) if j % 2 == 0 else 0 for j in range(n)]
    f = [0] * (n - 1) + [sp.sin(2 * t)]
    S = TimeDependentSystem(alg, B @ B.T / n + np.eye(n), gyrostat=k, torque=f, period=np.pi * 2)
    fast, slow = S._free_coefficients(), S._derived_coefficients()
    assert len(fast) == len(slow) == n * (1 + n + n * (n + 1) // 2)
    text = S.coefficient_source()
    env = {"math": __import__("math")}
    exec(text, env)
    for tv in (0.0, 0.7, 2.9):
        want = np.array([float(e.subs(S.time, tv)) for e in slow])
        got = np.array(env["coef"](tv))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        m = rng.standard_normal(n)
        pairs = [(j, l) for j in range(n) for l in range(j, n)]
        G = got.reshape(n, -1)
        poly = G[:, 0] + G[:, 1:n + 1] @ m + G[:, n + 1:] @ np.array([m[j] * m[l] for j, l in pairs])
        np.testing.assert_allclose(poly, S.rhs(tv, m), rtol=1e-11, atol=1e-11)
