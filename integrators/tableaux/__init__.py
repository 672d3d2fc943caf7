"""tableaux: coefficients only, one file per family with its citation, each a :class:`Tableau` checked
when it is created (:mod:`integrators.tableaux.tableau`).

* :mod:`~integrators.tableaux.explicit`: Euler, Heun, the classical RK4 (Kutta 1901);
* :mod:`~integrators.tableaux.dormand_prince`: the 5(4) pair with Shampine's dense output;
* :mod:`~integrators.tableaux.dop853`: the 8(5,3) pair with its order-7 dense output;
* :mod:`~integrators.tableaux.tsitouras`: Tsitouras's 5(4) pair with its dense output;
* :mod:`~integrators.tableaux.lie_group`: the commutator-free and Crouch-Grossman coefficients and the
  splitting compositions (not Runge-Kutta tableaux: products of exponentials).

A new Runge-Kutta method is a new :class:`Tableau` here and one row of :data:`integrators.METHODS`.
"""

from .dop853 import DOP853
from .dormand_prince import DP5
from .explicit import EULER, HEUN, RK4
from .tableau import Tableau, TableauError, dense_defects, order_defects, rooted_trees
from .tsitouras import TSIT5

#: every Runge-Kutta tableau by name
TABLEAUX = {t.name: t for t in (EULER, HEUN, RK4, DP5, DOP853, TSIT5)}



def get(name: str) -> Tableau:
    """The Runge-Kutta tableau called ``name``; TableauError listing the names otherwise."""
    try:
        return TABLEAUX[name]
    except KeyError:
        raise TableauError(f"unknown tableau {name!r}; tableaux: {', '.join(TABLEAUX)}") from None


__all__ = ["get", "Tableau", "TableauError", "TABLEAUX", "EULER", "HEUN", "RK4", "DP5", "DOP853", "TSIT5",
           "order_defects", "dense_defects", "rooted_trees"]
