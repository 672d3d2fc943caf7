"""Regression tests of the outside fuzz's defects: each bad input raises the package's error naming the
problem, and each run that cannot be trusted ends with status -1 and a message saying what happened."""

import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from catalog.cli.main import main
from integrators import IntegratorError, ODEProblem, integrate, reconstruct
from integrators import compare
from integrators.analysis.rigid_body import free_rigid_body
from liegroups import SO3, LieAlgebra, LieGroupsError, named
from servo import EulerPoincare, ServoError, ServoFirstKind, ServoSecondKind

SQUARE = ODEProblem(lambda t, s: s**2, 1)   # y' = y^2, y(0) = 1: y = 1/(1 - t), a pole at t = 1


def test_blow_up_past_a_pole_is_reported():
    res = integrate(SQUARE, [1.0], (0, 3), method="rk4", steps=3)
    assert res.status == -1 and "does not resolve" in res.message
    assert res.t[-1] < 1.0                     # nothing is returned beyond the pole
    assert res.checks["step_error"] > 0.25


def test_resolved_run_passes_with_its_figures():
    # before the pole (t <= 0.5, y = 1/(1 - t) <= 2) rk4 with h = 0.01 is resolved and accurate
    res = integrate(SQUARE, [1.0], (0, 0.5), method="rk4", steps=50)
    assert res.status == 0
    assert abs(res.y[-1, 0] - 2.0) < 1e-7
    assert res.checks["step_error"] < 0.01
    off = integrate(SQUARE, [1.0], (0, 3), method="rk4", steps=3, check=False)
    assert off.status == 0 and off.checks == {}          # check=False: the old behaviour


@pytest.mark.parametrize("method", ["rkmk4", "lie_euler", "cf4", "splitting", "splitting4", "splitting6"])
def test_so3_generated_overflow_is_status_minus_one(method):
    # found by make fuzz: the straight-line so(3) steps on one trajectory use math.sin, which raised
    # "math domain error" (a bare ValueError) once the state overflowed to inf; the run must instead end
    # with status -1 and finite states (now the generated fixed-step loop of every method, genhelpers' sin)
    res = integrate(free_rigid_body([1.0, 2.0, 3.0]), np.full(3, 1e300), (0.0, 10.0), method=method, steps=50)
    assert res.status == -1
    assert np.all(np.isfinite(res.y))


def test_heisenberg_rkmk2_overflow_is_status_minus_one():
    sysm = EulerPoincare(named.heisenberg(), [0.03, 1, 80])
    res = sysm.simulate([400.0, -600.0, 500.0], 2.0, steps=50, method="rkmk2")
    assert res.status == -1 and res.message
    assert np.all(np.isfinite(res.y)) and np.max(np.abs(res.y)) < 2.4e3 * 10


@pytest.mark.parametrize("method", ["lie_euler", "rkmk2", "cf4", "cg3"])
def test_servo_sleigh_past_its_pole(method):
    from catalog.registry import get
    entry = get("servo_sleigh", u0=-1.0)
    res = entry.system.simulate(np.asarray(entry.initial_state, float), 10.0, steps=10, method=method)
    assert res.status == -1 and res.message
    assert np.all(np.isfinite(res.y))


@pytest.mark.parametrize("method", ["lie_euler", "rkmk2", "cf4", "cg3", "rk4", "rkmk4"])
def test_servo_sleigh_on_its_invariant_line_past_the_pole(method):
    # u' = alpha u w, w' = beta u w with alpha = a_u/b_v = 0.5, beta = M c_w/(I b_v) = -0.5 (defaults):
    # gamma = beta u - alpha w = 0 on the line w = -u, where u = u0/(1 - beta u0 t) has its pole at
    # t* = -1/(beta u0) = 3.005 for u0 = -2/3.005. Ten steps to 2 t* = 6.01 used to end with status 0 at
    # t = 6.01; nothing past the pole may be returned as a solution.
    from catalog.registry import get
    u0 = -2 / 3.005
    entry = get("servo_sleigh", u0=u0, w0=-u0)
    res = entry.system.simulate(np.asarray(entry.initial_state, float), 6.01, steps=10, method=method)
    assert res.status == -1 and "does not resolve" in res.message
    assert res.t[-1] < 3.005 and np.all(np.isfinite(res.y))


