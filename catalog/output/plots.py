"""Figures of the catalog (matplotlib, Agg backend): motion, invariant drift, phase portraits, the pictures a
mechanician draws (the path with the blade along it, the heavy top's apex on the sphere, both points of
Talamucci's system), the integrator comparison, the limit rates and the relation graph. Every function
returns a Figure; :func:`save` writes it as SVG (text kept as text, at least :data:`MIN_FONT` pt).

Each figure is one panel with its legend outside the data (to the right or below); the report lays the
panels side by side. Methods keep one colour and one marker on every page (:func:`method_style`)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import integrators  # noqa: E402

from ..verify.run import orientation  # noqa: E402

#: the smallest font in a figure [pt]; an SVG pt is drawn as 4/3 px at 100 % (8 pt = 10.7 px); tick labels
#: are larger (9 pt) because the exponent of a log-axis label (10^-16) is drawn at 70 % (6.3 pt = 8.4 px)
MIN_FONT = 8.0

STYLE = {"font.size": 9.5, "axes.titlesize": 10, "axes.labelsize": 9.5, "xtick.labelsize": 9,
         "ytick.labelsize": 9, "legend.fontsize": MIN_FONT, "legend.title_fontsize": MIN_FONT,
         "svg.fonttype": "none", "svg.hashsalt": "liedyn", "figure.dpi": 100, "savefig.dpi": 150,
         "axes.grid": True, "grid.alpha": 0.3}
plt.rcParams.update(STYLE)


def save(fig, path):
    """Write ``fig`` to ``path`` (SVG with the text as text, no date: the same figure gives the same file;
    PNG at 150 dpi for a ``.png`` path) and close it."""
    fig.savefig(path, bbox_inches="tight", pad_inches=0.05, metadata={"Date": None} if str(path).endswith(".svg")
                else None)
    plt.close(fig)
    return path


def _legend_outside(ax, below=False, ncol=1, **kw):
    """A legend beside the axes (right of the data) or under them, never over the data."""
    if not ax.get_legend_handles_labels()[0]:
        return None
    if below:
        return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=ncol, frameon=False, **kw)
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, ncol=ncol, frameon=False,
                     **kw)


#: twelve colours a reader tells apart (Okabe-Ito and Tol's muted, no yellow on white); in the comparison's
#: order rk4 is blue and DOP853 black
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#332288", "#E69F00", "#56B4E9", "#882255",
           "#999933", "#7f7f7f", "#000000", "#44AA99")
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "<", ">", "*", "h", "p", "d")


def method_style(name):
    """{"color", "marker"} of an integrator: fixed per name on every page (the order of
    ``integrators.METHODS``, the comparison's methods first), so two methods drawn together never share a
    colour or a marker among the first twelve."""
    from ..verify.compare import DEFAULT_METHODS

    order = [m for m in DEFAULT_METHODS if m in integrators.METHODS]
    order += [m for m in integrators.METHODS if m not in order]
    k = order.index(name) if name in order else len(order) + sum(map(ord, name))
    return {"color": PALETTE[k % len(PALETTE)], "marker": MARKERS[k % len(MARKERS)]}


#: the round-off floor of the drift plots: one unit in the last place of a number of size 1 (drift and
#: residuals are relative to max(1, |F0|)); values below it, exact zeros included, are drawn on it
ROUNDOFF_FLOOR = float(np.finfo(float).eps)


def _floor(ax):
    ax.axhline(ROUNDOFF_FLOOR, color="0.6", lw=0.8, ls="-.", label="round-off floor (machine epsilon)")


def has_drift(run):
    """True when the run has something for the drift panel: a first integral, a residual or an exact solution."""
    return bool(run.invariants or run.constraints or run.outputs.get("exact") is not None)


def _drift_panel(ax, run, label_prefix=""):
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
    _floor(ax)
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
    _drift_panel(ax, run)
    if title:
        ax.set_title(title)
    _legend_outside(ax, below=True, ncol=1)
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
        _legend_outside(ax)
    if exact is not None:
        axes[0, 0].plot([], [], ":", color="k", label="exact solution")
        _legend_outside(axes[0, 0])
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


def _has_path(run):
    return run.outputs.get("path") is not None or tuple(run.labels[:4]) == ("x1", "y1", "x2", "y2")


def _draw_path(ax, entry, run, pose=None):
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
    if not _has_path(run):
        return None
    fig, ax = plt.subplots(figsize=(5.0, 3.8))
    _draw_path(ax, entry, run, pose)
    _legend_outside(ax, below=True, ncol=2)
    return fig


def trajectory_figure(entry, run):
    """One figure for ``liedyn simulate --plot``: the states against time, the drift (when there is something
    to track) and the path in the plane with the blade (when there is one), legends below: at most two
    panels side by side (a third goes under them, the full width), so that the figure is at most 9.5 in
    wide and its text stays readable on a page (a documentation column of 730 px shows 8 pt at 8.5 px)."""
    from ..verify.run import planar_pose

    panels = ["motion"] + (["drift"] if has_drift(run) else []) + (["path"] if _has_path(run) else [])
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
            _drift_panel(ax, run)
        else:
            _draw_path(ax, entry, run, planar_pose(run))
        _legend_outside(ax, below=True, ncol=2)
    fig.tight_layout()
    return fig


def thumbnail_figure(entry, run):
    """A small picture of the motion for the index, without text: the path in the plane (with the blade)
    if there is one, both points for Talamucci's system, else the state components against time."""
    from ..verify.run import planar_pose

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
    _legend_outside(ax, below=True, ncol=3)
    return fig


def orthogonality_figure(entry, run):
    """The orthogonality defect |R^T R - 1| of the reconstructed attitude along the run (None off so(3))."""
    R = orientation(run)
    if R is None:
        return None
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    defect = np.linalg.norm(np.swapaxes(R, -1, -2) @ R - np.eye(3), axis=(-2, -1))
    ax.semilogy(run.t, np.maximum(defect, ROUNDOFF_FLOOR), color=PALETTE[0], lw=1, label="|R^T R - 1| (Frobenius)")
    _floor(ax)
    ax.set_xlabel("time t [dimensionless]")
    ax.set_ylabel("|R^T R - 1|")
    ax.set_title("reconstruction g' = g w: orthogonality")
    _legend_outside(ax, below=True)
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
    _legend_outside(ax, below=True, ncol=2)
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
    _floor(ax)
    ax.set_xlabel("time t [dimensionless]")
    ax.set_ylabel("relative drift")
    ax.set_title(f"{entry.name}: drift of the integrals by method")
    _legend_outside(ax, below=True, ncol=1)
    return fig


def phase_portrait_figure(q, title=""):
    """The reduced system's phase portrait with its invariant lines: streamlines of v for p = 2, the flow on
    the sphere of directions (longitude phi, height z = xi_3) for p = 3; streamlines dark on white (never a
    colour map that fades into the page), invariant lines in red with one legend entry per kind. None when the
    field vanishes identically (every state is an equilibrium: nothing to draw)."""
    from matplotlib.lines import Line2D

    if not np.any(np.abs(np.asarray(q.Q, float)) > 0):
        return None
    if q.p not in (2, 3) or not q.is_real:
        raise ValueError(f"a phase portrait is drawn for real systems with p = 2 or 3, got p = {q.p}")
    lines = q.invariant_lines()
    ink = "#3b5b92"
    handles = []
    if q.p == 2:
        fig, ax = plt.subplots(figsize=(4.4, 3.8))
        g = np.linspace(-1, 1, 41)
        X, Y = np.meshgrid(g, g)
        V = np.asarray(q.v(np.stack([X, Y], -1)), float)
        speed = np.hypot(V[..., 0], V[..., 1])
        parallel = np.ptp(np.arctan2(V[..., 1], V[..., 0])[speed > 1e-9 * speed.max()] % np.pi) < 1e-6
        if parallel:  # every orbit is a straight segment along one direction: arrows say more than lines
            gq = np.linspace(-0.9, 0.9, 10)
            Xq, Yq = np.meshgrid(gq, gq)
            Vq = np.asarray(q.v(np.stack([Xq, Yq], -1)), float)
            sq = np.hypot(Vq[..., 0], Vq[..., 1])
            nz = sq > 1e-12
            U = np.where(nz, Vq[..., 0] / np.where(nz, sq, 1), 0)
            W = np.where(nz, Vq[..., 1] / np.where(nz, sq, 1), 0)
            ax.quiver(Xq[nz], Yq[nz], U[nz], W[nz], color=ink, angles="xy", scale=14, width=0.006)
        else:
            ax.streamplot(X, Y, V[..., 0], V[..., 1], color=ink, density=1.0, linewidth=0.8, arrowsize=0.9)
        eq_drawn = c_drawn = False
        for L in lines.real:
            d = np.real(L.direction) / np.max(np.abs(np.real(L.direction)))
            if L.is_equilibrium_line:
                ax.plot([-d[0], d[0]], [-d[1], d[1]], "--", color="#c62828", lw=2)
                eq_drawn = True
            else:
                ax.plot([-d[0], d[0]], [-d[1], d[1]], "-", color="#c62828", lw=2)
                ax.annotate("", xy=0.95 * d, xytext=0.6 * d, arrowprops=dict(arrowstyle="->", color="#c62828", lw=2))
                c_drawn = True
        if c_drawn:
            handles.append(Line2D([], [], color="#c62828", lw=2, label="invariant line x = s xi (arrow: blow-up ray)"))
        if eq_drawn:
            handles.append(Line2D([], [], color="#c62828", lw=2, ls="--", label="line of equilibria"))
        handles.append(Line2D([], [], color=ink, lw=0.8, marker=">" if parallel else None, label=(
            "direction of v (parallel everywhere: straight orbits\nending on the lines of equilibria)" if parallel
            else "orbits")))
        ax.set_xlim(-1, 1)
        ax.set_ylim(-1, 1)
        ax.set_aspect("equal")
        ax.set_xlabel(str(q.variables[0]))
        ax.set_ylabel(str(q.variables[1]))
    else:
        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        phi = np.linspace(-np.pi, np.pi, 121)
        zz = np.linspace(-0.995, 0.995, 61)
        P, Z = np.meshgrid(phi, zz)
        r = np.sqrt(1 - Z ** 2)
        xi = np.stack([r * np.cos(P), r * np.sin(P), Z], axis=-1)
        v = np.asarray(q.v(xi), float)
        Xv = v - np.sum(xi * v, axis=-1, keepdims=True) * xi
        dphi = (xi[..., 0] * Xv[..., 1] - xi[..., 1] * Xv[..., 0]) / r ** 2
        ax.streamplot(P, Z, dphi, Xv[..., 2], color=ink, density=1.0, linewidth=0.6, arrowsize=0.8)
        marks = {"attracting": dict(marker="o", mfc="k"), "repelling": dict(marker="o", mfc="w"),
                 "saddle": dict(marker="X", mfc="#c62828"), "degenerate": dict(marker="s", mfc="w")}
        flip = {"attracting": "repelling", "repelling": "attracting"}
        seen = set()
        for L in lines.real:
            for sgn, stab in ((1, L.stability), (-1, flip.get(L.stability, L.stability))):
                d = sgn * np.real(L.direction)
                d = d / np.linalg.norm(d)
                stab = stab if stab in marks else "degenerate"
                ax.plot(np.arctan2(d[1], d[0]), d[2], ls="none", ms=9, mec="#c62828", **marks[stab])
                seen.add(stab)
        handles = [Line2D([], [], ls="none", ms=9, mec="#c62828", label=f"{k} ray of an invariant line", **marks[k])
                   for k in marks if k in seen]
        handles.append(Line2D([], [], color=ink, lw=0.8, label="flow on the sphere of directions"))
        ax.set_xlim(-np.pi, np.pi)
        ax.set_ylim(-1, 1)
        ax.set_xlabel("longitude phi of the direction xi")
        ax.set_ylabel("height z = xi_3")
    ax.grid(False)
    ax.set_title(title)
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False, ncol=1)
    return fig


