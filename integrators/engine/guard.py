"""Guards against a silent wrong answer: every run ends with status 0 and its checks within stated
tolerances, or with status -1 and a message naming what happened (and where).

Two checks run after the stepping loop of :func:`integrators.integrate` (``check=False`` skips
both); their figures go to ``IntegrationResult.checks``. A third, of adaptive runs, is
:mod:`integrators.engine.growth`: a step across the pole of a finite-time blow-up.

1. Step resolution (fixed-step methods). A fixed step can leave the solution behind (a pole of
   y' = y^2 passed at t = 1 by RK4 with h = 1; an Euler-Poincare flow whose frequency is far above
   1/h) without ever producing a NaN. From a few saved states y_k (the first interval, the last one
   and the two intervals where the saved state changes most, relative to its size) the guard takes
   one step of the method itself, y_m = Phi_h(y_k), and compares it with the trapezoidal companion
   y_c = y_k + h/2 (f(t_k, y_k) + f(t_k + h, y_m)), a second-order step built from the same end
   point (Hairer, Norsett and Wanner (1993), section II.4: an embedded lower-order solution estimates
   the local error). Both are consistent with the exact flow, so

       e_k = max_i |y_m - y_c|_i / max(|y_k|_inf, |y_m|_inf)

   is at least the relative local error of the poorer of the two; when e_k > RESOLVE_RTOL (0.25, a
   step whose local error is a quarter of the solution itself) the step does not resolve the
   solution. The earliest such saved state is then found by bisection, the result is cut there
   (status -1) and the message gives t, h and e_k. The cost is a fixed handful of steps per run
   (at most 8 right-hand sides, each saved state's evaluated once, plus 4 steps when save_every > 1),
   independent of the number of steps.

2. Declared invariants and constraints (every method), on the saved states. With the scale of a
   quantity q at a state y taken as S(y) = sum_i |q(r e_i)|, r = |y|_inf (q on the coordinate axes
   at the size of y: the size of the round-off in q(y)), evaluated at y_0 and at the largest saved
   state y_big (two evaluations, not K), the drift of an invariant is
   |q(y_k) - q(y_0)| / max(S(y_0), S(y_big), |q(y_0)|, tiny) and the residual of a constraint is
   |q(y_k)| / max(S(y_0), S(y_big), |y_k|_inf, tiny) (|y_k| for a constraint that the equations keep by
   construction, whose S is round-off itself). S comes from one call on the unit rows for a homogeneous
   polynomial and from its values at d + 1 points of each axis for one declared of degree d
   (:func:`integrators.core.quantities.polynomial_quantity`), not from n calls per state. The tolerances
   (:data:`TOLERANCES`):

   * an invariant the method keeps on this problem (a Casimir for a Lie-Poisson method, a linear
     invariant for a Runge-Kutta method or after projection): 1e-6, i.e. round-off only;
   * any other invariant: 0.5 relative to max(|q(y_0)|, S(y_0)), a drift of half of the value means
     the step does not resolve the solution (an inaccurate but resolved run drifts far less);
   * a constraint: 0.5 unless the problem states its own tolerance (``tolerances={name: rtol}``;
     the servo systems state 1e-6 for (a, w) = 0, which their equations keep exactly).

   A quantity beyond its tolerance cuts the result at its first offending saved state (status -1)
   and the message names it, with t and the figure.

Both checks leave out the trajectories an ensemble lost (``res.failed``, :mod:`integrators.core.lost`):
the run already ends with status -1 and names them, and their last steps before the loss (a blow-up)
are unresolved by nature; cutting the whole ensemble there would discard the trajectories that did
reach t1. The checks then judge the others (all of them when every trajectory was lost).
"""

from __future__ import annotations

import math
import weakref

import numpy as np
from liegroups import LieGroupsError
from liegroups.casimirs import Casimir

from ..backends import background, casimir_rows
from ..codegen import projection
from ..core.errors import IntegratorError
from ..methods import CASIMIRS, LINEAR, QUADRATIC
from ..core.result import record as record_quantities
from .quantity_scale import absmax_last, max_last, scales as quantity_scales, scales_at as quantity_scales_at

