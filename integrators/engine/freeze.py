"""Shared-step ensembles that lose a trajectory: it freezes alone, the others go on (the numpy reference
of the rule the generated loops follow, :func:`integrators.codegen.programs.adaptive_source`).

In an ensemble that shares one step sequence (``ensemble="shared"``: the largest error of the
trajectories decides the step, Hairer, Norsett and Wanner I, II.4) a trajectory is *lost* when

* an accepted step leaves its state not finite (it is frozen at the state before that step), or
* its own error estimate asks for a next step below 10 eps |t| (or 1e-300): with err_b its error
  norm of the attempt, its demand is q_b = h fac(err_b), fac the controller's factor
  (min(10, 0.9 err^(-1/(k+1))) when err <= 1, max(0.2, 0.9 err^(-1/(k+1))) otherwise, 0.2 for a NaN),
  and a trajectory with q_b < 10 eps |t| is frozen at its state after the attempt.

The shared next step is the smallest demand, h min_b fac(err_b) = h fac(max_b err_b) (fac is
monotone), so this is the step-size collapse that ends a single run ("the step size fell below 10 eps
|t|"), applied to the trajectory that causes it: its time is its single run's failure time (to the
resolution 10 eps |t| of the time axis). A frozen trajectory leaves the error norm and the step
sequence; the others continue with the smallest demand among themselves. Its later saved rows repeat
its last finite state; ``t_end`` says when it stopped (:mod:`integrators.core.lost`).

Fixed steps (:func:`integrators.engine.driver._fixed_step`, :func:`integrators.backends.fastpath.run_fixed`)
have only the first rule: a trajectory whose step is not finite is frozen at the state before it.

This module holds the numpy bookkeeping of :func:`integrators.engine.reference_run.reference_loop` and of
the fixed-step numpy loop (frozen rows are fed their initial state, which is finite, and their results
are discarded). The generated loops park a lost trajectory at z = 0 instead, where every recognised
field vanishes (:func:`integrators.codegen.programs.adaptive_source`).
"""

from __future__ import annotations

import numpy as np

from ..reference import genhelpers


def factors(errs, order):
    """The controller's step factor for each error norm (module docstring), an array like errs."""
    return genhelpers._sfac_array(errs, -1.0 / (order + 1))


def floor(t):
    """The smallest step at time t: below it the step size has collapsed (10 eps |t|, at least 1e-300)."""
    return max(10.0 * 2.2e-16 * abs(t), 1e-300)


class Freezer:
    """The alive rows of a flat ensemble (B, n), when and where each lost one stopped."""

    def __init__(self, y0, t0):
        self.y0 = y0.reshape(-1, y0.shape[-1])
        B = self.y0.shape[0]
        self.alive = np.ones(B, dtype=bool)
        self.t_end = np.full(B, float(t0))
        self.state = self.y0.copy()       # the frozen rows: their last finite state
        self.nfrozen = 0

    def rows(self, x):
        return x.reshape(self.alive.shape + x.shape[-1:])

    def max_error(self, errs):
        """The largest error norm of the alive trajectories (NaN counts as inf; 0 when none is alive)."""
        e = np.where(self.alive, errs.ravel(), 0.0)
        m = float(np.max(e)) if e.size else 0.0
        return m if m == m else np.inf

    def freeze(self, which, t, state):
        """Freeze the alive rows ``which`` (B,) bool at time t and their rows of ``state`` (..., n)."""
        which = which & self.alive
        if which.any():
            self.alive &= ~which
            self.t_end[which] = t
            self.state[which] = self.rows(state)[which]
            self.nfrozen = int(np.sum(~self.alive))
        return which

    def nonfinite(self, d):
        """The alive rows whose increment d (..., n) is not finite."""
        return self.alive & ~np.all(np.isfinite(self.rows(d)), axis=-1)

    def collapsed(self, errs, h, t, order):
        """The alive rows whose own demand h fac(err_b) is below the step floor at t."""
        return self.alive & (h * factors(errs.ravel(), order) < floor(t))

    def next_step(self, errs, h, order):
        """h fac(max err) over the alive rows (the shared proposal after some froze)."""
        return h * float(factors(np.array(self.max_error(errs)), order))

    def park(self, z, e, w0, first, t):
        """Set the frozen rows of the working arrays z, e (..., n) to their initial state and no carried
        rounding error, and w0 to the first stage there (``first(t, rows)``): finite inputs whose results
        are discarded. Returns (z, e, w0)."""
        gone = ~self.alive
        if not gone.any():
            return z, e, w0
        shape = z.shape
        z, e, w0 = self.rows(z).copy(), self.rows(e).copy(), self.rows(w0).copy()
        z[gone], e[gone] = self.y0[gone], 0.0
        w0[gone] = first(t, self.y0[gone])
        return z.reshape(shape), e.reshape(shape), w0.reshape(shape)

    def keep(self, new, old):
        """``new`` (..., n) with the frozen rows taken from ``old`` (they do not move)."""
        out = np.where(self.alive[:, None], self.rows(new), self.rows(old))
        return out.reshape(new.shape)

    def saved(self, state):
        """A saved row: ``state`` (..., n) with the frozen trajectories at their last finite state."""
        if not self.nfrozen:
            return state
        out = self.rows(state).copy()
        gone = ~self.alive
        out[gone] = self.state[gone]
        return out.reshape(state.shape)
