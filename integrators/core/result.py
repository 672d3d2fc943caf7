"""The result of an integration (shaped like scipy's OdeResult) with invariant diagnostics and named
outputs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import export
from .display import result_markdown, result_text


class Outputs(MutableMapping):
    """The declared outputs of a result, name -> f(raw saved states), each computed when first read and
    then kept (a run whose caller reads only ``y`` pays nothing for them; two names of one callable
    run it once). Assigning a name stores an array as in a dict; a copy or a pickle is a plain dict
    of the values."""

    def __init__(self, raw: np.ndarray, funcs: dict[str, Callable[[np.ndarray], Any]]) -> None:
        self._raw = raw
        self._funcs = dict(funcs)
        self._values: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._values:
            f = self._funcs[name]
            v = np.asarray(f(self._raw))
            for k, g in self._funcs.items():
                if g is f:
                    self._values[k] = v
        return self._values[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self._funcs.pop(name, None)
        self._values[name] = value

    def __delitem__(self, name: str) -> None:
        if name not in self._funcs and name not in self._values:
            raise KeyError(name)
        self._funcs.pop(name, None)
        self._values.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._funcs, *self._values]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._funcs, *self._values]))

    def __repr__(self) -> str:
        return repr(dict(self))

    def __reduce__(self):
        return dict, (dict(self),)

    def truncate(self, j: int) -> None:
        """Keep the first j saved states: the computed arrays are cut, the rest will be computed on the
        first j raw states."""
        self._raw = self._raw[:j]
        for k, v in list(self._values.items()):
            if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] > j:
                self._values[k] = v[:j]


@dataclass
class IntegrationResult:
    """Solution of ``integrate`` / ``reconstruct``.

    Attributes
    ----------
    t : (K,) array of output times.
    y : (K, ..., dim) array; ``y[k]`` is the state at ``t[k]`` (for reconstruction (K, ..., N, N)).
        When the problem declares a ``state_map``, ``y`` is that map of the integrated (raw) states,
        which are then kept as ``outputs["z"]``.
    status : int
        0 reached the end, 1 a terminal event stopped every trajectory, -1 failure.
    message : str
    nfev : int
        Right-hand-side (or generator) evaluations, counted once per batched call.
    nsteps : int
    wall_time : float (seconds, time.perf_counter)
    invariants, constraints : dict name -> (K, ...) array of the recorded quantity at each t[k]
        (evaluated on the raw states).
    method : str (the canonical method name, e.g. "scipy:DOP853")
    h : float or None (the step of fixed-step methods)
    preserves : frozenset of what the method keeps on this problem
    t_events, y_events : lists (one entry per event function) of arrays of event times (n_e,) and
        states (n_e, dim); ``event_index`` gives the batch index of each (n_e, batch_ndim).
    outputs : mapping name -> (K, ...) or (K, ..., p) array of the problem's declared outputs on the
        saved states, each computed when first read (:class:`Outputs`). ``res[name]`` and ``res.name``
        read them (see :meth:`__getitem__`).
    events : list of records (t, label, index) written by hybrid systems (e.g. one-sided constraints:
        the times at which a contact opens or closes); empty for a smooth integration.
    system : the object that produced the result (e.g. a servo system), or None.
    labels : tuple of names of the components of y's last axis (optional, may be empty).
    name : str, what was integrated (a catalog entry's name, for example; optional).
    backend : str, which code ran: "numpy" (the numpy reference or generated Python), "numba" (compiled),
        "scipy" (the scipy adapters), or a sentence when a run changed backend on the way.
    checks : dict of the figures of the end-of-run checks of :mod:`integrators.engine.guard` ("step_error",
        "invariant:<name>", "constraint:<name>", each with its ":tolerance"; "growth" of
        :mod:`integrators.engine.growth`); empty with check=False.
    peak : (zmax, tmax, hmax) of one trajectory's adaptive run: the largest |z|_inf of its accepted steps (raw
        states), the time it was reached and the step that reached it, from the loops that track it between
        output points (the generated loops, the generic kernel, the numpy reference); for an independent ensemble an
        array (batch shape + (3,)), each trajectory's; empty otherwise (scipy's methods, whose saved states then
        tell; shared-step ensembles).
    """

    t: np.ndarray
    y: np.ndarray
    status: int = 0
    message: str = ""
    nfev: int = 0
    nsteps: int = 0
    wall_time: float = 0.0
    invariants: dict = field(default_factory=dict)
    constraints: dict = field(default_factory=dict)
    method: str = ""
    h: float | None = None
    preserves: frozenset = frozenset()
    t_events: list | None = None
    y_events: list | None = None
    event_index: list | None = None
    outputs: MutableMapping = field(default_factory=dict)
    events: list = field(default_factory=list)
    system: object = None
    labels: tuple = ()
    name: str = ""
    checks: dict = field(default_factory=dict)
    backend: str = ""
    peak: tuple | np.ndarray = ()

    @property
    def success(self) -> bool:
        return self.status >= 0

    def __getitem__(self, name):
        """outputs[name], else invariants[name], else constraints[name]; KeyError lists the names."""
        for table in (self.outputs, self.invariants, self.constraints):
            if name in table:
                return table[name]
        raise KeyError(f"{name!r} is not recorded in this result; outputs: {sorted(self.outputs)}, "
                       f"invariants: {sorted(self.invariants)}, constraints: {sorted(self.constraints)}")

    def __getattr__(self, name):
        # called only when normal lookup fails: fall back to the declared outputs. Read ``outputs``
        # from the instance dict so that a half-built instance (unpickling, copy) cannot recurse.
        if not name.startswith("__"):
            outputs = self.__dict__.get("outputs")
            if outputs is not None and name in outputs:
                return outputs[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def drift(self, name: str, floor: float = 1e-12) -> NDArray[np.float64]:
        """max_k |I(t_k) - I(t_0)| / |I(t_0)| of invariant ``name`` (per trajectory); absolute
        (denominator 1) where |I(t_0)| < ``floor``, e.g. for a constraint value 0. With ``floor=1`` this
        is max_k |I(t_k) - I(t_0)| / max(1, |I(t_0)|), the measure the catalog's verdicts use."""
        v = np.asarray(self.invariants[name], dtype=float)
        d = np.abs(v[0])
        return np.max(np.abs(v - v[0]), axis=0) / np.where(d < floor, 1.0, d)

    def max_residual(self, name: str) -> NDArray[np.float64]:
        """max_k |c(t_k)| of constraint ``name`` (per trajectory)."""
        return np.max(np.abs(self.constraints[name]), axis=0)

    _repr_markdown_ = result_markdown
    __repr__ = result_text   # print(res) and the REPL: a summary of at most 30 lines, never the arrays

    # ------------------------------------------------------------------ export (integrators.core.export)
    to_dict = export.to_dict
    to_csv = export.to_csv
    to_pandas = export.to_pandas
    to_xarray = export.to_xarray
    columns = export.columns


