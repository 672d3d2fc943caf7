"""The result / problem contract of integrate(): plain callables, declared outputs and state maps, the
result's lookups, one set of method names, t_eval and Jacobians for the scipy adapters.

Expected values are independent of the code: y' = -y has y = exp(-t); the harmonic oscillator
(q, p)' = (p, -q) from (1, 0) has q = cos t, p = -sin t; g' = g hat(w) with constant w from I has
trace exp(t hat w) = 1 + 2 cos(t |w|).
"""

import copy
import pickle

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg

from integrators import (METHODS, CoadjointProblem, IntegrationInputError, IntegrationResult, MethodError,
                         ODEProblem, ReconstructionProblem, compare, integrate)
from integrators.methods import ALIASES, get_method
from liegroups import SO3, named


def decay(t, y):
    return -y


def oscillator(t, y):
    return np.stack([y[..., 1], -y[..., 0]], axis=-1)


# ------------------------------------------------------------------ plain callables as problems
def test_a_plain_callable_is_an_ode_problem():
    res = integrate(decay, [1.0, 2.0], (0.0, 1.0), method="rk4", steps=100)
    np.testing.assert_allclose(res.y[-1], [np.exp(-1.0), 2.0 * np.exp(-1.0)], rtol=1e-9)
    same = integrate(ODEProblem(decay, 2), [1.0, 2.0], (0.0, 1.0), method="rk4", steps=100)
    np.testing.assert_array_equal(res.y, same.y)
    batch = integrate(decay, np.ones((3, 2)), (0.0, 1.0), method="scipy:DOP853", steps=2, rtol=1e-12, atol=1e-14)
    assert batch.y.shape == (3, 3, 2)
    np.testing.assert_allclose(batch.y[:, 0, 0], np.exp(-np.array([0.0, 0.5, 1.0])), rtol=1e-10)


def test_a_scalar_start_for_a_callable_is_one_component():
    res = integrate(decay, 1.0, (0.0, 1.0), method="rk4", steps=100)
    assert res.y.shape == (101, 1)
    assert abs(res.y[-1, 0] - np.exp(-1.0)) < 1e-9


@pytest.mark.parametrize("bad", [None, 3.0, "rk4", [1.0, 2.0]])
def test_a_non_problem_names_what_was_given(bad):
    with pytest.raises(IntegrationInputError, match=type(bad).__name__) as err:
        integrate(bad, [1.0], (0.0, 1.0))
    assert "callable f(t, y)" in str(err.value)
    assert isinstance(err.value, ValueError)


# ------------------------------------------------------------------ outputs and state maps
def test_outputs_are_evaluated_on_the_saved_states():
    P = ODEProblem(oscillator, 2, outputs={"r2": lambda y: y[..., 0] ** 2 + y[..., 1] ** 2,
                                           "twice": lambda y: 2.0 * y})
    res = integrate(P, [1.0, 0.0], (0.0, 2.0), method="rk4", steps=400, save_every=100)
    t = res.t
    np.testing.assert_allclose(res.y, np.stack([np.cos(t), -np.sin(t)], axis=-1), atol=1e-9)
    np.testing.assert_allclose(res["r2"], res.y[:, 0] ** 2 + res.y[:, 1] ** 2, rtol=0, atol=1e-15)
    np.testing.assert_allclose(res["r2"], 1.0, atol=1e-9)
    assert res["twice"].shape == (5, 2)
    np.testing.assert_array_equal(res.twice, 2.0 * res.y)
    assert set(res.outputs) == {"r2", "twice"}


def test_batched_outputs_keep_the_batch_axes():
    P = ODEProblem(oscillator, 2, outputs={"q": lambda y: y[..., 0], "pair": lambda y: y[..., ::-1]})
    y0 = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])
    res = integrate(P, y0, (0.0, 1.0), method="rk4", steps=50, save_every=10)
    assert res["q"].shape == (6, 3) and res["pair"].shape == (6, 3, 2)
    np.testing.assert_array_equal(res.q, res.y[..., 0])


def test_state_map_maps_y_and_keeps_the_raw_states():
    inv = {"q": lambda y: y[..., 0]}
    P = ODEProblem(oscillator, 2, invariants=inv, state_map=lambda y: np.stack([y[..., 1], y[..., 0], y[..., 0]], -1),
                   outputs={"p": lambda y: y[..., 1]})
    res = integrate(P, [1.0, 0.0], (0.0, 1.0), method="rk4", steps=100, save_every=25)
    raw = res["z"]
    assert raw.shape == (5, 2) and res.y.shape == (5, 3)
    np.testing.assert_allclose(raw[:, 0], np.cos(res.t), atol=1e-9)
    np.testing.assert_array_equal(res.y, np.stack([raw[:, 1], raw[:, 0], raw[:, 0]], -1))
    np.testing.assert_array_equal(res.p, raw[:, 1])
    # invariants are evaluated on the raw states, not on the mapped ones
    np.testing.assert_array_equal(res.invariants["q"], raw[:, 0])


