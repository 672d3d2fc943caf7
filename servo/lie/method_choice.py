"""Which integrator ``simulate`` uses when none is named: a table from what the system's claims need to
the fastest method of :mod:`integrators` that keeps it.

What the claims need follows from the problem a system hands to ``integrators.integrate``:

* an unforced coadjoint problem z' = ad*_{w(z)} z (free Euler-Poincare systems, servo-constraints of the
  second kind, vakonomic systems: Kozlov's lectures on servo-constraints) claims the Casimirs of z
  (and the constraint (a, w) = 0, which the exact flow keeps because lambda is a state variable). The
  projected pair keeps every polynomial Casimir to round-off (each accepted step is projected onto
  their level set, Hairer, Lubich and Wanner 2006, IV.4) and is the fastest that does
  (``benchmarks/compare_integrators.py``: 0.18-0.27x DOP853's time with numpy on the Casimir systems,
  rkmk853 0.44-0.68x); on an algebra without a polynomial Casimir the Lie-group pair rkmk853 (each
  step an exact coadjoint action, Munthe-Kaas 1999) keeps the orbit instead;
* a forced problem z' = ad*_{w(z)} z + lambda(z) b (servo-constraints of the first kind, nonholonomic
  systems) has no Casimir; its claim is the constraint (a, w) = (I^-1 a, z) = 0, a linear invariant,
  which every Runge-Kutta method keeps to round-off (Hairer, Lubich and Wanner 2006, IV.1).

| the claims need (``needs``) | method | options |
| --- | --- | --- |
| "casimirs" | rk853_projected (rkmk853 without a polynomial Casimir) | rtol 1e-12, atol 1e-14 |
| "linear_invariants" | rk853 | rtol 1e-12, atol 1e-14 |

Why rkmk853 stays the fallback where no polynomial Casimir exists (random solvable algebras, e.g.
R x_D R^8, whose Casimirs are transcendental): it is the cheapest pair that keeps the coadjoint orbit, so
every Casimir, there. Measured on the drawn free system on R x_D R^8 in a random basis at final error
<= 1e-8 on t in [0, 10] with the 1000-point grid (numpy, ``benchmarks/drawn_systems.py``'s matching):
rkmk853 10.6 ms (12 steps), rkmk_tsit5 16.2 ms (55 steps), rkmk45 20.8 ms (78 steps); the ambient pairs
are cheaper per step but drift off the orbit. Its cost per stage there is the exponential and dexp^-1 of
a dense 9 x 9 ad matrix (the code writer's matrix form, :mod:`integrators.codegen.matrix_source`).

The pair chooses its own steps (tens on t in [0, 10] for the catalog's systems). When the caller asks for
an output grid (``steps`` or ``h``), the states on it come from the pair's continuous extension
(:mod:`integrators.reference.dense_output`, order 7), projected too (for RKMK through the coadjoint action), so the
Casimirs hold at every output point; without a grid the states at the accepted steps are returned. Why no fixed-step
column: measured on every Lie-group entry of the catalog with 1000 (or 1500) output points, the pair with
dense output took 0.46-1.0 times the time of rk4 / rkmk4 on the same grid and reached a smaller final
error on the Casimir-keeping systems (flywheel body 1.7e-11 instead of 4.0e-9, vakonomic body 2.4e-11
instead of 3.2e-9, against DOP853 at rtol 1e-13); a fixed-step method is still one ``method=`` away.
"""

from __future__ import annotations

from integrators.methods import METHODS, applies

from ..errors import ServoError

__all__ = ["METHOD_TABLE", "FALLBACK", "ADAPTIVE_OPTIONS", "needs", "choose", "default_method_doc", "document_default"]

#: what the claims need -> the method ``simulate`` uses when none is named
METHOD_TABLE = {
    "casimirs": "rk853_projected",
    "linear_invariants": "rk853",
}
#: what keeps the Casimirs where the table's method does not apply (an algebra without a polynomial Casimir)
FALLBACK = {"rk853_projected": "rkmk853"}

#: its tolerances (final error below 1e-9 on t in [0, 10] for the catalog systems)
ADAPTIVE_OPTIONS = {"rtol": 1e-12, "atol": 1e-14}


def needs(problem):
    """"casimirs" for an unforced coadjoint problem, "linear_invariants" for a forced one (ServoError
    for a problem of another kind)."""
    if getattr(problem, "kind", None) != "coadjoint":
        raise ServoError(f"no default method for a {getattr(problem, 'kind', type(problem).__name__)!r} "
                         f"problem: the table covers coadjoint problems (see servo.lie.method_choice)")
    return "casimirs" if problem.forcing is None else "linear_invariants"


def choose(problem):
    """(method name, options for ``integrate``) from :data:`METHOD_TABLE` (or :data:`FALLBACK` where its
    method does not apply) and :data:`ADAPTIVE_OPTIONS`."""
    name = METHOD_TABLE[needs(problem)]
    if name in FALLBACK and not applies(METHODS[name], problem):
        name = FALLBACK[name]
    return name, dict(ADAPTIVE_OPTIONS)


def default_method_doc(need: str) -> str:
    """The sentence a system's docstring gives about its default method, built from :data:`METHOD_TABLE`
    (so that ``help(ServoSecondKind)`` names the method ``simulate`` really uses)."""
    name = METHOD_TABLE[need]
    opts = ", ".join(f"{k} {v:g}" for k, v in ADAPTIVE_OPTIONS.items())
    what = {"casimirs": "keeps the Casimirs of z to round-off",
            "linear_invariants": "keeps the linear constraint (a, w) = 0 to round-off"}[need]
    alt = f" ({FALLBACK[name]} on an algebra without a polynomial Casimir)" if name in FALLBACK else ""
    return (f"The default method of ``simulate`` is {name!r}{alt} at {opts}: it {what} "
            f"(servo.lie.method_choice.METHOD_TABLE).")


def document_default(cls: type, need: str) -> type:
    """Append :func:`default_method_doc` to the docstring of ``cls`` (nothing under ``python -OO``)."""
    if cls.__doc__:
        cls.__doc__ = cls.__doc__.rstrip() + "\n\n    " + default_method_doc(need) + "\n"
    return cls