def compare_figure(rows, title="", x="wall_time"):
    """Work-precision: final error against wall time (``x="wall_time"``) or right-hand-side evaluations
    (``x="nfev"``), one line per method with its own colour and marker; the legend right of the data."""
    fig, ax = plt.subplots(figsize=(3.9, 3.4))
    by = {}
    for r in rows:
        if r.get("error") is None or not np.isfinite(r["error"]) or r["error"] <= 0:
            continue
        by.setdefault(r["method"], []).append(r)
    for m, rs in by.items():
        st = method_style(m)
        rs = sorted((r for r in rs if (r.get(x) or 0) > 0), key=lambda r: r[x])
        if not rs:  # e.g. a splitting of exact flows counts no right-hand-side evaluations: not on a log axis
            ax.plot([], [], "-", color=st["color"], marker=st["marker"], label=f"{m} (none counted)")
            continue
        ax.loglog([r[x] for r in rs], [r["error"] for r in rs], "-", color=st["color"],
                  marker=st["marker"], ms=5, lw=1.2, label=m)
    ax.set_xlabel("wall time [s]" if x == "wall_time" else "right-hand-side evaluations")
    ax.set_ylabel("final error at t_end")
    ax.set_title(title)
    _legend_outside(ax)
    return fig


def rate_figure(verdicts):
    """Limit rates on log-log axes: the error of each N -> infinity relation against N (one colour and marker
    per relation), with the slope -1 the relation promises drawn through the first point. None without data."""
    vs = [v for v in verdicts if v.data and "N" in v.data]
    if not vs:
        return None
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    for k, v in enumerate(vs):
        N, err = np.asarray(v.data["N"], float), np.asarray(v.data["error"], float)
        c, mk = PALETTE[k % len(PALETTE)], MARKERS[k % len(MARKERS)]
        ax.loglog(N, err, "-", color=c, marker=mk, ms=6, lw=1.3,
                  label=f"{v.check} (fitted p = {v.data['p']:.3f})")
        ax.loglog(N, err[0] * N[0] / N, ":", color=c, lw=1)
    ax.plot([], [], ":", color="0.3", label="slope -1 (error ~ 1/N) through the first point")
    ax.set_xlabel("N (friction coefficient or added mass)")
    ax.set_ylabel("max difference from the limit")
    ax.set_title("limits N -> infinity: error against N")
    _legend_outside(ax, below=True)
    return fig


