"""Figures of the catalog (matplotlib, Agg backend): motion, invariant drift, phase portraits, the
integrator comparison and the relation graph. Every function returns a Figure; :func:`save` writes it."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..verify.run import orientation  # noqa: E402


def save(fig, path, dpi=90):
    """Write ``fig`` to ``path`` (PNG) and close it."""
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path


#: the round-off floor of the drift plots: one unit in the last place of a number of size 1 (drift and
#: residuals are relative to max(1, |F0|)); values below it, exact zeros included, are drawn on it
ROUNDOFF_FLOOR = float(np.finfo(float).eps)


def _floor(ax):
    ax.axhline(ROUNDOFF_FLOOR, color="0.6", lw=0.8, ls="-.", label="round-off floor (machine epsilon)")


def _drift_panel(ax, run, label_prefix=""):
    """Relative drift of each integral, constraint residuals and the error against an exact solution,
    on a log scale; values below the round-off floor (exact zeros included) are drawn on the floor."""
    floor = ROUNDOFF_FLOOR
    any_line = False
    for k, v in run.invariants.items():
        v = np.asarray(v, float)
        d = np.abs(v - v[0]) / max(1.0, abs(v[0]))
        ax.semilogy(run.t, np.maximum(d, floor), label=f"{label_prefix}{k}"[:40])
        any_line = True
    for k, r in run.constraints.items():
        ax.semilogy(run.t, np.maximum(np.abs(np.asarray(r, float)), floor), "--", label=f"{label_prefix}{k}"[:40])
        any_line = True
    if run.outputs.get("exact") is not None:
        err = np.max(np.abs(run.y - run.outputs["exact"]), axis=-1)
        ax.semilogy(run.t, np.maximum(err, floor), ":", color="k", label=f"{label_prefix}error vs exact")
        any_line = True
    if not any_line:  # nothing to track: say so instead of drawing empty axes
        ax.text(0.5, 0.5, "no first integral, exact solution\nor constraint residual to track",
                ha="center", va="center", fontsize=8, transform=ax.transAxes)
        ax.set_axis_off()
        return
    _floor(ax)
    ax.legend(fontsize=6)
    ax.set_xlabel("time t [dimensionless]")
    ax.set_ylabel("relative drift, residual, error")
    ax.set_title("relative drift / residual / error", fontsize=9)


def _state_label(entry):
    """What the state components are, for the y axis of the motion plot."""
    if entry.kind == "lie-group":
        lam = ", multiplier lambda" if "lambda" in tuple(entry.labels) else ""
        return f"momenta m = I w (body frame){lam}"
    return "coordinates q and velocities q'"


def trajectory_figure(entry, run):
    """States against time, drift of the claimed integrals (log scale), and the path in the plane if any."""
    ncol = 3 if run.outputs.get("path") is not None else 2
    fig, axes = plt.subplots(1, ncol, figsize=(4.2 * ncol, 3.3))
    ax = axes[0]
    for i in range(run.y.shape[-1]):
        ax.plot(run.t, run.y[:, i], label=run.labels[i] if i < len(run.labels) else f"y{i + 1}")
    if run.outputs.get("exact") is not None:
        ax.plot(run.t, run.outputs["exact"], "k:", lw=0.8)
    ax.legend(fontsize=6, ncol=2)
    ax.set_xlabel("time t [dimensionless]")
    ax.set_ylabel(_state_label(entry))
    ax.set_title(f"{entry.name} ({run.method})", fontsize=9)
    _drift_panel(axes[1], run)
    if run.outputs.get("path") is not None:
        ax = axes[2]
        ax.plot(run.outputs["path"][:, 0], run.outputs["path"][:, 1])
        ax.plot(run.outputs["path"][:1, 0], run.outputs["path"][:1, 1], "go", ms=4)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("x [length]")
        ax.set_ylabel("y [length]")
        ax.set_title("path in the plane (green: start)", fontsize=9)
    fig.tight_layout()
    return fig


def thumbnail_figure(entry, run):
    """A small picture of the motion for the index: the path in the plane if there is one, else the
    state components against time."""
    fig, ax = plt.subplots(figsize=(2.4, 1.6))
    if run.outputs.get("path") is not None:
        ax.plot(run.outputs["path"][:, 0], run.outputs["path"][:, 1], lw=1)
        ax.plot(run.outputs["path"][:1, 0], run.outputs["path"][:1, 1], "go", ms=3)
        ax.set_aspect("equal", adjustable="datalim")
    else:
        ax.plot(run.t, run.y, lw=1)
    ax.tick_params(labelsize=5)
    fig.tight_layout(pad=0.2)
    return fig


def orientation_figure(entry, run):
    """Motion on the group SO(3): the tips of the body axes R e_1, R e_2, R e_3 on the unit sphere, and the
    orthogonality defect |R^T R - 1| along the run. None when the run is not on so(3)."""
    R = orientation(run)
    if R is None:
        return None
    fig = plt.figure(figsize=(8.4, 3.4))
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    for i in range(3):
        ax.plot(R[:, 0, i], R[:, 1, i], R[:, 2, i], lw=0.8, label=f"R e{i + 1}")
    ax.set_box_aspect((1, 1, 1))
    ax.legend(fontsize=6)
    ax.set_title(f"{entry.name}: body axes in space", fontsize=9)
    ax2 = fig.add_subplot(1, 2, 2)
    defect = np.linalg.norm(np.swapaxes(R, -1, -2) @ R - np.eye(3), axis=(-2, -1))
    ax2.semilogy(run.t, np.maximum(defect, ROUNDOFF_FLOOR))
    _floor(ax2)
    ax2.legend(fontsize=6)
    ax2.set_xlabel("time t [dimensionless]")
    ax2.set_ylabel("|R^T R - 1| (Frobenius)")
    ax2.set_title("|R^T R - 1| (reconstruction g' = g w)", fontsize=9)
    fig.tight_layout()
    return fig


def drift_comparison_figure(entry, runs):
    """Invariant drift of several runs (e.g. a Lie-Poisson method next to scipy's DOP853) side by side."""
    fig, axes = plt.subplots(1, len(runs), figsize=(4.2 * len(runs), 3.2), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, run in zip(axes, runs):
        _drift_panel(ax, run)
        ax.set_title(f"{run.method}: drift ({run.wall_time:.2f} s)", fontsize=9)
    fig.tight_layout()
    return fig


def phase_portrait_figure(q, title=""):
    """The reduced system's phase portrait with its invariant lines (``q.phase_portrait``): streamlines
    for p = 2, the flow on the sphere of directions (a flat map) for p = 3, with a legend of the markers
    (the stability of each ray of an invariant line). None when the field vanishes identically (every
    state is an equilibrium: there is nothing to draw)."""
    from matplotlib.lines import Line2D

    from servo.quadratic.plot import _MARK

    if not np.any(np.abs(np.asarray(q.Q, float)) > 0):
        return None
    fig, ax = plt.subplots(figsize=(4.4, 4.0) if q.p == 2 else (8, 4))
    q.phase_portrait(ax=ax)
    ax.set_title(title, fontsize=9)
    if q.p == 3:
        handles = [Line2D([], [], ls="none", ms=7, mec="C3", color="C3", label=f"{k} ray", **kw)
                   for k, kw in _MARK.items()]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
                  title="invariant line, ray +/- xi", title_fontsize=7)
    return fig


def compare_figure(rows, title=""):
    """Work-precision: final error against wall time and against evaluations, one point per method and step."""
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.3))
    by = {}
    for r in rows:
        if r.get("error") is None or not np.isfinite(r["error"]) or r["error"] <= 0:
            continue
        by.setdefault(r["method"], []).append(r)
    for m, rs in by.items():
        rs = sorted(rs, key=lambda r: r["wall_time"])
        axes[0].loglog([r["wall_time"] for r in rs], [r["error"] for r in rs], "o-", ms=3, label=m)
        axes[1].loglog([max(r["nfev"], 1) for r in rs], [r["error"] for r in rs], "o-", ms=3, label=m)
    axes[0].set_xlabel("wall time [s]")
    axes[1].set_xlabel("right-hand-side evaluations")
    for ax in axes:
        ax.set_ylabel("final error")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=6)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


