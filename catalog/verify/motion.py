"""The motion on the group of any run on SO(3), SE(2) or SE(3): the path in the plane, the body's attitude.

The body velocity w(t) of a Lie-group system moves the configuration by g' = g w (left-invariant
kinematics; Kozlov's lectures on servo-constraints, "Системы на группах Ли"), reconstructed with
``servo.reconstruct_motion`` (exp-based steps, the rotation orthogonal to round-off) from g(0) = identity:

* SE(2) (basis (u, v, w) of ``liegroups.named.se2``): x, y of the body frame's origin and its heading theta
  (unwrapped: continuous in t); x' = u cos(theta) - v sin(theta), y' = u sin(theta) + v cos(theta), theta' = w;
* SO(3): the attitude R(t) (body to space), columns R11, R12, ..., R33; R e_i is body axis i in space;
* SE(3) (rotations first, then translations): the position x, y, z of the body frame's origin and R(t).

:func:`motion` gives these as named columns (g(t) is cached on the run, not among its outputs, whose
columns ``to_csv`` writes one value per time); :func:`group_kind` says
whether a run or an entry has one; :func:`plane_path` is ``Entry.path`` for any system on SE(2).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import servo

__all__ = ["group_kind", "group_motion", "motion", "plane_path", "attitude", "GROUPS"]

#: the algebras whose motion is reconstructed (``LieAlgebra.closed_form``)
GROUPS = ("so3", "se2", "se3")


def group_kind(obj: Any) -> str | None:
    """"so3", "se2" or "se3" for a run, an entry or a system on one of those algebras (else None).

    A Hamiltonian with a linear term on se(3)* (the heavy top: w = (Omega, m g chi), the second half a
    constant, not the velocity of a point) gives "so3": only its attitude is a motion of the body."""
    system = getattr(obj, "system", obj)
    alg = getattr(system, "algebra", None)
    kind = getattr(alg, "closed_form", None)
    if kind not in GROUPS:
        return None
    if kind == "se3" and bool(getattr(system, "has_linear_term", False)):
        return "so3"
    return kind


def _velocities(run):
    w = np.asarray(run.w, dtype=float)
    if w.ndim != 2:
        raise ValueError(f"the motion is reconstructed for one trajectory, got velocities of shape {w.shape}")
    return w


def group_motion(run: Any) -> np.ndarray | None:
    """g(t), (K, N, N), from g' = g w with g(0) = identity on SO(3), SE(2) or SE(3) (cached on the run as
    ``run._group_motion``, not in ``run.outputs``: a (K, N, N) output would stop ``run.to_csv``), or None
    when the run is not on one of these or has no velocities ``w``."""
    cached = getattr(run, "__dict__", {}).get("_group_motion")
    if cached is not None:
        return cached
    kind = group_kind(run)
    if kind is None or "w" not in run.outputs or len(run.t) < 2:
        return None
    from liegroups import SE2, SE3, SO3

    w = _velocities(run)[:len(run.t)]  # a run cut at its last finite state keeps its first len(t) outputs
    if kind == "so3" and w.shape[-1] == 6:  # attitude of a Lie-Poisson system on se(3)*: Omega only
        w = w[:, :3]
    group = {"so3": SO3, "se2": SE2, "se3": SE3}[kind]
    g = np.asarray(servo.reconstruct_motion((run.t, w), group=group).y, dtype=float)
    try:
        run._group_motion = g
    except AttributeError:   # a run that takes no attributes is reconstructed again when asked again
        pass
    return g


def motion(run: Any) -> dict[str, np.ndarray] | None:
    """{column: (K,) array} of the motion on the group (see the module docstring), or None when the run
    is not on so(3), se(2), se(3) or has no velocities ``w``."""
    g = group_motion(run)
    if g is None:
        return None
    if g.shape[-1] == 3 and group_kind(run) == "se2":
        x, y, th = servo.planar_path(g)
        return {"x": x, "y": y, "theta": np.unwrap(th)}
    R = g[:, :3, :3]
    out = {} if g.shape[-1] == 3 else {"x": g[:, 0, 3], "y": g[:, 1, 3], "z": g[:, 2, 3]}
    out.update({f"R{i + 1}{j + 1}": R[:, i, j] for i in range(3) for j in range(3)})
    return out


def plane_path(run: Any) -> np.ndarray:
    """(K, 2) path (x, y) in the plane of a run on SE(2) (``Entry.path`` of every SE(2) system)."""
    m = motion(run)
    if m is None or "theta" not in m:
        raise ValueError("the path in the plane needs a run on se(2) with velocities w")
    return np.stack([m["x"], m["y"]], -1)


def attitude(run: Any) -> np.ndarray | None:
    """R(t), (K, 3, 3), of a run on SO(3) or SE(3), else None."""
    m = motion(run)
    if not m or "R11" not in m:
        return None
    return np.stack([np.stack([m[f"R{i + 1}{j + 1}"] for j in range(3)], -1) for i in range(3)], -2)