@pytest.mark.parametrize("method", ["scipy:RK45", "scipy:RK23", "scipy:Radau", "scipy:DOP853", "scipy:BDF",
                                    "scipy:LSODA"])
def test_scipy_nan_in_the_rhs_is_reported_where_it_appears(method):
    prob = ODEProblem(lambda t, y: y * (np.nan if t > 0.5 else 1.0), 1)
    res = integrate(prob, [1.0], (0, 3), method=method)
    assert res.status == -1 and "NaN" in res.message
    assert 0.5 <= float(res.message.split("t = ")[1].split()[0].rstrip(";")) < 0.6


def test_scipy_overflow_and_budget():
    res = EulerPoincare(named.so3(), [2, 1, 0.5]).simulate([1e154, 2e154, 0], 1, method="scipy:RK45")
    assert res.status == -1
    res = integrate(free_rigid_body((2.0, 1.0, 0.5)), [1.0, 0.2, 0.3], (0, 100), method="scipy:RK45",
                    max_steps=5)
    assert res.status == -1 and "step budget of 5" in res.message


@pytest.mark.parametrize("kw, what", [(dict(rtol=np.nan), "rtol"), (dict(atol=np.nan), "atol"),
                                      (dict(steps=1.5), "steps"), (dict(steps=np.inf), "steps"),
                                      (dict(steps=True), "steps"), (dict(steps=1e10), "save_every"),
                                      (dict(h=1e-12), "save_every")])
def test_bad_controls_are_named(kw, what):
    with pytest.raises(IntegratorError, match=what):
        EulerPoincare(named.so3(), [2, 1, 0.5]).simulate([1.0, 0, 0], 1e3 if "h" in kw else 1.0, **kw)


def test_complex_and_nan_inputs_are_named():
    g = named.so3()
    with pytest.raises(LieGroupsError, match="finite"):
        g.bracket([np.nan, 0, 0], [1, 1, 1])
    with pytest.raises(LieGroupsError, match="finite"):
        g.coad([1, 0, 0], [np.inf, 1, 1])
    with pytest.raises(LieGroupsError, match="real"):
        g.coad([1j, 0, 0], [1, 1, 1])
    with pytest.raises(LieGroupsError, match="real"):
        LieAlgebra(np.zeros((3, 3, 3)) * 1j)
    with pytest.raises(ServoError, match="complex"):
        EulerPoincare(g, [1 + 1j, 2, 3])
    with pytest.raises(ServoError, match="boolean"):
        EulerPoincare(g, [True, True, True])
    with pytest.raises(ServoError, match="real"):
        EulerPoincare(g, [1, 2, 3]).simulate([1j, 0, 0], 1.0)
    with pytest.raises(ServoError, match="linear_term must be finite: entry 3"):
        EulerPoincare(named.se3(), inverse_inertia=np.diag([1, 1, 1, 0, 0, 0.0]), linear_term=[0, 0, 0, np.nan, 0, 1])
    s2 = ServoSecondKind(g, [1, 2, 3], a=[0, 0, 1], b=[0, 1, 1])
    for lam in (np.nan, np.inf):
        with pytest.raises(ServoError, match="lambda must be finite"):
            s2.state_from(w=[1, 1, 0], lam=lam)
    with pytest.raises(IntegratorError, match="finite"):
        reconstruct(SO3, np.zeros((3, 3)), np.full((3, 3), np.nan), np.linspace(0, 1, 3))


def test_exponentials_say_they_overflow():
    g = named.sl2()
    x = np.array([400.0, 120.0, 40.0])
    for f in (lambda: g.exp_ad(x), lambda: g.coadjoint_exp(x, [1, 1, 1]), lambda: g.dexp(x, [1, 0, 0])):
        with pytest.raises(LieGroupsError, match="overflow"):
            f()
    # dexp^-1 = psi(ad x), psi(z) = z/(e^z - 1), does not grow with e^|x|: it is computed there
    assert np.all(np.isfinite(g.dexpinv(x, [1, 0, 0])))


def _psi_reference(g, x, v):
    """dexp^-1_x v = phi(ad x)^-1 v at 150 digits, phi(A) = sum_k A^k/(k+1)! summed until the terms vanish
    (Iserles, Munthe-Kaas, Norsett and Zanna (2000), section 2.5): independent of the double-precision code."""
    with mp.workdps(150):
        A = mp.matrix(g.ad(np.asarray(x, float)).tolist())
        S, P = mp.eye(A.rows), mp.eye(A.rows)
        for k in range(1, 400):
            P = P * A / (k + 1)
            S += P
        return np.array((mp.inverse(S) * mp.matrix(list(v))).tolist(), dtype=float).ravel()


