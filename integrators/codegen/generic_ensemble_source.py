"""The source text of the generic ensemble kernel: independent trajectories, each by the generic adaptive loop.

:mod:`integrators.codegen.generic_source` is one adaptive loop for every algebra (the structure constants, the
tableau and the projection as arrays). Its ensemble="independent" counterpart here runs that loop on every row of
an ensemble in a parallel loop over groups of trajectories (``numba.prange``; compiled with numba's disk cache by
:mod:`integrators.backends.generic_ensemble`, once per machine like the one-trajectory kernel): what the specialised
ensemble kernel (:func:`integrators.backends.batch_kernels.adaptive_independent`, one text per structure, minutes
to compile on a random basis) computes, with no compile per algebra.

For every trajectory b (Hairer, Norsett and Wanner I, II.4; each its own controller, as solve_ivp per row):

* the state z = Z[b], its compensation e = 0, the projection targets cz = CZ[b] (the Casimirs C(y0) of a
  projected pair, the linear invariants' values of a forced problem's RKMK pair; none otherwise);
* W0 = the first stage at z and the first step H0[b] (Hairer's starting step when H0[b] <= 0: ``gk_start``);
* the steps of ``gk_steps`` from t0 to t1 (at most ``max_steps`` accepted), saving only the end point, filling
  the trajectory's rows YE[b] (G, n) of the output grid TEV from its own accepted steps (the continuous
  extension, :mod:`integrators.codegen.dense_source`'s definition) from the index GI[b];
* OUT[b] = z + e (the last finite state when it failed: an increment that is not finite is not taken), ST[b] the
  status (0 reached t1, -1 the step size collapsed or the increment was not finite, -2 the budget), TE[b] the
  time reached, NS[b], NR[b] the accepted and rejected steps, GI[b] the next grid index.

A trajectory that fails stops alone; the others run on. Every step of a trajectory is the one-trajectory loop's,
so each row equals the single run of the generic kernel (:func:`integrators.backends.generic_kernel.function`)
from that y0 to round-off.

The work arrays (``gk_work``) are allocated once per group, not per trajectory: ``gk_group`` (with numba's
reference counting: it allocates and slices) runs the trajectories lo..hi-1 of one group one after another by
``gk_one``, which like ``gk_steps`` and every function it calls allocates nothing and is compiled without
reference counting (a call of a reference-counted function increments and decrements the count of each of its
~70 array arguments atomically). The entry ``gk_ensemble`` (``parallel=True``) is a ``prange`` over the groups;
:mod:`integrators.backends.generic_ensemble` makes more groups than threads and sets numba's chunk size to one
group, so a thread that finishes its group takes the next (the trajectories' costs differ).

The output grid's rows are YE (B, G, n): one trajectory's rows contiguous (the loop's ``ye`` of one trajectory);
the caller transposes to the ensemble's (G, B, n).
"""

from __future__ import annotations

from . import generic_source
from .ensemble_source import NEVER

#: the functions of the ensemble, in the order of their definition (after those of generic_source)
FUNCTIONS = ("gk_one", "gk_group", "gk_ensemble")

#: the parallel entry
ENTRY = "gk_ensemble"

#: the functions that allocate (compiled with numba's reference counting; the entry also ``parallel=True``)
ALLOCATING = generic_source.ALLOCATING + ("gk_group", ENTRY)

_DATA = ("lie, terms, ci, cj, ck, cv, W, c, P, hasP, G2, bern, A, b, E, fsal, order, XA, PD, pk, pc, pe, pL, pG")
_WORK = ("K, M, W0, wv, gv, th, Y, xh, d, z1, wl, et, ez, sc, w1, w2, w3, w4, w5, w6, w7, inc, zp, yg, zb, PG, PM, PL, "
         "pdv, piv, pt, pr, pu, pv, pa, PZ")
_RUN = "t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, TEV, YE, GI"

_TEXT = '''

def gk_one(bt, t0, t1, h, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, TEV, ye, GI, ts, ys, z, e,
           cz, @DATA@,
           @WORK@):
    """Trajectory bt of the ensemble from Z[bt] with first step h (<= 0: Hairer's) by gk_steps, into OUT[bt], ST[bt],
    TE[bt], NS[bt], NR[bt], its grid rows ye from GI[bt]; z, e, cz, ts, ys and the work arrays are the group's."""
    n = z.shape[0]
    for i in range(n):
        z[i] = Z[bt, i]
        e[i] = 0.0
    for k in range(cz.shape[0]):
        cz[k] = CZ[bt, k]
    h = gk_start(t0, t1, h, rtol, atol, max_step, z, lie, ci, cj, ck, cv, W, c, P, hasP, order, W0, wv, gv, w1, w2,
                 w3, Y, sc)
    t = t0
    nsteps = 0
    nrej = 0
    since = 0
    gi = GI[bt]
    while True:   # saves only the end point (save_every NEVER): ts, ys have its row; -3 only defensively
        status, t, h, nsteps, nrej, since, j, gi = gk_steps(
            t, t1, h, rtol, atol, max_step, @NEVER@, max_steps, since, nsteps, nrej, 1, gi, ts, ys, z, e, cz,
            TEV, ye, lie, terms, ci, cj, ck, cv, W, c, P, hasP, G2, bern, A, b, E, fsal, order, XA, PD, pk, pc, pe,
            pL, pG, @WORK@)
        if status != -3:
            break
    for i in range(n):
        OUT[bt, i] = z[i] + e[i]
    ST[bt] = status
    TE[bt] = t
    NS[bt] = nsteps
    NR[bt] = nrej
    GI[bt] = gi


def gk_group(lo, hi, @RUN@, @DATA@):
    """The trajectories lo..hi-1 one after another with one set of work arrays (gk_work)."""
    n = Z.shape[1]
    forced = lie and hasP
    gd = 2*n if forced else n
    p = CZ.shape[1]
    (@WORK@) = gk_work(n, gd, p, PD, pe)
    ts = np.empty(2)
    ys = np.empty((2, n))
    z = np.empty(n)
    e = np.empty(n)
    cz = np.empty(p)
    for bt in range(lo, hi):
        gk_one(bt, t0, t1, H0[bt], rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, TEV, YE[bt], GI, ts,
               ys, z, e, cz, @DATA@, @WORK@)


def gk_ensemble(@RUN@, groups, @DATA@):
    """Every row of Z (B, n) from t0 to t1 on its own (the module's docstring): B trajectories in ``groups``
    contiguous groups, a prange over the groups."""
    B = Z.shape[0]
    size = (B + groups - 1)//groups
    for g in numba.prange(groups):
        lo = g*size
        hi = min(B, lo + size)
        if lo < hi:
            gk_group(lo, hi, @RUN@, @DATA@)
'''


def text() -> str:
    """The module text of the generic ensemble kernel: :func:`integrators.codegen.generic_source.text` and the
    functions of :data:`FUNCTIONS` (unjitted; the loader jits them, ``numba`` in its namespace)."""
    out = _TEXT.replace("@DATA@", _DATA).replace("@WORK@", _WORK).replace("@RUN@", _RUN)
    return generic_source.text() + out.replace("@NEVER@", str(int(NEVER)))
