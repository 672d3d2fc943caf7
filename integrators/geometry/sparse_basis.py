"""The basis the compiled code takes products with the structure constants in, when one is cheaper than the
given basis: the adapted basis of an almost abelian algebra (:mod:`integrators.geometry.almost_abelian`, whose
closed forms use it), the root basis of a reductive algebra (:mod:`integrators.geometry.root_basis`), or the basis
of the Levi decomposition of an algebra with an abelian radical (:mod:`integrators.geometry.levi_basis`)."""

from __future__ import annotations

from .almost_abelian import almost_abelian
from .levi_basis import levi_basis
from .root_basis import root_basis


def sparse_basis(C):
    """The first of the adapted, root and Levi bases of structure constants C that applies (each has ``T``,
    ``Tinv`` and ``constants()``), else None."""
    return almost_abelian(C) or root_basis(C) or levi_basis(C)
