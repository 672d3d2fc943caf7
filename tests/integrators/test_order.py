"""Measured order of every fixed-step method: error against an independent reference over a
step-halving ladder, fitted slope within 0.2 of the declared ``order``.

References: the Jacobi-elliptic free rigid body (I = (2, 1, 2/3), m0 = (cos 1.1, 0, sin 1.1), see
test_rigid_body_exact.py), and scipy DOP853 at rtol 1e-13 for Lie-Poisson systems on se(3) and sl(2)
and for a forced (servo of the first kind) system on so(3).
"""

import numpy as np
import pytest

from integrators import METHODS, integrate
from integrators.methods import CF4_SWAPPED, RungeKutta
from integrators.analysis.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body, rigid_body_exact
from liegroups import named

from ._problems import RIGID_ONLY, STRUCTURED, quadratic_problem, start

FIXED = [n for n, m in METHODS.items() if m.fixed_step and n not in STRUCTURED]
#: fixed-step methods measured elsewhere (the discrete mechanics schemes: test_nonholonomic.py, on their own
#: problems with exact solutions)
STRUCTURED_FIXED = STRUCTURED
LADDER = {1: (200, 400, 800, 1600), 2: (50, 100, 200, 400), 3: (25, 50, 100, 200), 4: (20, 40, 80, 160),
          6: (20, 40, 80, 160)}


def measured_order(problem, y0, T, method, exact, order=None):
    """Fitted slope of log(error) against log(h) over the ladder for the method's declared order."""
    m = METHODS[method] if isinstance(method, str) else method
    steps = np.array(LADDER[order or m.order])
    errs = []
    for n in steps:
        res = integrate(problem, y0, (0.0, T), method=m, steps=int(n), save_every=int(n))
        errs.append(np.max(np.abs(res.y[-1] - exact)))
    slope = np.polyfit(np.log(T / steps), np.log(errs), 1)[0]
    return slope, errs


@pytest.mark.parametrize("name", FIXED)
def test_order_free_rigid_body_against_elliptic_solution(name):
    P = free_rigid_body(REFERENCE_INERTIA)
    T = 5.0
    exact = rigid_body_exact(REFERENCE_INERTIA, REFERENCE_M0, T)
    p, errs = measured_order(P, np.array(REFERENCE_M0), T, name, exact)
    assert abs(p - METHODS[name].order) < 0.2, (name, p, errs)


def _dop(problem, z0, T):
    return integrate(problem, z0, (0.0, T), method="scipy:DOP853", steps=1, rtol=1e-13, atol=1e-15).y[-1]


@pytest.mark.parametrize("alg", ["se3", "sl2"])
@pytest.mark.parametrize("name", [n for n in FIXED if n not in RIGID_ONLY])
def test_order_lie_poisson_against_dop853(alg, name):
    algebra = getattr(named, alg)()
    P = quadratic_problem(algebra, seed=3)
    z0 = start(algebra.dim, 3)
    T = 1.0
    p, errs = measured_order(P, z0, T, name, _dop(P, z0, T))
    assert abs(p - METHODS[name].order) < 0.2, (alg, name, p, errs)


def _suslov():
    """Rigid body with the nonholonomic constraint (a, w) = 0 (servo of the first kind with b = a)."""
    from integrators import CoadjointProblem

    g = named.so3()
    inertia = np.array([2.0, 1.0, 2.0 / 3.0])
    a = np.array([1.0, 0.5, -0.2])
    c = a / inertia

    def forcing(m):
        lam = -np.sum(c * np.cross(m, m / inertia), axis=-1) / np.dot(c, a)
        return lam[..., None] * a

    P = CoadjointProblem(g, lambda m: m / inertia, forcing=forcing, linear_invariants=c)
    m0 = np.array([0.6, 0.4, 0.0])
    return P, m0 - c * (m0 @ c) / (c @ c)


