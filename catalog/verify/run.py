"""Simulate a catalog entry and check what its metadata claims.

:func:`simulate` turns any entry into a uniform :class:`Run` (time grid, states in the entry's layout,
the values of its first integrals, constraint residuals, the exact solution where known), whatever
the floor below it came from: a ``servo`` Lie-group system (``system.simulate``), a bare
``integrators`` problem (``integrators.integrate``), a constrained Lagrangian system
(``system.simulate(q0, qd0, t_end, ...)``), or an entry-specific runner (``entry.extras["runner"]``).

:func:`checks` turns a run into verdicts: for each claimed first integral F the relative drift
max_k |F(y_k) - F(y_0)| / max(1, |F(y_0)|), for an exact solution the maximal error
max_k |y_k - y_exact(t_k)|, and for each constraint the maximal residual; each against the entry's
tolerance, PASS or FAIL with the number.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Run:
    """A simulated trajectory of one entry (t: (K,), y: (K, dim))."""

    name: str
    method: str
    t: np.ndarray
    y: np.ndarray
    labels: tuple
    integrals: dict = field(default_factory=dict)
    residuals: dict = field(default_factory=dict)
    exact: np.ndarray | None = None
    wall_time: float = 0.0
    nsteps: int = 0
    nfev: int = 0
    events: list = field(default_factory=list)
    path: np.ndarray | None = None
    raw: object = None
    cache: dict = field(default_factory=dict)

    def orientation(self):
        """R(t) in SO(3) (K, 3, 3) from g' = g w along a so(3) run (``servo.reconstruct_motion``), else None."""
        if "R" not in self.cache:
            R = None
            sysm = getattr(self.raw, "system", None)
            if getattr(self.raw, "w", None) is not None and getattr(getattr(sysm, "algebra", None), "name", "") == "so(3)":
                from servo import reconstruct_motion

                R = np.asarray(reconstruct_motion(self.raw).y, dtype=float)
            self.cache["R"] = R
        return self.cache["R"]

    def drift(self, name):
        """max_k |F(y_k) - F(y_0)| / max(1, |F(y_0)|) for first integral ``name``."""
        v = np.asarray(self.integrals[name], dtype=float)
        return float(np.max(np.abs(v - v[0])) / max(1.0, abs(float(v[0]))))

    def exact_error(self):
        """max_k |y_k - y_exact(t_k)| (inf-norm over components), or None without an exact solution."""
        if self.exact is None:
            return None
        return float(np.max(np.abs(self.y - self.exact)))


@dataclass
class Verdict:
    """One check: ``what`` ("integral", "exact", "constraint", "relation"), the measured ``value``, ``tol``."""

    check: str
    what: str
    value: float
    tol: float
    detail: str = ""

    @property
    def passed(self):
        return bool(np.isfinite(self.value) and self.value <= self.tol)

    def line(self):
        status = "PASS" if self.passed else "FAIL"
        return f"{status}  {self.what:10s} {self.check}: {self.value:.3e} (tolerance {self.tol:.2g}){self.detail}"

    def as_dict(self):
        return {"check": self.check, "what": self.what, "value": self.value, "tol": self.tol,
                "passed": self.passed}


def _default_method(entry):
    return entry.method


def _from_integrator_result(res):
    t = np.asarray(res.t, dtype=float)
    y = np.asarray(res.y, dtype=float)
    info = {"nsteps": int(getattr(res, "nsteps", len(t) - 1) or 0), "nfev": int(getattr(res, "nfev", 0) or 0),
            "residuals": {k: np.asarray(v, dtype=float) for k, v in (getattr(res, "constraints", None) or {}).items()},
            "events": list(getattr(res, "events", None) or [])}
    return t, y, info


