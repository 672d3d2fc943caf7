"""The registry of named systems: :class:`Entry`, :func:`register`, :func:`names`, :func:`get`.

An entry is built by a *builder* function from keyword parameters with documented defaults::

    @register("euler_top", defaults={"I1": 2.0, ...}, family="rigid")
    def _euler_top(I1, ...):
        return Entry(...)

``get(name, **params)`` overrides the defaults; unknown names and unknown parameters raise
:class:`CatalogError` (a ``ValueError``) naming what was wrong and what is accepted.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import Any, Callable

import numpy as np

from .errors import CatalogError
from liegroups.errors import LieGroupsError
from integrators import IntegratorError
from servo.errors import ServoError

#: the exceptions of the packages below, which say themselves what is wrong (ServoError's
#: UnrealizableConstraintError, for one, is what a sweep of realizability records)
ProjectError = (LieGroupsError, IntegratorError, ServoError)
from .output.display import entry_markdown, entry_text

#: the modules that register entries (imported on first use)
ENTRY_MODULES = ("catalog.entries.rigid", "catalog.entries.constrained_bodies", "catalog.entries.sleighs",
                 "catalog.entries.multi_constrained", "catalog.entries.coordinates",
                 "catalog.entries.talamucci", "catalog.entries.forced_sleighs")


@dataclass
class Entry:
    """A named system with its metadata.

    Attributes
    ----------
    name, description, references : identification and sources (paper file and section).
    system : the mechanics object (a ``servo`` system, a constrained Lagrangian system, ...).
    initial_state : array (Lie-group systems: the state of ``system``) or dict (coordinates: q0, qd0, lam0).
    t_end : default final time; ``steps`` the default number of steps; ``method`` the default integrator.
    parameters : the parameter values the entry was built with (defaults merged with overrides).
    first_integrals : dict name -> callable(y (..., dim)) -> (...), the quantities the entry claims
        are conserved, written independently of ``system`` (None where none is known).
    exact_solution : callable(t (K,)) -> (K, dim) in the same layout as the simulated state, or None.
    kind : "lie-group" or "coordinates"; model : "free", "nonholonomic", "servo1", "servo2",
        "vakonomic", "one-sided", "friction", "added-mass"; tags : free-form labels.
    labels : names of the state components; tolerances : {"integral": rel, "exact": abs} of the checks.
    path : callable(run) -> (K, 2) path in the plane (sleighs), or None.
    extras : anything else a family needs (e.g. the algebra, inertia, a, b).
    """

    name: str
    system: Any
    initial_state: Any
    t_end: float
    parameters: dict
    description: str
    references: list
    first_integrals: dict | None = None
    exact_solution: Callable | None = None
    kind: str = "lie-group"
    tags: tuple = ()
    model: str = "free"
    steps: int = 2000
    method: str | None = None
    labels: tuple = ()
    tolerances: dict = field(default_factory=lambda: {"integral": 1e-9, "exact": 1e-6})
    path: Callable | None = None
    extras: dict = field(default_factory=dict)

    _repr_markdown_ = entry_markdown
    __repr__ = entry_text   # print(entry): a summary of at most 30 lines, not the arrays

    @classmethod
    def from_system(cls, system: Any, state: Any, t_end: float, **fields: Any) -> "Entry":
        """A researcher's own Lie-group system as an entry, its claims filled in from what the system
        knows: its first integrals (Casimirs, energy, linear and quadratic integrals of the reduced
        system), its constraint (a, w) = 0, and on SE(2) the path in the plane
        (:mod:`catalog.entries.own`). ``fields`` (name, steps, method, description, references,
        first_integrals, exact_solution, labels, tolerances, parameters, tags, extras) override.

        ``Entry.from_system(ServoSecondKind(named.se2(), [1, 2, 0.7], a=[0, 1, 0], b=[0.3, 1, 0.2]),
        [1, 0, 0.35, 0], 10.0)`` can be simulated, checked, shown and swept (its initial state ``y0[i]``;
        a factory ``lambda b0: Entry.from_system(...)`` to sweep the data)."""
        from .entries.own import entry_fields

        return cls(**entry_fields(system, state, t_end, **fields))


@dataclass
class _Spec:
    name: str
    builder: Callable
    defaults: dict
    family: str
    doc: str
    title: str


_REGISTRY: dict[str, _Spec] = {}
_loaded = False


def register(name, defaults=None, family="", title=""):
    """Decorator registering ``builder(**params) -> Entry`` under ``name`` with documented ``defaults``."""

    def deco(builder):
        _REGISTRY[name] = _Spec(name, builder, dict(defaults or {}), family,
                                (builder.__doc__ or "").strip(), title or name)
        return builder

    return deco


def unregister(name: str) -> None:
    """Remove a researcher's own entry (family "user", see ``catalog.entries.toml_loader.register_file``)
    from the registry; the catalog's own entries stay (CatalogError)."""
    spec = _REGISTRY.get(name)
    if spec is None:
        return
    if spec.family != "user":
        raise CatalogError(f"{name!r} is a catalog entry, not a registered file; it stays in the catalog")
    del _REGISTRY[name]


