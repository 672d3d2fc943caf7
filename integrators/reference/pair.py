"""The numpy reference of an embedded pair: the definition the generated code is tested against.

One attempted step of signed size h from z with first-stage generator (or field) w0 (FSAL), by the one
stage recurrence :func:`integrators.reference.runge_kutta.stages`:

* RKMK on g* (Munthe-Kaas 1999): K_i = h dexp^-1_{theta_i}(w(exp(theta_i) . z)), theta_i = sum_j a_ij K_j,
  z1 = exp(ad theta)^T z with theta = sum_i b_i K_i; the error estimate mapped to the state to leading
  order, ad*_{sum_i e_i K_i} z;
* ambient RK: K_i = h f(t + c_i h, z + theta_i), z1 = z + theta;

the error norm of :mod:`integrators.core.controller`, and for a projected pair the projection onto the
level set of the Casimirs (:mod:`integrators.codegen.projection` passes it in as ``proj``).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import controller
from ..geometry.closed_dexpinv import space_dexpinv
from .stepping import space_for
from .runge_kutta import batch_time, lincomb, rk_increment, rkmk_increment, stages


class ReferencePair:
    """The generic numpy stages of an embedded pair (RKMK on g* or ambient RK): one attempt, its error
    norm (:func:`integrators.core.controller.error_norm`), one step for the events and the projection of a
    projected pair. The loop that runs it is :class:`integrators.engine.reference_run.ReferenceRun`."""

    def __init__(self, problem, tab, lie, terms, proj=None, target=None):
        self.problem, self.tab, self.lie, self.terms = problem, tab, lie, terms
        if lie:   # with a forcing the generators (w, f) in g x g* (AffineCoadjointSpace)
            self.space = space_for(problem)
        self.rhs = problem.rhs if problem.kind == "coadjoint" else problem.f
        self.fevals = len(tab.b)
        # the projection onto {C = target} (integrators.codegen.projection) of a projected pair, else None
        self.proj, self.target = proj, target
        # the same increment by compiled code when the run is compiled (projection_rows.compiled_projection)
        self.proj_increment = None if proj is None else proj.increment

    def projection(self, z1):
        """The projection increment at z1 (zero without a projection)."""
        return self.proj_increment(z1, self.target) if self.proj is not None else 0.0

    def first(self, t, z):
        t = batch_time(t, z)      # a time per state (the continuous extension's steps): shaped like z[..., 0]
        return self.space.field(t, z) if self.lie else self.rhs(t, z)

    def increment(self, z, hs):
        """The map (t_i, theta_i) -> K_i of this pair's form at z with step hs
        (:mod:`integrators.reference.runge_kutta`)."""
        return rkmk_increment(self.space, z, hs, self.terms) if self.lie else rk_increment(self.rhs, z, hs)

    def stages(self, t, z, hs, w0):
        """(Ks, theta, d, z1, w_last, K_last) of one attempt with the signed step hs."""
        Ks = stages(self.tab.A[1:], self.tab.c[1:], t, hs, self.increment(z, hs), [hs * w0])  # FSAL: K_1 = hs w0
        theta = lincomb(self.tab.b, Ks)
        d = self.space.act_delta(theta, z) if self.lie else theta
        z1 = z + d
        wl = self.first(t + hs, z1)
        if self.lie:
            Kl = space_dexpinv(self.space, theta, hs * wl, self.terms) if self.terms > 1 else hs * wl
        else:
            Kl = hs * wl
        return Ks, theta, d, z1, wl, Kl

    def error(self, z, z1, Ks, Kl, rtol, atol, rows=False):
        """The error norm of the attempt, the largest over an ensemble (NaN -> inf), or with ``rows``
        each trajectory's (an array of the batch shape)."""
        Kall = Ks + ([Kl] if self.tab.fsal else [])
        sc = atol + rtol * np.maximum(np.abs(z), np.abs(z1))
        errs = []
        for E in self.tab.E:
            et = sum(e * K for e, K in zip(E, Kall) if e != 0.0)
            if self.lie:
                et = self.space.to_state(et, z)   # unchecked: a NaN attempt is rejected, not raised
            errs.append(et / sc)
        err = controller.error_norm([np.sum(e ** 2, axis=-1) for e in errs], z.shape[-1], self.lie)
        if rows:
            return err
        m = float(np.max(err))
        return m if m == m else math.inf

    def step(self, t, y, tau):
        """One step of size tau (the continuous extension used for events), projected when the pair is
        (:meth:`project_step`)."""
        return self.project_step(y, y + self.stages(t, y, tau, self.first(t, y))[2])

    def project_step(self, y, z1):
        """z1 (the end of a trial step from y) projected onto {C = C(y)}: the targets of the step's start,
        on the level set of C(y0) to round-off, and of the shape of y whether it is one trajectory of an
        ensemble (event location steps each alone) or all of them."""
        return z1 if self.proj is None else z1 + self.proj.increment(z1, self.proj.values(y))

    def projected(self, step):
        """The one-step map ``step(t, y, tau)`` (e.g. the generated one) followed by :meth:`project_step`
        (the events of a projected pair)."""
        def go(t, y, tau):
            return self.project_step(y, step(t, y, tau))
        return go
