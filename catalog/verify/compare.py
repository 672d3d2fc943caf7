"""Integrator comparison for one Lie-group entry: measured order, final error, invariant drift and
work-precision (error against wall time and evaluations), for the fixed-step methods over a
step-halving ladder and for scipy's adaptive methods over a tolerance ladder.

The error is measured at t_end against the entry's exact solution when it has one, else against
scipy DOP853 at rtol = 1e-12, atol = 1e-14 (labelled "reference: DOP853"). The measured order is the
least-squares slope of log(error) against log(h) over the asymptotic range of the ladder only
(Hairer-Norsett-Wanner I, II.4: error = C h^p + O(h^(p+1)) holds for small h): the rungs whose error lies
between :data:`ROUNDOFF_ERROR` and :data:`ASYMPTOTIC_ERROR` times max(1, |y(t_end)|), of which the finest run
whose consecutive local orders log(e_i/e_(i+1))/log(h_i/h_(i+1)) agree within :data:`ORDER_AGREEMENT`
(at least two rungs). Where no rung qualifies, the order is None and ``order_note`` says why (errors of
order 1 say nothing about the order); the ladder is ``steps`` (fixed-step methods) and ``tols``
(adaptive ones), ``liedyn compare --steps 100,200,400,800 --rtol 1e-6,1e-8,1e-10``.

Time to reach a final error of :data:`TARGET_ERROR` = 1e-8, per method: the cheapest setting found
whose final error is <= 1e-8 (fixed-step: the step count predicted from the ladder's finest rung and the
fitted order (error ~ h^order), raised by 15 % until the error is reached; adaptive: the loosest rtol = 10^(-k/2),
atol = rtol / 100), then the median integrator wall time of :data:`REPEATS` runs at that setting, and
its ratio to scipy DOP853's (DOP853's row is 1.00 by definition). All methods integrate the same
right-hand side. A method whose predicted cost exceeds :data:`MAX_SEARCH_STEPS` steps (e.g. an order-1
method) is marked as not reaching 1e-8.
"""

from __future__ import annotations

import numpy as np

from ..errors import CatalogError
from .run import chooses_own_steps, drift, simulate

DEFAULT_METHODS = ("rk4", "midpoint", "lie_euler", "rkmk4", "cf4", "splitting", "rkmk45", "rkmk853", "rk853",
                   "rk853_projected", "scipy:DOP853", "scipy:RK45")
#: the final error at which the methods' times are compared
TARGET_ERROR = 1e-8
#: runs timed at the setting that reaches TARGET_ERROR (median)
REPEATS = 3
#: a fixed-step method predicted to need more steps than this is reported as not reaching TARGET_ERROR
MAX_SEARCH_STEPS = 20_000
#: the largest error (relative to max(1, |y(t_end)|)) counted in the asymptotic range of the order fit
ASYMPTOTIC_ERROR = 1e-2
#: the smallest: below it round-off, not the step, sets the error
ROUNDOFF_ERROR = 1e-12
#: consecutive local orders of the asymptotic range differ by at most this much
ORDER_AGREEMENT = 0.3


def fit_order(h, err, scale=1.0):
    """(order or None, indices of the rungs used, note): the least-squares slope of log(err) against log(h)
    over the asymptotic range (see the module docstring); ``scale`` is max(1, |y(t_end)|)."""
    h, err = np.asarray(h, float), np.asarray(err, float)
    o = np.argsort(h)  # finest first
    h, err = h[o], err[o]
    ok = np.isfinite(err) & (err > ROUNDOFF_ERROR * scale) & (err < ASYMPTOTIC_ERROR * scale)
    # the finest contiguous rungs inside the error window
    idx = [i for i in range(len(h)) if ok[i]]
    run = []
    for i in idx:
        if run and i != run[-1] + 1:
            break
        run.append(i)
    if len(run) < 2:
        lo, hi = float(np.nanmin(err)), float(np.nanmax(err))
        why = ("every error is at round-off" if np.all(err <= ROUNDOFF_ERROR * scale) else
               f"no two rungs with error between {ROUNDOFF_ERROR:.0e} and {ASYMPTOTIC_ERROR:.0e} of the solution "
               f"(errors {lo:.1e} to {hi:.1e})")
        return None, [], f"no asymptotic range: {why}; try finer or other --steps"
    local = np.log(err[run][1:] / err[run][:-1]) / np.log(h[run][1:] / h[run][:-1])
    keep = 1
    while keep < len(local) and abs(local[keep] - local[keep - 1]) <= ORDER_AGREEMENT * max(1.0, abs(local[keep - 1])):
        keep += 1
    use = run[:keep + 1]
    p = float(np.polyfit(np.log(h[use]), np.log(err[use]), 1)[0])
    note = "" if len(use) >= 3 else "two rungs only"
    return p, [int(o[i]) for i in use], note


