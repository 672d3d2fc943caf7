"""A plan: a recognised structure and what the generated code is written from (a tableau, or a
commutator-free method or splitting; the Lie form and the dexp^-1 terms; the Casimir projection of a
projected pair), with its generated functions loaded once each (:mod:`integrators.backends.loader`).
One plan per structure, method and projection (:func:`plan`); the runners of this room
(:mod:`integrators.backends.fastpath`, :mod:`integrators.backends.output_grid`, ...) call its functions."""

from __future__ import annotations

import numpy as np

from . import loader
from ..codegen import fixed_programs
from ..geometry import recognition
from ..codegen.linear_projection import LinearProjection
from ..codegen import orbit_source
from ..codegen.matrix_source import use_matrix
from ..geometry.spaces import ROUNDOFF_TERMS


class Plan:
    """A recognised structure and a tableau: what the generated code needs."""

    def __init__(self, st, tab, lie, terms, proj=None):
        self.st, self.tab, self.lie, self.terms = st, tab, lie, terms
        self.proj = proj   # the Casimir projection of a projected pair (integrators.codegen.projection) or None
        # the numpy texts are fast on Python floats too (output_grid.OutputGrid.ROW_STAGES): the scalar text (not the
        # matrix form of dense constants; the orbit space's steps are never in matrix form), but for an RKMK pair's
        # forced generator (its exponential series is slower a row than on columns)
        self.float_rows = (not use_matrix(st) or orbit_source.applies(st, lie)) and not (lie and st.P is not None)
        self._functions = {}

    def __reduce__(self):
        """Pickled as its data (a background compile's child process, :mod:`integrators.backends.compile_child`,
        rebuilds it; the generated functions are not carried)."""
        return (Plan, (self.st, self.tab, self.lie, self.terms, self.proj))

    def function(self, kind, mode):
        fn = self._functions.get((kind, mode))
        if fn is None:
            fn = self._functions[kind, mode] = loader.compile_function(kind, self.st, self.tab, self.lie,
                                                                        self.terms, mode, self.proj)
        return fn

    def targets(self, y0):
        """The projection's targets C(y0), (..., p), for the generated adaptive loops (empty without one)."""
        return np.zeros(y0.shape[:-1] + (0,)) if self.proj is None else self.proj.values(y0)


def plan(problem, tab, lie, terms, y0, proj=None):
    """A :class:`Plan` when the generated code applies (coadjoint problem with an affine velocity and
    no forcing or the multiplier forcing of linear invariants: the ambient Runge-Kutta forms, and the
    Lie-group methods in g x g*, :class:`integrators.codegen.affine_source.AffineSource`, the adaptive RKMK pairs
    on one trajectory with ``proj`` the :class:`LinearProjection` onto the linear invariants); ``tab``: a
    tableau, or a commutator-free method or splitting (fixed step, ``lie`` True; the splitting only on
    the free rigid body, :func:`integrators.codegen.fixed_programs.writes`); ``proj``: the Casimir projection
    of a projected pair."""
    st = recognition.recognise(problem, y0)
    if st is None or (proj is not None and st.P is not None and not isinstance(proj, LinearProjection)):
        return None
    if lie and st.P is not None and terms >= ROUNDOFF_TERMS and np.ndim(y0) > 1:
        return None   # an adaptive RKMK pair of a forced problem: one trajectory (the ensembles run the reference)
    if not fixed_programs.writes(st, tab):
        return None
    key = (st.key, tab.name, lie, terms, None if proj is None else proj.key)
    pl = _PLANS.get(key)
    if pl is None:      # one per structure, method and projection: its functions are looked up once
        pl = _PLANS[key] = Plan(st, tab, lie, terms, proj)
    return pl


#: (structure key, tableau, lie, terms, projection key) -> Plan
_PLANS = {}
