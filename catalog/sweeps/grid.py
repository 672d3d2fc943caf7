"""The points of a sweep: a full grid (the Cartesian product of axes) or seeded random samples.

An axis is written ``"lo:hi:num"`` (``num`` values from lo to hi, ends included, like ``numpy.linspace``),
``"lo:hi:num:log"`` (geometric spacing, lo and hi > 0), ``"v1,v2,..."`` (the values themselves) or one
number (a fixed value); in Python any sequence of numbers is taken as the values themselves.

Point ``i`` of a grid with axes x_1 (n_1 values), ..., x_d (n_d values) has the multi-index
``numpy.unravel_index(i, (n_1, ..., n_d))``: the first axis varies slowest (``indexing="ij"``), so a
column of the result reshaped to ``grid.shape`` is the array ``f[i_1, ..., i_d]``.
Random samples draw point ``i``'s value on each axis (in the order given) uniformly from [lo, hi] with
``numpy.random.default_rng(seed)``: the same seed gives the same points on every machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..registry import CatalogError


class SweepError(CatalogError):
    """Bad sweep input: a malformed range, an unknown parameter or measure, a measure that does not apply."""


#: an axis: "lo:hi:num", "lo:hi:num:log", "v1,v2,...", one number, or a sequence of numbers (the values)
AxisSpec = Union[str, float, Sequence[float], ArrayLike]
#: the bounds of a random-sample axis: "lo:hi" or a pair of numbers
BoundsSpec = Union[str, Sequence[float], ArrayLike]


def _num(text: Any, key: str, what: str) -> float:
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise SweepError(f"sweep axis {key!r}: {what} {text!r} is not a number") from None
    if not np.isfinite(v):
        raise SweepError(f"sweep axis {key!r}: {what} {text!r} is not finite")
    return v


def parse_axis(key: str, spec: AxisSpec) -> NDArray[np.float64]:
    """The values (1-D float array) of axis ``key`` from ``spec`` (see the module docstring)."""
    if isinstance(spec, str):
        s = spec.strip()
        if ":" in s:
            parts = [p.strip() for p in s.split(":")]
            log = len(parts) == 4 and parts[3].lower() == "log"
            if len(parts) != 3 and not log:
                raise SweepError(f"sweep axis {key!r}: range {spec!r} must look like lo:hi:num or lo:hi:num:log")
            lo, hi = _num(parts[0], key, "lower end"), _num(parts[1], key, "upper end")
            n = _num(parts[2], key, "number of values")
            if n < 1 or not float(n).is_integer():
                raise SweepError(f"sweep axis {key!r}: the number of values in {spec!r} must be a positive "
                                 f"integer, got {parts[2]!r}")
            if n == 1 and lo != hi:
                raise SweepError(f"sweep axis {key!r}: range {spec!r} has one value but two different ends "
                                 f"(write a single number to fix the parameter)")
            if log:
                if lo <= 0 or hi <= 0:
                    raise SweepError(f"sweep axis {key!r}: a log range needs positive ends, got {spec!r}")
                return np.geomspace(lo, hi, int(n))
            return np.linspace(lo, hi, int(n))
        vals = [v for v in s.split(",") if v.strip()]
        if not vals:
            raise SweepError(f"sweep axis {key!r}: no values in {spec!r}")
        return np.array([_num(v, key, "value") for v in vals])
    arr = np.atleast_1d(np.asarray(spec, dtype=object))
    if arr.ndim != 1 or arr.size == 0:
        raise SweepError(f"sweep axis {key!r}: the values must be a non-empty 1-D sequence, got shape {arr.shape}")
    return np.array([_num(v, key, "value") for v in arr])


def parse_bounds(key: str, spec: BoundsSpec) -> tuple[float, float]:
    """(lo, hi) of a random-sample axis from ``"lo:hi"`` or a pair of numbers."""
    parts = [p for p in spec.split(":")] if isinstance(spec, str) else list(np.atleast_1d(spec))
    if len(parts) != 2:
        raise SweepError(f"random axis {key!r}: bounds {spec!r} must be lo:hi (two numbers)")
    lo, hi = _num(parts[0], key, "lower end"), _num(parts[1], key, "upper end")
    if not hi >= lo:
        raise SweepError(f"random axis {key!r}: upper end {hi:g} is below the lower end {lo:g}")
    return lo, hi


@dataclass(frozen=True)
class Grid:
    """The points of a sweep.

    Attributes
    ----------
    axes : dict key -> 1-D array of the axis values (for random samples: the sampled values).
    values : dict key -> (size,) array, the value of each key at each point.
    shape : the grid shape (n_1, ..., n_d), or (size,) for random samples.
    kind : "grid" or "random"; seed : the seed of random samples (None for a grid).
    """

    axes: dict[str, NDArray[np.float64]]
    values: dict[str, NDArray[np.float64]]
    shape: tuple[int, ...]
    kind: str = "grid"
    seed: int | None = None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def keys(self) -> list[str]:
        return list(self.values)

    @property
    def varying(self) -> list[str]:
        """The keys with more than one value (the axes of a figure)."""
        return [k for k in self.values if np.unique(self.values[k]).size > 1]

    def point(self, i: int) -> dict[str, float]:
        """{key: value} of point ``i``."""
        return {k: float(v[i]) for k, v in self.values.items()}

    def describe(self) -> str:
        if self.kind == "random":
            return f"{self.size} random points (seed {self.seed}) over {', '.join(self.keys)}"
        return " x ".join(f"{k}[{len(v)}]" for k, v in self.axes.items()) + f" = {self.size} points"


def grid(axes: Mapping[str, AxisSpec] | None = None, **kw: AxisSpec) -> Grid:
    """The full grid over ``axes`` (a dict key -> axis spec, or keyword arguments)."""
    spec = dict(axes or {}, **kw)
    if not spec:
        raise SweepError("a sweep needs at least one axis (e.g. I1='1:3:41')")
    ax = {str(k): parse_axis(str(k), v) for k, v in spec.items()}
    shape = tuple(len(v) for v in ax.values())
    mesh = np.meshgrid(*ax.values(), indexing="ij")
    values = {k: m.reshape(-1) for k, m in zip(ax, mesh)}
    return Grid(ax, values, shape, "grid", None)


def samples(n: int, seed: int = 0, bounds: Mapping[str, BoundsSpec] | None = None, **kw: BoundsSpec) -> Grid:
    """``n`` points drawn uniformly in the box ``bounds`` (dict key -> "lo:hi" or (lo, hi)) with ``seed``."""
    spec = dict(bounds or {}, **kw)
    if not spec:
        raise SweepError("random samples need at least one axis with bounds (e.g. I1='1:3')")
    if not (isinstance(n, (int, np.integer)) or float(n).is_integer()) or int(n) < 1:
        raise SweepError(f"the number of random samples must be a positive integer, got {n!r}")
    rng = np.random.default_rng(seed)
    values = {}
    for k, v in spec.items():
        lo, hi = parse_bounds(str(k), v)
        values[str(k)] = rng.uniform(lo, hi, int(n))
    return Grid(dict(values), values, (int(n),), "random", int(seed))


def as_grid(obj: Grid | Mapping[str, AxisSpec]) -> Grid:
    """A :class:`Grid` from a Grid or a dict of axes."""
    if isinstance(obj, Grid):
        return obj
    if isinstance(obj, dict):
        return grid(obj)
    raise SweepError(f"the grid must be a catalog.sweeps.Grid or a dict of axes, got {type(obj).__name__}")
