"""Every exception class defined anywhere in liegroups derives from LieGroupsError (a ValueError), and
the public names stay importable from the package."""

import pytest

from liegroups import LieAlgebra, LieAlgebraError, LieGroupsError, StructureConstantsError, named


def test_raised_errors_are_caught_by_the_base():
    with pytest.raises(LieGroupsError):
        LieAlgebra([[[0.0]], [[1.0]]])  # wrong shape
    with pytest.raises(LieGroupsError):
        named.get("no such algebra")
    assert issubclass(StructureConstantsError, LieAlgebraError)
