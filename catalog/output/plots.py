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


def _drift_panel(ax, run, label_prefix=""):
    tiny = 1e-17
    any_line = False
    for k, v in run.invariants.items():
        v = np.asarray(v, float)
        d = np.abs(v - v[0]) / max(1.0, abs(v[0]))
        ax.semilogy(run.t, np.maximum(d, tiny), label=f"{label_prefix}{k}"[:40])
        any_line = True
    for k, r in run.constraints.items():
        ax.semilogy(run.t, np.maximum(np.abs(np.asarray(r, float)), tiny), "--", label=f"{label_prefix}{k}"[:40])
        any_line = True
    if run.outputs.get("exact") is not None:
        err = np.max(np.abs(run.y - run.outputs["exact"]), axis=-1)
        ax.semilogy(run.t, np.maximum(err, tiny), ":", color="k", label=f"{label_prefix}error vs exact")
        any_line = True
    if any_line:
        ax.legend(fontsize=6)
    ax.set_xlabel("t")
    ax.set_title("relative drift / residual / error", fontsize=9)


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
    ax.set_xlabel("t")
    ax.set_title(f"{entry.name} ({run.method})", fontsize=9)
    _drift_panel(axes[1], run)
    if run.outputs.get("path") is not None:
        ax = axes[2]
        ax.plot(run.outputs["path"][:, 0], run.outputs["path"][:, 1])
        ax.plot(run.outputs["path"][:1, 0], run.outputs["path"][:1, 1], "go", ms=4)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_title("path in the plane", fontsize=9)
    fig.tight_layout()
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
    ax2.semilogy(run.t, np.maximum(defect, 1e-17))
    ax2.set_xlabel("t")
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
    """The reduced system's phase portrait with its invariant lines (``q.phase_portrait``):
    streamlines for p = 2, the flow on the sphere of directions (a flat map) for p = 3."""
    fig, ax = plt.subplots(figsize=(4.4, 4.0) if q.p == 2 else (8, 4))
    q.phase_portrait(ax=ax)
    ax.set_title(title, fontsize=9)
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


def _component_grid_layout(G, ncol=3):
    """Each weakly connected component in its own cell of a grid (largest first), spring layout inside."""
    import networkx as nx

    comps = sorted(nx.weakly_connected_components(G), key=lambda c: (-len(c), sorted(c)))
    pos = {}
    for k, comp in enumerate(comps):
        sub = G.subgraph(comp)
        inner = nx.kamada_kawai_layout(sub.to_undirected()) if len(comp) > 1 else {next(iter(comp)): np.zeros(2)}
        pts = np.array(list(inner.values()))
        span = max(float(np.ptp(pts, axis=0).max()), 1e-9) if len(comp) > 1 else 1.0
        cx, cy = k % ncol, -(k // ncol)
        for n, p in inner.items():
            pos[n] = np.array([cx, cy]) + 0.6 * (p - pts.mean(0)) / span
    return pos


def graph_figure(G):
    """The relation graph: nodes are entries, edges labelled by their relation."""
    import networkx as nx

    fig, ax = plt.subplots(figsize=(11, 7.5))
    if G.number_of_nodes() == 0:
        ax.text(0.5, 0.5, "(no entries)", ha="center")
        ax.axis("off")
        return fig
    pos = _component_grid_layout(G)
    colors = {"rigid": "#8ecae6", "sleigh": "#ffb703", "coordinates": "#90be6d"}
    nx.draw_networkx_nodes(G, pos, ax=ax, node_size=500,
                           node_color=[colors.get(G.nodes[n].get("family"), "#ddd") for n in G])
    nx.draw_networkx_labels(G, pos, ax=ax, font_size=7)
    nx.draw_networkx_edges(G, pos, ax=ax, arrows=True, arrowsize=14, node_size=500)
    nx.draw_networkx_edge_labels(G, pos, ax=ax, font_size=7,
                                 edge_labels={(u, v): d["relation"] for u, v, d in G.edges(data=True)})
    ax.axis("off")
    fig.tight_layout()
    return fig