#: a step whose companion estimate of its local error exceeds this fraction of the state is unresolved
RESOLVE_RTOL = 0.25
#: default tolerances of the end-of-run checks (relative, see the module docstring)
TOLERANCES = {"kept_invariant": 1e-6, "invariant": 0.5, "constraint": 0.5}
_TINY = 1e-300
#: the end-of-run check of one trajectory with at most this many saved states runs in Python floats
SMALL_RUN = 16
_ROWS_LOAD = []            # set when the compiled Casimirs' load was queued (_record)
_EYE2 = {}                 # n -> the rows e_1..e_n twice (the probe of the scales, see _record_one)
#: how many of the most-changing saved intervals are checked (besides the first and the last)
N_SUSPECTS = 2


def _rel_estimate(problem, stepper, t, y, h, ym=None, fy=None, fym=None):
    """Relative local-error estimate of one step from (t, y) (see the module docstring), the largest
    over the batch; ``ym`` is the method's step when it is known (the next saved state), ``fy`` and
    ``fym`` zero-argument callables giving f(t, y) and f(t + h, ym) when they are cached."""
    rhs = problem.rhs
    try:
        with np.errstate(all="ignore"):
            if ym is None:
                ym = np.asarray(stepper.step(t, y, h), dtype=float)
            f0 = fy() if fy is not None else np.asarray(rhs(t, y), dtype=float)
            f1 = fym() if fym is not None else np.asarray(rhs(t + h, ym), dtype=float)
            yc = y + 0.5 * h * (f0 + f1)
            err = np.max(np.abs(ym - yc), axis=-1)
            scale = np.maximum(np.max(np.abs(y), axis=-1), np.max(np.abs(ym), axis=-1))
            rel = err / np.maximum(scale, _TINY)
    except (IntegratorError, LieGroupsError, ArithmeticError):
        return np.inf
    rel = np.where(np.isfinite(rel), rel, np.inf)
    return float(np.max(rel))


def _judged(res, raw):
    """The flat trajectories of raw (K, ..., n) the checks judge: a bool mask leaving out those the
    ensemble lost (module docstring), or None to judge every one."""
    if raw.ndim < 3:
        return None
    failed = getattr(res, "failed", None)
    if failed is None or not len(failed):
        return None
    keep = np.ones(int(np.prod(raw.shape[1:-1])), dtype=bool)
    keep[failed] = False
    return keep if keep.any() else None


def check_resolution(problem, stepper, res, h, save_every, rtol=RESOLVE_RTOL):
    """Step-resolution check of a fixed-step result (in place): status -1 and the result cut at the
    first saved state whose step is not resolved. Records ``res.checks["step_error"]``."""
    if problem.kind == "reconstruction" or len(res.t) < 2 or stepper is None:
        return res
    ys = res.y
    K = len(res.t)
    keep = _judged(res, ys)
    if keep is not None:     # the trajectories the ensemble did not lose
        ys = ys.reshape(K, -1, ys.shape[-1])[:, keep]
    flat = ys.reshape(K, -1, ys.shape[-1])
    with np.errstate(all="ignore"):
        size = absmax_last(flat)
        change = absmax_last(np.diff(flat, axis=0)) / np.maximum(np.maximum(size[:-1], size[1:]), _TINY)
    change = max_last(change)                            # (K-1,) over the batch
    if len(change) > N_SUSPECTS:                          # the N_SUSPECTS largest (NaN counts as largest)
        order = np.argpartition(np.where(np.isnan(change), np.inf, change), -N_SUSPECTS)[-N_SUSPECTS:]
    else:
        order = np.arange(len(change))
    suspects = sorted(set(int(i) for i in order) | {0, K - 2})
    cache, fsaved = {}, {}

    def f_at(j):             # f(t_j, y_j) at a saved state, evaluated once (neighbouring suspects share it)
        if j not in fsaved:
            fsaved[j] = np.asarray(problem.rhs(float(res.t[j]), ys[j]), dtype=float)
        return fsaved[j]

    def est(k):
        if k not in cache:   # with save_every = 1 the next saved state is the method's step: no re-stepping
            if save_every == 1 and k + 1 < K:
                cache[k] = _rel_estimate(problem, stepper, float(res.t[k]), ys[k], h, ys[k + 1],
                                         lambda: f_at(k), lambda: f_at(k + 1))
            else:
                cache[k] = _rel_estimate(problem, stepper, float(res.t[k]), ys[k], h)
        return cache[k]

    bad = [k for k in suspects if est(k) > rtol]
    res.checks["step_error"] = max(cache.values())
    res.checks["step_error_tolerance"] = rtol
    if not bad:
        return res
    lo, hi = -1, bad[0]                                   # est(hi) > rtol; every checked k < hi passed
    for k in sorted(cache):
        if k < hi:
            lo = k
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if est(mid) > rtol:
            hi = mid
        else:
            lo = mid
    e = est(hi)
    figure = "overflowed" if not np.isfinite(e) else f"is {e:.3g} of the state"
    later = f" (later: {res.message})" if res.status == -1 else ""
    truncate(res, hi + 1)
    res.status = -1
    res.message = (f"the step h = {h:.6g} does not resolve the solution at t = {res.t[-1]:.6g}: a second-order "
                   f"companion step from there differs from the method's step by an amount that {figure} "
                   f"(tolerance {rtol}); the solution is kept up to t = {res.t[-1]:.6g}; reduce h, or pass "
                   f"check=False to skip this check{later}")
    res.checks["step_error"] = e
    return res