def _load():
    global _loaded
    if not _loaded:
        _loaded = True
        for mod in ENTRY_MODULES:
            importlib.import_module(mod)


def specs() -> dict[str, _Spec]:
    """Registered specs by name."""
    _load()
    return dict(sorted(_REGISTRY.items()))


def names() -> list[str]:
    """Sorted list of the entry names."""
    return list(specs())


def defaults(name: str) -> dict[str, Any]:
    """The documented default parameters of entry ``name``."""
    return dict(_spec(name).defaults)


def _spec(name):
    _load()
    if name not in _REGISTRY:
        close = difflib.get_close_matches(str(name), list(_REGISTRY), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise CatalogError(f"unknown catalog entry {name!r}{hint}; known: {', '.join(names())}")
    return _REGISTRY[name]


def _coerce(name, key, default, value):
    if isinstance(default, bool):
        if isinstance(value, str):
            if value.lower() in ("1", "true", "yes"):
                return True
            if value.lower() in ("0", "false", "no"):
                return False
        elif isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise CatalogError(f"entry {name!r}: parameter {key!r} must be true/false, got {value!r}")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise CatalogError(f"entry {name!r}: parameter {key!r} must be a number, got {value!r}") from None
        if not np.isfinite(v):
            raise CatalogError(f"entry {name!r}: parameter {key!r} must be finite, got {value!r}")
        return int(v) if isinstance(default, int) and float(v).is_integer() else v
    if isinstance(default, (tuple, list)):
        if isinstance(value, str):
            value = [s for s in value.replace(";", ",").split(",") if s.strip()]
        try:
            arr = [float(x) for x in value]
        except (TypeError, ValueError):
            raise CatalogError(f"entry {name!r}: parameter {key!r} must be a list of numbers, got {value!r}") from None
        if len(arr) != len(default):
            raise CatalogError(f"entry {name!r}: parameter {key!r} needs {len(default)} numbers, got {len(arr)}")
        return tuple(arr)
    return value


def get(name: str, **params: Any) -> Entry:
    """Build entry ``name`` with ``params`` overriding its documented defaults.

    Raises :class:`CatalogError` for an unknown name, an unknown parameter (listing the accepted ones
    with their defaults), a value of the wrong type, or a requirement not importable yet.
    """
    spec = _spec(name)
    bad = sorted(set(params) - set(spec.defaults))
    if bad:
        acc = ", ".join(f"{k}={v!r}" for k, v in spec.defaults.items()) or "none"
        raise CatalogError(f"entry {name!r} has no parameter {', '.join(map(repr, bad))}; accepted: {acc}")
    merged = dict(spec.defaults)
    for k, v in params.items():
        merged[k] = _coerce(name, k, spec.defaults[k], v)
    try:
        entry = spec.builder(**merged)
    except (CatalogError, *ProjectError):
        raise
    except (ArithmeticError, ValueError, TypeError) as exc:  # e.g. a division by a zero parameter
        given = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "the defaults"
        raise CatalogError(f"entry {name!r} cannot be built with {given}: {type(exc).__name__}: {exc}") from None
    entry.parameters = merged
    return entry


def parse_params(pairs: Iterable[str] | None) -> dict[str, str]:
    """``["m=2", "alpha=0.5"]`` -> {"m": "2", "alpha": "0.5"} (values are coerced by :func:`get`)."""
    out = {}
    for p in pairs or ():
        if "=" not in p:
            raise CatalogError(f"parameter {p!r} must look like key=value")
        k, v = p.split("=", 1)
        out[k.strip()] = v.strip()
    return out
