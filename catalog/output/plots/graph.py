"""The relation graph of the catalog's entries: a layered layout by family and its figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

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