@pytest.mark.parametrize("alg, x", [(named.sl2(), [50 / 1.0488, 15 / 1.0488, 5 / 1.0488]),
                                    (named.sl2(), [20 / 1.0488, 6 / 1.0488, 2 / 1.0488]),
                                    (named.bianchi("VI", a=-3.0), [15.0, 50.0, 25.0]),
                                    (named.bianchi("III"), [15.0, 50.0, 25.0])])
def test_dexpinv_at_large_x_is_right_or_refused(alg, x):
    # phi(ad x) has eigenvalues e^l / l and 1 / l side by side: solving against it lost every digit at
    # |x| = 50 on sl(2) (1e-22 where the answer is 86); dexp^-1 itself stays of size |x|
    v = np.array([1.0, 1.0, 1.0])
    ref = _psi_reference(alg, x, v)
    assert np.allclose(alg.dexpinv(x, v), ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())


@pytest.mark.parametrize("alg", [named.sl2(), named.so21(), named.bianchi("VI", a=-3.0), named.bianchi("III"),
                                 named.heisenberg()])
@pytest.mark.parametrize("size", [50.0, 300.0, 1e4])
def test_dexpinv_keeps_x_itself(alg, size):
    # ad_x x = 0 and psi(0) = 1, so dexp^-1_x x = x exactly, at every |x| (the exponential itself may
    # overflow there; dexp^-1 never does)
    x = np.array([0.3, 1.0, 0.5]) * size / np.linalg.norm([0.3, 1.0, 0.5])
    assert np.allclose(alg.dexpinv(x, x), x, rtol=0, atol=1e-10 * size)


def test_exponentials_at_fifty_are_finite_and_consistent_or_refused():
    # the issue's |x| >= 50 on sl(2), Bianchi III, VI: either a finite answer that passes an identity
    # (exp(ad x) x = x, Ad of x on the sl(2) Casimir-preserving side) or a named overflow
    for g in (named.sl2(), named.bianchi("III"), named.bianchi("VI", a=-3.0)):
        for size in (50.0, 100.0, 1e3):
            x = np.array([0.3, 1.0, 0.5]) * size / np.linalg.norm([0.3, 1.0, 0.5])
            try:
                E = g.exp_ad(x)
            except LieGroupsError as err:
                assert "overflows" in str(err)
                continue
            assert np.all(np.isfinite(E))
            assert np.allclose(E @ x, x, atol=1e-12 * np.abs(E).max() * size)   # normwise, as floating point can
            assert np.allclose(g.coadjoint_exp(x, [1.0, 2.0, 3.0]), E.T @ [1.0, 2.0, 3.0], rtol=1e-12)


def test_dexpinv_so3_at_and_beyond_two_pi():
    g = named.so3()
    with pytest.raises(LieGroupsError, match="singular"):
        g.dexpinv([2 * math.pi, 0, 0], [0, 1, 0])
    # beyond 2 pi the closed form is still the inverse of dexp (checked against dexp itself)
    x, v = np.array([7.0, 0.3, 0.0]), np.array([0.0, 1.0, 0.5])
    assert np.allclose(g.dexp(x, g.dexpinv(x, v)), v, atol=1e-12)
    with pytest.raises(LieGroupsError, match="order"):
        g.dexpinv([0.1, 0, 0], [0, 1, 0], order=10**6)


def test_so3_log_refuses_a_non_rotation():
    with pytest.raises(LieGroupsError, match="rotation"):
        SO3.log(2 * np.eye(3))


def test_jacobi_check_of_huge_constants():
    C = np.zeros((3, 3, 3))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        C[i, j, k], C[j, i, k] = 1.0, -1.0
    for scale in (1e160, 1e200, 1e300):
        assert LieAlgebra(C * scale).dim == 3          # so(3) scaled is a Lie algebra
    bad = C.copy()
    bad[0, 1, 0], bad[1, 0, 0] = 0.5, -0.5
    with pytest.raises(LieGroupsError, match="Jacobi"):
        LieAlgebra(bad * 1e200)


