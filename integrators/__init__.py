"""integrators: geometry-preserving integrators on two problem protocols (plain ODE and coadjoint ODE
on g*), group reconstruction, event location and the comparison harness.

Entry points: :func:`integrate` (like scipy's solve_ivp) and :func:`reconstruct` (g' = g w(t) from
sampled velocities). Methods and what they keep: :data:`METHODS` (see :mod:`integrators.methods`).

Where things are: rooms, bottom up; a file imports only from its own room or one below
(``tests/test_house.py`` checks it):

* ``core``: problems, the result type, errors, validation, grids, export, display, progress;
* ``tableaux``: coefficients only, one file per family with its citation;
* ``methods``: the registry :data:`METHODS` (a method is data: a kind applied to a tableau), what applies
  to a problem and what each method keeps;
* ``geometry``: spaces (vector space, g*, the group), the relation of ad_x, recognition of a problem's structure;
* ``reference``: the numpy reference steppers (the definition of correct), dense output, helper formulas;
* ``codegen``: writes source text only (steps, loops, ensembles, projection), one writer;
* ``backends``: turns that text into callables (numpy, numba) and runs them;
* ``engine``: ``integrate`` and its loops, events, ensembles, guards, the scipy adapter, reconstruction;
* ``analysis``: the comparison harness, the free rigid body's exact solution, and the phase-space tools
  (Lyapunov spectra with MEGNO, Poincare sections).
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from .analysis.compare import Comparison, compare
    from .engine.driver import integrate
    from .core.errors import ConvergenceError, IntegrationInputError, IntegratorError, MethodError
    from .core.grid import DEFAULT_STEPS
    from .methods import ALIASES, METHODS, applicable_methods
    from .analysis.phase_space import LyapunovResult, PoincareResult, lyapunov_spectrum, poincare_section
    from .core.problems import CoadjointProblem, ODEProblem, ReconstructionProblem
    from .core.quantities import polynomial_quantity
    from .engine.reconstruction import reconstruct
    from .core.result import IntegrationResult

exports(__name__, __file__)

__all__ = ["compare", "Comparison", "ODEProblem", "CoadjointProblem", "ReconstructionProblem", "integrate", "reconstruct",
           "IntegrationResult", "METHODS", "ALIASES", "IntegratorError", "MethodError", "IntegrationInputError",
           "ConvergenceError", "applicable_methods", "DEFAULT_STEPS", "lyapunov_spectrum", "poincare_section",
           "LyapunovResult", "PoincareResult", "polynomial_quantity"]
