"""The catalog figures' style: fonts (at least :data:`MIN_FONT` pt), one colour and marker per method on
every page (:func:`method_style`), legends outside the data, the round-off floor line, and :func:`save`
(SVG with the text as text, no date)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import integrators  # noqa: E402

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


def legend_outside(ax, below=False, ncol=1, **kw):
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
    from ...verify.compare import DEFAULT_METHODS

    order = [m for m in DEFAULT_METHODS if m in integrators.METHODS]
    order += [m for m in integrators.METHODS if m not in order]
    k = order.index(name) if name in order else len(order) + sum(map(ord, name))
    return {"color": PALETTE[k % len(PALETTE)], "marker": MARKERS[k % len(MARKERS)]}


#: the round-off floor of the drift plots: one unit in the last place of a number of size 1 (drift and
#: residuals are relative to max(1, |F0|)); values below it, exact zeros included, are drawn on it
ROUNDOFF_FLOOR = float(np.finfo(float).eps)


def floor_line(ax):
    ax.axhline(ROUNDOFF_FLOOR, color="0.6", lw=0.8, ls="-.", label="round-off floor (machine epsilon)")