def test_realizability_is_scale_free():
    g = named.so3()
    s = ServoFirstKind(g, [1, 2, 3], a=[1e-100, 0, 1e-100], b=[1e-100, 1e-100, 0])
    assert s.realizability() == pytest.approx(1e-200)   # (I^-1 a, b) = 1e-200 / 1
    with pytest.raises(ServoError, match="rescale"):
        ServoFirstKind(g, [1, 2, 3], a=[1e200, 0, 1e200], b=[1e200, 1e200, 0])


def test_compare_unknown_method():
    with pytest.raises(IntegratorError, match="rk99"):
        compare(free_rigid_body((2.0, 1.0, 0.5)), np.array([1.0, 0, 0.1]), 1.0, methods=["rk99"])


def _cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_reports_status_minus_one(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        code, out, err = _cli(capsys, "simulate", "servo_sleigh", "-p", "u0=-1")
    assert code == 1
    assert "status -1" in out and "PASS" not in out and "not reached" in out
    assert "RuntimeWarning" not in err
    code, out, _ = _cli(capsys, "simulate", "servo_sleigh", "-p", "u0=-1", "--json")
    assert code == 1 and '"status": -1' in out


@pytest.mark.parametrize("argv, what", [(("simulate", "heavy_top", "-p", "chi=nan,0,1"), "finite"),
                                        (("simulate", "euler_top", "--t-end", "1e13", "--steps", "10"), "t_end"),
                                        (("simulate", "skate_inclined", "--t-end", "1e12"), "t_end"),
                                        (("compare", "euler_top", "--methods", "rk99"), "rk99")])
def test_cli_refuses_with_a_named_error(capsys, argv, what):
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and what in err


BASE = '''algebra = {alg}
inertia = {inertia}
references = {refs}
[initial]
w = [1.0, 0.5, 0.0]
[simulation]
t_end = {t_end}
steps = {steps}
'''
GOOD = dict(alg='"so3"', inertia="[2.0, 1.0, 0.5]", refs='["Kozlov (2019)"]', t_end="1.0", steps="10")


@pytest.mark.parametrize("change, key", [
    (dict(inertia="[nan, 1.0, 0.5]"), "inertia"), (dict(inertia="[inf, 1.0, 0.5]"), "inertia"),
    (dict(inertia="[true, true, true]"), "inertia"), (dict(t_end='"long"'), "simulation.t_end"),
    (dict(steps='"many"'), "simulation.steps"), (dict(steps="400.7"), "simulation.steps"),
    (dict(steps="true"), "simulation.steps"), (dict(refs='"abc"'), "references"),
    (dict(alg='{ structure_constants = [[[0,0,0],[0,0,1],[0,-1,0]],[[0,0,-1],[0,0,0],[1,0,0]],'
               '[[0,1,0],[-1,0,0],[0,0,0]]], colour = "red" }'), "algebra.colour")])
def test_toml_loader_names_file_and_key(tmp_path, change, key):
    from catalog import CatalogError
    from catalog.entries.toml_loader import from_file
    f = tmp_path / "body.toml"
    f.write_text(BASE.format(**dict(GOOD, **change)))
    with pytest.raises(CatalogError) as err:
        from_file(f)
    assert str(f) in str(err.value) and repr(key) in str(err.value)


def test_toml_lambda_string_names_its_key(tmp_path):
    from catalog import CatalogError
    from catalog.entries.toml_loader import from_file
    f = tmp_path / "v.toml"
    f.write_text('algebra = "so3"\ninertia = [2.0, 1.0, 0.5]\nmodel = "vakonomic"\na = [0.0, 0.0, 1.0]\n'
                 '[initial]\nw = [1.0, 0.5, 0.0]\nlambda = "zero"\n')
    with pytest.raises(CatalogError, match="initial.lambda"):
        from_file(f)
    f.write_text(BASE.format(**GOOD))
    entry = from_file(f)                                    # the good file still loads
    assert entry.references == ["Kozlov (2019)"] and entry.steps == 10


def test_fuzz_finds_first_scipy_step_failure_and_closed_form_overflow():
    # found by `make fuzz`: a scipy run whose first step fails had no dense output (IndexError), and the
    # so(3) closed forms returned inf for momenta of 1e300
    prob = ODEProblem(lambda t, y: y * np.nan, 1)
    res = integrate(prob, [1.0], (0, 1), method="scipy:DOP853", steps=10)
    assert res.status == -1 and len(res.t) == 1 and "NaN" in res.message
    with pytest.raises(LieGroupsError, match="overflows"):
        named.so3().coadjoint_exp([1e5, 0, 0], [1e300, 1e300, 0])


# ------------------------------------------------------------------ the rest of the examples
@pytest.mark.parametrize("method", ["lie_euler", "rkmk2", "rkmk4", "cf4", "cg3"])
def test_beghin_body_lie_group_methods_keep_the_constraint(method):
    # the issue: `beghin_body --method lie_euler` ended with |(a, w)| = 0.12 because the linear invariant
    # (I^-1 a, m) was not declared and the projection never ran. (a, w) = (a, I^-1 m) is computed here
    # from the entry's own inertia and axis, not from the result's diagnostics.
    from catalog.registry import get
    e = get("beghin_body")
    res = e.system.simulate(np.asarray(e.initial_state, float), e.t_end, steps=e.steps, method=method)
    assert res.status == 0, res.message
    w = np.linalg.solve(e.extras["inertia"], res.y.T).T
    assert np.max(np.abs(w @ e.extras["a"])) < 1e-12 * np.max(np.abs(w))


def _near_unrealizable_n():
    # n = u + 1e-9 c with c = I^-1 l / |I^-1 l| and u a unit vector orthogonal to c: (I^-1 l, n) is 1e-9 of
    # |I^-1 l| |n|, just above the refusal threshold (1e-10); lambda starts near -1e9
    I = np.array([[3.0, 0.2, 0.4], [0.2, 2.0, 0.3], [0.4, 0.3, 1.0]])      # the entry's default inertia
    c = np.linalg.solve(I, [0.0, 0.0, 1.0])
    c /= np.linalg.norm(c)
    u = np.cross(c, [1.0, 0.0, 0.0])
    return u / np.linalg.norm(u) + 1e-9 * c


@pytest.mark.parametrize("method", ["rk4", "lie_euler", "rkmk4"])
def test_cli_near_unrealizable_body_is_not_shown_as_pass(capsys, method):
    # the issue: overflow at t ~ 0.02 and the CLI showed only PASS
    n = ",".join(f"{v:.17g}" for v in _near_unrealizable_n())
    code, out, _ = _cli(capsys, "simulate", "beghin_body", "-p", f"n={n}", "--method", method)
    assert code == 1 and "status -1" in out and "PASS" not in out


def test_integrate_of_none_is_named():
    with pytest.raises(IntegratorError, match="problem must be"):
        integrate(None, [1.0], (0, 1), method="rk4", steps=10)


def test_scipy_wall_clock_budget_stops_the_run():
    res = integrate(free_rigid_body((2.0, 1.0, 0.5)), [1.0, 0.2, 0.3], (0, 100), method="scipy:Radau",
                    max_wall_time=1e-9)
    assert res.status == -1 and "wall-clock budget" in res.message and np.all(np.isfinite(res.y))


@pytest.mark.parametrize("method", ["rk4", "scipy:RK45"])
def test_nan_in_the_rhs_is_reported_at_its_step(method):
    # y' = y for t <= 0.5, NaN after: a fixed-step run (h = 0.1) names the step (0.5 -> 0.6), an adaptive
    # one the time; nothing after t = 0.5 is returned, and what is returned is e^t to the method's accuracy
    prob = ODEProblem(lambda t, y: y * (np.nan if t > 0.5 else 1.0), 1)
    res = integrate(prob, [1.0], (0, 3), method=method, steps=30)
    assert res.status == -1
    if method == "rk4":
        assert "(t = 0.5 -> 0.6)" in res.message
    else:
        assert 0.5 <= float(res.message.split("at t = ")[1].split()[0]) < 0.6
    assert res.t[-1] <= 0.5 and np.allclose(res.y[:, 0], np.exp(res.t), rtol=1e-4)


def test_symbolic_and_complex_parameters_are_named():
    import sympy as sp
    from servo.errors import SymbolicParameterError
    with pytest.raises(SymbolicParameterError, match="numeric"):
        EulerPoincare(named.so3(), [sp.Symbol("x"), 2, 3]).simulate([1.0, 0, 0], 1.0)
    for a, b in (([1j, 0, 1], [0, 1, 1]), ([0, 0, 1], [0, 1j, 1])):
        with pytest.raises(ServoError, match="complex"):
            ServoFirstKind(named.so3(), [1, 2, 3], a=a, b=b)
