"""The Casimir projection of many points by compiled code (numba): the dense output of a projected pair on
the compiled path."""

from __future__ import annotations

import numpy as np

from . import numba_kernels


_PROJECTION_ROWS = {}


def compiled_projection(proj):
    """The Casimir projection's increment (z (..., n), targets (..., p) or (p,)) -> (..., n) by compiled code,
    a loop over the rows (:meth:`integrators.codegen.projection.CasimirProjection.rows_source`, numba);
    the numpy one (:meth:`~integrators.codegen.projection.CasimirProjection.increment`) is the reference."""
    fn = _PROJECTION_ROWS.get(proj.key)
    if fn is None:
        fn = _PROJECTION_ROWS[proj.key] = numba_kernels.compile_cached(proj.rows_source(), "rows")

    def increment(z, targets):
        z = np.asarray(z, dtype=float)
        Z = np.ascontiguousarray(z.reshape(-1, proj.n))
        C = np.ascontiguousarray(np.broadcast_to(np.asarray(targets, dtype=float), z.shape[:-1] + (proj.p,))
                                 .reshape(-1, proj.p))
        return fn(Z, C, np.empty_like(Z)).reshape(z.shape)

    return increment