FAMILY_COLORS = {"rigid": "#8ecae6", "sleigh": "#ffb703", "coordinates": "#90be6d"}
FAMILY_ORDER = ("rigid", "sleigh", "coordinates")


def graph_layout(G, dx=2.6, dy=1.4, gap=0.8, max_width=14.0):
    """Deterministic positions: one block per family (rigid, sleigh, coordinates, others), side by side
    in bands no wider than ``max_width`` (a family that would pass it starts a new band below, so the
    figure fits a page's column with readable text); inside a block the nodes in layers by the longest
    chain of relations leading to them (sources on top), side by side in name order within a layer. No
    randomness: the same picture on every run. Returns (positions, [(family, x_left, x_right, y_top)])."""
    import networkx as nx

    fams = sorted({G.nodes[n].get("family", "other") for n in G},
                  key=lambda f: (FAMILY_ORDER.index(f) if f in FAMILY_ORDER else len(FAMILY_ORDER), f))
    pos, x0, y0, band_depth, blocks = {}, 0.0, 0.0, 0, []
    for fam in fams:
        nodes = sorted(n for n in G if G.nodes[n].get("family", "other") == fam)
        sub = G.subgraph(nodes)
        depth = {}
        order = list(nx.topological_sort(sub)) if nx.is_directed_acyclic_graph(sub) else nodes
        for n in order:
            depth[n] = max((depth.get(u, 0) + 1 for u in sub.predecessors(n) if u in depth), default=0)
        layers = {}
        for n in nodes:
            layers.setdefault(depth[n], []).append(n)
        width = max(len(v) for v in layers.values())
        if x0 > 0 and x0 + (width - 1) * dx > max_width:   # a new band, below the deepest layer of this one
            x0, y0, band_depth = 0.0, y0 - (band_depth + 1) * dy - 1.0, 0

        def place():
            for d, ns in layers.items():
                for k, n in enumerate(ns):
                    pos[n] = np.array([x0 + (k + (width - len(ns)) / 2.0) * dx, y0 - d * dy])

        place()
        # two sweeps of the barycenter heuristic (fewer crossings): a layer sorted by the mean x of the
        # neighbours already placed, ties by name
        for _ in range(2):
            for d in sorted(layers):
                nb = {n: [pos[u][0] for u in list(sub.predecessors(n)) + list(sub.successors(n))] for n in layers[d]}
                layers[d].sort(key=lambda n: (np.mean(nb[n]) if nb[n] else pos[n][0], n))
                place()
        blocks.append((fam, x0, x0 + (width - 1) * dx, y0))
        band_depth = max(band_depth, max(layers))
        x0 += width * dx + gap
    return pos, blocks


