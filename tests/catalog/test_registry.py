"""The catalog API: names, get with documented defaults, clear errors on unknown names and parameters."""

import numpy as np
import pytest

import catalog
from catalog.registry import CatalogError

EXPECTED = {"euler_top", "heavy_top", "suslov", "beghin_body", "flywheel_body", "vakonomic_body", "skate_inclined",
            "skate_vakonomic", "skate_added_mass", "skate_friction", "one_sided_sleigh", "sleigh_friction",
            "talamucci_two_points",
            "chaplygin_sleigh", "chaplygin_sleigh_on_blade", "servo_sleigh"}


def test_names_sorted_and_complete():
    names = catalog.names()
    assert names == sorted(names)
    assert EXPECTED <= set(names)


def test_unknown_name_suggests_close_match():
    with pytest.raises(ValueError, match=r"unknown catalog entry 'eulr_top'.*did you mean euler_top"):
        catalog.get("eulr_top")


def test_unknown_parameter_lists_accepted():
    with pytest.raises(CatalogError, match=r"no parameter 'mass'.*accepted: I1=2.0"):
        catalog.get("euler_top", mass=3)


@pytest.mark.parametrize("key, value, msg", [("I1", "abc", "must be a number"), ("I1", float("nan"), "finite"),
                                             ("l", (1.0, 2.0), "needs 3 numbers")])
def test_bad_parameter_values(key, value, msg):
    name = "suslov" if key == "l" else "euler_top"
    with pytest.raises(CatalogError, match=msg):
        catalog.get(name, **{key: value})


def test_parameters_override_defaults():
    e = catalog.get("euler_top", I1="3.0", m2=0.1)
    assert e.parameters["I1"] == 3.0 and e.parameters["m2"] == 0.1
    assert e.parameters["I2"] == catalog.defaults("euler_top")["I2"]
    np.testing.assert_allclose(e.initial_state[1], 0.1)
    # the inertia reached the system: energy claim uses I1 = 3
    assert np.isclose(e.first_integrals["energy (m, I^-1 m)/2"](np.array([3.0, 0, 0])), 1.5)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_entry_metadata_is_complete(name):
    e = catalog.get(name)
    assert e.name == name and e.description and e.references and e.t_end > 0
    assert e.kind in ("lie-group", "coordinates")
    if e.kind == "lie-group":
        assert len(e.labels) == np.asarray(e.initial_state).shape[-1]
        # the state layout matches the system's own (servo.lie: m, or (m, lambda) for the second kind)
        assert np.asarray(e.initial_state).shape[-1] == e.system.state_dim
    else:  # the run's state is (q, q')
        assert len(e.labels) == 2 * len(e.initial_state["q0"]) == 2 * len(e.initial_state["qd0"])
        assert len(e.initial_state["q0"]) == e.system.system.n if hasattr(e.system, "system") else e.system.n


def test_unrealizable_beghin_body_raises():
    """(I^-1 l, n) = 0 (l and n orthogonal in the kinetic-energy metric) is not realizable (Kozlov's lectures)."""
    e = catalog.get("beghin_body")
    Iinv_l = np.linalg.solve(e.extras["inertia"], e.extras["a"])
    n = np.cross(Iinv_l, [1.0, 0.0, 0.0])  # orthogonal to I^-1 l
    with pytest.raises(ValueError, match="(?i)realiz"):
        catalog.get("beghin_body", n=tuple(n))
