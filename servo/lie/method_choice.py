"""Which integrator ``simulate`` uses when none is named: a table from what the system's claims need to
the fastest method of :mod:`integrators` that keeps it.

What the claims need follows from the problem a system hands to ``integrators.integrate``:

* an unforced coadjoint problem z' = ad*_{w(z)} z (free Euler-Poincare systems, servo-constraints of the
  second kind, vakonomic systems: Kozlov's lectures on servo-constraints) claims the Casimirs of z
  (and the constraint (a, w) = 0, which the exact flow keeps because lambda is a state variable). The
  Lie-group methods keep every Casimir to round-off (each step is an exact coadjoint action,
  Munthe-Kaas 1999);
* a forced problem z' = ad*_{w(z)} z + lambda(z) b (servo-constraints of the first kind, nonholonomic
  systems) has no Casimir; its claim is the constraint (a, w) = (I^-1 a, z) = 0, a linear invariant,
  which every Runge-Kutta method keeps to round-off (Hairer, Lubich and Wanner 2006, IV.1).

| the claims need (``needs``) | with an output grid (``steps`` or ``h``) | the method chooses its steps (``steps=None``) |
| --- | --- | --- |
| "casimirs" | rkmk4 | rkmk853, rtol 1e-12, atol 1e-14 |
| "linear_invariants" | rk4 | rk853, rtol 1e-12, atol 1e-14 |

Why two columns: the adaptive pairs return the states at their own accepted steps (tens instead of a
thousand on the catalog's systems; measured once on a busy machine, from 0.85 to 8 times the speed of the
grid column with 1000 steps, always at a smaller error), and have no dense output
on a given grid yet; when the caller asks for N equally spaced states, N steps of the order-4 method on
that grid are cheaper than re-stepping the 12-stage pair to each grid point. On t in [0, 10] with 1000
steps both columns reach a final error below 1e-8 on the catalog's Lie-group systems (tested against
DOP853 at rtol 1e-13), and the adaptive column below 1e-9.
"""

from __future__ import annotations

from ..errors import ServoError

__all__ = ["METHOD_TABLE", "ADAPTIVE_OPTIONS", "needs", "choose"]

#: what the claims need -> {"grid": method on a given output grid, "adaptive": method choosing its steps}
METHOD_TABLE = {
    "casimirs": {"grid": "rkmk4", "adaptive": "rkmk853"},
    "linear_invariants": {"grid": "rk4", "adaptive": "rk853"},
}

#: tolerances of the adaptive column (final error below 1e-9 on t in [0, 10] for the catalog systems)
ADAPTIVE_OPTIONS = {"rtol": 1e-12, "atol": 1e-14}


def needs(problem):
    """"casimirs" for an unforced coadjoint problem, "linear_invariants" for a forced one (ServoError
    for a problem of another kind)."""
    if getattr(problem, "kind", None) != "coadjoint":
        raise ServoError(f"no default method for a {getattr(problem, 'kind', type(problem).__name__)!r} "
                         f"problem: the table covers coadjoint problems (see servo.lie.method_choice)")
    return "casimirs" if problem.forcing is None else "linear_invariants"


def choose(problem, grid=True):
    """(method name, options for ``integrate``) from :data:`METHOD_TABLE`: the grid column when the
    caller fixes the output grid, else the adaptive column with :data:`ADAPTIVE_OPTIONS`."""
    row = METHOD_TABLE[needs(problem)]
    if grid:
        return row["grid"], {}
    return row["adaptive"], dict(ADAPTIVE_OPTIONS)
