"""The controls of the adaptive pairs (rtol, atol, first_step, max_step, checked once) and Hairer's
starting step (Hairer, Norsett and Wanner, *Solving ODEs I*, II.4, as scipy's solve_ivp takes it), for one
trajectory in Python floats or per row of an ensemble; the formula itself is
:func:`integrators.reference.genhelpers._hstart`, shared with the generated loops.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import IntegrationInputError
from ..reference.genhelpers import _hstart


#: the smallest rtol of the adaptive pairs (100 eps)
_MIN_RTOL = 100 * float(np.finfo(float).eps)


def check_controls(rtol, atol, first_step, max_step):
    """rtol, atol > 0 finite; first_step, max_step None or > 0 (IntegrationInputError otherwise)."""
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(v, (int, float, np.floating)) and math.isfinite(v) and v > 0):
            raise IntegrationInputError(f"{name} must be a positive finite number, got {v!r}")
    if rtol < _MIN_RTOL:
        raise IntegrationInputError(f"rtol must be at least 100 eps = {_MIN_RTOL:.1e}, got {rtol!r}")
    for name, v in (("first_step", first_step), ("max_step", max_step)):
        if v is not None and not (math.isfinite(v) and v > 0) and not (name == "max_step" and v == math.inf):
            raise IntegrationInputError(f"{name} must be a positive number, got {v!r}")


def _rms(x):
    """sqrt(mean(x_i^2)) over the last axis (one einsum: numpy's mean along a short contiguous axis of an
    ensemble's (B, n) rows costs ~10x more)."""
    return np.sqrt(np.einsum("...i,...i->...", x, x) / x.shape[-1])


def _initial_step_one(rhs, y0, t0, t1, order, rtol, atol, max_step):
    """Hairer's starting step for one trajectory y0 (dim,), in Python floats (two calls of rhs and no
    other numpy call): :func:`integrators.reference.genhelpers._hstart` (the formula, shared with the generated
    loop) with norms that do not overflow (math.hypot)."""
    direction = 1.0 if t1 > t0 else -1.0
    interval = abs(t1 - t0)
    ms = math.inf if max_step is None else max_step
    f0 = np.asarray(rhs(y0), dtype=float)
    ys, fs = y0.tolist(), f0.tolist()
    root = math.sqrt(len(ys))
    sc = [a + abs(v) * rtol for a, v in zip(atol.tolist(), ys)] if isinstance(atol, np.ndarray) else \
        [atol + abs(v) * rtol for v in ys]
    d0 = math.hypot(*[v / s for v, s in zip(ys, sc)]) / root
    d1 = math.hypot(*[f / s for f, s in zip(fs, sc)]) / root
    h0 = _hstart(0, d0, d1, 0.0, 0.0, order, interval, ms)
    if not d1 < math.inf:  # f(y0) is not finite: the controller fails at once
        return h0
    with np.errstate(all="ignore"):
        f1 = np.asarray(rhs(y0 + (h0 * direction) * f0), dtype=float).tolist()
    d2h = math.hypot(*[(b - a) / s for a, b, s in zip(fs, f1, sc)]) / root   # d2 * h0
    return _hstart(1, d0, d1, d2h, h0, order, interval, ms)


def initial_step(rhs, y0, t0, t1, order, rtol, atol, max_step, per_row=False):
    """Hairer's starting step (Hairer, Norsett, Wanner I, II.4, as scipy's solve_ivp takes it), the
    smallest over an ensemble (with ``per_row``, an array: each trajectory's own, as its single run
    would take):

        d0 = rms(y0 / sc), d1 = rms(f0 / sc), sc = atol + rtol |y0|, f0 = f(y0);
        h0 = 0.01 d0 / d1 (1e-6 when d0 or d1 < 1e-5);  d2 = rms((f(y0 + h0 f0) - f0) / sc) / h0;
        h1 = (0.01 / max(d1, d2))^(1 / (order + 1)) (max(1e-6, 1e-3 h0) when both <= 1e-15);
        h = min(100 h0, h1, |t1 - t0|, max_step).

    A step that comes out 0 or NaN (the derivative at y0 overflows) is replaced by 1e-300, from which
    the controller fails with status -1 instead of dividing by zero. One trajectory runs in Python
    floats (:func:`_initial_step_one`)."""
    if not per_row and y0.ndim == 1:
        return _initial_step_one(rhs, y0, t0, t1, order, rtol, atol, max_step)
    direction = 1.0 if t1 > t0 else -1.0
    interval = abs(t1 - t0)
    with np.errstate(all="ignore"):
        f0 = rhs(y0)
        scale = atol + np.abs(y0) * rtol
        d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
        h0 = np.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / np.where(d1 > 0, d1, 1.0))
        h0 = np.where(h0 > 0.0, h0, min(1e-300, interval))     # NaN and 0: see genhelpers._hstart
        h0 = h0 if per_row else float(np.min(h0))
        f1 = rhs(y0 + np.expand_dims(h0, -1) * direction * f0)
        d2 = _rms((f1 - f0) / scale) / h0 if per_row else float(np.max(_rms((f1 - f0) / scale))) / h0
        d1m = d1 if per_row else float(np.max(d1))
        h1 = np.where((d1m <= 1e-15) & (d2 <= 1e-15), np.maximum(1e-6, h0 * 1e-3),
                      (0.01 / np.maximum(d1m, d2)) ** (1.0 / (order + 1)))
        h = np.minimum(np.minimum(100 * h0, h1), interval)
        if max_step is not None:
            h = np.minimum(h, max_step)
        h = np.where(h > 0.0, h, min(1e-300, interval))
    return h if per_row else float(h)
