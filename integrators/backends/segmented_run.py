"""The generated adaptive loop of a plan (:mod:`integrators.backends.fastpath`) as a run that advances by
segments of accepted steps, carrying its own state from call to call (for the events of
:mod:`integrators.engine.segments`)."""

from __future__ import annotations

import math

import numpy as np

from .output_grid import OutputGrid


class AdaptiveRun:
    """The generated adaptive loop of a plan as a run that advances by segments: :meth:`advance` takes at
    most ``budget`` more accepted steps and returns them, the loop's own state (t, the proposed h, z and
    the compensation e) carried from call to call, so the segments together are the unsegmented run to
    round-off (the first stage of a segment is recomputed from z). Every accepted step is returned
    (save_every 1). One trajectory (y0 (dim,)) runs the scalar or numba loop, an ensemble the numpy
    columns or the compiled batch loop with one step sequence. The engine's event location drives it
    (a terminal event ends the run in the segment where it happens)."""

    def __init__(self, pl, y0, t0, t1, h0, rtol, atol, max_step, backend, t_eval=None):
        self.pl, self.shape, self.t1 = pl, y0.shape, float(t1)
        self.args = (float(rtol), float(atol), math.inf if max_step is None else float(max_step))
        self.mode = "numba" if backend == "numba" else ("scalar" if y0.ndim == 1 else "array")
        self.t, self.h = float(t0), float(h0)
        dim = pl.st.n
        if y0.ndim == 1:
            self.z, self.e = [float(v) for v in y0], [0.0] * dim
            self.cz = pl.targets(y0).tolist()
            self.kind = "adaptive"
        else:
            flat = y0.reshape(-1, dim)
            self.cz = np.ascontiguousarray(pl.targets(flat))
            # the trajectories the ensemble lost (integrators.engine.freeze): alive, their time, their state
            self.alive, self.t_end = np.ones(flat.shape[0], np.bool_), np.full(flat.shape[0], float(t0))
            if self.mode == "numba":
                # a copy: the compiled loop updates Z in place, and the caller keeps y0 as its first row
                self.Z, self.E = np.array(flat, dtype=float, order="C"), np.zeros_like(flat, dtype=float)
                self.FZ = np.zeros_like(self.Z)
                self.kind = "adaptive_batch"
            else:
                self.z = [np.ascontiguousarray(flat[:, i]) for i in range(dim)]
                self.e = [np.zeros_like(c) for c in self.z]
                self.cz = [np.ascontiguousarray(v) for v in np.moveaxis(self.cz, -1, 0)]
                self.FZ = np.zeros((dim, flat.shape[0]))
                self.kind = "adaptive"
        # t_eval: the loop fills the output grid from its continuous extension (integrators.codegen.dense_source)
        self.grid = None
        if t_eval is not None:
            G, B = len(t_eval), y0.size // dim
            flat = y0.reshape(-1, dim)
            targets = pl.targets(y0 if y0.ndim == 1 else flat)
            if y0.ndim == 1:
                self.grid = OutputGrid(t_eval, (G, dim), pl, targets, t1 < t0)
                self.grid.start(t0, y0)
            elif self.mode == "numba":
                self.grid = OutputGrid(t_eval, (G, B, dim), pl, targets, t1 < t0)
                self.grid.start(t0, flat)
            else:
                self.grid = OutputGrid(t_eval, (G, dim, B), pl, targets, t1 < t0)
                self.grid.start(t0, flat.T)
            self.kind += "_grid"
        self.fn = pl.function(self.kind, "array" if self.mode == "array" else self.mode)
        self.nsteps = self.nrej = 0
        self.peak = (0.0, float(t0), 0.0)   # (zmax, tmax, hmax) of one trajectory's loop

    def state(self):
        """The current state z + e, of the shape of y0."""
        if self.kind.startswith("adaptive_batch"):
            return np.where(self.alive[:, None], self.Z + self.E, self.FZ).reshape(self.shape)
        if len(self.shape) == 1:
            return np.array(self.z) + np.array(self.e)
        zf = np.stack(self.z, -1) + np.stack(self.e, -1)
        return np.where(self.alive[:, None], zf, self.FZ.T).reshape(self.shape)

    def advance(self, budget):
        """At most ``budget`` accepted steps: (status, ts (k,), ys (k, ...)) with status 0 (reached t1),
        -1 (the step size collapsed) or -2 (the budget was spent; call again to continue)."""
        dim = self.pl.st.n
        cap = 64
        ts = np.empty(cap)
        more = () if self.grid is None else self.grid.args("array" if self.mode == "array" else self.mode)
        if self.kind.startswith("adaptive_batch"):
            ys = np.empty((cap,) + self.Z.shape)
            ts[0], ys[0] = self.t, self.Z + self.E
            out = self.fn(self.t, self.t1, self.h, *self.args, 1, int(budget), 0, ts, ys, self.Z, self.E,
                          *(() if self.pl.proj is None else (self.cz,)), self.alive, self.t_end, self.FZ, *more)
            status, self.t, self.h, ns, nr, j, ts, ys = out
            ys = ys[1:j].reshape((j - 1,) + self.shape)
        elif len(self.shape) == 1:
            ys = np.empty((cap, dim))
            ts[0] = self.t
            with np.errstate(all="ignore"):
                out = self.fn(self.t, self.t1, self.h, *self.args, 1, int(budget), 0, ts, ys, *self.z, *self.e,
                              *self.cz, *more)
            status, self.t, self.h, ns, nr, j, ts, ys = out[:8]
            self.z, self.e = list(out[8:8 + dim]), list(out[8 + dim:8 + 2 * dim])
            if out[-3] > self.peak[0]:
                self.peak = tuple(float(v) for v in out[-3:])
            ys = ys[1:j]
        else:
            ys = np.empty((cap, dim, self.z[0].shape[0]))
            ts[0] = self.t
            with np.errstate(all="ignore"):
                out = self.fn(self.t, self.t1, self.h, *self.args, 1, int(budget), 0, ts, ys, *self.z, *self.e,
                              *self.cz, self.alive, self.t_end, self.FZ, *more)
            status, self.t, self.h, ns, nr, j, ts, ys = out[:8]
            self.z, self.e = list(out[8:8 + dim]), list(out[8 + dim:])
            ys = ys[1:j].transpose(0, 2, 1).reshape((j - 1,) + self.shape)
        self.nsteps, self.nrej = self.nsteps + int(ns), self.nrej + int(nr)
        return int(status), np.asarray(ts[1:j], dtype=float), ys

    def grid_output(self):
        """(times, states) of the output grid filled so far (the states in the layout of y0), or None
        without t_eval."""
        if self.grid is None:
            return None
        k = self.grid.filled
        ye = self.grid.ye[:k]
        if len(self.shape) > 1 and self.mode != "numba":
            ye = ye.transpose(0, 2, 1)
        return self.grid.te[:k], ye.reshape((k,) + self.shape)
