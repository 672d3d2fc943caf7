"""servo: mechanics on Lie groups and in coordinates with nonholonomic, vakonomic and servo-constraints.

Each module adds its public names below (one import block per module).
"""

from .quadratic import QuadraticSystem, QuadraticSystemError
from .invariant_lines import FamilyWitness, InvariantLine, InvariantLines, invariant_lines

from .errors import (ConstraintViolationError, CovectorError, InertiaError, ServoError,
                     SymbolicParameterError, UnrealizableConstraintError)
from .euler_poincare import EulerPoincare
from .servo_first import Nonholonomic, ServoFirstKind
from .servo_second import ServoSecondKind, Vakonomic

from .lagrangian import LagrangianError, LagrangianSystem
from .lagrangian_result import IntegrationError, SimulationResult
from .constraint_models import ConstrainedSystem, InitialConstraintError, RealizabilityError
from .one_sided import ActiveSetError, OneSidedSystem
from .realization import fit_power_law, friction_force, with_added_mass, with_friction
from .gauss import GaussError, compulsion, gauss_acceleration, solve_compulsion_qp
from .first_integrals import FirstIntegral
from .reconstruction import planar_path, reconstruct_motion
from .reduction import Reduced
from .symbolic import Equations
from .euler_form import EulerForm, euler_form
from .invariant_manifolds import PoissonSphere, euler_angle_divergence
