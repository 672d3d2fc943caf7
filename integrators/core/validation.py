"""Input validation of the public entries of ``integrators`` (one place): real finite arrays, step
counts, steps, tolerances, budgets and the size of the output, each failure an
:class:`IntegrationInputError` (a ValueError) naming the argument and the problem."""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

from .errors import IntegrationInputError

#: the largest output (bytes) integrate allocates: a quarter of the physical memory, at most 16 GiB
def _memory_limit():
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        phys = 8 << 30
    return int(min(16 << 30, phys // 4))


MAX_OUTPUT_BYTES = _memory_limit()
#: the most steps a fixed-step run takes (a run of 10^9 steps takes hours; split it or use save_every)
MAX_STEPS = 10**9
#: defaults of the budget of the scipy adapters (accepted steps, wall-clock seconds)
SCIPY_MAX_STEPS = 10**6
SCIPY_MAX_WALL_TIME = 120.0


def real_array(x, what, dtype=float):
    """x as a float array; IntegrationInputError for complex, boolean-free non-numeric (sympy, str,
    object) input, naming ``what``."""
    if type(x) is np.ndarray and x.dtype.kind == "f":   # the common case, without the checks below
        return np.array(x, dtype=dtype)
    if isinstance(x, (str, bytes)):
        raise IntegrationInputError(f"{what} must be a real numeric array, got the string {x!r:.60}")
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise IntegrationInputError(f"{what} must be a real numeric array, got {x!r:.80} ({exc})") from None
    if np.iscomplexobj(raw):
        bad = np.argwhere(np.imag(raw) != 0)
        where = f" (entry {tuple(int(v) for v in bad[0])} is {raw[tuple(bad[0])]})" if bad.size else ""
        raise IntegrationInputError(f"{what} must be real, got a complex array{where}")
    if raw.dtype == object or raw.dtype.kind in "USV":
        for v in raw.ravel():
            if isinstance(v, complex) or (hasattr(v, "is_real") and getattr(v, "is_real") is False):
                raise IntegrationInputError(f"{what} must be real, got the entry {v!r}")
            if not isinstance(v, (numbers.Real, np.number)) and not hasattr(v, "__float__"):
                raise IntegrationInputError(f"{what} must be a real numeric array, got the entry {v!r:.60} "
                                            f"({type(v).__name__})")
    try:
        return np.array(raw, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise IntegrationInputError(f"{what} must be a real numeric array: {exc}") from None


def finite_array(x, what):
    """real_array with every entry finite (the first non-finite entry named)."""
    arr = real_array(x, what)
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        raise IntegrationInputError(f"{what} must be finite: entry {tuple(int(v) for v in bad[0])} is "
                                    f"{arr[tuple(bad[0])]} ({len(bad)} non-finite entries)")
    return arr


def step_count(steps, what="steps"):
    """A positive integer step count (int or an integral float); refuses bool, 1.5, inf, nan, strings."""
    if type(steps) is int and steps >= 1:
        return steps
    if isinstance(steps, (bool, np.bool_)) or not isinstance(steps, (numbers.Real, np.number)):
        raise IntegrationInputError(f"{what} must be a positive integer, got {steps!r} ({type(steps).__name__})")
    f = float(steps)
    if not math.isfinite(f) or f < 1 or f != math.floor(f):
        raise IntegrationInputError(f"{what} must be a positive integer, got {steps!r}")
    return int(steps)


def step_budget(n):
    """Refuse more than MAX_STEPS fixed steps (after the output size was checked)."""
    if n > MAX_STEPS:
        raise IntegrationInputError(f"{n:.3g} steps is more than {MAX_STEPS:.0e} (hours of work); take a larger h "
                                    f"or fewer steps, or integrate in pieces")
    return n


def positive(value, what, allow_inf=False, noun="number"):
    """A positive finite real number (bool, complex, NaN, strings refused)."""
    if type(value) is float and 0.0 < value < math.inf:
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.number)):
        raise IntegrationInputError(f"{what} must be a positive finite {noun}, got {value!r} ({type(value).__name__})")
    v = float(value)
    if not (v > 0 and (math.isfinite(v) or (allow_inf and v == math.inf))):
        raise IntegrationInputError(f"{what} must be a positive finite {noun}, got {value!r}")
    return v


def tolerances(rtol, atol):
    """rtol and atol: positive finite numbers (atol may also be an array of them)."""
    r = positive(rtol, "rtol")
    if type(atol) is float or np.ndim(atol) == 0:
        return r, positive(atol, "atol")
    a = finite_array(atol, "atol")
    if np.any(a <= 0):
        raise IntegrationInputError(f"atol must be positive, got {a}")
    return r, a


def output_size(K, y0, what="the output"):
    """Refuse an output of K saved states of y0's shape larger than MAX_OUTPUT_BYTES (before allocating),
    suggesting the save_every that fits."""
    per = max(1, int(np.size(y0))) * 8
    need = K * per
    if need > MAX_OUTPUT_BYTES:
        fit = max(1, MAX_OUTPUT_BYTES // per)
        raise IntegrationInputError(
            f"{what} would hold {K:.3g} saved states of {np.size(y0)} numbers ({need / 2**30:.3g} GiB), more "
            f"than the limit of {MAX_OUTPUT_BYTES / 2**30:.3g} GiB; pass save_every >= {math.ceil(K / fit)} "
            f"(or fewer steps; a run takes at most {MAX_STEPS:.0e} steps)")
    return need


def velocity_matrix(problem, z):
    """A declared ``problem.velocity_matrix`` W must give the velocity: velocity(z) = W z at the initial
    state z (..., n) to 1e-12 relative; IntegrationInputError naming the mismatch otherwise (the
    generated code and McLachlan's splitting are written from W)."""
    W = problem.velocity_matrix
    w = np.asarray(problem.velocity(z), dtype=float)
    Wz = np.asarray(z, dtype=float) @ W.T
    err = float(np.max(np.abs(w - Wz)))
    if not err <= 1e-12 * max(1.0, float(np.max(np.abs(Wz)))):
        raise IntegrationInputError(f"velocity_matrix W does not match velocity(z): max |velocity(z) - W z| = "
                                    f"{err:.3e} at the initial state (convention w_i = sum_j W[i, j] z_j)")
