"""Simulate a catalog entry and check what its metadata claims.

:func:`simulate` runs any entry, a ``servo`` Lie-group system, a bare ``integrators`` problem or a
system in coordinates, and returns the one result type of the library, ``integrators.IntegrationResult``,
with the entry's view of it:

* ``y`` in the entry's state layout, ``labels`` its component names, ``name`` the entry's name;
* ``invariants``: the entry's claimed first integrals evaluated along the run (the claims are written in
  the catalog independently of ``servo``); ``constraints``: the constraint residuals;
* ``outputs["exact"]`` the exact solution at the output times where the entry knows one, and
  ``outputs["path"]`` the path in the plane where the entry draws one, and for every system on SE(2)
  (besides the system's own outputs); the attitude on SO(3) / SE(3) is :func:`catalog.verify.motion.motion`.

:func:`checks` turns a run into verdicts: for each claimed first integral F the relative drift
max_k |F(y_k) - F(y_0)| / max(1, |F(y_0)|), for an exact solution the maximal error
max_k |y_k - y_exact(t_k)|, and for each constraint the maximal residual; each against the entry's
tolerance, PASS or FAIL with the number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import integrators
import servo
from integrators.methods import METHODS, ScipyMethod, canonical_name

from ..errors import CatalogError
from ..registry import Entry
from . import reference
from .motion import group_kind, motion, plane_path

#: the longest t_end and the most steps a catalog run accepts (beyond: CatalogError, not hours of work)
MAX_T_END = 1e9
MAX_STEPS = 10**8

#: default tolerance of the check against the hand-written reference (relative to max(1, max |y|)): a
#: fixed-step method at the catalog's step counts is accurate to it, a wrong model or axis is off by O(1)
REFERENCE_TOL = 1e-6

#: the floor of the drift's denominator: max_k |F(y_k) - F(y_0)| / max(DRIFT_FLOOR, |F(y_0)|)
DRIFT_FLOOR = 1.0


def drift(run, name):
    """max_k |F(y_k) - F(y_0)| / max(1, |F(y_0)|) for the claimed first integral ``name`` of a run."""
    return float(np.max(run.drift(name, floor=DRIFT_FLOOR)))


def exact_error(run):
    """max_k |y_k - y_exact(t_k)| (inf-norm over components), or None without an exact solution."""
    exact = run.outputs.get("exact")
    return None if exact is None else float(np.max(np.abs(run.y - exact)))


def orientation(run):
    """R(t) in SO(3) (K, 3, 3) from g' = g w along a so(3) run (``servo.reconstruct_motion``), else None;
    cached in ``run.outputs["R"]``."""
    if "R" not in run.outputs:
        R = None
        alg = getattr(run.system, "algebra", None)
        if "w" in run.outputs and getattr(alg, "name", "") == "so(3)":
            R = np.asarray(servo.reconstruct_motion(run).y, dtype=float)
        run.outputs["R"] = R
    return run.outputs["R"]


#: what a check compares against, by its kind (``Verdict.what``): the report's verdict box says it
AGAINST = {
    "exact": "exact solution",
    "integral": "conserved quantity",
    "constraint": "residual",
    "claim": "paper's claim",
    "reference": "independent reference",
    "relation": "relation",
    "run": "run",
    "build/run": "run",
}


def planar_pose(run):
    """(x, y, heading) (K, 3) of a body moving in the plane, or None: the SE(2) reconstruction g' = g w of a
    run on se(2) (:func:`catalog.verify.motion.motion`: x, y and the unwrapped theta), else the coordinates
    (x, y, theta or phi) of a system in coordinates whose first three coordinates are those. Cached on the
    run (``run._planar_pose``), not among its outputs, whose columns ``to_csv`` writes."""
    cache = getattr(run, "__dict__", {})
    if "_planar_pose" in cache:
        return cache["_planar_pose"]
    pose = None
    if group_kind(run) == "se2":
        m = motion(run)
        if m is not None:
            pose = np.stack([m["x"], m["y"], m["theta"]], -1)
    elif tuple(run.labels[:3]) in (("x", "y", "theta"), ("x", "y", "phi")):
        pose = np.asarray(run.y[:, :3], float)
    try:
        run._planar_pose = pose
    except AttributeError:
        pass
    return pose


def heavy_top_attitude(run, chi, gamma0):
    """The heavy top's attitude R(t) from R' = R Omega^ (``integrators.reconstruct`` on SO(3), Omega the
    first three components of the run's w) with R(0)^T e3 = Gamma(0) (the vertical in the body), and the
    apex R chi / |chi| on the unit sphere. Returns (R (K, 3, 3), apex (K, 3), max_k |R_k^T e3 - Gamma_k|):
    the last number checks the reconstruction against the run's own Gamma (they share no code)."""
    g3 = np.asarray(gamma0, float) / np.linalg.norm(gamma0)
    e1 = np.cross([0.0, 1.0, 0.0] if abs(g3[1]) < 0.9 else [1.0, 0.0, 0.0], g3)
    e1 /= np.linalg.norm(e1)
    R0 = np.stack([e1, np.cross(g3, e1), g3])              # rows: R0^T e3 = its third row = Gamma(0)
    omega = np.asarray(run.outputs["w"], float)[:, :3]
    R = np.asarray(integrators.reconstruct("SO3", omega, R0, run.t, substeps=4).y, float)
    chi = np.asarray(chi, float)
    apex = R @ (chi / np.linalg.norm(chi))
    gamma = np.asarray(run.y, float)[:, 3:6]
    return R, apex, float(np.max(np.abs(R[:, 2, :] - gamma)))


@dataclass
class Verdict:
    """One check: ``what`` ("integral", "exact", "constraint", "claim", "reference", "relation", "run"), the
    measured ``value``, its ``tol``; ``data``: what a figure of the check needs (e.g. the errors of a limit
    rate at each N)."""

    check: str
    what: str
    value: float
    tol: float
    detail: str = ""

    reached: bool = True
    data: dict | None = None

    @property
    def passed(self):
        return bool(self.reached and np.isfinite(self.value) and self.value <= self.tol)

    @property
    def against(self):
        """What the check compares against: exact solution, conserved quantity, residual, paper's claim,
        independent reference, relation (see :data:`AGAINST`)."""
        return AGAINST.get(self.what, self.what)

    @property
    def margin(self):
        """tol / value: how many times the tolerance exceeds the measured value (inf for an exact zero, 0 for
        a value that is not finite); > 1 passes."""
        if not np.isfinite(self.value) or not self.reached:
            return 0.0
        return float("inf") if self.value == 0 else float(self.tol / self.value)

    def line(self):
        status = "PASS" if self.passed else "FAIL"
        tail = "" if self.reached else " [not reached: the run stopped early]"
        return (f"{status}  {self.what:10s} {self.check}: {self.value:.3e} (tolerance {self.tol:.2g})"
                f"{self.detail}{tail}")

    def as_dict(self):
        return {"check": self.check, "what": self.what, "against": self.against, "value": self.value,
                "tol": self.tol, "margin": self.margin, "passed": self.passed, "reached": self.reached}


def _default_method(entry):
    """The entry's own method, else None: the system's ``simulate`` then takes the grid column of
    ``servo.lie.method_choice.METHOD_TABLE`` (the catalog always asks for ``steps`` output points, for
    its plots and for checks that reconstruct g(t) from the sampled velocities)."""
    return entry.method


def chooses_own_steps(method):
    """True for the adaptive pairs of integrators (rkmk45, rkmk853, rk45, rk853): they take no ``steps``
    (no output grid) and return the states at their accepted steps."""
    m = METHODS.get(canonical_name(method) or "")
    return m is not None and not m.fixed_step and not isinstance(m, ScipyMethod)


def _run_lie(entry, t_end, steps, method, options):
    sysm = entry.system
    y0 = np.asarray(entry.initial_state, dtype=float)
    if method and chooses_own_steps(method):
        steps = None
    if hasattr(sysm, "simulate"):
        kw = {"steps": steps, **options}
        if method:
            kw["method"] = method
        res = sysm.simulate(y0, t_end, **kw)
    else:  # a bare integrators problem
        res = integrators.integrate(sysm, y0, (0.0, t_end), method=method or "rkmk4", steps=steps, **options)
        res.system = sysm
    if "state_map" in entry.extras:  # e.g. z = m + lambda b back to the entry's layout
        res.y = entry.extras["state_map"](np.asarray(res.y, dtype=float))
    return res


def _run_coordinates(entry, t_end, steps, method, options):
    s0 = entry.initial_state
    kw = {"steps": steps, **entry.extras.get("sim_options", {}), **options}
    if method:
        kw["method"] = method
    if s0.get("lam0") is not None:
        kw["lam0"] = s0["lam0"]
    res = entry.system.simulate(np.asarray(s0["q0"], float), np.asarray(s0["qd0"], float), t_end, **kw)
    y = np.concatenate([np.asarray(res.q, float), np.asarray(res.qd, float)], axis=-1)
    res.y = y
    res.constraints = {}
    return res


def simulate(entry: Entry, t_end: float | None = None, steps: int | None = None, method: str | None = None,
             **options: Any) -> integrators.IntegrationResult:
    """Simulate ``entry`` (defaults: its own t_end, steps, method); an ``IntegrationResult`` in the entry's
    view (see the module docstring).

    ``options`` (e.g. rtol, atol for scipy methods) go to the system's ``simulate``."""
    t_end = entry.t_end if t_end is None else t_end
    steps = entry.steps if steps is None else steps
    if isinstance(t_end, bool) or not isinstance(t_end, (int, float, np.integer, np.floating)) \
            or not 0 < float(t_end) <= MAX_T_END:
        raise CatalogError(f"t_end must be a positive number of at most {MAX_T_END:.0e} (time units of the "
                           f"entry), got {t_end!r}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) and not (
            isinstance(steps, float) and steps.is_integer()) or not 1 <= steps <= MAX_STEPS:
        raise CatalogError(f"steps must be at least 1 (an integer of at most {MAX_STEPS:.0e}), got {steps!r}")
    t_end, steps = float(t_end), int(steps)
    method = method or _default_method(entry)
    if entry.kind == "coordinates":
        run = _run_coordinates(entry, t_end, steps, method, options)
    else:
        run = _run_lie(entry, t_end, steps, method, options)
    t, y = np.asarray(run.t, dtype=float), np.asarray(run.y, dtype=float)
    if not np.all(np.isfinite(y)):  # the integrators keep finite states only; a guard of last resort
        k = int(np.argmax(~np.all(np.isfinite(y), axis=-1)))
        t, y = t[:k], y[:k]
        run.t, run.status = t, -1
        run.message = f"the solution is not finite from t = {run.t[-1] if k else 0:.6g} on; {run.message}"
    run.name, run.labels, run.y = entry.name, tuple(entry.labels), y
    run.method = str(run.method or method or "default")
    run.invariants = {k: np.asarray(F(y), dtype=float) for k, F in (entry.first_integrals or {}).items()}
    residuals = dict(run.constraints)
    for k, r in entry.extras.get("constraints", {}).items():
        residuals[k] = np.asarray(r(y), dtype=float)
    run.constraints = residuals
    if entry.exact_solution is not None and len(t):
        try:
            with np.errstate(all="ignore"):
                run.outputs["exact"] = np.asarray(entry.exact_solution(t), dtype=float)
        except (ValueError, ArithmeticError) as exc:
            raise CatalogError(f"{entry.name}: the exact solution cannot be evaluated up to t = {t[-1]:.6g}: "
                               f"{exc}") from None
    path = entry.path
    if path is None and entry.kind == "lie-group" and group_kind(run) == "se2" and "w" in run.outputs:
        path = plane_path  # every system on SE(2) has its path in the plane
    if path is not None and len(t) > 1:
        try:
            with np.errstate(all="ignore"):
                run.outputs["path"] = np.asarray(path(run), dtype=float)
        except ValueError:  # e.g. velocities that overflow after a failed run: no path to draw
            if run.status >= 0:
                raise
    return run


def checks(entry: Entry, run: integrators.IntegrationResult) -> list[Verdict]:
    """The verdicts of ``run`` against what ``entry`` claims (see the module docstring)."""
    tol = entry.tolerances
    out = []
    if getattr(run, "status", 0) < 0:
        t_reached = float(run.t[-1]) if len(run.t) else 0.0
        out.append(Verdict("the run reached t_end", "run", t_reached, 0.0,
                           f" = t reached; status -1: {run.message}", reached=False))
        reached = False
    else:
        reached = True
    for k in run.invariants:
        out.append(Verdict(k, "integral", drift(run, k), tol.get("integral", 1e-9), " relative drift",
                           reached=reached))
    if run.outputs.get("exact") is not None:
        out.append(Verdict("exact solution", "exact", exact_error(run), tol.get("exact", 1e-6), " max error",
                           reached=reached))
    for k, r in run.constraints.items():
        r = np.asarray(r, dtype=float)
        out.append(Verdict(k, "constraint", float(np.max(np.abs(r))) if r.size else 0.0,
                           tol.get("constraint", 1e-9), " max residual", reached=reached))
    if entry.exact_solution is None and reference.applies(entry) and len(run.t) > 1:
        ref = reference.reference(entry, run.t)
        scale = max(1.0, float(np.max(np.abs(ref))))
        out.append(Verdict("equations written in catalog.verify.reference, scipy DOP853 (rtol 1e-12)", "reference",
                           float(np.max(np.abs(run.y - ref))) / scale, tol.get("reference", REFERENCE_TOL),
                           " max state difference / max(1, max |y|)", reached=reached))
    if {"chi", "Gamma0"} <= set(entry.parameters) and "w" in run.outputs and len(run.t) > 1:
        _, _, gap = heavy_top_attitude(run, entry.parameters["chi"], entry.parameters["Gamma0"])
        out.append(Verdict("Gamma = R^T e3 with R from R' = R Omega (integrators.reconstruct)", "reference", gap,
                           tol.get("attitude", 1e-6), " max |R^T e3 - Gamma| (the attitude carries the vertical)",
                           reached=reached))
    for name, fn in entry.extras.get("checks", {}).items():
        value, tl = fn(run)
        out.append(Verdict(name, "claim", float(value), float(tl), reached=reached))
    return out
