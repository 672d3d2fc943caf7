"""What a sweep computes at each point: a small registry of measures, plus any user callable.

A measure maps one point to a flat row ``{column: number, bool or str}``. The built-in ones:

* ``realizability`` (Lie-group entries with a constraint (a, w) = 0 and a control covector b): Kozlov's
  number (I^-1 a, b) and whether the constraint is realizable, i.e. the number is not zero (Kozlov 2019,
  sections 6-7; the number comes from ``system.realizability()``, or from the
  ``UnrealizableConstraintError`` that refuses to build a system where it vanishes);
* ``invariant_lines``: the invariant lines x = s xi, v(xi) = c xi, of the entry's reduced homogeneous
  quadratic system (``servo.invariant_lines``; Kozlov's lectures on servo-constraints): the number of
  real lines, and for each real line its c, the stability of the ray +xi on the sphere of directions, its
  direction xi and, where ``InvariantLine`` provides them, its Kovalevskaya exponents; column ``c_k`` is
  line k followed across the sweep by continuity from its direction where it first appears
  (:mod:`catalog.sweeps.line_tracking`);
* ``integrals_drift`` (options method, steps, t_end): ``catalog.simulate`` then, for each first integral
  F the entry claims (or, for an entry that claims none, each one its system finds for itself:
  ``system.first_integrals()``, e.g. its Casimirs), the relative drift max_k |F(y_k) - F(y_0)| / max(1, |F(y_0)|);
* ``exact_error`` (same options): max_k |y_k - y_exact(t_k)| against the entry's exact solution;
* ``friction_rate`` (same options): for an entry with an edge "limit N -> infinity" in the relation graph
  (friction or added masses, Kozlov's Theorems 1 and 2), the distance e(N) = max_k |y_N(t_k) - y_lim(t_k)|
  to the limit entry's motion (its exact solution, or its simulation on the same time grid) and N e(N),
  which tends to a constant where e = O(1/N); the exponent over a sweep in N is :func:`catalog.sweeps.fit_rate`;
* ``empty``: nothing (the cost of the sweep machinery alone).

A user callable ``f(entry) -> number | bool | dict`` is a measure too (a number becomes the column
``value``). :func:`register_measure` adds a named one.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar, Union

import numpy as np

from ..registry import Entry
from ..verify.run import drift, exact_error
from .grid import SweepError
from .target import Target

#: one value of a row: what a table column can hold (None becomes NaN)
Scalar = Union[bool, int, float, str]
_F = TypeVar("_F", bound=Callable[..., Any])


class Point:
    """One point handed to a measure: ``values`` ({key: value}) and the ``entry`` built on first use."""

    def __init__(self, target: Target, values: dict[str, float]) -> None:
        self.target = target
        self.values = values
        self._entry: Entry | None = None

    @property
    def entry(self) -> Entry:
        if self._entry is None:
            self._entry = self.target.build(self.values)
        return self._entry


@dataclass
class Measure:
    """A named measure: ``fn(point, **options) -> row``; ``check(entry, **options)`` raises
    :class:`SweepError` when it does not apply to an entry (run once on the client before the sweep)."""

    name: str
    fn: Callable[..., Any]
    options: dict[str, Any] = field(default_factory=dict)
    check: Callable[..., None] | None = None
    doc: str = ""

    def __call__(self, point: Point) -> dict[str, Scalar]:
        return as_row(self.fn(point, **self.options), self.name)

    def validate(self, entry: Entry) -> None:
        if self.check is not None:
            self.check(entry, **self.options)


MEASURES: dict[str, Measure] = {}


def register_measure(name: str, check: Callable[..., None] | None = None,
                     **option_defaults: Any) -> Callable[[_F], _F]:
    """Decorator: register ``fn(point, **options) -> row`` as measure ``name`` with ``option_defaults``."""

    def deco(fn: _F) -> _F:
        MEASURES[name] = Measure(name, fn, dict(option_defaults), check, (fn.__doc__ or "").strip())
        return fn

    return deco


def as_row(value: Any, name: str = "measure") -> dict[str, Scalar]:
    """A measure's return value as a row: dict as is, a number or bool as ``{"value": ...}``."""
    if isinstance(value, dict):
        return {str(k): _scalar(v, name, k) for k, v in value.items()}
    return {"value": _scalar(value, name, "value")}


def _scalar(v: Any, name: str, key: object) -> Scalar:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, str):
        return v
    if v is None:
        return float("nan")
    raise SweepError(f"measure {name!r}: column {key!r} must be a number, a bool or a string, got {type(v).__name__}")