def _applicable(entry, methods, explicit=False):
    """The methods that apply to the entry; with ``explicit`` (names the user gave) an unknown or
    inapplicable name raises CatalogError naming it and the valid ones instead of being dropped."""
    from integrators.methods import applicable_methods, applies, get_method

    prob = entry.system.problem()
    out = []
    for m in methods:
        try:
            if applies(get_method(m, prob), prob):
                out.append(m)
            elif explicit:
                raise CatalogError(f"{entry.name}: method {m!r} does not apply; methods that apply: "
                                   f"{', '.join(applicable_methods(prob))}")
        except CatalogError:
            raise
        except ValueError as exc:
            if explicit:
                raise CatalogError(f"{entry.name}: method {m!r} cannot be compared: {exc}") from None
    if explicit and not out:
        raise CatalogError(f"{entry.name}: none of the methods {list(methods)} applies; methods that apply: "
                           f"{', '.join(applicable_methods(prob))}")
    return out


def _final_error(run, ref_final):
    return float(np.max(np.abs(run.y[-1] - ref_final)))


def _ladder(values, what, integer):
    vals = list(values)
    if len(vals) < 2:
        raise CatalogError(f"{what}: give at least two values to compare, got {vals}")
    out = []
    for v in vals:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise CatalogError(f"{what}: {v!r} is not a number") from None
        if not (np.isfinite(f) and f > 0) or integer and not f.is_integer():
            raise CatalogError(f"{what}: {v!r} must be a positive {'integer' if integer else 'number'}")
        out.append(int(f) if integer else f)
    if len(set(out)) != len(out):
        raise CatalogError(f"{what}: the values {vals} repeat")
    return tuple(out)