def truncate(res, j):
    """Keep the first j saved states of a result (t, y and every recorded (K, ...) array)."""
    res.t, res.y = res.t[:j], res.y[:j]
    tables = [res.invariants, res.constraints]
    if hasattr(res.outputs, "truncate"):      # result.Outputs: not computed before it is read
        res.outputs.truncate(j)
    else:
        tables.append(res.outputs)
    for table in tables:
        for k, v in list(table.items()):
            if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] > j:
                table[k] = v[:j]
    if res.h is not None:
        res.nsteps = min(res.nsteps, int(round(abs(res.t[-1] - res.t[0]) / abs(res.h)))) if j else 0
    return res


def _kept(name, preserves):
    if name.startswith("casimir:"):
        return CASIMIRS in preserves
    if name.startswith("linear:"):
        return LINEAR in preserves or QUADRATIC in preserves
    return False


def _figures(quantities, raw, inv, kept, rts):
    """(worst figure, first index beyond its tolerance (K if none), figures (Q, K)) of every quantity,
    over numpy arrays (any number of saved states and trajectories)."""
    K = len(raw)
    with np.errstate(all="ignore"):
        absmax = absmax_last(raw)                        # (K, ...): |y_k|_inf per trajectory
        sizes = absmax if absmax.ndim == 1 else max_last(absmax.reshape(K, -1))
        kbig = int(np.argmax(np.where(np.isfinite(sizes), sizes, -1.0)))
        n = raw.shape[-1]
        # the scale at y_0 of every quantity; at the largest state only of those a method keeps (the
        # others' denominators do not read it), and not again when the largest state is y_0
        S0 = quantity_scales([q for _, _, _, q in quantities], absmax[:1], n)   # (Q, 1, ...)
        S1 = np.zeros_like(S0)
        ks = np.flatnonzero(kept)
        if kbig == 0:
            S1 = S0
        elif ks.size:
            S1[ks] = quantity_scales([quantities[i][3] for i in ks], absmax[kbig:kbig + 1], n)
        V = np.array([v for _, _, v, _ in quantities])                      # (Q, K, ...)
        col = (-1,) + (1,) * (V.ndim - 1)
        inv_c, kept_c = inv.reshape(col), kept.reshape(col)
        base = np.where(inv_c, np.maximum(np.abs(V[:, :1]), S0), np.maximum(S0, absmax))
        denom = np.maximum(np.where(kept_c, np.maximum(base, S1), base), _TINY)
        # an invariant's drift |q(y_k) - q(y_0)|, a constraint's residual |q(y_k)| (|y_k|_inf in the
        # denominator: for a constraint kept by construction S ~ 0)
        fig = np.abs(np.where(inv_c, V - V[:, :1], V)) / denom
        per_k = fig if fig.ndim == 2 else max_last(fig.reshape(len(quantities), K, -1))  # (Q, K); NaN propagates
        over = ~(per_k <= np.array(rts, dtype=float)[:, None])                   # NaN counts as beyond
        worst = per_k.max(axis=1).tolist()
        firsts = np.where(over.any(axis=1), np.argmax(over, axis=1), K).tolist()
    return worst, firsts, per_k


