"""The step grid of the fixed-step methods (also the output grid of the scipy adapters and the adaptive pairs)."""

from __future__ import annotations

import math

import numpy as np

from .errors import IntegrationInputError
from .validation import positive, step_count

#: number of steps used when neither h nor steps is given to a fixed-step method
DEFAULT_STEPS = 1000


def step_grid(t0, t1, h, steps):
    """(n, h) with n steps of size h = (t1 - t0)/n covering [t0, t1] exactly: n = steps, else
    ceil(|t1 - t0| / h) (h rounded down to fit), else DEFAULT_STEPS. Raises IntegrationInputError
    for a non-positive or non-integer ``steps`` or a non-positive or infinite ``h`` (n may be huge
    for a tiny h: the caller checks the output size and the step budget)."""
    T = t1 - t0
    if steps is not None:
        n = step_count(steps)
    elif h is not None:
        h = positive(h, "h", noun="step")
        q = abs(T) / h
        if not math.isfinite(q) or q > 1e15:
            raise IntegrationInputError(f"h = {h!r} is too small for a time span of length {abs(T):.6g} "
                                        f"({q:.3g} steps); take a larger h")
        n = max(1, math.ceil(q - 1e-9))
    else:
        n = DEFAULT_STEPS
    return n, T / n


def output_grid(t0, t1, h, steps, save_every):
    """Every save_every-th point of the grid of h / steps (:func:`step_grid`) on
    [t0, t1], t1 always included: the output times of a scipy or adaptive run given h or steps."""
    n, hh = step_grid(t0, t1, h, steps)
    idx = np.arange(0, n + 1, save_every)
    if idx[-1] != n:
        idx = np.append(idx, n)
    te = t0 + idx * hh
    te[-1] = t1
    return te