def get_measure(spec: str | Measure | Callable[..., Any], **options: Any) -> Measure:
    """A :class:`Measure` from a registered name, a Measure, or a callable ``f(entry)``; ``options`` bind
    the measure's options (unknown ones raise :class:`SweepError`)."""
    if isinstance(spec, str):
        if spec not in MEASURES:
            raise SweepError(f"unknown measure {spec!r}; known: {', '.join(sorted(MEASURES))}")
        m = MEASURES[spec]
    elif isinstance(spec, Measure):
        m = spec
    elif callable(spec):
        if options:
            raise SweepError("options apply to named measures; bind them in your callable instead")
        return Measure(getattr(spec, "__name__", "callable"), _UserMeasure(spec))
    else:
        raise SweepError(f"a measure is a name ({', '.join(sorted(MEASURES))}) or a callable f(entry), "
                         f"got {type(spec).__name__}")
    bad = sorted(set(options) - set(m.options))
    if bad:
        acc = ", ".join(f"{k}={v!r}" for k, v in m.options.items()) or "none"
        raise SweepError(f"measure {m.name!r} has no option {', '.join(map(repr, bad))}; accepted: {acc}")
    return Measure(m.name, m.fn, {**m.options, **options}, m.check, m.doc)


class _UserMeasure:
    """``f(entry)`` as ``fn(point)`` (a class, not a closure, so that it pickles by reference to f)."""

    def __init__(self, f: Callable[..., Any]) -> None:
        self.f = f
        try:
            self.wants_point = list(inspect.signature(f).parameters) == ["point"]
        except (TypeError, ValueError):
            self.wants_point = False

    def __call__(self, point: Point) -> Any:
        return self.f(point if self.wants_point else point.entry)


# ---------------------------------------------------------------------------------------------- built-ins
@register_measure("empty")
def _empty(point):
    """Nothing: the cost of the sweep machinery alone (no entry is built)."""
    return {}


def _check_realizability(entry):
    if entry.kind != "lie-group" or not hasattr(entry.system, "realizability") or entry.model == "free":
        raise SweepError(f"measure 'realizability' applies to Lie-group entries with a constraint and a control "
                         f"(models servo1, servo2, nonholonomic, vakonomic); {entry.name} has model {entry.model!r}")


@register_measure("realizability", check=_check_realizability)
def _realizability(point):
    """(I^-1 a, b) and whether it is non-zero (Kozlov 2019, sections 6-7)."""
    from servo import UnrealizableConstraintError

    try:
        entry = point.entry
    except UnrealizableConstraintError as exc:  # the system refuses to exist where the number vanishes
        return {"realizability": float(exc.value), "realizable": False}
    _check_realizability(entry)
    return {"realizability": float(entry.system.realizability()), "realizable": True}


def _quadratic(entry):
    from ..output.describe import quadratic_system

    q = quadratic_system(entry)
    if q is None:
        raise SweepError(f"measure 'invariant_lines' needs a homogeneous quadratic reduced system; "
                         f"{entry.name} (model {entry.model!r}) has none")
    return q


def _check_lines(entry, rng=0):
    _quadratic(entry)


def _fmt_exponents(ke):
    out = []
    for x in np.ravel(np.asarray(ke)):
        z = complex(x)
        out.append(f"{z.real:.10g}" if abs(z.imag) <= 1e-12 * max(1.0, abs(z)) else f"{z.real:.10g}{z.imag:+.10g}j")
    return ";".join(out)


@register_measure("invariant_lines", check=_check_lines, rng=0)
def _invariant_lines(point, rng=0):
    """Real invariant lines of the reduced quadratic system: counts, and c, stability (and Kovalevskaya
    exponents where available) of each real line sorted by c."""
    from servo import invariant_lines

    q = _quadratic(point.entry)
    lines = invariant_lines(q, seed=rng)
    real = sorted(lines.real, key=lambda L: (float(np.real(L.c)), tuple(np.round(np.real(L.direction), 12))))
    stab = [L.stability or "" for L in real]
    row = {"p": int(q.p), "real_lines": len(real), "real_count": int(lines.real_count),
           "total_multiplicity": int(lines.total_multiplicity), "families": len(lines.positive_dimensional),
           "certified": bool(lines.certified), "equilibrium_lines": sum(L.is_equilibrium_line for L in real)}
    for s in ("attracting", "repelling", "saddle", "degenerate"):
        row[s] = stab.count(s)
    for k, (L, s) in enumerate(zip(real, stab), 1):
        row[f"c_{k}"] = float(np.real(L.c))
        row[f"stability_{k}"] = s
        row[f"xi_{k}"] = ";".join(f"{x:.12g}" for x in np.real(L.direction))
        ke = getattr(L, "kovalevskaya_exponents", None)
        if ke is not None:
            row[f"kovalevskaya_{k}"] = _fmt_exponents(ke)
    return row


