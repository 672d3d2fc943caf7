"""Helper functions called by the generated code of :mod:`integrators.codegen`, one version per mode:
Python floats (also jitted by numba) and numpy arrays (an ensemble's columns).

* co2(t2) = (a, b), co3(t2) = (a, b, c): a = sin t / t, b = (1 - cos t)/t^2 = 2 sin^2(t/2)/t^2 (no
  cancellation), c = (t - sin t)/t^3 (series below t^2 = 1e-2), given t^2 (Rodrigues' coefficients,
  Murray, Li and Sastry 1994, 2.2 and 2.4);
* tplan(bound) = (s, m): substeps and terms of the Taylor action of the exponential;
* fin, mx, bmax, grow: finiteness test, max of two values, max over an ensemble (NaN -> inf),
  doubling of the output arrays.
"""

from __future__ import annotations

import math

import numpy as np

def _co2_float(t2):
    if not t2 < 1e300:
        return math.nan, math.nan
    if t2 < 1e-8:
        return 1.0 - t2 / 6.0 + t2 * t2 / 120.0, 0.5 - t2 / 24.0 + t2 * t2 / 720.0
    t = math.sqrt(t2)
    s = math.sin(0.5 * t) / (0.5 * t)
    return math.sin(t) / t, 0.5 * s * s


def _c_series(t2):
    # c = (t - sin t)/t^3 = 1/6 - t^2/120 + t^4/5040 - t^6/362880 + t^8/39916800
    return 1.0 / 6.0 - t2 * (1.0 / 120.0 - t2 * (1.0 / 5040.0 - t2 * (1.0 / 362880.0 - t2 / 39916800.0)))


def _co3_float(t2):
    if not t2 < 1e300:
        return math.nan, math.nan, math.nan
    if t2 < 1e-2:  # the series of a, b, c = (t - sin t)/t^3 (truncation < 1e-20)
        a = 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0 * (1.0 - t2 / 110.0))))
        b = 0.5 - t2 / 24.0 * (1.0 - t2 / 30.0 * (1.0 - t2 / 56.0 * (1.0 - t2 / 90.0 * (1.0 - t2 / 132.0))))
        c = 1.0 / 6.0 - t2 * (1.0 / 120.0 - t2 * (1.0 / 5040.0 - t2 * (1.0 / 362880.0 - t2 / 39916800.0)))
        return a, b, c
    t = math.sqrt(t2)
    s = math.sin(0.5 * t) / (0.5 * t)
    a = math.sin(t) / t
    return a, 0.5 * s * s, (1.0 - a) / t2


def _co2_array(t2):
    t = np.maximum(np.sqrt(t2), 1e-150)
    s = np.sin(0.5 * t)
    st = s / t
    return 2.0 * np.cos(0.5 * t) * st, 2.0 * st * st


def _co3_array(t2):
    a, b = _co2_array(t2)
    small = t2 < 1e-2
    return a, b, np.where(small, _c_series(t2), (1.0 - a) / np.where(small, 1.0, t2))


def _tplan_float(bound):
    """(s, m, bad): s substeps with r = bound / s <= 1/2 and the fewest terms m with
    e^r r^(m+1) / (m+1)! <= 2^-54 (at most 30); bad = 0.0, or NaN (with s = m = 1) when the bound is
    not finite or above 1e5 (an exponential of that size is overflow, not a step)."""
    if not bound <= 1e5:
        return 1, 1, math.nan
    s = 1
    if bound > 0.5:
        s = int(math.ceil(bound / 0.5))
    r = bound / s
    tail = 1.65 * r  # e^r r^(m+1)/(m+1)! for m = 0, with e^r <= 1.65
    m = 0
    while tail > 5.551115123125783e-17 and m < 30:
        m += 1
        tail = tail * r / (m + 1)
    return s, max(m, 1), 0.0


def _tplan_array(bound):
    b = float(np.max(bound)) if np.size(bound) else 0.0
    return _tplan_float(b)


def _fin_float(x):
    return x - x == 0.0


def _fin_array(x):
    return True  # ensembles: the caller checks the saved states


def _mx_float(a, b):
    return a if a > b else b


def _bmax_array(x):
    m = np.max(x)
    return float(m) if m == m else math.inf


def _bmax_float(x):
    return x if x == x else math.inf


def _grow(ts, ys):
    t2 = np.empty(2 * ts.shape[0])
    t2[:ts.shape[0]] = ts
    y2 = np.empty((2 * ys.shape[0],) + ys.shape[1:])
    y2[:ys.shape[0]] = ys
    return t2, y2


def _grow2(ts, ys):
    t2 = np.empty(2 * ts.shape[0])
    t2[:ts.shape[0]] = ts
    y2 = np.empty((2 * ys.shape[0], ys.shape[1]))
    y2[:ys.shape[0]] = ys
    return t2, y2


def _grow3(ts, ys):
    t2 = np.empty(2 * ts.shape[0])
    t2[:ts.shape[0]] = ts
    y2 = np.empty((2 * ys.shape[0], ys.shape[1], ys.shape[2]))
    y2[:ys.shape[0]] = ys
    return t2, y2


#: per mode: the names the generated code calls
SCALAR = {"co2": _co2_float, "co3": _co3_float, "tplan": _tplan_float, "fin": _fin_float, "mx": _mx_float,
          "bmax": _bmax_float, "sqrt": math.sqrt, "grow": _grow}
ARRAY = {"co2": _co2_array, "co3": _co3_array, "tplan": _tplan_array, "fin": _fin_array, "mx": np.maximum,
         "bmax": _bmax_array, "sqrt": np.sqrt, "grow": _grow, "abs": np.abs}
