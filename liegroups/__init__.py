"""liegroups: Lie algebras by structure constants, Casimirs, exp / Ad / Ad* / dexp^-1, matrix groups.

Conventions: [e_i, e_j] = sum_k C[i,j,k] e_k; ad(x) @ y = [x, y]; (ad*_x m)_j = sum x_i C[i,j,k] m_k;
Euler-Poincare m' = ad*_w m, m = I w. Every numeric function broadcasts over leading axes (..., n).
"""

from typing import TYPE_CHECKING

from ._lazy import exports

if TYPE_CHECKING:
    from . import named
    from .algebra import LieAlgebra, check_structure_constants, jacobi_residual
    from .bivectors import from_bivectors
    from .casimirs import Casimir, CasimirList, m_symbols
    from .closed_forms import bernoulli_coefficients, so3_coefficients, so3_dexp_coefficient, so3_dexpinv_coefficient
    from .errors import LieAlgebraError, LieGroupsError, StructureConstantsError
    from .matrix_groups import SE2, SE3, SO3, group_for

exports(__name__, __file__)

__all__ = [
    "LieAlgebra", "named", "Casimir", "CasimirList", "m_symbols", "LieGroupsError", "LieAlgebraError",
    "StructureConstantsError", "check_structure_constants", "jacobi_residual",
    "SO3", "SE2", "SE3", "group_for", "from_bivectors", "so3_coefficients", "so3_dexp_coefficient",
    "so3_dexpinv_coefficient", "bernoulli_coefficients",
]
