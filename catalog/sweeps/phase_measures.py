"""Phase-space measures for sweeps of periodically excited systems: the largest Lyapunov exponent (and
whether the motion settles on an attractor), and the acceleration exponent of a speed that grows like t^p.

They are callables ``f(entry) -> row`` (frozen dataclasses: their options are part of their repr, so a
resumable sweep's fingerprint (:mod:`catalog.sweeps.store`) tells two settings apart) for entries that
carry a reduced problem and its period in ``extras`` (``sleigh_oscillating_mass``, ``sleigh_rotor``)::

    catalog.sweep("sleigh_oscillating_mass", {"A": "0.2:2:100", "xi": "-1:1:100"},
                  LargestExponent(t_end=200.0), store="out/chart")
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import integrators
from integrators.backends import numba_kernels

from ..registry import Entry
from .grid import SweepError


def _reduced(entry):
    red = entry.extras.get("reduced")
    if red is None:
        raise SweepError(f"{entry.name} has no reduced problem (extras['reduced']) for the phase-space measures")
    y0 = np.asarray(entry.initial_state, dtype=float)[:red.dim]
    return red, y0, entry.extras.get("period")


@dataclass(frozen=True)
class LargestExponent:
    """Lyapunov spectrum of the reduced (v, omega) flow (:func:`integrators.lyapunov_spectrum`, rk4, QR once
    per period): ``largest_exponent``, ``sum_exponents``, ``attractor`` (the sum is negative: phase volume
    contracts), ``megno``, ``converged``.

    The reduced fields are quadratic in (v, omega) at fixed t, so every point runs the generated tangent flow
    (one compiled text for the whole chart: the coefficients are tabled per point). ``backend``: None (default)
    takes numba when it is installed, else numpy, for every point alike ("auto" could switch from numpy to
    numba in the middle of a sweep when a background compile lands, and a resumed chart would then differ
    from an uninterrupted one in the last bits); or "auto", "numpy", "numba" as in
    :func:`integrators.lyapunov_spectrum`."""

    t_end: float = 200.0
    transient: float = 50.0
    steps_per_period: int = 40
    backend: str | None = None

    def __call__(self, entry: Entry) -> dict[str, float | bool]:
        red, y0, T = _reduced(entry)
        T = T or 1.0
        be = self.backend or ("numba" if numba_kernels.available() else "numpy")
        res = integrators.lyapunov_spectrum(red, y0, self.t_end, dt=T, h=T / self.steps_per_period,
                                            transient=self.transient, period=T, backend=be)
        lam = res.exponents
        return {"largest_exponent": float(lam[0]), "sum_exponents": float(lam.sum()),
                "attractor": bool(lam.sum() < 0), "megno": float(res.megno), "converged": bool(res.converged)}


@dataclass(frozen=True)
class AccelerationExponent:
    """p of |v| ~ t^p: the least-squares slope of log |v| against log t at the stroboscopic times of
    (t_from, t_to) (:func:`integrators.poincare_section` with the stroboscopic map, rk4)."""

    t_from: float = 100.0
    t_to: float = 1000.0
    steps_per_period: int = 40

    def __call__(self, entry: Entry) -> dict[str, float | bool]:
        red, y0, T = _reduced(entry)
        if T is None:
            raise SweepError(f"{entry.name} has no period: the acceleration exponent samples it stroboscopically")
        sec = integrators.poincare_section(red, y0, "stroboscopic", self.t_to, period=T, h=T / self.steps_per_period)
        t, v = sec.times, np.abs(sec.points[:, 0])
        keep = (t >= self.t_from) & (v > 0)
        if np.count_nonzero(keep) < 3:
            raise SweepError(f"fewer than 3 stroboscopic points in ({self.t_from}, {self.t_to}): widen the window")
        p = np.polyfit(np.log(t[keep]), np.log(v[keep]), 1)[0]
        return {"acceleration_exponent": float(p), "v_end": float(v[-1])}
