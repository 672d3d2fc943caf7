"""Figures of one run: the state against time, the drift of integrals and residuals, the path in the plane
(with the blade of a sleigh or both points of Talamucci's system), the combined trajectory figure and the
report's thumbnail."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .style import MIN_FONT, PALETTE, ROUNDOFF_FLOOR, floor_line, legend_outside  # noqa: E402


def has_drift(run):
    """True when the run has something for the drift panel: a first integral, a residual or an exact solution."""
    return bool(run.invariants or run.constraints or run.outputs.get("exact") is not None)


def drift_panel(ax, run, label_prefix=""):
    """Relative drift of each integral, constraint residuals and the error against an exact solution,
    on a log scale; values below the round-off floor (exact zeros included) are drawn on the floor."""
    floor = ROUNDOFF_FLOOR
    k = 0
    for name, v in run.invariants.items():
        v = np.asarray(v, float)
        d = np.abs(v - v[0]) / max(1.0, abs(v[0]))
        ax.semilogy(run.t, np.maximum(d, floor), color=PALETTE[k % len(PALETTE)], lw=1,
                    label=f"{label_prefix}{name}"[:48])
        k += 1
    for name, r in run.constraints.items():
        ax.semilogy(run.t, np.maximum(np.abs(np.asarray(r, float)), floor), "--", color=PALETTE[k % len(PALETTE)],
                    lw=1, label=f"{label_prefix}residual {name}"[:48])
        k += 1
    if run.outputs.get("exact") is not None:
        err = np.max(np.abs(run.y - run.outputs["exact"]), axis=-1)
        ax.semilogy(run.t, np.maximum(err, floor), ":", color="k", lw=1.2, label=f"{label_prefix}error vs exact")
        k += 1
    if not k:  # nothing to track: say so instead of drawing empty axes
        ax.text(0.5, 0.5, "no first integral, exact solution\nor constraint residual to track",
                ha="center", va="center", fontsize=MIN_FONT + 1, transform=ax.transAxes)
        ax.set_axis_off()
        return
    floor_line(ax)
    lo, hi = ax.get_ylim()
    if hi < 1e3 * floor:   # everything at round-off: three decades, so that it reads as a floor, not as spikes
        ax.set_ylim(floor / 3, 1e3 * floor)
    ax.set_xlabel("time t [dimensionless]")
    ax.set_ylabel("relative drift, residual, error")
    ax.set_title("relative drift / residual / error")


def drift_figure(run, title=None):
    """The drift panel alone, its legend under the data; None when there is nothing to track."""
    if not has_drift(run):
        return None
    fig, ax = plt.subplots(figsize=(4.6, 3.2))
    drift_panel(ax, run)
    if title:
        ax.set_title(title)
    legend_outside(ax, below=True, ncol=1)
    return fig


def _state_groups(entry, run):
    """[(y-axis label, component indices)]: one panel per kind of component (momenta, the vertical Gamma,
    multipliers; coordinates, velocities)."""
    labels = list(run.labels) if run.labels else [f"y{i + 1}" for i in range(run.y.shape[-1])]
    n = run.y.shape[-1]
    idx = range(n)
    if entry.kind != "lie-group":
        q = [i for i in idx if not labels[i].endswith("'")]
        v = [i for i in idx if labels[i].endswith("'")]
        return [(f"coordinates {', '.join(labels[i] for i in q)}", q),
                (f"velocities {', '.join(labels[i] for i in v)}", v)] if q and v else [("coordinates", list(idx))]
    lam = [i for i in idx if labels[i].startswith("lambda")]
    gam = [i for i in idx if labels[i][:1] == "G" and labels[i] not in ("G",)]
    mom = [i for i in idx if i not in lam and i not in gam]
    out = [("momenta " + ("M (body frame)" if gam else "m = I w (body frame)"), mom)]
    if gam:
        out.append(("vertical Gamma (body frame)", gam))
    if lam:
        out.append(("multiplier " + ", ".join(labels[i] for i in lam), lam))
    return out


def motion_figure(entry, run):
    """The state against time, one panel per kind of component (momenta and Gamma of the heavy top are
    not on one axis), the exact solution dotted; the legend right of the data."""
    groups = _state_groups(entry, run)
    fig, axes = plt.subplots(len(groups), 1, figsize=(5.2, 1.2 + 1.8 * len(groups)), sharex=True, squeeze=False)
    labels = list(run.labels) if run.labels else [f"y{i + 1}" for i in range(run.y.shape[-1])]
    exact = run.outputs.get("exact")
    for ax, (ylabel, ids) in zip(axes[:, 0], groups):
        for k, i in enumerate(ids):
            ax.plot(run.t, run.y[:, i], color=PALETTE[k % len(PALETTE)], lw=1.2, label=labels[i])
            if exact is not None:
                ax.plot(run.t, exact[:, i], ":", color="k", lw=0.9)
        ax.set_ylabel(ylabel if len(ylabel) < 34 else ylabel[:32] + "\u2026")
        legend_outside(ax)
    if exact is not None:
        axes[0, 0].plot([], [], ":", color="k", label="exact solution")
        legend_outside(axes[0, 0])
    axes[-1, 0].set_xlabel("time t [dimensionless]")
    axes[0, 0].set_title(f"{entry.name} ({run.method})")
    return fig


def _blade_segments(pose, count=9, length=None):
    """Segments (count, 2, 2) of the blade at evenly spaced instants: centred at the contact point, along the
    heading; length 5 % of the path's extent unless given."""
    xy = pose[:, :2]
    ext = float(np.max(np.ptp(xy, axis=0))) or 1.0
    L = 0.05 * ext if length is None else length
    k = np.linspace(0, len(pose) - 1, count).round().astype(int)
    d = np.stack([np.cos(pose[k, 2]), np.sin(pose[k, 2])], -1) * (L / 2)
    return np.stack([xy[k] - d, xy[k] + d], 1)