def record(problem, ys, known=None):
    """Evaluate the problem's invariants and constraints on the saved states ys (K, ..., dim); ``known``: name ->
    the values of invariants already evaluated (integrators.engine.guard's compiled Casimirs), taken as they are."""
    known = known or {}
    with np.errstate(all="ignore"):  # an overflowing invariant is reported by integrators.engine.guard
        inv = {k: known[k] if k in known else np.asarray(f(ys), dtype=float)
               for k, f in getattr(problem, "invariants", {}).items()}
        con = {k: np.asarray(f(ys), dtype=float) for k, f in getattr(problem, "constraints", {}).items()}
    return inv, con


def finish(problem, res, record_values=True):
    """Fill in what the problem declares, from the raw saved states ``res.y``: invariants and
    constraints (always on the raw states), ``outputs`` (name -> f(raw), computed when read) and, with a ``state_map``,
    ``y = state_map(raw)`` with the raw states kept as ``outputs["z"]`` (unless "z" is declared)."""
    raw = res.y
    if record_values:   # else integrators.engine.guard.check_quantities records them with its own evaluations
        res.invariants, res.constraints = record(problem, raw)
    res.outputs = Outputs(raw, getattr(problem, "outputs", None) or {})
    state_map = getattr(problem, "state_map", None)
    if state_map is not None:
        res.y = np.asarray(state_map(raw))
        res.outputs.setdefault("z", raw)
    return res