def _record_one(problem, res, raw):
    """Record the declared invariants and constraints of one trajectory (raw (K, n), all finite) on
    res, each quantity called once on the saved states and the probe rows of its scale together
    (r e_i at r = |y_0|_inf and at the largest saved state, see
    :func:`integrators.engine.quantity_scale.scales`; a quantity is a function of each state, one row each;
    one that fails on the stacked rows or does not return one value per row, e.g. a quantity that reads a
    time grid by row, is called on the two apart); returns
    ({name: (S(y_0), S(y_big))}, [|y_k|_inf]), or None (nothing recorded) when a state is not finite."""
    K, n = raw.shape
    absmax = np.abs(raw).max(axis=1).tolist()
    if not math.isfinite(sum(absmax)):
        return None
    kbig = absmax.index(max(absmax))
    probe = _EYE2.get(n)
    if probe is None:
        probe = _EYE2[n] = np.concatenate([np.eye(n), np.eye(n)])
    probe = probe.copy()
    probe[:n] *= absmax[0]
    probe[n:] *= absmax[kbig]
    stacked = np.concatenate([raw, probe])
    scales = {}
    with np.errstate(all="ignore"):
        for table, decl in ((res.invariants, getattr(problem, "invariants", {})),
                            (res.constraints, getattr(problem, "constraints", {}))):
            for name, q in decl.items():
                try:
                    v = np.asarray(q(stacked), dtype=float)
                    both = v.shape[:1] == (K + 2 * n,)
                except Exception:       # noqa: BLE001 (a quantity that is not one row per state, e.g.
                    both = False        # one that reads a time grid by row: called apart, as before)
                if both:
                    table[name], p = v[:K], v[K:]
                else:
                    table[name] = v = np.asarray(q(raw), dtype=float)
                    # the scale only of a quantity the check looks at (one number per state)
                    p = np.asarray(q(probe.reshape(2, n, n)), dtype=float).reshape(-1) if v.shape == (K,) else v
                p = p.tolist() if p.shape == (2 * n,) else [0.0] * (2 * n)
                S = [sum(map(abs, p[:n])), sum(map(abs, p[n:]))]
                if not math.isfinite(S[0] + S[1]):   # a non-finite value counts 0 (as in quantity_scales)
                    S = [sum(abs(x) for x in p[:n] if math.isfinite(x)), sum(abs(x) for x in p[n:] if math.isfinite(x))]
                scales[name] = S
    return scales, absmax


def _record(problem, raw):
    """:func:`integrators.core.result.record` (every declared invariant and constraint on the saved states), with the
    problem's Casimirs (:class:`liegroups.casimirs.Casimir`) evaluated together by the compiled evaluator when it
    is loaded in this process (:func:`integrators.backends.casimir_rows.values`, the same formulas: the values
    agree with numpy's to round-off)."""
    decl = getattr(problem, "invariants", {})
    cas = [name for name, q in decl.items() if isinstance(q, Casimir)]
    vals = None
    if cas and raw.size > SMALL_RUN * raw.shape[-1]:
        vals = casimir_rows.values([decl[name] for name in cas], raw.reshape(-1, raw.shape[-1]),
                                   _sparse_form(problem, [decl[name] for name in cas]))
        if vals is None and not _ROWS_LOAD and casimir_rows.on_disk():   # loaded in the background for the
            if background.submit("casimir-rows-load", casimir_rows.warm):  # next runs (queued once a process)
                _ROWS_LOAD.append(True)
    known = {} if vals is None else {name: v.reshape(raw.shape[:-1]) for name, v in zip(cas, vals)}
    return record_quantities(problem, raw, known)


def _sparse_form(problem, cas):
    """(T, Chat) of :func:`integrators.codegen.projection.sparse_polynomials` for the Casimirs ``cas`` when they are
    those of the problem's algebra (in its order, the same objects) and cheaper in its sparse basis, else None."""
    algebra = getattr(problem, "algebra", None)
    own = algebra.casimirs() if algebra is not None else ()
    if len(cas) != len(own) or any(a is not b for a, b in zip(cas, own)):
        return None
    try:
        found = _SPARSE[algebra]
    except (KeyError, TypeError):      # TypeError: an algebra that is not weakly referable, looked up every run
        found = projection.sparse_polynomials(algebra)
        try:
            _SPARSE[algebra] = found
        except TypeError:
            pass
    return None if found is None else found[0]