def has_blade(entry):
    """True when the body in the plane runs on a blade or skate (nonholonomic, one-sided, friction, added
    mass, vakonomic, forced sleighs); a servo-constraint or a free body has none: its heading is drawn as
    arrows instead."""
    return getattr(entry, "model", None) not in ("servo1", "servo2", "free")


def has_path(run):
    return run.outputs.get("path") is not None or tuple(run.labels[:4]) == ("x1", "y1", "x2", "y2")


def draw_path(ax, entry, run, pose=None):
    from matplotlib.collections import LineCollection

    path = run.outputs.get("path")
    two_points = tuple(run.labels[:4]) == ("x1", "y1", "x2", "y2")
    if two_points:
        for j, (c, name) in enumerate(((PALETTE[0], "point 1 (x1, y1)"), (PALETTE[1], "point 2 (x2, y2)"))):
            xy = run.y[:, 2 * j:2 * j + 2]
            ax.plot(xy[:, 0], xy[:, 1], color=c, lw=1.4, label=name)
            ax.plot(*xy[0], "o", color=c, ms=6, mfc="w")
            ax.plot(*xy[-1], "o", color=c, ms=6)
        k = np.linspace(0, len(run.t) - 1, 8).round().astype(int)
        ax.add_collection(LineCollection(np.stack([run.y[k, 0:2], run.y[k, 2:4]], 1), colors="0.55", lw=0.8,
                                         linestyles=":", label="the two points at the same instants"))
        ax.plot([], [], "o", color="0.3", mfc="w", ms=6, label="start (open), end (filled)")
        ax.set_title(f"{entry.name}: both points in the plane")
    else:
        blade = pose is not None and has_blade(entry)
        ax.plot(path[:, 0], path[:, 1], color=PALETTE[6] if pose is not None else PALETTE[0], lw=1.4, zorder=2,
                label="path of the contact point" if blade else "path of the body frame's origin")
        if blade:
            segs = _blade_segments(pose)
            ax.add_collection(LineCollection(segs, colors="0.15", lw=5, capstyle="round", zorder=1,
                                             label="blade (along the heading)"))
        elif pose is not None:   # no blade (a servo-constraint, a free body): the heading as arrows
            segs = _blade_segments(pose, length=0.09 * (float(np.max(np.ptp(pose[:, :2], axis=0))) or 1.0))
            mid, d = segs.mean(axis=1), segs[:, 1] - segs[:, 0]     # from the origin, along the heading
            ax.quiver(mid[:, 0], mid[:, 1], d[:, 0], d[:, 1],
                      angles="xy", scale_units="xy", scale=1.0, color="0.15", width=0.004, zorder=3,
                      label="heading (body axis e1)")
            ax.update_datalim(mid + d)      # the arrows' tips inside the axes
            ax.autoscale_view()
        ax.plot(path[0, 0], path[0, 1], "o", color=PALETTE[2], ms=7, label="start")
        for ev in getattr(run, "events", None) or ():
            t_ev, kind = float(ev[0]), str(ev[1])
            x = np.interp(t_ev, run.t, path[:, 0])
            y = np.interp(t_ev, run.t, path[:, 1])
            mk, c = {"leave": ("^", PALETTE[1]), "join": ("v", PALETTE[3])}.get(kind, ("D", "0.3"))
            ax.plot(x, y, mk, color=c, ms=10, mec="k", label=f"{kind}s the constraint (t = {t_ev:.3g})")
        ax.set_title(f"{entry.name}: path in the plane")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [length]")
    ax.set_ylabel("y [length]")