@pytest.mark.parametrize("name", [n for n in FIXED if n not in RIGID_ONLY])
def test_order_with_forcing_and_linear_invariant(name):
    P, m0 = _suslov()
    T = 4.0
    ref = _dop(P, m0, T)
    p, errs = measured_order(P, m0, T, name, ref)
    assert abs(p - METHODS[name].order) < 0.2, (name, p, errs)
    res = integrate(P, m0, (0.0, T), method=name, steps=50)
    assert "linear_invariants" in res.preserves
    assert np.max(np.abs(res.invariants["linear:0"])) < 1e-13


def test_cf4_with_swapped_final_exponentials_is_order_two():
    P = free_rigid_body(REFERENCE_INERTIA)
    T = 5.0
    exact = rigid_body_exact(REFERENCE_INERTIA, REFERENCE_M0, T)
    p, errs = measured_order(P, np.array(REFERENCE_M0), T, CF4_SWAPPED, exact, order=4)
    assert abs(p - 2) < 0.2, (p, errs)
    p4, _ = measured_order(P, np.array(REFERENCE_M0), T, METHODS["cf4"], exact)
    assert abs(p4 - 4) < 0.2


def test_errors_at_t10_match_published_values():
    """Reference errors: RKMK4 9.0e-7 and CF4 1.5e-6 at h = 0.1, T = 10 (measured elsewhere)."""
    P = free_rigid_body(REFERENCE_INERTIA)
    exact = rigid_body_exact(REFERENCE_INERTIA, REFERENCE_M0, 10.0)
    for name, quoted in (("rkmk4", 9.0e-7), ("cf4", 1.5e-6)):
        res = integrate(P, np.array(REFERENCE_M0), (0.0, 10.0), method=name, h=0.1)
        err = np.max(np.abs(res.y[-1] - exact))
        assert abs(err / quoted - 1) < 0.06, (name, err)


ADAPTIVE = [n for n, m in METHODS.items() if isinstance(m, RungeKutta) and not m.fixed_step]
#: per declared order, how the order of a pair is measured on the rigid body with uniform steps
#: (first_step = max_step = h, tolerances so loose that every step is accepted): "global": the error at
#: T = 5 over these step counts (Tsitouras's pair has a tiny leading local error coefficient, so its one-step
#: error shows h^7 down to round-off; the global error shows h^5); "local": one step of these sizes, error
#: C h^(p+1) (the order-8 global errors reach round-off before the asymptotic range)
PAIR_LADDER = {5: ("global", (20, 40, 80, 160)), 8: ("local", (0.6, 0.45, 0.34, 0.25))}


@pytest.mark.parametrize("name", ADAPTIVE)
def test_order_of_every_adaptive_pair_against_elliptic_solution(name):
    """The fitted order within 0.5 of the declared one (against the Jacobi-elliptic solution)."""
    m = METHODS[name]
    P = free_rigid_body(REFERENCE_INERTIA)
    mode, sizes = PAIR_LADDER[m.order]
    hs = np.array([5.0 / n for n in sizes] if mode == "global" else sizes)
    errs = []
    for h in hs:
        T = 5.0 if mode == "global" else h
        r = integrate(P, np.array(REFERENCE_M0), (0.0, T), method=name, first_step=h, max_step=h * (1 + 1e-12),
                      rtol=1e3, atol=1e3)
        assert r.nrejected == 0 and r.nsteps == round(T / h)
        errs.append(np.max(np.abs(r.y[-1] - rigid_body_exact(REFERENCE_INERTIA, REFERENCE_M0, T))))
    p = np.polyfit(np.log(hs), np.log(errs), 1)[0] - (1.0 if mode == "local" else 0.0)
    assert abs(p - m.order) < 0.5, (name, p, errs)


def test_every_method_has_a_ladder_for_its_order():
    """Every declared order 1..8 has a way to be measured here (a new method cannot fall through)."""
    for name, m in METHODS.items():
        if isinstance(m, RungeKutta) and not m.fixed_step:
            assert m.order in PAIR_LADDER, name
        elif m.fixed_step and name not in STRUCTURED_FIXED:
            assert m.order in LADDER, name
