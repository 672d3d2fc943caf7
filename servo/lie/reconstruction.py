"""Reconstruction of the motion on the group, g' = g w(t), from a simulated servo system.

The body velocity w(t) of an Euler-Poincare / servo system moves the configuration g in G by the
left-invariant kinematic equation g' = g w (Kozlov's lectures on servo-constraints: "Системы на
группах Ли"; the servo-sleigh's path on E(2) is x' = u cos(phi) - v sin(phi), y' = u sin(phi) + v cos(phi),
phi' = w). The steps are exp-based, g_{n+1} = g_n exp(hat Theta_n) (``integrators.reconstruct``), so the
rotation part stays orthogonal to round-off for any number of steps; since w(t) is known in advance, all
steps are computed at once and multiplied by a prefix scan (a few microseconds per step with numpy). Groups: SO(3) for so(3), SE(2) for
se(2) (basis (u, v, w)), SE(3) for se(3) (rotations, then translations).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Union

import numpy as np
from integrators import reconstruct
from liegroups import group_for
from numpy.typing import ArrayLike, NDArray

from ..errors import ServoError

if TYPE_CHECKING:
    from integrators import IntegrationResult
    from liegroups import LieAlgebra
    from liegroups.matrix_groups import MatrixGroup

#: the body velocity w along a motion: a ``simulate`` result, samples (t, w) with w of shape (K, ..., dim),
#: or (t, w(t)) with a callable w
Velocities = Union["IntegrationResult", tuple[ArrayLike, ArrayLike], tuple[ArrayLike, Callable[..., ArrayLike]]]

__all__ = ["group_of", "reconstruct_motion", "planar_path"]


def group_of(algebra: LieAlgebra) -> MatrixGroup:
    """The matrix group (liegroups.SO3, SE2 or SE3) of a named algebra; ServoError for others."""
    kind = algebra.closed_form
    if kind not in ("so3", "se2", "se3"):
        raise ServoError(f"no matrix group for {algebra.name}: reconstruction is available for so(3), se(2) "
                         f"and se(3) (the named algebras)")
    return group_for(kind)


def reconstruct_motion(result: Velocities, g0: ArrayLike | None = None, method: str = "rkmk4", substeps: int = 1,
                       group: MatrixGroup | None = None, vectorized: bool = False, fast: bool = True) -> IntegrationResult:
    """g(t) with g' = g w(t) along a ``simulate`` result (uses its ``t`` and ``w``).

    Parameters
    ----------
    result : the result of ``system.simulate`` (with ``t``, ``w`` and ``system``), or a pair (t, w)
        with w of shape (K, ..., dim) sampled at the times t, or a callable w(t) -> (..., dim).
    g0 : (..., N, N) initial group element (identity by default).
    method : a Lie-group method of ``integrators`` ("rkmk4", "cf4", "lie_euler", ...).
    substeps : method steps per sample interval (w is interpolated by a cubic spline between samples).
    group : liegroups.SO3 / SE2 / SE3 (default: from the system's algebra).
    vectorized : a callable w takes an array of times (M,) and returns (M, ..., dim) (one call in all).
    fast : all steps at once and a prefix-product scan (default); False steps one at a time (the reference).

    Returns the ``integrators`` result: ``y`` (K, ..., N, N) and ``constraints["group_defect"]``.
    """
    if isinstance(result, tuple):
        t, w = result
        if group is None:
            raise ServoError("reconstruct_motion((t, w)) needs group=SO3, SE2 or SE3")
        G = group
    else:
        t, w = result.t, result.w
        G = group or group_of(result.system.algebra)
    if callable(w):  # w(t) -> (..., dim), evaluated exactly at the stages
        t0 = np.asarray(t, dtype=float)[:1]
        batch = np.shape(w(t0))[1:-1] if vectorized else np.shape(w(float(t0[0])))[:-1]
    else:
        w = np.asarray(w, dtype=float)
        batch = w.shape[1:-1]
    if g0 is None:
        g0 = G.identity(batch)
    return reconstruct(G, w, g0, np.asarray(t, dtype=float), method=method, substeps=substeps,
                       vectorized=vectorized, fast=fast)


def planar_path(g: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(x, y, phi) of SE(2) elements g (..., 3, 3): the position of the body frame's origin and its angle."""
    g = np.asarray(g, dtype=float)
    return g[..., 0, 2], g[..., 1, 2], np.arctan2(g[..., 1, 0], g[..., 0, 0])
