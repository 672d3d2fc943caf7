"""The generated straight-line loops of mp_lda and nh_rattle (integrators.codegen.coordinate_source, written from the
expression source a problem carries): the same maps as the generic compiled loops (their plain-Python form) to
round-off, on the contact oscillator (k = 1), the rolling disk (k = 2, trigonometric A) and a problem whose Newton
is nonlinear in lambda (the quadratic-convergence stop in use); a Newton failure reported; bad source refused."""

import numpy as np
import pytest

from integrators import ConvergenceError, IntegrationInputError, MethodError, integrate
from integrators.methods import METHODS
from integrators.reference.nonholonomic import (compiled, contact_oscillator, contact_oscillator_initial,
                                                lagrange_dalembert_problem)
from integrators.reference.stepping import make_stepper

numba_kernels = pytest.importorskip("integrators.backends.numba_kernels")
pytestmark = pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")

R, MD = 1.0, np.diag([1.0, 1.0, 0.5, 0.7])


def _disk():
    """The vertical rolling disk (x, y, phi, theta): x' = R cos(phi) theta', y' = R sin(phi) theta'."""
    def A(q):
        phi = np.asarray(q)[..., 2]
        one, zero = np.ones_like(phi), np.zeros_like(phi)
        return np.stack([np.stack([one, zero, zero, -R * np.cos(phi)], -1),
                         np.stack([zero, one, zero, -R * np.sin(phi)], -1)], -2)

    def dA(q):
        phi = np.asarray(q)[..., 2]
        out = np.zeros(np.shape(q)[:-1] + (2, 4, 4))
        out[..., 0, 3, 2] = R * np.sin(phi)
        out[..., 1, 3, 2] = -R * np.cos(phi)
        return out
    z = ["0"] * 4
    source = {"grad_V": ["0.0", "0.0", "0.0", "0.0"],
              "A": [["1.0", "0.0", "0.0", f"-{R!r} * numpy.cos(q2)"], ["0.0", "1.0", "0.0", f"-{R!r} * numpy.sin(q2)"]],
              "dA": [[z, z, z, ["0", "0", f"{R!r} * numpy.sin(q2)", "0"]],
                     [z, z, z, ["0", "0", f"-{R!r} * numpy.cos(q2)", "0"]]]}
    p = lagrange_dalembert_problem(MD, lambda q: np.zeros_like(q), A, dA, source=source,
                                   potential=lambda q: np.zeros(np.shape(q)[:-1]))
    q0 = np.array([[0.1, -0.2, 0.2, 0.3], [0.0, 0.5, -1.0, 0.0]])
    w = np.array([[0.8, 1.3], [-0.4, 0.9]])                 # phi', theta'
    v = np.stack([R * np.cos(q0[:, 2]) * w[:, 1], R * np.sin(q0[:, 2]) * w[:, 1], w[:, 0], w[:, 1]], -1)
    return p, np.concatenate([q0, v], -1)


def _nonlinear():
    """n = 2, A(q) = [1, x0] (x0 moves with lambda: Newton is nonlinear), V = (x0^2 + 2 x1^2)/2 + x0^4/4."""
    p = lagrange_dalembert_problem(np.array([[2.0, 0.3], [0.3, 1.0]]),
                                   lambda q: np.stack([q[..., 0] + q[..., 0] ** 3, 2.0 * q[..., 1]], -1),
                                   lambda q: np.stack([np.ones_like(q[..., 0]), q[..., 0]], -1)[..., None, :],
                                   lambda q: np.broadcast_to(np.array([[[0.0, 0.0], [1.0, 0.0]]]),
                                                             np.shape(q)[:-1] + (1, 2, 2)).copy(),
                                   potential=lambda q: 0.5 * (q[..., 0] ** 2 + 2 * q[..., 1] ** 2) + q[..., 0] ** 4 / 4,
                                   source={"grad_V": ["q0 + q0**3", "2.0 * q1"], "A": [["1.0", "q0"]],
                                           "dA": [[["0", "0"], ["1.0", "0"]]]})
    q0 = np.array([[0.5, -0.3], [-1.2, 0.4]])
    v = np.stack([-q0[:, 0] * 0.7, np.full(2, 0.7)], -1)    # v0 + x0 v1 = 0
    return p, np.concatenate([q0, v], -1)


def _generic(p, y0, name, h, n):
    """The generic loop in plain Python (the code numba compiles for problems without source) on the problem's
    batched functions taken one q at a time."""
    d = p.discrete
    d.scalar = (lambda q: np.asarray(d.grad_V(q)), lambda q: d.A(q), lambda q: d.dA(q), None, None)
    d.scalar_writes = (False,) * 5
    st = make_stepper(METHODS[name], p)
    try:
        if name == "mp_lda":
            return compiled.run_mp(st, y0, 0.0, h, n, 1)
        return compiled.run_rattle(st, y0, st._lambda(y0), 0.0, h, n, 1)[0]
    finally:
        d.scalar, d.scalar_writes = None, None
        d.__dict__.pop("_compiled", None)


