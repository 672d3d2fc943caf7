"""One-sided servo-constraint of the second kind on a Lie group: (a, w) >= 0 realized by the kinetic energy
T + lambda (b, w) with lambda >= 0 a state variable (Kozlov (2019), section 7, with the left-invariant
constraint and control of Kozlov's lectures on servo-constraints).

Modes of the state (m, lambda), m = I w:

* free (the control rests at lambda = 0): m' = ad*_w m, lambda' = 0, while (a, w) > 0;
* held ((a, w) = 0): z = m + lambda b, z' = ad*_w z, lambda' = (I^-1 a, z')/(I^-1 a, b), m' = z' - lambda' b
  (the servo-constraint of the second kind, :class:`servo.ServoSecondKind`), while lambda > 0.

Events: "join" when (a, w) reaches 0 from above; the constraint is then held when lambda' = w0 / (I^-1 a, b)
>= 0, with w0 = (I^-1 a, ad*_w m) < 0 the free rate of (a, w), i.e. when (I^-1 a, b) < 0. "leave" when
lambda returns to 0 from above (the multiplier's sign rule). lambda >= 0 can hold the constraint only if
(I^-1 a, b) < 0: the control must push towards (a, w) > 0; otherwise the system raises
UnrealizableConstraintError at construction (use -b). Velocities are continuous at the events (lambda is 0
there). Same decisions as the systems in coordinates (``servo.coordinates.one_sided``, model
"one_sided_servo2"), here in the reduced variables on g*.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from integrators import IntegrationResult, ODEProblem, integrate

from ..errors import ConstraintViolationError, IntegrationError, ServoError, UnrealizableConstraintError
from .servo_second import ServoSecondKind

if TYPE_CHECKING:
    from liegroups import LieAlgebra

    from .parameters import Parameter


class OneSidedServoSecondKind(ServoSecondKind):
    """(m + lambda b)' = ad*_w (m + lambda b), (a, w) >= 0, lambda >= 0, lambda (a, w) = 0 (see the module
    docstring). Parameters as :class:`servo.ServoSecondKind` (numbers only for simulate)."""

    kind = "one_sided_servo2"
    default_method = "scipy:DOP853"

    def __init__(self, algebra: LieAlgebra, inertia: Parameter, *, a: Parameter, b: Parameter,
                 name: str | None = None) -> None:
        super().__init__(algebra, inertia, a=a, b=b, name=name)
        if self.is_numeric and self._r > 0:
            raise UnrealizableConstraintError(
                f"one-sided servo-constraint of the second kind: (I^-1 a, b) = {self._r:.6g} > 0, so lambda >= 0 "
                f"pushes towards (a, w) < 0 and cannot hold (a, w) >= 0; use -b", value=self._r)

    # ------------------------------------------------------------------ modes
    def free_rhs(self, state: ArrayLike) -> NDArray[np.float64]:
        """(m', lambda') = (ad*_w m, 0) with w = I^-1 m: the free motion, the control at rest."""
        s = self._check_last(state, self.n + 1, "state (m, lambda)")
        m = s[..., :self.n]
        return np.concatenate([self.algebra.coad(m @ self.Iinv.T, m), np.zeros(s.shape[:-1] + (1,))], axis=-1)

    def _held_at(self, s, tol):
        """Is the constraint held from the state s? lambda > 0, or (a, w) = 0 with lambda' >= 0."""
        aw = float(self.constraint_residual(s))
        if aw > tol:
            return False
        return s[self.n] > 0 or float(self.rhs(s)[self.n]) > 0

    def check_state(self, state: ArrayLike, project: bool = False) -> NDArray[np.float64]:
        """(m, lambda) with (a, w) >= 0 and lambda >= 0, lambda > 0 only where (a, w) = 0."""
        self._require_numeric("check_state")
        s = np.array(self._check_last(state, self.n + 1, "state (m, lambda)"), dtype=float)
        aw = float(self.constraint_residual(s))
        tol = 1e-9 * max(1.0, float(np.linalg.norm(s[:self.n] @ self.Iinv.T)))
        if aw < -tol:
            raise ConstraintViolationError(f"state violates the one-sided constraint: (a, w) = {aw:.3e} < 0",
                                           residual=aw)
        if s[self.n] < 0 or (s[self.n] > 0 and aw > tol):
            raise ServoError(f"lambda = {s[self.n]} must be >= 0, and 0 unless (a, w) = 0 (here {aw:.3e})")
        return s

    def simulate(self, state0: ArrayLike, t_end: float, steps: int = 200, method: str | None = None,  # type: ignore[override]
                 rtol: float = 1e-12, atol: float = 1e-12, max_step: float | None = None,
                 max_events: int = 200) -> IntegrationResult:
        """Event-driven integration over [0, t_end] with ``integrators.integrate`` (a scipy method).

        Each mode is one call of integrate with a terminal event (direction -1): (a, w) while free, lambda
        while held. The dense output is also sampled every ``max_step`` (default t_end / max(steps, 200))
        and a sign change missed between two samples is located by integrating that piece again.
        Returns an IntegrationResult on linspace(0, t_end, steps + 1): y = (m, lambda), outputs "w",
        "lambda" (res.w, res.lam) and "held"; res.events lists (t, "leave" | "join", 0).
        """
        self._require_numeric("simulate")
        y = self.check_state(state0)
        t_end = float(t_end)
        if not t_end > 0:
            raise ServoError(f"one-sided motion is defined forward in time only: t_end = {t_end} <= 0")
        grid = np.linspace(0.0, t_end, int(steps) + 1)
        max_step = t_end / max(int(steps), 200) if max_step is None else float(max_step)
        tol = 1e-9 * max(1.0, float(np.linalg.norm(y[:self.n] @ self.Iinv.T)))
        out = np.full((len(grid), self.n + 1), np.nan)
        held_out = np.zeros(len(grid), dtype=bool)
        t, events, nfev, prev = 0.0, [], 0, None
        while True:
            held = self._held_at(y, tol)
            if prev is not None and held != prev:
                events.append((float(t), "join" if held else "leave", 0))
            elif prev is None and not held and abs(float(self.constraint_residual(y))) <= tol:
                events.append((float(t), "leave", 0))
            prev = held
            if len(events) > max_events:
                raise IntegrationError(f"more than {max_events} leave/join events before t = {t:.6g}")
            fun = self.rhs if held else self.free_rhs
            g = (lambda tt, s: s[..., self.n]) if held else (lambda tt, s: s[..., :self.n] @ self.Iinv_a)
            status, t, y, used = self._run(fun, g, y, t, t_end, max_step, grid, method, rtol, atol, out,
                                           held_out, held)
            nfev += used
            if status != 1:
                break
            if held:
                y[self.n] = 0.0  # the control has run out: lambda = 0 exactly at the leave event
        if np.isnan(out).any():
            j = int(np.argmax(np.isnan(out).any(axis=1)))
            raise IntegrationError(f"no state was recorded at the output time t = {grid[j]:.12g}")
        res = IntegrationResult(t=grid, y=out, status=0, message="reached the end of t_span", nfev=nfev,
                                method=str(method or self.default_method))
        res.outputs = {"m": out[:, :self.n], "w": out[:, :self.n] @ self.Iinv.T, "lambda": out[:, self.n],
                       "lam": out[:, self.n], "held": held_out}
        res.events, res.system = events, self
        return res

    def _run(self, fun, g, y, t, t_end, max_step, grid, method, rtol, atol, out, held_out, held, depth=0):
        """One mode from (t, y) to t_end or its event; returns (status, t_stop, y_stop, nfev)."""
        if depth > 12:
            raise IntegrationError(f"an event near t = {t:.12g} could not be located")

        def ev(tt, s):
            return float(g(tt, s))

        ev.terminal, ev.direction = True, -1
        m = max(1, int(np.ceil((t_end - t) / max_step)))
        ts = np.unique(np.concatenate([t + (t_end - t) * np.arange(m + 1) / m,
                                       grid[(grid >= t) & (grid <= t_end)]]))
        ts = ts[(ts >= t) & (ts <= t_end)]
        problem = ODEProblem(lambda tt, s: fun(s), self.n + 1, name=f"{self.name} ({'held' if held else 'free'})")
        res = integrate(problem, y, (t, t_end), method=method or self.default_method, t_eval=ts, events=[ev],
                        rtol=rtol, atol=atol)
        if res.status == -1 or not np.all(np.isfinite(res.y)):
            raise IntegrationError(f"{self.name}: the integration failed at t = {res.t[-1]:.6g}: {res.message}")
        t_stop, y_stop = t_end, res.y[-1].copy()
        if res.status == 1:
            t_stop, y_stop = float(res.t_events[0][0]), res.y_events[0][0].copy()
        gv = g(res.t, res.y)
        missed = np.nonzero((gv[:-1] > 0) & (gv[1:] < 0) & (res.t[1:] <= t_stop))[0]
        last = res.t[missed[0]] if len(missed) else t_stop
        for tt, yy in zip(res.t, res.y):
            j = np.searchsorted(grid, tt)
            if tt <= last and j < len(grid) and grid[j] == tt:
                out[j], held_out[j] = yy, held
        if not len(missed):
            return res.status, t_stop, y_stop, res.nfev
        k = missed[0]
        status, t_stop, y_stop, used = self._run(fun, g, res.y[k], res.t[k], res.t[k + 1],
                                                 (res.t[k + 1] - res.t[k]) / 8, grid, method, rtol, atol, out,
                                                 held_out, held, depth + 1)
        if status != 1:
            raise IntegrationError(f"a sign change in [{res.t[k]:.12g}, {res.t[k + 1]:.12g}] could not be located")
        return status, t_stop, y_stop, res.nfev + used
