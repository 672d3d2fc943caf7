"""methods: the registry of integration methods (:data:`METHODS`), what applies to a problem, what each keeps."""

from .registry import (ALIASES, CASIMIRS, CF4_SWAPPED, GROUP, LINEAR, METHODS, QUADRATIC, CommutatorFree,  # noqa: F401
                       Embedded, ExplicitRK, ImplicitMidpoint, Method, MoserVeselov, RKMK, ScipyMethod, Splitting,
                       applicable_methods, applies, canonical_name, get_method, has_polynomial_casimirs,
                       is_so3_free_rigid_body, preserved)