FAMILY_COLORS = {"rigid": "#8ecae6", "sleigh": "#ffb703", "coordinates": "#90be6d"}
FAMILY_ORDER = ("rigid", "sleigh", "coordinates")


def graph_layout(G, dx=2.6, dy=1.4, gap=0.8):
    """Deterministic positions: one column block per family (rigid, sleigh, coordinates, others), inside
    a block the nodes in layers by the longest chain of relations leading to them (sources on top),
    side by side in name order within a layer. No randomness: the same picture on every run."""
    import networkx as nx

    fams = sorted({G.nodes[n].get("family", "other") for n in G},
                  key=lambda f: (FAMILY_ORDER.index(f) if f in FAMILY_ORDER else len(FAMILY_ORDER), f))
    pos, x0, blocks = {}, 0.0, []
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

        def place():
            for d, ns in layers.items():
                for k, n in enumerate(ns):
                    pos[n] = np.array([x0 + (k + (width - len(ns)) / 2.0) * dx, -d * dy])

        place()
        # two sweeps of the barycenter heuristic (fewer crossings): a layer sorted by the mean x of the
        # neighbours already placed, ties by name
        for _ in range(2):
            for d in sorted(layers):
                nb = {n: [pos[u][0] for u in list(sub.predecessors(n)) + list(sub.successors(n))] for n in layers[d]}
                layers[d].sort(key=lambda n: (np.mean(nb[n]) if nb[n] else pos[n][0], n))
                place()
        blocks.append((fam, x0, x0 + (width - 1) * dx))
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
    top = ys.max() + 1.0
    for fam, a, b in blocks:
        ax.text((a + b) / 2, top, fam, ha="center", va="bottom", fontsize=10, weight="bold",
                color="0.25")
    ax.set_xlim(xs.min() - 1.6, xs.max() + 1.6)
    ax.set_ylim(ys.min() - 0.9, top + 0.6)
    ax.axis("off")
    fig.tight_layout()
    return fig
