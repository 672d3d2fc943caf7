"""servo: mechanics on Lie groups and in coordinates with nonholonomic, vakonomic and servo-constraints.

Each module adds its public names below (one import block per module).
"""

from .quadratic import QuadraticSystem, QuadraticSystemError

from .errors import (ConstraintViolationError, CovectorError, InertiaError, ServoError,
                     SymbolicParameterError, UnrealizableConstraintError)
from .euler_poincare import EulerPoincare
from .servo_first import Nonholonomic, ServoFirstKind
from .servo_second import ServoSecondKind, Vakonomic
