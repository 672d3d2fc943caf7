"""methods: the registry of integration methods (:data:`METHODS`), what applies to a problem, what each keeps.

A method is data: a kind (:mod:`integrators.methods.kinds`: Runge-Kutta in its three forms, commutator-free,
splitting, Moser-Veselov, implicit midpoint, the scipy adapters) applied to coefficients of
:mod:`integrators.tableaux`; the rows are in :mod:`integrators.methods.registry`.
"""

from .kinds import (CASIMIRS, FORMS, GROUP, LINEAR, NONHOLONOMIC, QUADRATIC, REVERSIBLE, CommutatorFree,
                    DiscreteMechanics, ImplicitMidpoint, Method, MoserVeselov, RungeKutta, ScipyMethod, Splitting)
from .registry import (ALIASES, CF4_SWAPPED, METHODS, applicable_methods, applies, canonical_name, describe,
                       get_method, has_polynomial_casimirs, is_so3_free_rigid_body, method_table, preserved)

__all__ = ["CASIMIRS", "FORMS", "GROUP", "LINEAR", "NONHOLONOMIC", "QUADRATIC", "REVERSIBLE", "DiscreteMechanics",
           "CommutatorFree", "ImplicitMidpoint", "Method",
           "MoserVeselov", "RungeKutta", "ScipyMethod", "Splitting", "ALIASES", "CF4_SWAPPED", "METHODS",
           "applicable_methods", "applies", "canonical_name", "describe", "get_method", "has_polynomial_casimirs",
           "is_so3_free_rigid_body", "method_table", "preserved"]
