"""The one-trajectory part of benchmarks/drawn_systems.py: ``s.simulate`` (numpy, numba) and the fully default call
against solve_ivp DOP853 with the hand-written rhs at matched accuracy, and a profile of the worst numpy call."""

from __future__ import annotations

import cProfile
import io
import pstats
import time

import numpy as np
from scipy.integrate import solve_ivp

from integrators.backends import background

from benchmarks._drawn_common import KINDS, STEPS, T, build_system, choose, hand_rhs, reference, sysseed, timed, zend


def generic_only(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with backend="numba" taking the generic kernel (integrators.backends.generic_kernel)
    whatever is compiled: what a backend="numba" call runs on a structure whose own loop is not compiled yet (its
    choice, integrators.backends.auto_compile.choose_numba, made to answer "generic" for the call; nothing is
    queued)."""
    from integrators.backends import auto_compile, generic_kernel
    if not generic_kernel.compiled():
        generic_kernel.warm()
    keep = auto_compile.choose_numba
    auto_compile.choose_numba = lambda *a, **k: "generic"
    try:
        res = fn(*args, **kwargs)
    finally:
        auto_compile.choose_numba = keep
    assert res.backend.startswith(auto_compile.GENERIC_LABEL[:20]), res.backend
    return res


def generic_covers(s, x0, method):
    """True when the generic kernel runs ``method`` on system ``s`` (integrators.backends.generic_kernel.covers: not
    the Lie-group steps on an almost abelian algebra's orbits, which run numpy until their own loop is compiled)."""
    from integrators import METHODS
    from integrators.backends import generic_kernel, plan as plans
    m = METHODS[method]
    if getattr(m, "tableau", None) is None:
        return True
    pl = plans.plan(s.problem(), m.tableau, m.lie, m.terms, s.to_problem(x0))
    return pl is None or generic_kernel.covers(pl)


def single(drawn, args, numba_ok):
    rows, notes, prof_target = [], [], None
    reps = 3 if args.quick else 5
    spent = 0.0
    compiling = set()       # the systems whose own loop was still compiling when the budget's wait ended
    systems = []
    for label, make in drawn:
        t = time.perf_counter()
        alg = make()
        alg.casimirs()
        tb = time.perf_counter() - t
        for j, kind in enumerate(KINDS):
            seed = sysseed(label, kind, args.seed)
            try:
                s, x0f = build_system(alg, kind, seed)
            except ValueError as exc:      # e.g. an unrealizable draw (never seen; said if it happens)
                notes.append(f"{label} {kind}: not built ({exc})")
                continue
            systems.append((label, kind, alg, s, x0f, tb if j == 0 else None))
    for label, kind, alg, s, x0f, tb in systems:
        P = s.problem()
        f = hand_rhs(P)
        for r0 in (1.0, 0.5, 0.25, 0.125):
            x0 = x0f(r0)
            z0 = s.to_problem(x0)
            ref = reference(f, z0)
            if ref.status == 0 and np.max(np.abs(ref.y)) <= 10 * r0:
                break
        else:
            notes.append(f"{label} {kind}: no initial state with a bounded reference; skipped")
            continue
        zref = ref.y[:, -1]
        grid = np.linspace(0.0, T, STEPS + 1)
        cands = {
            "DOP853": lambda tol: solve_ivp(f, (0.0, T), z0, method="DOP853", t_eval=grid, rtol=tol,
                                            atol=tol * 1e-2).y[:, -1],
            "numpy": lambda tol: zend(s.simulate(x0, T, rtol=tol, atol=tol * 1e-2, backend="numpy")),
        }
        first_numba = None
        wait = getattr(args, "numba_wait", None)
        if numba_ok and (wait is not None or spent < args.numba_budget):
            t = time.perf_counter()
            r = s.simulate(x0, T, backend="numba")
            first_numba = time.perf_counter() - t
            # a cold backend="numba" call runs the generic kernel (or numpy) and compiles the specialised loop in a
            # background thread of this process: wait for it (within the budget), else the timings below would
            # measure the generic path and count the compiling thread's CPU time in every call
            background.wait(timeout=max(0.0, wait if wait is not None else args.numba_budget - spent - first_numba))
            spent += time.perf_counter() - t
            if s.simulate(x0, T, backend="numba").backend == "numba":    # the structure's own loop is ready
                cands["numba"] = lambda tol: zend(s.simulate(x0, T, rtol=tol, atol=tol * 1e-2, backend="numba"))
            else:                                                         # its compile outlasted the budget
                compiling.add((label, kind))
        d = s.simulate(x0, T)
        covered = numba_ok and generic_covers(s, x0, d.method)
        if covered:   # (the orbit space's RKMK steps of an almost abelian algebra: numpy runs until compiled)
            cands["generic"] = lambda tol: zend(generic_only(s.simulate, x0, T, rtol=tol, atol=tol * 1e-2,
                                                             backend="numba"))
        chosen = {k: choose(go, zref) for k, go in cands.items()}
        runs = {k: (lambda go=cands[k], tol=tol: go(tol)) for k, (tol, _) in chosen.items() if tol is not None}
        runs["default"] = lambda: s.simulate(x0, T)
        # one trajectory runs in this thread: its CPU time, not the process's (a compile the default call or a cold
        # numba call queued may still run in liedyn's background thread)
        tm = timed(runs, reps, clock=time.thread_time)
        base = tm.get("DOP853")
        derr = float(np.max(np.abs(zend(d) - zref)))

        def cell(k):
            tol, err = chosen.get(k, (None, None))
            if k == "generic" and numba_ok and not covered:
                return "-", "-", "(numpy)"
            if k not in cands:
                why = "(compiling)" if (label, kind) in compiling else "(budget)"
                return "-", "-", why if numba_ok else "(no numba)"
            if tol is None:
                return "-", f"{err:.0e}", "not reached"
            return f"{tol:.0e}", f"{tm[k] * 1e3:.2f}", (f"{tm[k] / base:.2f}x" if base else "-")

        c_dop, c_np, c_nb, c_gk = cell("DOP853"), cell("numpy"), cell("numba"), cell("generic")
        rows.append([label, alg.dim, kind, d.method, f"{r0:g}", c_dop[0], c_dop[1], c_np[0], c_np[1], c_np[2],
                     c_nb[0], c_nb[1], c_nb[2], f"{tm['default'] * 1e3:.2f}", f"{derr:.0e}",
                     "-" if first_numba is None else f"{first_numba:.1f}",
                     "-" if tb is None else f"{tb:.2f}", c_gk[0], c_gk[1], c_gk[2]])
        ratio = tm["numpy"] / base if ("numpy" in tm and base) else None
        if ratio is not None and (prof_target is None or ratio > prof_target[0]):
            prof_target = (ratio, label, kind, s, x0, chosen["numpy"][0])
        print(" | ".join(str(v) for v in rows[-1]), flush=True)
    return rows, notes, prof_target


def profile_one(target):
    ratio, label, kind, s, x0, tol = target
    s.simulate(x0, T, rtol=tol, atol=tol * 1e-2, backend="numpy")
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(10):
        s.simulate(x0, T, rtol=tol, atol=tol * 1e-2, backend="numpy")
    pr.disable()
    buf = io.StringIO()
    st = pstats.Stats(pr, stream=buf)
    st.sort_stats("tottime").print_stats(10)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    keep = [ln for ln in lines if ln.strip().startswith("ncalls")][:1] + \
        [ln for ln in lines if "(" in ln and ("/" in ln or "<" in ln)][:10]
    total = st.total_tt / 10
    return label, kind, ratio, total, keep
