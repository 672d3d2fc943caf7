"""integrators: geometry-preserving integrators on two problem protocols (plain ODE and coadjoint ODE
on g*), group reconstruction, event location and the comparison harness.

Entry points: :func:`integrate` (like scipy's solve_ivp) and :func:`reconstruct` (g' = g w(t) from
sampled velocities). Methods and what they keep: :data:`METHODS` (see :mod:`integrators.methods`).

Where things are (a new method is data: a tableau in ``tableaux`` and a row in ``methods``):

* the entry and its checks: ``driver`` (integrate), ``validation``, ``errors``, ``grid`` (step and
  output grids), ``problems``, ``result`` (the one result type), ``export``, ``display``, ``progress``;
* methods as data: ``methods``, ``tableaux``, ``dop853_tableau``;
* the generic reference steppers: ``stepping`` over ``spaces`` (vector space and Lie-algebra
  operations), ``moser_veselov``, ``rigid_body``;
* the generated fast path: ``recognition`` (what the generator knows about a problem, from its data),
  ``relations`` (the relation of ad_x), ``codegen`` (the code writer) with ``exp_writer`` (its
  exponentials), ``row_source`` (its variant for the numpy columns of an ambient pair's ensemble:
  stage sums as np.dot) and ``source_text`` (numbers as source), ``programs`` (step, fixed loop,
  adaptive loop; compiled per mode), ``genhelpers`` (helpers the generated code calls),
  ``numba_kernels`` (the optional compiled backend), ``fastpath`` (running it), ``so3_fast``;
* adaptive pairs and what sits on them: ``adaptive``, ``dense_output``, ``events``, ``projection``
  (the Casimir projection of the projected pairs);
* ensembles: ``batch``, ``batchgen``, ``batch_kernels``;
* phase space: ``phase_space`` (Lyapunov spectra with MEGNO, Poincare sections);
* after a run: ``guard`` (resolution and invariant checks); ``reconstruction`` (g' = g w);
  ``compare`` and ``scipy_adapter`` (honest comparisons with scipy).
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from .compare import Comparison, compare
    from .driver import integrate
    from .errors import ConvergenceError, IntegrationInputError, IntegratorError, MethodError
    from .grid import DEFAULT_STEPS
    from .methods import ALIASES, METHODS, applicable_methods
    from .phase_space import LyapunovResult, PoincareResult, lyapunov_spectrum, poincare_section
    from .problems import CoadjointProblem, ODEProblem, ReconstructionProblem
    from .reconstruction import reconstruct
    from .result import IntegrationResult

exports(__name__, __file__)

__all__ = ["compare", "Comparison", "ODEProblem", "CoadjointProblem", "ReconstructionProblem", "integrate", "reconstruct",
           "IntegrationResult", "METHODS", "ALIASES", "IntegratorError", "MethodError", "IntegrationInputError",
           "ConvergenceError", "applicable_methods", "DEFAULT_STEPS", "lyapunov_spectrum", "poincare_section",
           "LyapunovResult", "PoincareResult"]
