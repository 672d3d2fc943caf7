"""Numerical checks of the relation-graph edges (:data:`catalog.graph.EDGES`).

Each check builds both entries, runs them, and returns a :class:`catalog.run.Verdict` whose value is
the measured discrepancy (or the measured convergence rate) and whose tolerance is what the
relation promises.
"""

from __future__ import annotations

import numpy as np

from .run import Verdict


def check_edge(u, v, data):
    """Run the check named in the edge data and return its :class:`Verdict`."""
    fn = globals().get(data["check"])
    if fn is None:
        raise ValueError(f"edge {u} -> {v}: no check function {data['check']!r} in catalog.relations")
    return fn()