def test_a_declared_z_output_is_not_replaced():
    P = ODEProblem(decay, 1, state_map=lambda y: 2.0 * y, outputs={"z": lambda y: -y})
    res = integrate(P, [1.0], (0.0, 1.0), method="rk4", steps=10)
    np.testing.assert_array_equal(res.z, -res.y / 2.0)


def test_coadjoint_and_reconstruction_problems_take_outputs():
    inertia = np.array([2.0, 1.0, 2.0 / 3.0])
    body = CoadjointProblem(named.so3(), lambda m: m / inertia, velocity_matrix=np.diag(1 / inertia),
                            outputs={"w": lambda m: m / inertia}, state_map=lambda m: -m)
    res = integrate(body, [0.3, 0.1, 0.9], (0.0, 1.0), method="rkmk4", steps=20)
    np.testing.assert_array_equal(res.w, res.z / inertia)
    np.testing.assert_array_equal(res.y, -res.z)
    np.testing.assert_allclose(res.invariants["casimir:m1**2 + m2**2 + m3**2"], 0.91, rtol=1e-13)

    w = np.array([0.3, -0.4, 1.2])  # |w| = 1.3
    rec = ReconstructionProblem(SO3, lambda t: w, outputs={"trace": lambda g: np.trace(g, axis1=-2, axis2=-1)})
    res = integrate(rec, np.eye(3), (0.0, 2.0), method="rkmk4", steps=8)
    np.testing.assert_allclose(res.trace, 1.0 + 2.0 * np.cos(1.3 * res.t), atol=1e-13)


def test_bad_output_declarations_are_rejected():
    with pytest.raises(ValueError, match="outputs must map names"):
        ODEProblem(decay, 1, outputs={"a": 3.0})
    with pytest.raises(ValueError, match="state_map must be a callable"):
        ODEProblem(decay, 1, state_map="z")


# ------------------------------------------------------------------ the result
def test_result_defaults_and_lookup_order():
    res = IntegrationResult(t=np.zeros(2), y=np.zeros((2, 1)))
    assert res.outputs == {} and res.events == [] and res.system is None and res.labels == ()
    res.invariants["a"], res.constraints["a"], res.constraints["c"] = 1, 2, 3
    assert res["a"] == 1 and res["c"] == 3
    res.outputs["a"] = 0
    assert res["a"] == 0 and res.a == 0
    with pytest.raises(KeyError, match=r"'nope'.*outputs: \['a'\].*invariants: \['a'\].*constraints: \['a', 'c'\]"):
        res["nope"]
    with pytest.raises(AttributeError, match="nope"):
        res.nope
    assert not hasattr(res, "c")  # attributes fall back to outputs only
    assert res.events is not IntegrationResult(t=0, y=0).events  # no shared mutable default


def test_result_pickles_and_copies_without_recursion():
    res = integrate(ODEProblem(decay, 1, outputs={"minus": lambda y: -y}), [1.0], (0.0, 1.0), method="rk4", steps=4)
    for other in (pickle.loads(pickle.dumps(res)), copy.copy(res), copy.deepcopy(res)):
        np.testing.assert_array_equal(other.minus, -res.y)
    blank = IntegrationResult.__new__(IntegrationResult)  # no fields yet, as during unpickling
    with pytest.raises(AttributeError):
        blank.anything
    with pytest.raises(AttributeError):
        blank.outputs


# ------------------------------------------------------------------ method names
@pytest.mark.parametrize("alias", ["RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"])
def test_bare_scipy_names_are_aliases(alias):
    canonical = "scipy:" + alias
    assert ALIASES[alias] == canonical and canonical in METHODS
    P = ODEProblem(decay, 2)
    assert get_method(alias, P) is METHODS[canonical]
    a = integrate(P, [1.0, 0.5], (0.0, 1.0), method=alias, rtol=1e-8, atol=1e-10)
    b = integrate(P, [1.0, 0.5], (0.0, 1.0), method=canonical, rtol=1e-8, atol=1e-10)
    assert a.method == b.method == canonical
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_allclose(a.y[-1], [np.exp(-1.0), 0.5 * np.exp(-1.0)], rtol=1e-5)


