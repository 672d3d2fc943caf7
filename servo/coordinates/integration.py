"""The one way the systems in coordinates integrate: a first-order :class:`integrators.ODEProblem` in,
one :class:`integrators.IntegrationResult` out.

Every ``simulate`` of ``servo.coordinates`` builds the problem y' = f(t, y) with y = (q, q', extra)
(``extra``: the multipliers of a servo-constraint of the second kind, which are state variables) and
hands it to ``integrators.integrate`` (default method "scipy:DOP853": dense output and root finding of
scipy's solve_ivp locate the one-sided events to ~1e-10 in time). The result carries the outputs
``q``, ``qd`` and ``lambda`` (also readable as ``res.q``, ``res.qd``, ``res.lam``), ``events`` (one-sided
constraints: records (t, "leave" | "join", index)), ``system`` and ``labels``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from integrators import IntegrationResult, ODEProblem, integrate
from integrators.methods import METHODS, canonical_name

from ..errors import IntegrationError, LagrangianError

#: the discrete Lagrange-d'Alembert methods (integrators.reference.nonholonomic), for which ``simulate`` of a
#: nonholonomic ``ConstrainedSystem`` attaches its ``nonholonomic_problem()`` to the problem
DISCRETE_METHODS = ("mp_lda", "nh_rattle")

#: the discrete vakonomic method (Benito and Martin de Diego 2005), for which ``simulate`` of a vakonomic or servo2
#: ``ConstrainedSystem`` attaches its ``vakonomic_problem()``
VAKONOMIC_METHODS = ("dvak_mid",)

#: the default method of every ``simulate`` in coordinates (bare scipy names such as "DOP853" are aliases)
DEFAULT_METHOD = "scipy:DOP853"


def time_grid(t0: float, t_end: float, steps: int) -> NDArray[np.float64]:
    """The output grid linspace(t0, t_end, steps + 1); checks steps >= 1 and t_end != t0."""
    if int(steps) < 1 or int(steps) != steps:
        raise IntegrationError(f"steps must be a positive integer, got {steps!r}")
    if not np.isfinite(t_end) or t_end == t0:
        raise IntegrationError(f"t_end must be finite and differ from t0 = {t0}, got {t_end}")
    return np.linspace(t0, t_end, int(steps) + 1)


def is_scipy_method(method: Any) -> bool:
    """True for the scipy adapters ("scipy:DOP853", "Radau", ...); False for fixed-step methods."""
    name = canonical_name(method)
    if name is None:
        return True  # let integrate() name the unknown method
    return not METHODS[name].fixed_step


def first_order_problem(n: int, acceleration: Callable[..., NDArray[np.float64]], extra: int = 0,
                        jac: Callable[[Any, NDArray[np.float64]], ArrayLike] | None = None,
                        name: str = "Lagrangian system", period: float | None = None) -> ODEProblem:
    """ODEProblem for y = (q, q', extra): y' = (q', q'', extra') with (q'', extra') = acceleration(t, q, q', e).

    ``acceleration`` must accept a batch (..., n) and return (..., n + extra). Outputs: "q", "qd" and,
    for extra > 0, "lambda" (the multipliers that are state variables). ``period``: the period T of a
    time-periodic system, kept on the problem for the phase-space tools.
    """
    def f(t, y):
        y = np.asarray(y, dtype=float)
        return np.concatenate([y[..., n:2 * n], acceleration(t, y[..., :n], y[..., n:2 * n], y[..., 2 * n:])],
                              axis=-1)

    outputs = {"q": lambda Y: Y[..., :n], "qd": lambda Y: Y[..., n:2 * n]}
    if extra:
        outputs["lambda"] = lambda Y: Y[..., 2 * n:]
    return ODEProblem(f, 2 * n + extra, jac=jac, outputs=outputs, name=name, period=period)


def run(problem: ODEProblem, y0: ArrayLike, t0: float, t_end: float, method: Any = DEFAULT_METHOD,
        rtol: float = 1e-12, atol: float = 1e-12, t_eval: ArrayLike | None = None, steps: int | None = None,
        events: Sequence[Callable[..., float]] | None = None, where: str = "simulate") -> IntegrationResult:
    """integrators.integrate(problem, y0, (t0, t_end), ...) with the failures turned into IntegrationError.

    Scipy methods take ``t_eval`` (dense output there); fixed-step methods (e.g. "rk4") take ``steps``.
    """
    kw = {"t_eval": t_eval} if is_scipy_method(method) else {"steps": steps}
    res = integrate(problem, y0, (t0, t_end), method=method, rtol=rtol, atol=atol, events=events, **kw)
    if res.status == -1:
        raise IntegrationError(f"{where}: the integration failed at t = {res.t[-1]:.6g}: {res.message}")
    if not np.all(np.isfinite(res.y)):
        raise IntegrationError(f"{where}: non-finite state produced (blow-up) before t = {res.t[-1]:.6g}")
    return res


def finish(res: IntegrationResult, system: Any, lam: ArrayLike, labels: Sequence[str] = ()) -> IntegrationResult:
    """Attach the multipliers (K, k) as outputs "lambda" (alias "lam"), the system and the labels."""
    lam = np.asarray(lam, dtype=float)
    res.outputs["lambda"] = lam
    res.outputs["lam"] = lam
    res.system = system
    res.labels = tuple(labels)
    return res


def check_state(q0: ArrayLike, qd0: ArrayLike, n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """q0, qd0 as float arrays of shape (n,), else LagrangianError naming the shapes."""
    q0, qd0 = np.asarray(q0, dtype=float), np.asarray(qd0, dtype=float)
    if q0.shape != (n,) or qd0.shape != (n,):
        raise LagrangianError(f"q0 and qd0 must have shape ({n},), got {q0.shape} and {qd0.shape}")
    return q0, qd0


__all__ = ["DEFAULT_METHOD", "IntegrationResult", "canonical_name", "check_state", "finish", "first_order_problem", "is_scipy_method",
           "run", "time_grid"]