#: algebra -> :func:`integrators.codegen.projection.sparse_polynomials` of it (that hashes its structure constants)
_SPARSE = weakref.WeakKeyDictionary()


def record(problem, res):
    """Record the declared invariants and constraints on the saved (raw) states of res, as :func:`check_quantities`
    does with ``record`` but without the check (``check=False``): :func:`_record`."""
    raw = res.outputs.get("z", res.y) if getattr(problem, "state_map", None) is not None else res.y
    res.invariants, res.constraints = _record(problem, raw)
    return res


def _figures_one(quantities, raw, inv, kept, rts, scales=None):
    """:func:`_figures` for one trajectory with a few saved states (K <= SMALL_RUN), in Python floats:
    the same formulas without the ~30 numpy calls on arrays of a few numbers that dominate the cost
    of a short run (``scales``: what :func:`_record_one` computed, the S of each quantity and |y_k|_inf). A
    state or a value that is not finite goes to :func:`_figures` (NaN propagates there: NaN is
    beyond every tolerance)."""
    K = len(raw)
    absmax = [max(map(abs, r)) for r in raw.tolist()] if scales is None else scales[1]
    vals = [q[2].tolist() for q in quantities]
    if not (math.isfinite(sum(absmax)) and all(math.isfinite(sum(v)) for v in vals)):
        return _figures(quantities, raw, np.array(inv), np.array(kept), rts)
    if scales is None:
        kbig = absmax.index(max(absmax))
        with np.errstate(all="ignore"):
            S = quantity_scales([q for _, _, _, q in quantities], np.array([absmax[0], absmax[kbig]]),
                                raw.shape[-1]).tolist()
    else:
        S = [scales[0][name] for _, name, _, _ in quantities]
    worst, firsts, per_k = [], [], []
    for i, (kind, v) in enumerate(zip(inv, vals)):
        S0, S1 = S[i]
        fig = None
        if kind:   # max_k |v_k - v_0| is max(v) - v_0 or v_0 - min(v) (rounding is monotone)
            v0 = v[0]
            d = max(abs(v0), S0, S1 if kept[i] else 0.0, _TINY)
            w = max(max(v) - v0, v0 - min(v)) / d
        else:
            d = max(S0, S1, _TINY)
            fig = [abs(x) / (a if a > d else d) for x, a in zip(v, absmax)]
            w = max(fig)
        worst.append(w)
        if w <= rts[i]:            # within tolerance: the per-state figures are not needed
            firsts.append(K)
            per_k.append(None)
            continue
        if fig is None:
            fig = [abs(x - v0) / d for x in v]
        firsts.append(next(k for k, x in enumerate(fig) if not x <= rts[i]))
        per_k.append(fig)
    return worst, firsts, per_k


def _figures_long(quantities, raw, inv, kept, rts):
    """:func:`_figures` for one trajectory with many saved states (raw (K, n)): the same formulas, the two scales of
    each quantity in Python floats (:func:`integrators.engine.quantity_scale.scales_at`) and a few array calls per
    quantity (an invariant's largest drift is max(v) - v_0 or v_0 - min(v), rounding being monotone); the per-state
    figures only of a quantity beyond its tolerance. A state or a value that is not finite goes to :func:`_figures`
    (NaN propagates there: NaN is beyond every tolerance)."""
    K, n = raw.shape
    absmax = max_last(np.abs(raw))
    vals = [q[2] for q in quantities]
    if not (math.isfinite(float(absmax.sum())) and all(math.isfinite(float(v.sum())) for v in vals)):
        return _figures(quantities, raw, np.array(inv), np.array(kept), rts)
    kbig = int(np.argmax(absmax))
    sizes = [float(absmax[0])] if kbig == 0 else [float(absmax[0]), float(absmax[kbig])]
    with np.errstate(all="ignore"):
        S = quantity_scales_at([q for _, _, _, q in quantities], sizes, n)
    worst, firsts, per_k = [], [], []
    for i, v in enumerate(vals):
        S0, S1 = S[i][0], S[i][-1]
        fig = None
        if inv[i]:
            v0 = float(v[0])
            d = max(abs(v0), S0, S1 if kept[i] else 0.0, _TINY)
            w = max(float(v.max()) - v0, v0 - float(v.min())) / d
        else:
            fig = np.abs(v) / np.maximum(absmax, max(S0, S1, _TINY))
            w = float(fig.max())
        worst.append(w)
        if w <= rts[i]:
            firsts.append(K)
            per_k.append(None)
            continue
        if fig is None:
            fig = np.abs(v - v0) / d
        firsts.append(int(np.argmax(~(fig <= rts[i]))))
        per_k.append(fig)
    return worst, firsts, per_k


