"""The optional compiled path: numba (extra ``liedyn[fast]``) jits the code of :mod:`integrators.codegen`.

Nothing here is imported unless the "numba" backend is used; without numba, :func:`require` raises
MethodError naming the backends that apply. Compilation happens once per problem structure and
method in a process (the generated source is not on disk, so numba's file cache cannot keep it).
"""

from __future__ import annotations

import importlib.util

import numpy as np

from .errors import MethodError

_JITTED = {}


def available():
    """True when numba can be imported."""
    return importlib.util.find_spec("numba") is not None


def require(what="the numba backend"):
    """Import numba or raise MethodError naming what applies instead."""
    if not available():
        raise MethodError(f"{what} needs numba, which is not installed (pip install 'liedyn[fast]'); "
                          f"backends that apply: 'numpy' (or 'auto', which picks numpy without numba)")
    import numba

    return numba


def jit(fn):
    """numba.njit(fn) (no parallelism: the machine's cores belong to the caller's processes)."""
    numba = require()
    return numba.njit(fn, cache=False, fastmath=False, error_model="numpy")


def _grow2(ts, ys):
    t2 = np.empty(2 * ts.shape[0])
    t2[:ts.shape[0]] = ts
    y2 = np.empty((2 * ys.shape[0], ys.shape[1]))
    y2[:ys.shape[0]] = ys
    return t2, y2


def jit_env(env):
    """The helpers of a scalar-mode environment, jitted (cached: they do not depend on the problem)."""
    if not _JITTED:
        for name in ("co2", "co3", "tplan", "fin", "mx", "bmax"):
            _JITTED[name] = jit(env[name])
        _JITTED["grow"] = jit(_grow2)
    out = dict(env)
    out.update(_JITTED)
    return out