def compare_entry(entry, methods=None, t_end=None, ladder=(100, 200, 400, 800), tols=(1e-6, 1e-8, 1e-10),
                  progress=None):
    """Rows (one per method and step count / tolerance) and a summary per method.

    Returns ``(rows, summary, reference)``; a row holds method, steps or rtol, error, wall_time,
    nfev, drift (max over the claimed integrals; also split into Casimirs and the others, e.g. energy);
    the summary holds per method the measured order, the best error, the largest drifts, and
    ``preserves`` as declared by the integrators package.
    """
    if entry.kind != "lie-group":
        raise ValueError(f"{entry.name}: the integrator comparison applies to Lie-group entries "
                         f"(this one is {entry.kind!r})")
    t_end = float(entry.t_end if t_end is None else t_end)
    ladder = _ladder(ladder, "steps", True)
    tols = _ladder(tols, "rtol", False)
    methods = _applicable(entry, methods or DEFAULT_METHODS, explicit=bool(methods))
    if entry.exact_solution is not None:
        ref_final = np.asarray(entry.exact_solution(np.array([t_end])), float)[-1]
        reference = "exact solution"
    else:
        ref = simulate(entry, t_end=t_end, steps=50, method="scipy:DOP853", rtol=1e-12, atol=1e-14)
        ref_final = ref.y[-1]
        reference = "DOP853 (rtol 1e-12, atol 1e-14)"
    scale = max(1.0, float(np.max(np.abs(ref_final))))
    rows, summary = [], {}
    for m in methods:
        scipy = m.startswith("scipy:") or chooses_own_steps(m)  # adaptive: a tolerance ladder
        items = tols if scipy else ladder
        mrows = []
        for it in items:
            if progress is not None:
                progress.update(f"{m} {it}")
            kw = {"rtol": it, "atol": it * 1e-2} if scipy else {}
            try:
                run = simulate(entry, t_end=t_end, steps=50 if scipy else int(it), method=m, **kw)
            except (ValueError, ArithmeticError) as exc:
                summary[m] = {"error": str(exc).splitlines()[0]}
                mrows = []
                break
            cas = [drift(run, k) for k in run.invariants if "casimir" in k.lower()]
            other = [drift(run, k) for k in run.invariants if "casimir" not in k.lower()]
            mrows.append({"method": m, "steps": None if scipy else int(it), "rtol": it if scipy else None,
                          "h": None if scipy else t_end / it, "error": _final_error(run, ref_final),
                          "wall_time": run.wall_time, "nfev": run.nfev, "nsteps": run.nsteps,
                          "drift": max(cas + other, default=0.0), "casimir_drift": max(cas, default=None),
                          "other_drift": max(other, default=None)})
        if not mrows:
            continue
        rows += mrows
        order, used, note = None, [], "adaptive: no step to fit an order to" if scipy else ""
        if not scipy:
            order, used, note = fit_order([r["h"] for r in mrows], [r["error"] for r in mrows], scale)
        summary[m] = {"order": order, "order_steps": [mrows[i]["steps"] for i in sorted(used)],
                      "order_note": note, "declared_order": _declared(m, entry, "order"),
                      "preserves": _declared(m, entry, "preserves"),
                      "best_error": min(r["error"] for r in mrows), "max_drift": max(r["drift"] for r in mrows),
                      "casimir_drift": _max_or_none(r["casimir_drift"] for r in mrows),
                      "other_drift": _max_or_none(r["other_drift"] for r in mrows),
                      "wall_time": sum(r["wall_time"] for r in mrows)}
        summary[m].update(_reach(entry, m, t_end, ref_final, mrows, scipy, order, progress))
    dop = summary.get("scipy:DOP853", {}).get("time_at_1e-8")
    for s in summary.values():
        t = s.get("time_at_1e-8")
        s["vs_DOP853_at_1e-8"] = None if (t is None or not dop) else t / dop
    return rows, summary, reference


def _reach(entry, m, t_end, ref_final, mrows, adaptive, order, progress=None):
    """{"setting_at_1e-8", "kwargs_at_1e-8" (for ``simulate``), "error_at_1e-8", "time_at_1e-8"}: the cheapest setting of ``m`` found whose
    final error is <= TARGET_ERROR and the median wall time of REPEATS runs there (None when not reached)."""
    none = {"setting_at_1e-8": None, "error_at_1e-8": None, "time_at_1e-8": None, "kwargs_at_1e-8": None}

    def run(kw):
        if progress is not None:
            progress.update(f"{m} to error {TARGET_ERROR:.0e}: {kw}")
        r = simulate(entry, t_end=t_end, **kw)
        return (_final_error(r, ref_final) if r.status >= 0 else np.inf), r

    try:
        if adaptive:
            for k in range(12, 27):  # rtol 1e-6 ... 1e-13
                rtol = 10.0 ** (-k / 2)
                kw = {"method": m, "steps": 50, "rtol": rtol, "atol": rtol * 1e-2}
                err, r = run(kw)
                if err <= TARGET_ERROR:
                    setting = f"rtol {rtol:.0e}"
                    break
            else:
                return none
        else:
            finest = min(mrows, key=lambda r: r["h"])
            p = order if order is not None and order > 0.5 else 1.0
            n = max(1, int(np.ceil(finest["steps"] * 1.05 * (finest["error"] / TARGET_ERROR) ** (1.0 / p))))
            while True:
                if n > MAX_SEARCH_STEPS:
                    return none
                kw = {"method": m, "steps": n}
                err, r = run(kw)
                if err <= TARGET_ERROR:
                    setting = f"{n} steps"
                    break
                n = int(np.ceil(1.15 * n))
        times = [r.wall_time] + [run(kw)[1].wall_time for _ in range(REPEATS - 1)]
    except (ValueError, ArithmeticError):
        return none
    return {"setting_at_1e-8": setting, "error_at_1e-8": err, "time_at_1e-8": float(np.median(times)),
            "kwargs_at_1e-8": {k: v for k, v in kw.items() if k != "method"}}


