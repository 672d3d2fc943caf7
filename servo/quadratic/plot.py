"""Phase portraits of x' = v(x), v homogeneous quadratic.

p = 2: streamlines of v in the plane with the real invariant lines (solid: c != 0, the arrow shows
the ray on which s' = c s^2 blows up in finite time; dashed: lines of equilibria).
p = 3: the flow on the sphere of directions, xi' = v(xi) - (xi . v(xi)) xi (time d tau = |x| dt),
in the Lambert cylindrical equal-area chart (longitude phi, height z = xi_3); the fixed points are
the real invariant lines +-xi, marked by their stability (filled: attracting, open: repelling,
x: saddle or degenerate).
"""
from __future__ import annotations

import numpy as np
from liegroups._lazy import lazy_module

from .line_types import InvariantLines
from .protocol import QuadraticField

__all__ = ["phase_portrait"]

_mpl_axes = lazy_module("matplotlib.axes")  # for the annotations only; loaded by get_type_hints

_MARK = {"attracting": dict(marker="o", mfc="k"), "repelling": dict(marker="o", mfc="w"),
         "saddle": dict(marker="x"), "degenerate": dict(marker="s", mfc="w")}


def _flip(stab):
    return {"attracting": "repelling", "repelling": "attracting"}.get(stab, stab)


def phase_portrait(q: QuadraticField, ax: _mpl_axes.Axes | None = None, lines: InvariantLines | None = None,
                   extent: float = 1.0, density: float = 1.2, title: str | None = None) -> _mpl_axes.Axes:
    """Draw the phase portrait of q on a matplotlib axis (created if None) and return the axis.

    lines: a precomputed InvariantLines (computed if None). Raises ValueError for p not in {2, 3}.
    """
    import matplotlib
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=(5, 5) if q.p == 2 else (8, 4))
    if q.p not in (2, 3):
        raise ValueError(f"phase_portrait draws p = 2 or p = 3 systems, got p = {q.p}")
    if not q.is_real:
        raise ValueError("phase_portrait needs a real system")
    lines = q.invariant_lines() if lines is None else lines
    if q.p == 2:
        g = np.linspace(-extent, extent, 41)
        X, Y = np.meshgrid(g, g)
        V = q.v(np.stack([X, Y], axis=-1))
        speed = np.linalg.norm(V, axis=-1)
        ax.streamplot(X, Y, V[..., 0], V[..., 1], color=np.log10(speed + 1e-12),
                      cmap="viridis", density=density, linewidth=0.7, arrowsize=0.8)
        for L in lines.real:
            d = L.direction * extent
            style = "--" if L.is_equilibrium_line else "-"
            ax.plot([-d[0], d[0]], [-d[1], d[1]], style, color="C3", lw=1.8,
                    label=("equilibria" if L.is_equilibrium_line else f"c = {L.c:.3g}"))
            if not L.is_equilibrium_line:
                ax.annotate("", xy=0.95 * d, xytext=0.6 * d,
                            arrowprops=dict(arrowstyle="->", color="C3", lw=1.8))
        ax.set_xlim(-extent, extent)
        ax.set_ylim(-extent, extent)
        ax.set_aspect("equal")
        ax.set_xlabel(q.variables[0])
        ax.set_ylabel(q.variables[1])
        if lines.real:
            ax.legend(loc="upper right", fontsize=7)
    else:
        phi = np.linspace(-np.pi, np.pi, 121)
        zz = np.linspace(-0.995, 0.995, 61)
        P, Z = np.meshgrid(phi, zz)
        r = np.sqrt(1 - Z ** 2)
        xi = np.stack([r * np.cos(P), r * np.sin(P), Z], axis=-1)
        v = q.v(xi)
        X = v - np.sum(xi * v, axis=-1, keepdims=True) * xi
        dz = X[..., 2]
        dphi = (xi[..., 0] * X[..., 1] - xi[..., 1] * X[..., 0]) / r ** 2
        ax.streamplot(P, Z, dphi, dz, color=np.log10(np.hypot(dphi * r, dz) + 1e-12),
                      cmap="viridis", density=density, linewidth=0.6, arrowsize=0.7)
        for L in lines.real:
            for sgn, stab in ((1, L.stability), (-1, _flip(L.stability))):
                d = sgn * L.direction
                kw = dict(_MARK.get(stab, _MARK["degenerate"]))
                ax.plot(np.arctan2(d[1], d[0]), d[2], ls="none", ms=8, mec="C3",
                        color="C3", **kw)
        ax.set_xlim(-np.pi, np.pi)
        ax.set_ylim(-1, 1)
        ax.set_xlabel("longitude phi")
        ax.set_ylabel("z = xi_3")
    ax.set_title(title or f"{lines.real_count} real invariant line(s) of {lines.total_multiplicity}")
    return ax
