"""Integrator accuracy comparisons: ``compare(problem, y0, t_end, methods=[...], exact=None)``.

For each method it measures

* the **order**: the slope of log(final error) against log(h) over a step-halving ladder
  (fixed-step methods; for the scipy methods a tolerance ladder is run instead and no order is fitted);
* the **final error** max |y(t_end) - y_ref| at every rung, with wall time and right-hand-side
  evaluations (the work-precision curve);
* the **invariant drift** max_k |I(t_k) - I(0)| / |I(0)| of every recorded invariant on the finest rung.

The reference is ``exact`` (a callable t -> y or an array y(t_end)) or, without it, scipy DOP853 at
rtol 1e-13, atol 1e-15 (say so in any table: the reference then limits errors to about 1e-12).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..engine.driver import integrate
from ..methods import Method, applicable_methods, get_method
from ..core.problems import CoadjointProblem, ODEProblem

#: methods that ``compare`` runs by default (those that apply to the problem): every fixed-step method
#: and the scipy adapters RK45, DOP853 and Radau; RK23, BDF and LSODA only when asked for
EXTRA_METHODS = ("scipy:RK23", "scipy:BDF", "scipy:LSODA")


@dataclass
class MethodReport:
    """One method's measurements (lists are per rung of the ladder)."""

    method: str
    order: int | None
    measured_order: float | None
    h: list = field(default_factory=list)
    tol: list = field(default_factory=list)
    error: list = field(default_factory=list)
    wall_time: list = field(default_factory=list)
    nfev: list = field(default_factory=list)
    drift: dict = field(default_factory=dict)
    preserves: frozenset = frozenset()

    def time_at(self, error):
        """Wall time needed for a given final error, interpolated log-log on the work-precision curve
        (None outside the measured range)."""
        return work_at_error(self.error, self.wall_time, error)

    def nfev_at(self, error):
        return work_at_error(self.error, self.nfev, error)


def work_at_error(errs, work, target):
    """The work (time, evaluations) at error ``target``, interpolated log-log between the measured
    (error, work) points; None outside the measured range of errors."""
    e = np.log(np.asarray(errs, dtype=float))
    w = np.log(np.asarray(work, dtype=float))
    order = np.argsort(e)
    e, w = e[order], w[order]
    lt = np.log(target)
    if len(e) < 2 or lt < e[0] or lt > e[-1]:
        return None
    return float(np.exp(np.interp(lt, e, w)))


#: work_at_error under the name that benchmarks/compare_integrators.py imports
_interp = work_at_error


@dataclass
class Comparison:
    """The reports of ``compare`` with a markdown table."""

    problem: str
    t_end: float
    reference: str
    reports: list

    def __getitem__(self, name):
        for r in self.reports:
            if r.method == name:
                return r
        raise KeyError(name)

    def markdown(self, at_error: float | None = None) -> str:
        """A markdown table: declared and measured order, finest error, time and evaluations,
        the worst invariant drift, and (with ``at_error``) the interpolated time at that error."""
        return _table(self, at_error)


def _table(comp, at_error=None):
    header = ["method", "order", "measured", "finest h / tol", "final error", "time [s]", "nfev",
              "Casimir drift", "other invariants drift"]
    if at_error is not None:
        header.append(f"time at err {at_error:.0e} [s]")
    rows = []
    for r in comp.reports:
        cas = [v for k, v in r.drift.items() if k.startswith("casimir:")]
        other = [v for k, v in r.drift.items() if not k.startswith("casimir:")]
        row = [r.method, r.order if r.order is not None else "-",
               f"{r.measured_order:.2f}" if r.measured_order is not None else "-",
               f"{(r.h or r.tol)[-1]:.2g}", f"{r.error[-1]:.2e}", f"{r.wall_time[-1]:.3g}", r.nfev[-1],
               f"{max(cas):.1e}" if cas else "-", f"{max(other):.1e}" if other else "-"]
        if at_error is not None:
            t = r.time_at(at_error)
            row.append(f"{t:.3g}" if t is not None else "out of range")
        rows.append(row)
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(out)



def _reference(problem, y0, t_end, exact):
    if exact is None:
        res = integrate(problem, y0, (0.0, t_end), method="scipy:DOP853", steps=1, rtol=1e-13, atol=1e-15)
        return res.y[-1], "scipy DOP853 at rtol 1e-13, atol 1e-15"
    if callable(exact):
        return np.asarray(exact(t_end), dtype=float), "exact solution"
    return np.asarray(exact, dtype=float), "given reference"


def compare(problem: ODEProblem | CoadjointProblem, y0: ArrayLike, t_end: float,
            methods: Iterable[str | Method] | None = None,
            exact: Callable[[float], ArrayLike] | ArrayLike | None = None,
            steps: Sequence[int] | dict[int, Sequence[int]] = (100, 200, 400, 800),
            tolerances: Sequence[float] = (1e-5, 1e-7, 1e-9, 1e-11),
            save_every: int | None = None) -> Comparison:
    """Compare integration methods on ``problem`` from ``y0`` over [0, t_end]; return a Comparison.

    ``methods`` (names, aliases or Method instances) defaults to every applicable method except
    :data:`EXTRA_METHODS`; fixed-step methods run the step ladder
    ``steps`` (numbers of steps; or a dict order -> ladder, so low-order methods can take more
    steps), scipy methods the ``tolerances`` ladder (rtol = tol, atol = tol/100).
    Invariants are recorded on every ``save_every``-th step (default: 100 points per run).
    """
    y0 = np.asarray(y0, dtype=float)
    if methods is not None:
        names = list(methods)
    else:
        names = [n for n in applicable_methods(problem) if n not in EXTRA_METHODS]
    ref, how = _reference(problem, y0, t_end, exact)
    reports = []
    for name in names:
        m = get_method(name, problem)
        rep = MethodReport(m.name, m.order if m.fixed_step else None, None)
        if not m.fixed_step:
            rungs = tolerances
        elif isinstance(steps, dict):
            rungs = steps.get(m.order, steps[max(k for k in steps if k <= m.order)] if any(
                k <= m.order for k in steps) else next(iter(steps.values())))
        else:
            rungs = steps
        last = None
        for r in rungs:
            if m.fixed_step:
                every = save_every or max(1, int(r) // 100)
                res = integrate(problem, y0, (0.0, t_end), method=m, steps=int(r), save_every=every)
                rep.h.append(t_end / int(r))
            else:
                res = integrate(problem, y0, (0.0, t_end), method=m, steps=100, rtol=r, atol=r / 100)
                rep.tol.append(r)
            rep.error.append(float(np.max(np.abs(res.y[-1] - ref))))
            rep.wall_time.append(res.wall_time)
            rep.nfev.append(res.nfev)
            last = res
        rep.preserves = last.preserves
        rep.drift = {k: float(np.max(last.drift(k))) for k in last.invariants}
        if m.fixed_step and len(rungs) >= 2:
            e = np.asarray(rep.error)
            ok = e > 1e-13  # round-off floor: do not fit points at the level of the reference
            if ok.sum() >= 2:
                rep.measured_order = float(np.polyfit(np.log(np.asarray(rep.h)[ok]), np.log(e[ok]), 1)[0])
        reports.append(rep)
    return Comparison(problem.name, float(t_end), how, reports)
