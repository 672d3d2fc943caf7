"""Exceptions raised by liegroups.

Every error names the identity or condition that failed, where it failed and by how much,
so a user can see at once what is wrong with their input.
"""


class LieAlgebraError(ValueError):
    """Base class for invalid Lie-algebra data."""


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

    def __init__(self, identity, message, indices=None, residual=None, tolerance=None):
        super().__init__(message)
        self.identity = identity
        self.indices = indices
        self.residual = residual
        self.tolerance = tolerance
