"""The figure of a motion on the group (:mod:`catalog.verify.motion`) for ``liedyn simulate --plot``.

* SE(2): the path of the body frame's origin in the plane, the body axis (heading theta) drawn as arrows
  along it, the start marked;
* SO(3): the tips of the body axes R e_1, R e_2, R e_3 on the unit sphere (where the body points);
* SE(3): the path of the origin in space with the body axes drawn at a few instants.

Every function returns a matplotlib Figure (Agg canvas, no pyplot state), or None when the run has no
motion on one of these groups.
"""

from __future__ import annotations

import numpy as np

from ..verify.motion import motion

__all__ = ["motion_figure"]

_AXIS_COLOURS = ("tab:red", "tab:green", "tab:blue")


def _plane(fig, m, title):
    ax = fig.add_subplot(1, 1, 1)
    x, y, th = m["x"], m["y"], m["theta"]
    ax.plot(x, y, lw=1.2, color="tab:blue", label="origin of the body frame")
    k = np.unique(np.linspace(0, len(x) - 1, 16).astype(int))
    span = max(float(np.ptp(x)), float(np.ptp(y)), 1e-12)
    ax.quiver(x[k], y[k], np.cos(th[k]), np.sin(th[k]), angles="xy", scale_units="xy", scale=12 / span,
              color="tab:orange", width=0.004, label="body axis e1 (heading)")
    ax.plot(x[:1], y[:1], "o", color="tab:green", ms=6, label="start")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.set_title(title, fontsize=10)


def _axes_on_sphere(fig, R, title, position=None):
    ax = fig.add_subplot(1, 1, 1, projection="3d")
    if position is None:
        u, v = np.mgrid[0:2 * np.pi:40j, 0:np.pi:20j]
        ax.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.85", lw=0.4)
        for i in range(3):
            ax.plot(R[:, 0, i], R[:, 1, i], R[:, 2, i], lw=1.0, color=_AXIS_COLOURS[i], label=f"R e{i + 1}")
            ax.plot(R[:1, 0, i], R[:1, 1, i], R[:1, 2, i], "o", color=_AXIS_COLOURS[i], ms=4)
    else:
        p = position
        ax.plot(p[:, 0], p[:, 1], p[:, 2], color="0.3", lw=1.0, label="origin of the body frame")
        span = max(float(np.max(np.ptp(p, axis=0))), 1e-12)
        for k in np.unique(np.linspace(0, len(p) - 1, 8).astype(int)):
            for i in range(3):
                d = R[k, :, i] * 0.12 * span
                ax.plot([p[k, 0], p[k, 0] + d[0]], [p[k, 1], p[k, 1] + d[1]], [p[k, 2], p[k, 2] + d[2]],
                        color=_AXIS_COLOURS[i], lw=1.2, label=f"R e{i + 1}" if k == 0 else None)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.05, 1.0))
    ax.set_title(title, fontsize=10)


def motion_figure(entry, run):
    """The motion of ``run`` on SE(2), SO(3) or SE(3) (see the module docstring), or None."""
    from matplotlib.figure import Figure

    m = motion(run)
    if not m:
        return None
    fig = Figure(figsize=(6.4, 4.8), dpi=150, layout="constrained")
    if "theta" in m:
        _plane(fig, m, f"{entry.name}: path in the plane (g' = g w on SE(2))")
        return fig
    R = np.stack([np.stack([m[f"R{i + 1}{j + 1}"] for j in range(3)], -1) for i in range(3)], -2)
    if "z" in m:
        pos = np.stack([m["x"], m["y"], m["z"]], -1)
        _axes_on_sphere(fig, R, f"{entry.name}: motion in space (g' = g w on SE(3))", pos)
    else:
        _axes_on_sphere(fig, R, f"{entry.name}: body axes in space (R' = R w on SO(3))")
    return fig