def _simulate(point, method, steps, t_end):
    from ..verify.run import simulate

    return simulate(point.entry, t_end=t_end, steps=steps, method=method)


def _integrals(entry):
    """The entry's claimed first integrals, else those its system finds for itself (may be empty)."""
    if entry.first_integrals:
        return entry.first_integrals
    from ..entries.own import system_integrals

    try:
        return system_integrals(entry.system)
    except (ValueError, ArithmeticError, NotImplementedError):
        return {}


def _check_integrals(entry, method=None, steps=None, t_end=None):
    if not _integrals(entry):
        raise SweepError(f"measure 'integrals_drift': {entry.name} claims no first integrals and its system "
                         f"finds none")


@register_measure("integrals_drift", check=_check_integrals, method=None, steps=None, t_end=None)
def _integrals_drift(point, method=None, steps=None, t_end=None):
    """Relative drift of each claimed first integral (or the system's own) along ``catalog.simulate``."""
    run = _simulate(point, method, steps, t_end)
    if not point.entry.first_integrals:
        run.invariants = {k: np.asarray(F(run.y), dtype=float) for k, F in _integrals(point.entry).items()}
    row = {f"drift[{k}]": drift(run, k) for k in run.invariants}
    row["max_drift"] = max(row.values())
    return row


def _check_exact(entry, method=None, steps=None, t_end=None):
    if entry.exact_solution is None:
        raise SweepError(f"measure 'exact_error': {entry.name} has no exact solution")


@register_measure("exact_error", check=_check_exact, method=None, steps=None, t_end=None)
def _exact_error(point, method=None, steps=None, t_end=None):
    """max_k |y_k - y_exact(t_k)| along ``catalog.simulate(entry, method=...)``."""
    return {"exact_error": exact_error(_simulate(point, method, steps, t_end))}


def limit_of(name: str) -> str | None:
    """The entry that ``name`` tends to as N -> infinity (relation graph), or None."""
    from ..graph import EDGES

    for u, v, rel, _, _ in EDGES:
        if u == name and rel == "limit N -> infinity":
            return v
    return None


def _check_friction(entry, method=None, steps=None, t_end=None):
    if limit_of(entry.name) is None or "N" not in entry.parameters:
        raise SweepError(f"measure 'friction_rate' applies to entries with a parameter N and a 'limit N -> infinity' "
                         f"edge in the relation graph (sleigh_friction, skate_friction, ...); {entry.name} has none")


@register_measure("friction_rate", check=_check_friction, method=None, steps=None, t_end=None)
def _friction_rate(point, method=None, steps=None, t_end=None):
    """e(N) = max distance to the limit motion along the run, and N e(N) (Kozlov's Theorems 1 and 2)."""
    from ..registry import defaults, get
    from ..verify.run import simulate

    e = point.entry
    _check_friction(e)
    run = _simulate(point, method, steps, t_end)
    lim_name = limit_of(e.name)
    shared = {k: e.parameters[k] for k in defaults(lim_name) if k in e.parameters and k not in ("t_end", "steps")}
    lim = get(lim_name, **shared, t_end=float(run.t[-1]), steps=len(run.t) - 1)
    if lim.exact_solution is not None:
        ref = np.asarray(lim.exact_solution(run.t), dtype=float)
    else:
        rl = simulate(lim)
        if rl.t.shape != run.t.shape or not np.allclose(rl.t, run.t, rtol=0, atol=1e-12 * max(1.0, run.t[-1])):
            raise SweepError(f"friction_rate: {lim_name} and {e.name} were sampled on different time grids")
        ref = rl.y
    if "body_velocities" in e.extras and lim.kind == "lie-group":  # velocities (u, v, w) against I^-1 m
        a = np.asarray(e.extras["body_velocities"](run), dtype=float)
        b = ref @ np.linalg.inv(lim.extras["inertia"]).T
    elif ref.shape == run.y.shape:
        a, b = run.y, ref
    else:
        raise SweepError(f"friction_rate: cannot compare the states of {e.name} {run.y.shape[1:]} and "
                         f"{lim_name} {ref.shape[1:]}")
    err = float(np.max(np.abs(a - b)))
    return {"limit_error": err, "N_times_error": float(e.parameters["N"]) * err}