def _run_lie(entry, t_end, steps, method, options):
    sysm = entry.system
    if hasattr(sysm, "simulate"):
        kw = {"steps": steps, **options}
        if method:
            kw["method"] = method
        res = sysm.simulate(np.asarray(entry.initial_state, dtype=float), t_end, **kw)
    else:  # a bare integrators problem
        import integrators

        res = integrators.integrate(sysm, np.asarray(entry.initial_state, dtype=float), (0.0, t_end),
                                    method=method or "rkmk4", steps=steps, **options)
    t, y, info = _from_integrator_result(res)
    if "state_map" in entry.extras:  # e.g. z = m + lambda b back to the entry's layout
        y = entry.extras["state_map"](y)
    return t, y, info, res


def _run_coordinates(entry, t_end, steps, method, options):
    s0 = entry.initial_state
    kw = {"steps": steps, **entry.extras.get("sim_options", {}), **options}
    if method:
        kw["method"] = method
    if s0.get("lam0") is not None:
        kw["lam0"] = s0["lam0"]
    res = entry.system.simulate(np.asarray(s0["q0"], float), np.asarray(s0["qd0"], float), t_end, **kw)
    t = np.asarray(res.t, dtype=float)
    y = np.concatenate([np.asarray(res.q, float), np.asarray(res.qd, float)], axis=-1)
    info = {"nsteps": int(getattr(res, "nsteps", len(t) - 1) or len(t) - 1), "nfev": int(getattr(res, "nfev", 0) or 0),
            "residuals": {}, "events": list(getattr(res, "events", None) or [])}
    return t, y, info, res


def simulate(entry, t_end=None, steps=None, method=None, **options):
    """Simulate ``entry`` (defaults: its own t_end, steps, method) and return a :class:`Run`.

    ``options`` (e.g. rtol, atol for scipy methods) go to the system's ``simulate``."""
    t_end = float(entry.t_end if t_end is None else t_end)
    steps = int(entry.steps if steps is None else steps)
    if not t_end > 0:
        raise ValueError(f"t_end must be positive, got {t_end}")
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    method = method or _default_method(entry)
    t0 = time.perf_counter()
    runner = entry.extras.get("runner")
    if runner is not None:
        t, y, info, raw = runner(entry, t_end, steps, method, **options)
    elif entry.kind == "coordinates":
        t, y, info, raw = _run_coordinates(entry, t_end, steps, method, options)
    else:
        t, y, info, raw = _run_lie(entry, t_end, steps, method, options)
    wall = time.perf_counter() - t0
    if not np.all(np.isfinite(y)):
        k = int(np.argmax(~np.all(np.isfinite(y), axis=-1)))
        raise FloatingPointError(f"{entry.name}: the solution is not finite from t = {t[k]:.6g} on "
                                 f"(method {method}, {steps} steps)")
    integrals = {k: np.asarray(F(y), dtype=float) for k, F in (entry.first_integrals or {}).items()}
    residuals = dict(info["residuals"])
    for k, r in entry.extras.get("constraints", {}).items():
        residuals[k] = np.asarray(r(y), dtype=float)
    exact = None if entry.exact_solution is None else np.asarray(entry.exact_solution(t), dtype=float)
    run = Run(entry.name, str(method or getattr(raw, "method", "default")), t, y, tuple(entry.labels),
              integrals, residuals, exact, wall, info["nsteps"], info["nfev"], info["events"], None, raw)
    if entry.path is not None:
        run.path = np.asarray(entry.path(run), dtype=float)
    return run


def checks(entry, run):
    """The verdicts of ``run`` against what ``entry`` claims (see the module docstring)."""
    tol = entry.tolerances
    out = []
    for k in run.integrals:
        out.append(Verdict(k, "integral", run.drift(k), tol.get("integral", 1e-9), " relative drift"))
    if run.exact is not None:
        out.append(Verdict("exact solution", "exact", run.exact_error(), tol.get("exact", 1e-6), " max error"))
    for k, r in run.residuals.items():
        r = np.asarray(r, dtype=float)
        out.append(Verdict(k, "constraint", float(np.max(np.abs(r))) if r.size else 0.0,
                           tol.get("constraint", 1e-9), " max residual"))
    for name, fn in entry.extras.get("checks", {}).items():
        value, tl = fn(run)
        out.append(Verdict(name, "claim", float(value), float(tl)))
    return out
