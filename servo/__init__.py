"""servo: mechanics with nonholonomic, vakonomic and servo-constraints, in three rooms.

* :mod:`servo.lie`: systems on Lie groups (Euler-Poincare, left-invariant constraints, servo-constraints
  of both kinds, first integrals, equations, reduction, reconstruction);
* :mod:`servo.quadratic`: homogeneous quadratic systems (the reduced systems) and their invariant lines;
* :mod:`servo.coordinates`: Lagrangian systems in coordinates (Cetaev models, one-sided constraints,
  friction and added masses, Gauss's principle).

:mod:`servo.errors` holds the one exception hierarchy of all three. Every public name is re-exported
here, so ``from servo import X`` works for each of them.
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from .errors import (ActiveSetError, ConstraintViolationError, CovectorError, ExactCheckError, GaussError,
                         InertiaError, InitialConstraintError, IntegrationError, LagrangianError,
                         NotLinearizableError, QuadraticSystemError, RealizabilityError, ServoError,
                         SymbolicParameterError, UnrealizableConstraintError)
    from .quadratic import FamilyWitness, InvariantLine, InvariantLines, QuadraticSystem, invariant_lines
    from .lie import (EulerForm, EulerPoincare, Equations, FirstIntegral, LieSystem, Nonholonomic, OneSidedServoSecondKind,
                      PoissonSphere,
                      Reduced, ServoFirstKind, ServoSecondKind, TimeDependentSystem, Vakonomic, euler_angle_divergence, euler_form,
                      planar_path, reconstruct_motion)
    from .coordinates import (ConstrainedSystem, LagrangianSystem, OneSidedSystem, compulsion,
                              fit_power_law, friction_force, gauss_acceleration, solve_compulsion_qp,
                              with_added_mass, with_friction)

exports(__name__, __file__)

__all__ = ["ActiveSetError", "ConstraintViolationError", "CovectorError", "ExactCheckError", "GaussError",
           "InertiaError", "InitialConstraintError", "IntegrationError", "LagrangianError",
           "NotLinearizableError", "QuadraticSystemError", "RealizabilityError", "ServoError",
           "SymbolicParameterError", "UnrealizableConstraintError", "FamilyWitness", "InvariantLine",
           "InvariantLines", "QuadraticSystem", "invariant_lines", "EulerForm", "EulerPoincare", "Equations",
           "FirstIntegral", "LieSystem", "Nonholonomic", "OneSidedServoSecondKind", "PoissonSphere",
           "Reduced", "ServoFirstKind", "ServoSecondKind", "TimeDependentSystem", "Vakonomic", "euler_angle_divergence",
           "euler_form", "planar_path", "reconstruct_motion", "ConstrainedSystem", "LagrangianSystem",
           "OneSidedSystem", "compulsion", "fit_power_law", "friction_force", "gauss_acceleration",
           "solve_compulsion_qp", "with_added_mass", "with_friction"]
