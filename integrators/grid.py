"""The step grid of the fixed-step methods (also the output grid of the scipy adapters)."""

from __future__ import annotations

import math

from .errors import IntegrationInputError

#: number of steps used when neither h nor steps is given to a fixed-step method
DEFAULT_STEPS = 1000


def step_grid(t0, t1, h, steps):
    """(n, h) with n steps of size h = (t1 - t0)/n covering [t0, t1] exactly: n = steps, else
    ceil(|t1 - t0| / h) (h rounded down to fit), else DEFAULT_STEPS. Raises IntegrationInputError
    for a non-positive or non-integer ``steps`` or a non-positive or infinite ``h``."""
    T = t1 - t0
    if steps is not None:
        n = int(steps)
        if n < 1 or n != steps:
            raise IntegrationInputError(f"steps must be a positive integer, got {steps!r}")
    elif h is not None:
        if not (h > 0 and math.isfinite(h)):
            raise IntegrationInputError(f"h must be a positive finite step, got {h!r}")
        n = max(1, math.ceil(abs(T) / h - 1e-9))
    else:
        n = DEFAULT_STEPS
    return n, T / n
