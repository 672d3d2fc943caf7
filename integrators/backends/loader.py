"""Turning generated source text into callables: exec'd Python (modes "scalar": floats, "array": numpy
(B,) columns) or numba-jitted (mode "numba", :mod:`integrators.backends.numba_kernels`), cached per
(kind, structure, tableau, mode, projection)."""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from ..codegen.programs import source
from ..core.errors import MethodError
from ..reference import genhelpers
from . import generic_kernel, numba_kernels

_CACHE = {}


def _env(mode):
    return dict(genhelpers.ARRAY if mode == "array" else genhelpers.SCALAR, np=np, bisect_left=bisect_left)


def compile_function(kind, st, tab, lie, terms, mode, proj=None):
    """The generated function ``kind`` ("fixed", "adaptive", "adaptive_batch", "step", the adaptive loops
    with an output grid "adaptive_grid", "adaptive_batch_grid" and their evaluator "dense") for structure
    ``st`` and tableau ``tab`` in ``mode`` ("scalar": Python floats, "array": numpy (B,) columns, "numba": jitted,
    "generic": the adaptive loop of one trajectory by :mod:`integrators.backends.generic_kernel`, no compile;
    "adaptive_grid" the same loop with the output grid's arguments),
    cached per (structure, tableau, mode, projection); ``proj``: the Casimir projection of the adaptive
    loops of a projected pair (the one-step map "step" is the unprojected one)."""
    key = (kind, st.key, tab.name, lie, terms, mode, None if proj is None else proj.key)
    fn = _CACHE.get(key)
    if fn is None and mode == "generic":
        if kind not in ("adaptive", "adaptive_grid"):
            raise MethodError(f"the generic kernel runs the adaptive loop of one trajectory, not {kind!r}")
        fn = _CACHE[key] = generic_kernel.function(st, tab, lie, terms, proj)
    if fn is None:
        text = source(kind, st, tab, lie, terms, proj, mode)
        name = "run" if kind != "step" else "step"
        if mode == "numba":
            fn = numba_kernels.compile_cached(text, name, batch=kind.startswith("adaptive_batch"))
        else:
            env = _env(mode)
            exec(compile(text, f"<liedyn {kind} {tab.name} {mode}>", "exec"), env)
            fn = env[name]
        _CACHE[key] = fn
    return fn