def test_compare_accepts_aliases():
    comp = compare(ODEProblem(decay, 1), [1.0], 1.0, methods=["DOP853", "rk4"], exact=lambda t: np.exp(-t),
                   steps=(10, 20), tolerances=(1e-8, 1e-10))
    assert [r.method for r in comp.reports] == ["scipy:DOP853", "rk4"]
    assert comp["scipy:DOP853"].error[-1] < 1e-8


@pytest.mark.parametrize("bad", [["rk4"], 4, None, {"rk4": 1}])
def test_a_method_that_is_not_a_name_raises_method_error(bad):
    with pytest.raises(MethodError, match=r"method must be a method name \(str\) or a Method.*rk4"):
        integrate(decay, [1.0], (0.0, 1.0), method=bad)


# ------------------------------------------------------------------ t_eval
def test_t_eval_gives_exactly_those_times():
    te = np.array([0.0, 0.25, 0.7, 1.0])
    res = integrate(decay, [1.0], (0.0, 1.0), method="scipy:DOP853", t_eval=te, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(res.t, te)
    np.testing.assert_allclose(res.y[:, 0], np.exp(-te), rtol=1e-10)
    inner = np.array([0.3, 0.6])
    res = integrate(decay, [1.0], (0.0, 1.0), method="Radau", t_eval=inner, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(res.t, inner)
    np.testing.assert_allclose(res.y[:, 0], np.exp(-inner), rtol=1e-7)


def test_t_eval_backward_in_time():
    te = np.array([1.0, 0.5, 0.0])
    res = integrate(decay, [np.exp(-1.0)], (1.0, 0.0), method="scipy:RK45", t_eval=te, rtol=1e-11, atol=1e-13)
    np.testing.assert_array_equal(res.t, te)
    np.testing.assert_allclose(res.y[:, 0], np.exp(-te), rtol=1e-8)


@pytest.mark.parametrize("te, what", [([0.0, 0.5, 0.3], "sorted"), ([0.0, 1.5], "within t_span"),
                                      ([[0.0, 1.0]], "1-d"), ([], "non-empty"), ([0.0, np.nan], "finite")])
def test_bad_t_eval_is_rejected(te, what):
    with pytest.raises(IntegrationInputError, match=what) as err:
        integrate(decay, [1.0], (0.0, 1.0), method="scipy:DOP853", t_eval=te)
    assert isinstance(err.value, ValueError)


def test_t_eval_with_fixed_steps_or_a_grid_is_rejected():
    with pytest.raises(IntegrationInputError, match="t_eval is for the scipy methods"):
        integrate(decay, [1.0], (0.0, 1.0), method="rk4", t_eval=[0.0, 1.0])
    with pytest.raises(IntegrationInputError, match="either t_eval or h / steps"):
        integrate(decay, [1.0], (0.0, 1.0), method="scipy:RK45", t_eval=[0.0, 1.0], steps=10)


# ------------------------------------------------------------------ Jacobians for implicit scipy methods
@pytest.mark.parametrize("method", ["scipy:Radau", "scipy:BDF", "scipy:LSODA"])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_the_problem_jacobian_is_passed(method, batch, monkeypatch):
    A = np.array([[-100.0, 1.0], [0.0, -0.5]])  # stiff linear y' = A y, y(t) = expm(t A) y0
    seen = {}
    solve_ivp = scipy.integrate.solve_ivp

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return solve_ivp(*args, **kwargs)

    monkeypatch.setattr(scipy.integrate, "solve_ivp", spy)
    P = ODEProblem(lambda t, y: y @ A.T, 2, jac=lambda t, y: A)
    y0 = np.array([1.0, 1.0]) if not batch else np.array([[1.0, 1.0], [2.0, -1.0]])
    res = integrate(P, y0, (0.0, 1.0), method=method, t_eval=[0.0, 0.5, 1.0], rtol=1e-10, atol=1e-12)
    n = int(np.prod(batch))  # the flattened batch has a block-diagonal Jacobian
    np.testing.assert_array_equal(seen["jac"](0.0, y0.reshape(-1)), np.kron(np.eye(n), A) if batch else A)
    exact = np.einsum("ij,...j->...i", scipy.linalg.expm(A), y0)
    np.testing.assert_allclose(res.y[-1], exact, rtol=1e-7, atol=1e-10)


def test_explicit_methods_get_no_jacobian(monkeypatch):
    seen = {}
    solve_ivp = scipy.integrate.solve_ivp
    monkeypatch.setattr(scipy.integrate, "solve_ivp", lambda *a, **k: seen.update(k) or solve_ivp(*a, **k))
    integrate(ODEProblem(decay, 1, jac=lambda t, y: -np.eye(1)), [1.0], (0.0, 1.0), method="scipy:RK45")
    assert "jac" not in seen