def check_quantities(problem, res, tolerances=None, record=False):
    """End-of-run check of the declared invariants and constraints (in place): records the worst
    figure of each in ``res.checks`` ("invariant:<name>", "constraint:<name>") and, for the first one
    beyond its tolerance, cuts the result there with status -1 and a message naming it.

    One pass: the values of all the quantities are stacked, (Q, K, ...), and their figures (module
    docstring) computed together; each quantity's callable runs once more, on the probe of its scale.
    With ``record`` (the driver, when it checks), the values themselves are evaluated here and stored
    in res.invariants / res.constraints (else :func:`integrators.core.result.finish` did it): for one
    trajectory with a few finite saved states, in the same call of each quantity as its probe."""
    raw = res.outputs.get("z", res.y) if getattr(problem, "state_map", None) is not None else res.y
    scales = None
    if record:
        if raw.ndim == 2 and 0 < len(raw) <= SMALL_RUN:
            scales = _record_one(problem, res, raw)
        if scales is None:
            res.invariants, res.constraints = _record(problem, raw)
    if len(res.t) == 0 or problem.kind == "reconstruction":
        return res
    quantities = []                                       # (kind, name, values, callable)
    for kind, table in (("invariant", res.invariants), ("constraint", res.constraints)):
        decl = getattr(problem, kind + "s", {})
        for name, vals in table.items():
            vals = np.asarray(vals, dtype=float)
            if vals.shape == raw.shape[:-1] and name in decl:
                quantities.append((kind, name, vals, decl[name]))
    if not quantities:
        return res
    own = dict(getattr(problem, "tolerances", None) or {})
    tol = dict(TOLERANCES, **(tolerances or {}))
    K = len(raw)
    inv = [kind == "invariant" for kind, _, _, _ in quantities]
    kept = [kind == "constraint" or _kept(name, res.preserves) for kind, name, _, _ in quantities]
    rts = [own.get(name, tol["constraint"] if kind == "constraint" else
                   tol["kept_invariant"] if kp else tol["invariant"])
           for (kind, name, _, _), kp in zip(quantities, kept)]
    keep = _judged(res, raw)
    if keep is not None:     # the trajectories the ensemble did not lose
        raw = raw.reshape(K, -1, raw.shape[-1])[:, keep]
        quantities = [(kind, name, vals.reshape(K, -1)[:, keep], q) for kind, name, vals, q in quantities]
    if raw.ndim == 2 and K <= SMALL_RUN:
        worst, firsts, per_k = _figures_one(quantities, raw, inv, kept, rts, scales)
    elif raw.ndim == 2:
        worst, firsts, per_k = _figures_long(quantities, raw, inv, kept, rts)
    else:
        worst, firsts, per_k = _figures(quantities, raw, np.array(inv), np.array(kept), rts)
    first = None                                          # (index, message)
    for i, (kind, name, _, _) in enumerate(quantities):
        res.checks[f"{kind}:{name}"] = math.inf if math.isnan(worst[i]) else worst[i]
        res.checks[f"{kind}:{name}:tolerance"] = rts[i]
        k = firsts[i]
        if k < K and (first is None or k < first[0]):
            what = ("constraint drift" if kind == "constraint" else
                    "an invariant the method keeps drifted" if kept[i] else "an invariant drifted")
            value = "non-finite" if not math.isfinite(per_k[i][k]) else f"{per_k[i][k]:.3g}"
            first = (k, f"{what}: {name!r} is off by {value} (relative, tolerance {rts[i]:g}) at "
                        f"t = {res.t[k]:.6g}")
    if first is not None:
        k, msg = first
        later = f" (later: {res.message})" if res.status == -1 else ""
        truncate(res, max(k, 1))
        res.status = -1
        res.message = (f"{msg}; the solution is kept up to t = {res.t[-1]:.6g}"
                       + ("; reduce h or pass check=False to skip this check" if res.h is not None else "")
                       + later)
    return res
