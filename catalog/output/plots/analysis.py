"""Figures of the analysis: the reduced system's phase portrait with its invariant lines, the integrator
comparison (work against precision) and the limit rates."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .style import MARKERS, PALETTE, legend_outside, method_style  # noqa: E402


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
    legend_outside(ax)
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
    legend_outside(ax, below=True)
    return fig
