"""servo.coordinates: Lagrangian systems in coordinates q with constraints phi(q, q', t) = 0 or f >= 0.

* ``lagrangian``: :class:`LagrangianSystem` (L = T - V, forces, the Lagrange derivative);
* ``constraint_models``: two-sided constraints in four models (nonholonomic by Cetaev's rule,
  vakonomic, servo-constraints of the first and second kind);
* ``one_sided``: one-sided constraints f >= 0 (the model and its equations); ``one_sided_active_set``: the
  complementarity problem that picks the active constraints; ``one_sided_events``: the event-driven
  simulation with leaving and joining events;
* ``realization``: friction and added masses that realize a constraint in the limit;
* ``gauss``: Gauss's principle of least compulsion and Kozlov's generalized principle;
* ``integration``: the shared call of the integrators (a problem in, an IntegrationResult out);
* ``symbolic``: lambdify and covector helpers shared by all of them.

``lagrangian`` imports none of the models: ``constraint_models``, ``one_sided`` and ``realization``
register themselves with it (``register_model`` / ``register_builder``) when the package loads, so
``LagrangianSystem.constrain`` / ``with_friction`` / ``with_added_mass`` dispatch without an import cycle.

A new constraint model for systems in coordinates goes beside ``constraint_models``.
"""

from .lagrangian import LagrangianSystem
from .constraint_models import ConstrainedSystem
from .one_sided import OneSidedSystem
from .realization import fit_power_law, friction_force, with_added_mass, with_friction
from .gauss import compulsion, gauss_acceleration, solve_compulsion_qp
from integrators import IntegrationResult
