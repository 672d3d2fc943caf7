"""Realization of constraints by large anisotropic viscous friction and by large added masses.

- Friction (Kozlov's slides, Theorem 1; Kozlov 2019, section 4; Kozlov 2008, section 3): for the
  constraint g = (a, q') + h = 0 (h(q, t) = 0: linear homogeneous) the force is -N g a (for h = 0 the
  gradient of the Rayleigh function R_N = N (a, q')^2 / 2). As N -> infinity the motions from states
  with g = 0 converge to the nonholonomic motion [L] = lambda a, g = 0, at the rate O(1/N).
  One-sided (Kozlov 2019, (4.2); Salnikova, Kugushev and Demidov 2023, eq. (10)): the force acts only
  where the one-sided constraint g >= 0 is violated, -N g a for g < 0, and -k g a on the allowed side
  (k = 0 by default); the limit is the one-sided motion. In Salnikova et al.'s notation W q' + h <= 0
  the row u_j of W is -a and h_j is -h. Their eq. (10) writes the force as -rho xi(u_j q' + h_j)
  (u_j, q') u_j, which for h_j != 0 jumps by rho h_j u_j at the boundary u_j q' + h_j = 0; here it acts
  through u_j q' + h_j, so it is continuous there (what their convergence argument uses).
- Added masses (Kozlov's slides, Theorem 2): T_N = T + N (a, q')^2 / 2; as N -> infinity the motions
  from states with (a, q') = 0 converge to the vakonomic motion (Lagrange's problem delta int L dt = 0
  under (a, q') = 0) with initial multiplier lambda(0) = 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from .lagrangian import LagrangianSystem, register_builder
from .symbolic import as_covector
from ..errors import LagrangianError


def _pairing(system, a):
    return sum(ai * qd for ai, qd in zip(a, system.qd))


def _check_coefficient(N, name="N"):
    try:
        val = float(N)
    except TypeError as exc:
        raise LagrangianError(f"{name} must be a number, got {N!r}") from exc
    if not np.isfinite(val) or val < 0:
        raise LagrangianError(f"{name} must be finite and >= 0, got {val}")
    return val


def friction_force(system: LagrangianSystem, a_covector: Any, N: float, one_sided: bool = False, k: float = 0.0,
                   h: Any = 0) -> list[sp.Expr]:
    """The generalized force -N g a, g = (a, q') + h (two-sided), or its one-sided version, as n sympy
    expressions.

    One-sided: -N g a where g < 0 (the constraint g >= 0 violated), -k g a elsewhere. The force is
    continuous (it vanishes on g = 0), so solutions exist and are unique (Kozlov 2019, section 4).
    h: a function of q and t (not of q'), default 0.
    """
    a = as_covector(a_covector, system.n, "friction covector a")
    N = _check_coefficient(N)
    k = _check_coefficient(k, "k")
    h = sp.sympify(h)
    if any(sp.diff(system.plain(h), u) != 0 for u in system.us):
        raise LagrangianError(f"the affine term h = {h} of (a, q') + h must not depend on the velocities")
    s = _pairing(system, a) + h
    if one_sided:
        coef = sp.Piecewise((-sp.Float(N) * s, s < 0), (-sp.Float(k) * s, True))
    else:
        if k != 0.0:
            raise LagrangianError("k (friction on the allowed side) only makes sense with one_sided=True")
        coef = -sp.Float(N) * s
    return [coef * ai for ai in a]


def with_friction(system: LagrangianSystem, a_covector: Any, N: float, one_sided: bool = False, k: float = 0.0,
                  h: Any = 0) -> LagrangianSystem:
    """A new LagrangianSystem with the anisotropic viscous friction force -N ((a, q') + h) a added."""
    extra = friction_force(system, a_covector, N, one_sided=one_sided, k=k, h=h)
    forces = [f + g for f, g in zip(system.forces, extra)]
    return LagrangianSystem(system.T, system.V, system.q, forces=forces, period=system.period)


def with_added_mass(system: LagrangianSystem, a_covector: Any, N: float) -> LagrangianSystem:
    """A new LagrangianSystem with kinetic energy T + N (a, q')^2 / 2 (Theorem 2 of Kozlov's slides)."""
    a = as_covector(a_covector, system.n, "added-mass covector a")
    N = _check_coefficient(N)
    T = system.T + sp.Float(N) * _pairing(system, a) ** 2 / 2
    return LagrangianSystem(T, system.V, system.q, forces=system.forces, period=system.period)


register_builder("with_friction", with_friction)
register_builder("with_added_mass", with_added_mass)


def fit_power_law(N_values: ArrayLike, errors: ArrayLike) -> tuple[float, float]:
    """Least-squares fit errors ~ C N^p in log-log; returns (p, C). Used for convergence rates."""
    N_values = np.asarray(N_values, dtype=float)
    errors = np.asarray(errors, dtype=float)
    if N_values.shape != errors.shape or len(N_values) < 2:
        raise LagrangianError(f"need >= 2 matching N and error values, got {N_values.shape} and {errors.shape}")
    if np.any(errors <= 0) or np.any(N_values <= 0):
        raise LagrangianError("power-law fit needs positive N and errors")
    p, logC = np.polyfit(np.log(N_values), np.log(errors), 1)
    return float(p), float(np.exp(logC))


def fit_circle(points: ArrayLike) -> tuple[NDArray[np.float64], float]:
    """Algebraic least-squares circle through planar points (Kasa fit): returns (centre (2,), radius).

    Solves min sum (x^2 + y^2 + D x + E y + F)^2; centre = -(D, E)/2, radius = sqrt(|c|^2 - F).
    """
    P = np.asarray(points, dtype=float)
    if P.ndim != 2 or P.shape[1] != 2 or len(P) < 3:
        raise LagrangianError(f"fit_circle needs >= 3 points of shape (m, 2), got {P.shape}")
    M = np.column_stack([P, np.ones(len(P))])
    rhs = -(P ** 2).sum(axis=1)
    (D, E, F), *_ = np.linalg.lstsq(M, rhs, rcond=None)
    centre = -0.5 * np.array([D, E])
    return centre, float(np.sqrt(max(centre @ centre - F, 0.0)))
