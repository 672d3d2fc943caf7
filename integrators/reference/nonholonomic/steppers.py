"""The stepper of a discrete mechanics method (``method.scheme``) on a problem carrying ``discrete`` data;
the stepping loop is the fixed-step loop of :mod:`integrators.driver`."""

from __future__ import annotations

from .coordinate_schemes import MPStepper, RattleStepper
from .lie_schemes import LieRattleStepper, SecondKindStepper, SuslovStepper
from .vakonomic_schemes import VakonomicStepper

SCHEMES = {"dlas": SuslovStepper, "dvak": SecondKindStepper, "mp": MPStepper, "rattle": RattleStepper,
           "dvakq": VakonomicStepper, "lierattle": LieRattleStepper}

#: the problem structure each scheme needs (``problem.discrete.structure``)
STRUCTURES = {"dlas": "lie_nonholonomic", "dvak": "lie_second_kind", "mp": "lagrange_dalembert",
              "rattle": "lagrange_dalembert", "dvakq": "vakonomic_coordinates",
              "lierattle": "lie_nonholonomic"}


def make_stepper(method, problem):
    """The stepper of ``method`` on ``problem``."""
    return SCHEMES[method.scheme](method, problem)
