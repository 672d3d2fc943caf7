"""Every entry's metadata claims hold: its first integrals are conserved, its exact solution matches,
its constraint residual stays zero (catalog.checks), plus the claims in the descriptions that are not
conservation laws (energy NOT conserved under a working control, asymptotic straight line, ...)."""

import numpy as np
import pytest

import catalog
from catalog.registry import names

FAST_STEPS = {"heavy_top": 1000}


@pytest.mark.parametrize("name", names())
def test_entry_claims_hold(name):
    e = catalog.get(name)
    run = catalog.simulate(e, steps=FAST_STEPS.get(name))
    verdicts = catalog.checks(e, run)
    assert verdicts, f"{name} claims nothing checkable"
    bad = [v.line() for v in verdicts if not v.passed]
    assert not bad, bad


def test_claims_can_fail():
    """The checks are not vacuous: a coarse non-geometric run of the Euler top fails the exact-solution check,
    and a claim of a wrong integral fails."""
    e = catalog.get("euler_top")
    run = catalog.simulate(e, steps=20, method="rk4")
    assert not all(v.passed for v in catalog.checks(e, run))
    e.first_integrals = {"m1 (wrong claim)": lambda y: y[..., 0]}
    run = catalog.simulate(e, steps=200)
    assert not catalog.checks(e, run)[0].passed


@pytest.mark.parametrize("name", ["beghin_body", "flywheel_body"])
def test_energy_not_conserved_where_the_control_works(name):
    """First kind with n != l and second kind with b != a: the control does work (dT/dt = -lambda' (b, w)
    for the second kind), so the kinetic energy changes by a visible amount."""
    e = catalog.get(name)
    run = catalog.simulate(e, steps=400)
    Iinv = np.linalg.inv(e.extras["inertia"])
    T = 0.5 * np.einsum("ki,ij,kj->k", run.y[:, :3], Iinv, run.y[:, :3])
    assert np.ptp(T) / T[0] > 1e-2


def test_chaplygin_sleigh_tends_to_a_straight_line():
    """u -> sqrt(2E/M), w -> 0 (Kozlov 2019, section 3); here at t = 40."""
    e = catalog.get("chaplygin_sleigh", t_end=40.0, steps=2000)
    run = catalog.simulate(e)
    Iinv = np.linalg.inv(e.extras["inertia"])
    u, v, w = run.y[-1] @ Iinv.T
    p = e.parameters
    E = 0.5 * (p["M"] * p["u0"] ** 2 + (p["J"] + p["M"] * p["ell"] ** 2) * p["w0"] ** 2)
    assert abs(u - np.sqrt(2 * E / p["M"])) < 1e-6 and abs(w) < 1e-5


def test_sleigh_on_blade_runs_on_a_circle_of_radius_u_over_w():
    e = catalog.get("chaplygin_sleigh_on_blade", steps=500)
    run = catalog.simulate(e)  # the path comes from the SE(2) reconstruction g' = g w
    p = e.parameters
    R = p["u0"] / p["w0"]
    centre = np.array([0.0, R])  # starts at the origin heading along x, turning left
    r = np.linalg.norm(run.outputs["path"] - centre, axis=-1)
    assert np.max(np.abs(r - R)) < 1e-10


def test_servo_sleigh_limit_speed():
    """u -> gamma / beta as t -> infinity when gamma/beta > 0 (from u = gamma/(beta + C e^(gamma t)), gamma < 0)."""
    e = catalog.get("servo_sleigh", t_end=30.0, steps=3000)
    run = catalog.simulate(e)
    p = e.parameters
    alpha, beta = p["a_u"] / p["b_v"], p["M"] * p["c_w"] / (p["I"] * p["b_v"])
    gamma = beta * p["u0"] - alpha * p["w0"]
    assert abs(run.y[-1, 0] / p["M"] - gamma / beta) < 1e-6


@pytest.mark.parametrize("constraint", ["perpendicular", "equal_speeds", "nonhomogeneous"])
def test_talamucci_variants(constraint):
    """Homogeneous constraints conserve the energy, the non-homogeneous one changes it (the default
    'parallel' variant runs in test_entry_claims_hold)."""
    e = catalog.get("talamucci_two_points", constraint=constraint, steps=150, t_end=4.0)
    run = catalog.simulate(e)
    bad = [v.line() for v in catalog.checks(e, run) if not v.passed]
    assert not bad, bad
    assert ("energy T + V" in run.invariants) == (constraint != "nonhomogeneous")


def test_talamucci_unknown_constraint():
    with pytest.raises(ValueError, match="constraint must be one of parallel"):
        catalog.get("talamucci_two_points", constraint="skew")


@pytest.mark.parametrize("w0, t_end, steps", [(-2.0, 3.0, 200), (-0.9, 8.0, 200),
                                               (-1.0, 8.0, 200), (-1.3, 8.0, 200)])
def test_one_sided_sleigh_joins_after_half_a_turn(w0, t_end, steps):
    """Kozlov 2019, section 3: the join happens at t = pi/|w0| and the circle has radius u0/|w0|."""
    e = catalog.get("one_sided_sleigh", w0=w0, t_end=t_end, steps=steps)
    run = catalog.simulate(e)
    bad = [v.line() for v in catalog.checks(e, run) if not v.passed]
    assert not bad, bad


def test_two_axis_entries_refuse_bad_parameters():
    """Parallel axes leave no direction; s0 of the sign of kappa blows up at t = 1/(kappa s0) before t_end."""
    from catalog.entries.multi_constrained import beghin_kappa

    with pytest.raises(catalog.CatalogError, match="parallel"):
        catalog.get("two_axis_vakonomic_body", l2=(2.0, 0.0, 0.0))
    e = catalog.get("two_axis_beghin_body")
    I = e.extras["inertia"]
    kappa = beghin_kappa(I, *e.extras["a"], *e.extras["b"])
    with pytest.raises(catalog.CatalogError, match="blows up"):
        catalog.get("two_axis_beghin_body", s0=1.0 / kappa)
