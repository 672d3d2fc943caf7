"""What a declared quantity (an invariant, a constraint) may say about itself so that the end-of-run check
(:mod:`integrators.engine.guard`) evaluates it less often.

The check scales the drift of a quantity q at a state y by S(y) = sum_i |q(r e_i)|, r = |y|_inf. For an
arbitrary callable that is q on n rows per state (an ensemble of 10^4 states of dimension 6: a call on
60,000 rows, 3 ms of a 20 ms run); a polynomial needs only its values on the axes at d + 1 sizes
(``polynomial_degree``), a homogeneous one on the unit rows (``homogeneous_degree``, as
:class:`liegroups.casimirs.Casimir` has).
"""

from __future__ import annotations

import numbers
from typing import Callable, TypeVar

from .errors import IntegrationInputError


Q = TypeVar("Q", bound=Callable)


def polynomial_quantity(degree: int) -> Callable[[Q], Q]:
    """Decorator: declare a quantity q(z) (rows of states -> one value each) a polynomial of total degree at most
    ``degree`` in z (attribute ``polynomial_degree``; a bound method reads its function's attribute). The guard
    then takes its scale from its values on the axes (:func:`integrators.engine.quantity_scale.scales`); a wrong
    declaration misstates the scale, so declare only what the formula is, e.g. an energy (z, W z)/2 + (c, z)
    (degree 2) or a constraint (a, W z + c) (degree 1)."""
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 0:
        raise IntegrationInputError(f"a polynomial quantity's degree must be a non-negative integer, got {degree!r}")
    d = int(degree)

    def mark(fn: Q) -> Q:
        fn.polynomial_degree = d
        return fn

    return mark