def _two_lines(name, width=18):
    """A long entry name broken at the underscore nearest its middle (``_on_`` preferred), so boxes stay narrow."""
    if len(name) <= width:
        return name
    if "_on_" in name:
        return name.replace("_on_", "\n_on_", 1)
    cuts = [i for i, ch in enumerate(name) if ch == "_" and 0 < i < len(name) - 1]
    if not cuts:
        return name
    i = min(cuts, key=lambda k: abs(k - len(name) / 2))
    return name[:i] + "\n" + name[i:]


def graph_figure(G):
    """The relation graph: entries as boxes grouped by family, an arrow u -> v per relation with the
    relation written on it (a white label at the middle of the arrow)."""
    if G.number_of_nodes() == 0:
        fig, ax = plt.subplots(figsize=(4, 2))
        ax.text(0.5, 0.5, "(no entries)", ha="center")
        ax.axis("off")
        return fig
    pos, blocks = graph_layout(G)
    xs = np.array([p[0] for p in pos.values()])
    ys = np.array([p[1] for p in pos.values()])
    fig, ax = plt.subplots(figsize=(max(6.0, 0.62 * (np.ptp(xs) + 3.0)), max(3.0, 0.95 * (np.ptp(ys) + 2.0))))
    boxes = {}
    for n, (x, y) in pos.items():
        fam = G.nodes[n].get("family", "other")
        boxes[n] = ax.text(x, y, _two_lines(n), ha="center", va="center",
                           fontsize=9, zorder=3,
                           bbox=dict(boxstyle="round,pad=0.35", fc=FAMILY_COLORS.get(fam, "#dddddd"), ec="0.3"))
    for u, v, d in sorted(G.edges(data=True), key=lambda e: (e[0], e[1])):
        (x1, y1), (x2, y2) = pos[u], pos[v]
        long_jump = abs(y2 - y1) > 1.5 * 1.4
        rad = 0.25 if long_jump else 0.0
        ax.annotate("", xy=(x2, y2), xytext=(x1, y1), zorder=1,
                    arrowprops=dict(arrowstyle="-|>", color="0.35", lw=1.1, mutation_scale=12,
                                    connectionstyle=f"arc3,rad={rad}", patchA=boxes[u], patchB=boxes[v],
                                    shrinkA=2, shrinkB=2))
        # the middle of the arc: the chord's midpoint moved by rad * chord length along the normal
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        nx_, ny_ = (y2 - y1), -(x2 - x1)
        mx, my = mx + rad * nx_ / 2.0, my + rad * ny_ / 2.0
        label = d.get("relation", "").replace("->", "\u2192").replace("infinity", "\u221e")
        ax.text(mx, my, label, fontsize=8.5, ha="center", va="center", zorder=2, color="0.15",
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.9))
    for fam, a, b, y_top in blocks:
        ax.text((a + b) / 2, y_top + 0.75, fam, ha="center", va="bottom", fontsize=10, weight="bold",
                color="0.25")
    top = max(y for *_, y in blocks) + 0.75
    ax.set_xlim(xs.min() - 1.6, xs.max() + 1.6)
    ax.set_ylim(ys.min() - 0.9, top + 0.6)
    ax.axis("off")
    fig.tight_layout()
    return fig
