"""integrators: geometry-preserving integrators on two problem protocols (plain ODE and coadjoint ODE
on g*), group reconstruction, event location and the comparison harness.

Entry points: :func:`integrate` (like scipy's solve_ivp) and :func:`reconstruct` (g' = g w(t) from
sampled velocities). Methods and what they keep: :data:`METHODS` (see :mod:`integrators.methods`).
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from .compare import Comparison, compare
    from .driver import integrate
    from .errors import ConvergenceError, IntegrationInputError, IntegratorError, MethodError
    from .grid import DEFAULT_STEPS
    from .methods import ALIASES, METHODS, applicable_methods
    from .problems import CoadjointProblem, ODEProblem, ReconstructionProblem
    from .reconstruction import reconstruct
    from .result import IntegrationResult

exports(__name__, __file__)

__all__ = ["compare", "Comparison", "ODEProblem", "CoadjointProblem", "ReconstructionProblem", "integrate", "reconstruct",
           "IntegrationResult", "METHODS", "ALIASES", "IntegratorError", "MethodError", "IntegrationInputError",
           "ConvergenceError", "applicable_methods", "DEFAULT_STEPS"]
