"""A researcher's own system as a catalog entry: the fields of :meth:`catalog.registry.Entry.from_system`.

What an entry claims is filled in from what the system knows about itself:

* its first integrals (``system.first_integrals()``, :mod:`servo.lie.first_integrals`): the Casimirs
  F(m) of a free system and F(m + lambda b) of a servo-constraint of the second kind (Kozlov's lectures on
  servo-constraints), the energy where it is conserved (free, nonholonomic, vakonomic), and the linear and
  quadratic integrals of the reduced system of the first kind (the servo-sleigh's beta u - alpha w);
* its constraint (a, w) = 0 (each (a_i, w) for several), as a residual checked along every run;
* on SE(2) the path in the plane, on SO(3) / SE(3) the attitude (and position), reconstructed from g' = g w
  (:mod:`catalog.verify.motion`).

These claims come from ``servo`` itself, so they check the integration, not the derivation; the catalog's
named entries write theirs independently (:mod:`catalog.verify.claims`). Each claim is labelled with
its source in ``extras["claims_from"]``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import CatalogError
from ..verify.claims import plain
from ..verify.motion import group_kind, plane_path

__all__ = ["system_integrals", "system_constraints", "entry_fields"]


_CASIMIR_ARGS = (("(m + lambda b)", "m + \u03bb b"), ("(m + sum lambda_i b_i)", "m + \u03a3 \u03bb_i b_i"))


def reader_name(integral: Any, formula: bool = True) -> str:
    """The name of a first integral as the catalog's entries write theirs (:mod:`catalog.verify.claims`):
    ``Casimir F(m + λ b), F = m1² + m2²`` for servo's ``casimir:m1**2 + m2**2(m + lambda b)``,
    ``energy (m, I^-1 m)/2``, ``linear integral 1: m1 + (4/3) m3``; so that an own system's claims read the
    same in print, the report and a sweep's columns as a TOML file's. ``formula=False``: a short label for
    a line that writes the expanded expression after it (``Casimir m1² + m2² at m + λ b``, ``energy``,
    ``linear integral 1``)."""
    name, kind = str(integral.name), getattr(integral, "kind", "")
    if name.startswith("casimir:"):
        body = name[len("casimir:"):]
        for raw, shown in _CASIMIR_ARGS:
            if body.endswith(raw):
                F = plain(body[:-len(raw)])
                return f"Casimir F({shown}), F = {F}" if formula else f"Casimir {F} at {shown}"
        return f"Casimir {plain(body)}" if formula else "Casimir"
    if kind == "energy":
        return "energy (m, I^-1 m)/2" if formula else "energy"
    if kind in ("linear", "quadratic") and getattr(integral, "expr", None) is not None:
        label = f"{kind} integral {name.split(':')[-1]}"
        return f"{label}: {plain(integral.expr)}" if formula else label
    return name


def system_integrals(system: Any) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """{name: F(state)} of the first integrals the system finds for itself, named by :func:`reader_name`
    (empty when it finds none or cannot: symbolic parameters, a system without ``first_integrals``)."""
    finder = getattr(system, "first_integrals", None)
    if finder is None:
        return {}
    return {reader_name(f): f for f in finder()}


def system_constraints(system: Any) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """{"(a, w)": residual(state)} of a left-invariant constraint ("(a_i, w)" for each of several)."""
    res = getattr(system, "constraint_residual", None)
    k = getattr(system, "k", None)
    if res is None or k is None:
        return {}
    if k == 1:
        return {"(a, w)": res}
    return {f"(a_{i + 1}, w)": (lambda y, i=i: res(y)[..., i]) for i in range(k)}


def _labels(system, n_state):
    n = system.algebra.dim
    k = n_state - n
    lam = ("lambda",) if k == 1 else tuple(f"lambda{i + 1}" for i in range(k))
    return tuple(f"m{i + 1}" for i in range(n)) + (lam if k > 0 else ())


def entry_fields(system: Any, state: Any, t_end: float, *, name: str | None = None, steps: int = 1000,
                 method: str | None = None, description: str | None = None, references: Any = (),
                 first_integrals: dict | None = None, exact_solution: Callable | None = None,
                 labels: tuple | None = None, tolerances: dict | None = None, parameters: dict | None = None,
                 tags: tuple = (), extras: dict | None = None) -> dict[str, Any]:
    """The keyword arguments of :class:`catalog.registry.Entry` for ``system`` started at ``state``
    (the module docstring says what is claimed); each keyword overrides what it names."""
    if not hasattr(system, "algebra") or not hasattr(system, "simulate"):
        raise CatalogError(f"Entry.from_system takes a Lie-group system of servo (EulerPoincare, ServoFirstKind, "
                           f"ServoSecondKind, ...), got {type(system).__name__}; wrap other systems in "
                           f"Entry(...) directly")
    if not getattr(system, "is_numeric", True):
        raise CatalogError(f"{system.name} has symbolic parameters {', '.join(map(str, system.symbols))}; "
                           f"substitute numbers first (system.subs({{...}}))")
    try:
        t_end = float(t_end)
    except (TypeError, ValueError):
        raise CatalogError(f"t_end must be a positive number, got {t_end!r}") from None
    if not (np.isfinite(t_end) and t_end > 0):
        raise CatalogError(f"t_end must be a positive number, got {t_end!r}")
    y0 = system.check_state(state)  # ServoError for a wrong shape or a state off the constraint
    if y0.ndim != 1:
        raise CatalogError(f"an entry starts from one state, got shape {y0.shape}")
    g = system.algebra
    kind = getattr(system, "kind", "free")
    claims_from = {}
    if first_integrals is None:
        first_integrals = system_integrals(system)
        claims_from.update({k: "system" for k in first_integrals})
    constraints = system_constraints(system)
    claims_from.update({k: "system" for k in constraints})
    ex = {"algebra": g, "constraints": constraints, "claims_from": claims_from}
    if getattr(system, "I", None) is not None:
        ex["inertia"] = system.I
    if getattr(system, "has_linear_term", False):
        ex["hamiltonian_shift"] = system.c
        ex["inverse_inertia"] = system.Iinv
    for key in ("a", "b"):
        if getattr(system, key, None) is not None:
            ex[key] = getattr(system, key)
    ex.update(extras or {})
    return dict(
        name=name or system.name, system=system, initial_state=y0, t_end=t_end,
        parameters=dict(parameters or {}),
        description=description or f"{type(system).__name__} on {g.name} ({system.name}).",
        references=list(references), first_integrals=first_integrals, exact_solution=exact_solution,
        kind="lie-group", tags=tuple(tags) + ("user",), model=kind, steps=int(steps), method=method,
        labels=tuple(labels) if labels is not None else _labels(system, y0.shape[-1]),
        tolerances=dict(tolerances or {"integral": 1e-9, "exact": 1e-6, "constraint": 1e-9}),
        path=plane_path if group_kind(system) == "se2" else None, extras=ex,
    )
