"""The tumbling body as an animated SVG (SMIL ``<animate>``: no JavaScript, no network, one file).

The body is drawn as the box of its principal axes (eigenvectors of I, half-lengths proportional to
1/sqrt(I_k), the shape of the ellipsoid of inertia), with the body axes R e_k, the constraint axis a and the
control axis b (fixed in the body: R a, R b) and the angular velocity in space R w. Every element is a path
whose ``d`` is animated through the frames; the view is an orthographic projection from a fixed direction
(azimuth 35 deg, elevation 20 deg), the vertical axis up, time running once per ``seconds``.
"""

from __future__ import annotations

from html import escape

import numpy as np

#: the colours of the elements (the same as the report's figures)
COLORS = {"e1": "#0072B2", "e2": "#D55E00", "e3": "#009E73", "a": "#CC79A7", "b": "#E69F00", "w": "#000000",
          "box": "#555555"}


def _view(azimuth=35.0, elevation=20.0):
    """The 2 x 3 orthographic projection (screen right, screen up) of a viewer at the given angles."""
    az, el = np.radians(azimuth), np.radians(elevation)
    right = np.array([-np.sin(az), np.cos(az), 0.0])
    up = np.array([-np.sin(el) * np.cos(az), -np.sin(el) * np.sin(az), np.cos(el)])
    return np.stack([right, up])


def _box_edges(inertia):
    """The 12 edges (12, 2, 3) of the box of the principal axes, in the body frame."""
    k, V = np.linalg.eigh(np.asarray(inertia, float))
    half = 1.0 / np.sqrt(k)
    half = 0.55 * half / half.max()
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float) * half @ V.T
    edges = [(i, j) for i in range(8) for j in range(i + 1, 8) if bin(i ^ j).count("1") == 1]
    return np.array([[corners[i], corners[j]] for i, j in edges])


def tumbling_svg(R, t, inertia, w=None, a=None, b=None, title="", seconds=10.0, frames=90, size=420):
    """The SVG text of the animation: ``R`` (K, 3, 3) the attitude at the times ``t``, ``w`` (K, 3) the body
    angular velocity (drawn in space as R w, scaled to the longest), ``a``, ``b`` body-fixed covectors (one
    or several rows) or None. Raises ValueError for fewer than two attitudes."""
    R = np.asarray(R, float)
    if R.ndim != 3 or R.shape[0] < 2 or R.shape[1:] != (3, 3):
        raise ValueError(f"an animation needs at least two attitudes R (K, 3, 3), got shape {R.shape}")
    k = np.unique(np.linspace(0, len(R) - 1, min(frames, len(R))).round().astype(int))
    P = _view()
    scale = 0.42 * size
    cx, cy = size / 2, size / 2 + 10

    def pt(v):  # a point in space -> screen (y down)
        s = P @ v
        return f"{cx + scale * s[0]:.1f},{cy - scale * s[1]:.1f}"

    def seg_path(segs):  # segments (n, 2, 3) -> one path
        return " ".join(f"M{pt(p)}L{pt(q)}" for p, q in segs)

    elements = []  # (name, colour, width, [d per frame], dash)
    box = _box_edges(inertia)
    elements.append(("body (box of the principal axes)", COLORS["box"], 1.4,
                     [seg_path(box @ R[i].T) for i in k], ""))
    for j in range(3):
        e = np.zeros(3)
        e[j] = 0.8
        elements.append((f"body axis R e{j + 1}", COLORS[f"e{j + 1}"], 2.0,
                         [seg_path([(np.zeros(3), R[i] @ e)]) for i in k], ""))
    for name, vec, dash in (("a", a, "6 3"), ("b", b, "2 3")):
        if vec is None:
            continue
        rows = np.atleast_2d(np.asarray(vec, float))
        rows = 0.95 * rows / np.linalg.norm(rows, axis=1, keepdims=True)
        label = {"a": "constraint axis a (in the body)", "b": "control axis b (in the body)"}[name]
        elements.append((label, COLORS[name], 2.6, [seg_path([(np.zeros(3), R[i] @ r) for r in rows]) for i in k],
                         dash))
    if w is not None:
        w = np.asarray(w, float)
        ws = R @ w[..., None]
        ws = ws[..., 0] / (np.max(np.linalg.norm(w, axis=-1)) or 1.0)
        elements.append(("angular velocity R w (in space, scaled)", COLORS["w"], 2.4,
                         [seg_path([(np.zeros(3), ws[i])]) for i in k], ""))
    dur = f"{seconds:g}s"
    keytimes = ";".join(f"{x:.4f}" for x in (t[k] - t[k[0]]) / max(t[k[-1]] - t[k[0]], 1e-300))
    body = []
    for name, colour, width, ds, dash in elements:
        da = f" stroke-dasharray='{dash}'" if dash else ""
        body.append(f"<path d='{ds[0]}' stroke='{colour}' stroke-width='{width}' fill='none'"
                    f" stroke-linecap='round'{da}><title>{escape(name)}</title>"
                    f"<animate attributeName='d' dur='{dur}' repeatCount='indefinite' keyTimes='{keytimes}'"
                    f" values='{';'.join(ds)}'/></path>")
    # the clock: a bar that fills once per period, with t_end written beside it
    body.append(f"<rect x='20' y='{size + 8}' width='{size - 40}' height='6' fill='#e6e6e6'/>"
                f"<rect x='20' y='{size + 8}' width='0' height='6' fill='#0072B2'>"
                f"<animate attributeName='width' from='0' to='{size - 40}' dur='{dur}' repeatCount='indefinite'/>"
                "</rect>")
    legend_y = size + 36
    legend = [f"<text x='20' y='{size + 30}' font-size='13' font-family='sans-serif'>time 0 to {t[-1]:.3g} "
              f"(one loop in {seconds:g} s)</text>"]
    for i, (name, colour, width, _, dash) in enumerate(elements):
        y = legend_y + 20 * (i + 1)
        da = f" stroke-dasharray='{dash}'" if dash else ""
        legend.append(f"<line x1='20' y1='{y - 5}' x2='48' y2='{y - 5}' stroke='{colour}' stroke-width='{width}'{da}/>"
                      f"<text x='56' y='{y}' font-size='13' font-family='sans-serif'>{escape(name)}</text>")
    height = legend_y + 20 * (len(elements) + 1)
    head = (f"<?xml version='1.0' encoding='utf-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' width='{size}' "
            f"height='{height}' viewBox='0 0 {size} {height}'>"
            f"<title>{escape(title)}</title><rect width='100%' height='100%' fill='white'/>"
            f"<text x='{size / 2}' y='22' font-size='15' font-family='sans-serif' text-anchor='middle'>"
            f"{escape(title)}</text>")
    return head + "".join(body) + "".join(legend) + "</svg>\n"
