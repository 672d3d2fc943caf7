"""Compensated summation of a run's increments, written once for the numpy loops (Kahan 1965; Hairer,
McLachlan and Razakarivony 2008): the state is y + e with e the rounding error carried from step to step,

    u = d + e,   y' = y + u,   e' = (y - y') + u,

so the round-off drift of the invariants grows like eps h sqrt(N) rather than eps sqrt(N). The code writers
emit the same three lines (:func:`integrators.codegen.step_source.kahan`).
"""

from __future__ import annotations


def compensated_add(y, e, d):
    """(y', e') after adding the increment d to the state y + e (arrays or floats)."""
    u = d + e
    s = y + u
    return s, (y - s) + u