CASES = {"contact": lambda: (contact_oscillator(0.3), contact_oscillator_initial(np.linspace(-0.9, 0.9, 3), 0.3),
                             2 * np.sin(np.pi / 40)),
         "disk": lambda: _disk() + (0.1,), "nonlinear": lambda: _nonlinear() + (0.1,)}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", ["mp_lda", "nh_rattle"])
def test_generated_loop_equals_the_generic_loop(case, name):
    p, y0, h = CASES[case]()
    n = 60
    got = integrate(p, y0, (0.0, n * h), steps=n, method=name, backend="numba")
    if case == "contact":
        p.discrete.__dict__.pop("_compiled", None)
        sc = p.discrete.scalar
        p.discrete.scalar = None                         # the generic loop on the batched functions, as for the others
        try:
            ref = _generic(p, y0, name, h, n)
        finally:
            p.discrete.scalar = sc
    else:
        ref = _generic(p, y0, name, h, n)
    assert got.status == 0 and got.backend == "numba"
    np.testing.assert_allclose(got.y, ref.y, rtol=0, atol=1e-13)
    assert np.max(np.abs(got.constraints["A(q) v [0]"])) <= 1e-12


def test_mp_stop_test_saves_the_confirming_residual():
    """On the contact oscillator the residual is linear in lambda: after the first steps (Newton's constant
    measured) one residual a step; where Newton is nonlinear the iterations go on until the estimated error is
    below the tolerance, and the answer is the generic loop's (test above)."""
    p, y0, h = CASES["contact"]()
    n = 400
    r = integrate(p, y0, (0.0, n * h), steps=n, method="mp_lda", backend="numba")
    per_step = r.nfev / (n * len(y0))
    assert per_step <= 1.01                        # the generic loop: 2.00 (the confirming increment)
    p2, y2, h2 = CASES["nonlinear"]()
    r2 = integrate(p2, y2, (0.0, n * h2), steps=n, method="mp_lda", backend="numba")
    assert 1.0 < r2.nfev / (n * len(y2)) < 3.0


def test_newton_failure_of_the_generated_loop_is_reported():
    """Too large a state for h = 0.5: Newton diverges in the same step in the generated and the generic loop."""
    p, y0, _ = CASES["nonlinear"]()
    with pytest.raises(ConvergenceError, match="mp_lda") as got:
        integrate(p, y0 * 10.0, (0.0, 5.0), steps=10, method="mp_lda", backend="numba", check=False)
    with pytest.raises(ConvergenceError, match="mp_lda") as ref, np.errstate(over="ignore", invalid="ignore"):
        _generic(p, y0 * 10.0, "mp_lda", 0.5, 10)
    step = str(ref.value).split("(t =")[0]
    assert step in str(got.value)


@pytest.mark.parametrize("source, what", [
    ({"grad_V": ["q0", "q1"], "A": [["1.0", "q0"]]}, "grad_V"),                       # disagrees with grad V
    ({"grad_V": ["q0 + q0**3", "2.0 * q1"], "A": [["1.0", "q0", "0"]]}, "shape"),
    ({"grad_V": ["q0 + q0**3", "2.0 * q1"], "A": [["1.0", "qq"]]}, "does not evaluate"),
    ({"A": [["1.0", "q0"]]}, "dict of expression strings")])
def test_bad_source_is_refused(source, what):
    with pytest.raises(IntegrationInputError, match=what):
        lagrange_dalembert_problem(np.eye(2), lambda q: np.stack([q[..., 0] + q[..., 0] ** 3, 2.0 * q[..., 1]], -1),
                                   lambda q: np.stack([np.ones_like(q[..., 0]), q[..., 0]], -1)[..., None, :],
                                   source=source)


def test_source_without_dA_has_no_mp_loop_and_says_why():
    """mp_lda's Newton needs dA: source without it (and no scalar functions) leaves mp_lda without a compiled path
    (a clear error with backend numba); nh_rattle does not need it and runs generated."""
    p, y0 = _nonlinear()
    d = p.discrete
    d.source = {key: v for key, v in d.source.items() if key != "dA"}
    r = integrate(p, y0, (0.0, 1.0), steps=10, method="nh_rattle", backend="numba")
    assert r.backend == "numba"
    with pytest.raises(MethodError, match="no scalar problem functions"):
        integrate(p, y0, (0.0, 1.0), steps=10, method="mp_lda", backend="numba")
