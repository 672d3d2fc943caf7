"""Figures of a body's motion on SO(3): the tips of the body axes on the sphere, the orthogonality defect of
R, the heavy top's apex, and the drift of one integral under several methods."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ...verify.run import orientation  # noqa: E402
from .style import PALETTE, ROUNDOFF_FLOOR, floor_line, legend_outside, method_style  # noqa: E402


def orientation_figure(entry, run):
    """Motion on the group SO(3): the tips of the body axes R e_1, R e_2, R e_3 on the unit sphere. None when
    the run is not on so(3)."""
    R = orientation(run)
    if R is None:
        return None
    fig = plt.figure(figsize=(4.8, 4.0))
    ax = fig.add_subplot(1, 1, 1, projection="3d")
    _sphere(ax)
    for i in range(3):
        ax.plot(R[:, 0, i], R[:, 1, i], R[:, 2, i], lw=1.1, color=PALETTE[i], label=f"tip of R e{i + 1}")
    _cube(ax)
    ax.set_title(f"{entry.name}: body axes in space")
    legend_outside(ax, below=True, ncol=3)
    return fig


def orthogonality_figure(entry, run):
    """The orthogonality defect |R^T R - 1| of the reconstructed attitude along the run (None off so(3))."""
    R = orientation(run)
    if R is None:
        return None
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    defect = np.linalg.norm(np.swapaxes(R, -1, -2) @ R - np.eye(3), axis=(-2, -1))
    ax.semilogy(run.t, np.maximum(defect, ROUNDOFF_FLOOR), color=PALETTE[0], lw=1, label="|R^T R - 1| (Frobenius)")
    floor_line(ax)
    ax.set_xlabel("time t [dimensionless]")
    ax.set_ylabel("|R^T R - 1|")
    ax.set_title("reconstruction g' = g w: orthogonality")
    legend_outside(ax, below=True)
    return fig


def _sphere(ax):
    u = np.linspace(0, 2 * np.pi, 25)
    for z in np.linspace(-0.75, 0.75, 5):
        r = np.sqrt(1 - z * z)
        ax.plot(r * np.cos(u), r * np.sin(u), z + 0 * u, color="0.82", lw=0.6)
    v = np.linspace(-np.pi / 2, np.pi / 2, 25)
    for a in np.linspace(0, np.pi, 5)[:-1]:
        ax.plot(np.cos(v) * np.cos(a), np.cos(v) * np.sin(a), np.sin(v), color="0.82", lw=0.6)
        ax.plot(-np.cos(v) * np.cos(a), -np.cos(v) * np.sin(a), np.sin(v), color="0.82", lw=0.6)


def _cube(ax):
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)
    ax.set_zlim(-1, 1)
    for set_ticks in (ax.set_xticks, ax.set_yticks, ax.set_zticks):
        set_ticks([-1, 0, 1])
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z (vertical)")


def apex_figure(entry, apex, gap):
    """The heavy top's apex R chi/|chi| on the unit sphere (the curve a mechanician draws for a top), the
    vertical, start and end; ``gap``: max |R^T e3 - Gamma| of the reconstruction, in the title."""
    fig = plt.figure(figsize=(4.8, 4.2))
    ax = fig.add_subplot(1, 1, 1, projection="3d")
    _sphere(ax)
    ax.plot([0, 0], [0, 0], [0, 1.15], color="0.3", lw=1.2, label="vertical e3")
    ax.plot(apex[:, 0], apex[:, 1], apex[:, 2], color=PALETTE[1], lw=1.3, label="apex R chi / |chi|")
    ax.plot(*apex[0], "o", color=PALETTE[2], ms=6, label="start")
    ax.plot([0, apex[-1, 0]], [0, apex[-1, 1]], [0, apex[-1, 2]], color=PALETTE[0], lw=2, label="axis at t_end")
    _cube(ax)
    ax.view_init(elev=22, azim=-60)
    ax.set_title(f"{entry.name}: apex on the sphere\n(max |R^T e3 - Gamma| = {gap:.1e})")
    legend_outside(ax, below=True, ncol=2)
    return fig


def drift_comparison_figure(entry, runs):
    """Invariant drift of several runs (e.g. a Lie-Poisson method next to scipy's DOP853) on one axis: one
    colour and marker per method, one line style per integral."""
    fig, ax = plt.subplots(figsize=(5.6, 3.3))
    styles = ("-", "--", "-.", ":")
    names = list(runs[0].invariants)
    for run in runs:
        st = method_style(run.method)
        for j, k in enumerate(names):
            v = np.asarray(run.invariants[k], float)
            d = np.maximum(np.abs(v - v[0]) / max(1.0, abs(v[0])), ROUNDOFF_FLOOR)
            every = max(1, len(run.t) // 12)
            ax.semilogy(run.t, d, styles[j % len(styles)], color=st["color"], marker=st["marker"], markevery=every,
                        ms=4, lw=1, label=f"{run.method} ({run.wall_time:.2f} s): {k}"[:56])
    floor_line(ax)
    ax.set_xlabel("time t [dimensionless]")
    ax.set_ylabel("relative drift")
    ax.set_title(f"{entry.name}: drift of the integrals by method")
    legend_outside(ax, below=True, ncol=1)
    return fig