def _max_or_none(values):
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def _declared(method, entry, attr):
    """The method's declared ``order``, or what it ``preserves`` on this entry's problem (problem-aware:
    no Casimirs under a forcing, ``integrators.methods.preserved``)."""
    try:
        from integrators import methods as im

        prob = entry.system.problem()
        meth = im.get_method(method, prob)
        if attr == "preserves" and hasattr(im, "preserved"):
            v = im.preserved(meth, prob)
        else:
            v = getattr(meth, attr, None)
    except Exception:  # an older integrators package without declarations: leave the column empty
        return None
    if isinstance(v, (set, frozenset, tuple, list)):
        return sorted(v)
    return v


SUMMARY_HEADER = ("method", "order", "declared", "best error", "Casimirs", "others", "time [s]", "t(1e-8)/DOP853",
                  "setting at 1e-8", "error", "preserves")


def summary_caption(reference):
    """What the columns of the summary table mean."""
    return (f"error at t_end against the {reference}; order: the least-squares slope of log(error) against "
            "log(h) over the asymptotic range of the ladder (declared: the method's own); Casimirs / others: largest relative drift of the "
            "claimed Casimirs and of the other integrals (e.g. energy) over the ladder; t(1e-8)/DOP853: time to "
            f"reach final error {TARGET_ERROR:.0e} (median of {REPEATS} runs at the cheapest setting found, shown "
            "with the error it reached) over DOP853's ('-' when not reached within the search)")


def summary_rows(summary):
    """One row of strings per method, in the columns of :data:`SUMMARY_HEADER` (a method that does not apply:
    its name and the reason)."""
    rows = []
    for m, s in summary.items():
        if "error" in s and "best_error" not in s:
            rows.append([m, f"not applicable: {s['error']}"])
            continue
        r = s.get("vs_DOP853_at_1e-8")
        rows.append([
            m, "-" if s["order"] is None else f"{s['order']:.2f}" + ("*" if s.get("order_note") else ""),
            "-" if s["declared_order"] is None else str(s["declared_order"]), f"{s['best_error']:.3e}",
            "-" if s.get("casimir_drift") is None else f"{s['casimir_drift']:.2e}",
            "-" if s.get("other_drift") is None else f"{s['other_drift']:.2e}", f"{s['wall_time']:.3f}",
            "-" if r is None else f"{r:.2f}x", s.get("setting_at_1e-8") or "-",
            "-" if s.get("error_at_1e-8") is None else f"{s['error_at_1e-8']:.1e}",
            ", ".join(s["preserves"] or []) or "-"])
    return rows


def format_summary(summary, reference):
    """Plain-text table of :func:`catalog.verify.compare.compare_entry`'s summary (the CLI's; the report
    draws :func:`summary_rows` as an HTML table)."""
    widths = (14, 6, 8, 11, 9, 9, 9, 14, 16, 8)
    lines = [summary_caption(reference),
             " ".join(f"{h:{'<' if i == 0 else '>'}{w}s}" for i, (h, w) in enumerate(zip(SUMMARY_HEADER, widths)))
             + "  preserves"]
    for row in summary_rows(summary):
        if len(row) == 2:
            lines.append(f"{row[0]:14s} {row[1]}")
            continue
        lines.append(" ".join(f"{c:{'<' if i == 0 else '>'}{w}s}" for i, (c, w) in enumerate(zip(row, widths)))
                     + f"  {row[-1]}")
    notes = []
    for m, s in summary.items():
        if s.get("order_steps"):
            notes.append(f"  {m}: order fitted on {s['order_steps'][0]}-{s['order_steps'][-1]} steps"
                         + (f" ({s['order_note']})" if s.get("order_note") else ""))
        elif s.get("order_note") and not s["order_note"].startswith("adaptive"):
            notes.append(f"  {m}: {s['order_note']}")
    if notes:
        lines += [f"order: slope of log(error) over log(h) in the asymptotic range only (errors between "
                  f"{ROUNDOFF_ERROR:.0e} and {ASYMPTOTIC_ERROR:.0e} of the solution, local orders agreeing; "
                  f"* marks a fit on two rungs)"] + notes
    return "\n".join(lines)
