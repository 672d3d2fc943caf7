"""Figures of the catalog (matplotlib, Agg backend): motion, invariant drift, phase portraits, the pictures a
mechanician draws (the path with the blade along it, the heavy top's apex on the sphere, both points of
Talamucci's system), the integrator comparison, the limit rates and the relation graph. Every function
returns a Figure; :func:`save` writes it as SVG (text kept as text, at least :data:`MIN_FONT` pt).

Each figure is one panel with its legend outside the data (to the right or below); the report lays the
panels side by side. Methods keep one colour and one marker on every page (:func:`method_style`).

Where a figure goes: the style and :func:`save` in ``style``; one run's figures (state, drift, path,
trajectory, thumbnail) in ``motion``; a body on SO(3) (axes, orthogonality, apex, methods' drift) in
``body``; the phase portrait, the comparison and the limit rates in ``analysis``; the relation graph in
``graph``."""

from .analysis import compare_figure, phase_portrait_figure, rate_figure
from .body import apex_figure, drift_comparison_figure, orientation_figure, orthogonality_figure
from .graph import FAMILY_COLORS, FAMILY_ORDER, graph_figure, graph_layout
from .motion import (drift_figure, drift_panel, has_blade, has_drift, motion_figure, path_figure,
                     thumbnail_figure, trajectory_figure)
from .style import MARKERS, MIN_FONT, PALETTE, ROUNDOFF_FLOOR, STYLE, method_style, save

__all__ = ["MARKERS", "MIN_FONT", "PALETTE", "ROUNDOFF_FLOOR", "STYLE", "FAMILY_COLORS", "FAMILY_ORDER",
           "apex_figure", "compare_figure", "drift_comparison_figure", "drift_figure", "drift_panel",
           "graph_figure", "graph_layout", "has_blade", "has_drift", "motion_figure", "orientation_figure",
           "orthogonality_figure", "path_figure", "phase_portrait_figure", "rate_figure", "save",
           "thumbnail_figure", "trajectory_figure", "method_style"]
