"""servo.lie: mechanical systems on Lie groups, reduced to the dual g* of the algebra.

One file a job:

* ``euler_poincare``: the free Euler-Poincare system m' = ad*_w m, w = I^-1 m (and the base ``LieSystem``);
* ``built_once``: what depends only on a system's parameters (its problem, default method, integrals, reduced
  system) is built once per system and kept; assigning a parameter rebuilds the system;
* ``constrained``: the left-invariant constraint (a, w) = 0 with a control covector b, realizability;
* ``servo_first``: servo-constraints of the first kind (Beghin) m' = ad*_w m + lambda b, nonholonomic b = a;
* ``servo_second``: servo-constraints of the second kind, T + lambda (b, w), vakonomic b = a;
* ``time_dependent``: time-dependent data I(t), gyrostatic momentum k(t), torque f(t), constraints a(t) (forced
  and periodically excited systems, with their period);
* ``one_sided_servo``: the one-sided servo-constraint of the second kind, lambda >= 0 (Kozlov 2019, section 7);
* ``method_choice``: the table of default integrators (what the claims need -> method);
* ``parameters``: validation of inertia and covectors (numbers or sympy symbols);
* ``first_integrals``, ``symbolic``, ``reduction``: integrals, printable equations and the reduction to a
  homogeneous quadratic system (the one seam to :mod:`servo.quadratic`);
* ``reconstruction``: the motion g(t) on the group; ``euler_form``, ``invariant_manifolds``: the rigid
  body with a servo-constraint of the second kind (Euler form, Poisson sphere).

A new constraint model is a subclass of ``constrained.LeftInvariantConstrained`` in a file of its own.
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from .euler_poincare import EulerPoincare, LieSystem
    from .method_choice import METHOD_TABLE
    from .servo_first import Nonholonomic, ServoFirstKind
    from .servo_second import ServoSecondKind, Vakonomic
    from .one_sided_servo import OneSidedServoSecondKind
    from .time_dependent import TimeDependentSystem
    from .first_integrals import FirstIntegral
    from .reconstruction import planar_path, reconstruct_motion
    from .reduction import Reduced
    from .symbolic import Equations
    from .euler_form import EulerForm, euler_form
    from .invariant_manifolds import PoissonSphere, euler_angle_divergence

exports(__name__, __file__)

__all__ = ["EulerPoincare", "LieSystem", "METHOD_TABLE", "Nonholonomic", "ServoFirstKind", "ServoSecondKind", "Vakonomic",
           "OneSidedServoSecondKind", "TimeDependentSystem", "FirstIntegral", "planar_path", "reconstruct_motion", "Reduced",
           "Equations", "EulerForm", "euler_form", "PoissonSphere", "euler_angle_divergence"]
