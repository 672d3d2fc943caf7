"""Butcher tableaux of the embedded pairs, as plain data for the stepping code and the generator.

* "dp5": Dormand and Prince (1980), RK5(4)7FM: 6 stages, FSAL, error estimator of order 4 (the
  7th entry of E weighs the first stage of the next step). The coefficients are scipy's RK45 ones.
* "dop853": Hairer, Norsett and Wanner, *Solving ODEs I*, II.10 (DOP853): 12 stages, FSAL, two error
  estimators (orders 5 and 3) combined as err5^2 / sqrt(err5^2 + 0.01 err3^2); coefficients from
  :mod:`integrators.tableaux.dop853` (the same numbers as scipy's DOP853).

A tableau is a dict with keys name, A (rows, strictly lower triangular), b, c, E (list of error
vectors over the stages and the FSAL stage), err_order, fsal.
"""

from __future__ import annotations

from functools import lru_cache

from . import dop853 as dop853_tableau

_DP5 = {
    "A": ((), (1 / 5,), (3 / 40, 9 / 40), (44 / 45, -56 / 15, 32 / 9),
          (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
          (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656)),
    "b": (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
    "c": (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0),
    "E": ((-71 / 57600, 0.0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40),),
    "err_order": 4,
}


@lru_cache(maxsize=None)
def get(name):
    """The tableau called ``name`` ("dp5", "dop853")."""
    if name == "dp5":
        return dict(_DP5, name="dp5", fsal=True)
    if name == "dop853":
        d = dop853_tableau
        s = d.N_STAGES
        A = tuple(tuple(row) for row in d.A[:s])
        return {"name": "dop853", "A": A, "b": tuple(float(v) for v in d.B), "c": tuple(float(v) for v in d.C[:s]),
                "E": (tuple(float(v) for v in d.E5), tuple(float(v) for v in d.E3)), "err_order": 7, "fsal": True}
    raise KeyError(name)


def of_method(method):
    """The tableau dict of a fixed-step explicit method (ExplicitRK or RKMK)."""
    return {"name": method.name, "A": method.A, "b": method.b, "c": method.c, "E": (), "err_order": None,
            "fsal": False}