def path_figure(entry, run, pose=None):
    """The path in the plane with the blade drawn along it (a segment along the heading ``pose[:, 2]`` at
    evenly spaced instants), the start, and the events where the motion leaves or joins the constraint; for
    Talamucci's two points both paths. None without a path."""
    if not has_path(run):
        return None
    fig, ax = plt.subplots(figsize=(5.0, 3.8))
    draw_path(ax, entry, run, pose)
    legend_outside(ax, below=True, ncol=2)
    return fig


def trajectory_figure(entry, run):
    """One figure for ``liedyn simulate --plot``: the states against time, the drift (when there is something
    to track) and the path in the plane with the blade (when there is one), legends below: at most two
    panels side by side (a third goes under them, the full width), so that the figure is at most 9.5 in
    wide and its text stays readable on a page (a documentation column of 730 px shows 8 pt at 8.5 px)."""
    from ...verify.run import planar_pose

    panels = ["motion"] + (["drift"] if has_drift(run) else []) + (["path"] if has_path(run) else [])
    if len(panels) <= 2:
        fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), squeeze=False)
        axes = list(axes[0])
    else:
        fig, mosaic = plt.subplot_mosaic([panels[:2], [panels[2], panels[2]]], figsize=(9.2, 7.6))
        axes = [mosaic[k] for k in panels]
    for ax, kind in zip(axes, panels):
        if kind == "motion":
            for i in range(run.y.shape[-1]):
                ax.plot(run.t, run.y[:, i], color=PALETTE[i % len(PALETTE)], lw=1.1,
                        label=run.labels[i] if i < len(run.labels) else f"y{i + 1}")
            ax.set_xlabel("time t [dimensionless]")
            ax.set_ylabel("state (" + ", ".join(g for g, _ in _state_groups(entry, run)) + ")"
                          if len(_state_groups(entry, run)) < 2 else "state components")
            ax.set_title(f"{entry.name} ({run.method})")
        elif kind == "drift":
            drift_panel(ax, run)
        else:
            draw_path(ax, entry, run, planar_pose(run))
        legend_outside(ax, below=True, ncol=2)
    fig.tight_layout()
    return fig


def thumbnail_figure(entry, run):
    """A small picture of the motion for the index, without text: the path in the plane (with the blade)
    if there is one, both points for Talamucci's system, else the state components against time."""
    from ...verify.run import planar_pose

    fig, ax = plt.subplots(figsize=(2.4, 1.6))
    path = run.outputs.get("path")
    if tuple(run.labels[:4]) == ("x1", "y1", "x2", "y2"):
        ax.plot(run.y[:, 0], run.y[:, 1], color=PALETTE[0], lw=1.2)
        ax.plot(run.y[:, 2], run.y[:, 3], color=PALETTE[1], lw=1.2)
        ax.set_aspect("equal", adjustable="datalim")
    elif path is not None:
        ax.plot(path[:, 0], path[:, 1], color=PALETTE[0], lw=1.2)
        pose = planar_pose(run)
        if pose is not None:
            for s in _blade_segments(pose, count=6, length=0.1 * (float(np.max(np.ptp(path, axis=0))) or 1.0)):
                ax.plot(s[:, 0], s[:, 1], "k", lw=1.8)
        ax.plot(path[0, 0], path[0, 1], "o", color=PALETTE[2], ms=4)
        ax.set_aspect("equal", adjustable="datalim")
    else:
        for i in range(run.y.shape[-1]):
            ax.plot(run.t, run.y[:, i], color=PALETTE[i % len(PALETTE)], lw=1.1)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    fig.tight_layout(pad=0.1)
    return fig
