"""Exceptions raised by liegroups.

Every error names the identity or condition that failed, where it failed and by how much,
so a user can see at once what is wrong with their input. All derive from :class:`LieGroupsError`
(a ValueError), so ``except LieGroupsError`` catches whatever this package raises on bad input.
"""

from __future__ import annotations


class LieGroupsError(ValueError):
    """Base class of every exception raised by liegroups."""


class LieAlgebraError(LieGroupsError):
    """Invalid Lie-algebra or matrix-group data (shapes, parameters, names, bases)."""


class StructureConstantsError(LieAlgebraError):
    """Structure constants C[i, j, k] fail a defining identity.

    Attributes
    ----------
    identity : str
        ``"shape"``, ``"finite"``, ``"antisymmetry"`` or ``"jacobi"``.
    indices : tuple or None
        The worst offending indices.
    residual : float or None
        The size of the violation there.
    tolerance : float or None
        The tolerance it was compared against.
    """

    def __init__(self, identity: str, message: str, indices: tuple[int, ...] | None = None,
                 residual: float | None = None, tolerance: float | None = None) -> None:
        super().__init__(message)
        self.identity = identity
        self.indices = indices
        self.residual = residual
        self.tolerance = tolerance
