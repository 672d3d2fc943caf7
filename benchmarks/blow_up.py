"""What does a run meet when the motion blows up before the end of t_span? On the drawn systems of
benchmarks/drawn_systems.py (seed 24) whose motion reaches a singularity in finite time (a servo-constraint's
multiplier grows as |m|^2), every adaptive pair of liedyn through ``s.simulate`` against scipy's DOP853 with the
hand-written numpy rhs: where it stops, how, and at what cost.

Per system (servo1 and servo2 of every drawn algebra): r0 = 1, 2, 4 in turn until the tight reference (solve_ivp
DOP853 at rtol 1e-13, atol 1e-15, the hand rhs) stops before t = 10 with |z| above 1e6 r0; its end time is the
singularity t*. Systems that stay bounded at r0 = 4 are not listed. Then each adaptive pair that applies, at rtol
1e-9 (atol rtol / 100, numpy backend, no output grid, max_steps 100000), and scipy's DOP853 at the same rtol: the
status and message, |t_end - t*| / t*, the attempts (accepted + rejected steps) and the CPU time (median of 3).
A method "reaches t*" when its run ends with status -1 within 1e-6 t* of t* by a collapsed step (not the budget, and
not cut earlier by the end-of-run check: a method that does not keep the Casimirs sees them drift beyond their
tolerance near the singularity, and the check keeps the solution up to there, saying so).

    python benchmarks/blow_up.py          # writes the section blow_up of RESULTS.md
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._drawn_common import T, build_system, hand_rhs, sysseed  # noqa: E402  (sets OPENBLAS_NUM_THREADS)

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

from benchmarks._drawn_algebras import draw  # noqa: E402
from benchmarks._results import markdown_table, update_section  # noqa: E402

METHODS = ("rk45", "tsit5", "rkmk45", "rkmk_tsit5", "rk853", "rkmk853")
RTOL = 1e-9
MAX_STEPS = 100_000
REPS = 3
#: evaluations of the reference's field after which a system is given up
REF_EVALS = 200_000


class _Budget(Exception):
    pass


def _counted(f, limit):
    """f, raising _Budget after ``limit`` evaluations (a reference that creeps: the field, not the state, singular)."""
    calls = [0]

    def g(t, z):
        calls[0] += 1
        if calls[0] > limit:
            raise _Budget
        return f(t, z)
    return g


def _singular(alg, label, kind, skipped):
    """(system, hand rhs, z0, x0, r0, t*) for the first r0 in 1, 2, 4 whose reference blows up before T, or None;
    a reference that takes more than REF_EVALS evaluations is given up (noted in ``skipped``)."""
    s, x0f = build_system(alg, kind, sysseed(label, kind, 24))
    f = hand_rhs(s.problem())
    for r0 in (1.0, 2.0, 4.0):
        x0 = x0f(r0)
        z0 = s.to_problem(x0)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = solve_ivp(_counted(f, REF_EVALS), (0.0, T), z0, method="DOP853", rtol=1e-13, atol=1e-15)
        except _Budget:
            skipped.append(f"{label} {kind} (r0 = {r0:g})")
            return None
        if ref.status == -1 and np.max(np.abs(ref.y[:, -1])) > 1e6 * r0:
            return s, f, z0, x0, r0, float(ref.t[-1])
    return None


def _cpu(go):
    ts = []
    for _ in range(REPS):
        c = time.process_time()
        out = go()
        ts.append(time.process_time() - c)
    return out, 1e3 * float(np.median(ts))


def main():
    from integrators import METHODS as REGISTRY
    from integrators.methods.registry import applies
    rows, summary, skipped, t_start = [], {}, [], time.time()
    for label, make in draw(24, False):
        alg = make()
        for kind in ("servo1", "servo2"):
            got = _singular(alg, label, kind, skipped)
            if got is None:
                continue
            s, f, z0, x0, r0, tstar = got
            P = s.problem()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sp, dms = _cpu(lambda: solve_ivp(f, (0.0, T), z0, method="DOP853", rtol=RTOL, atol=RTOL / 100))
            rows.append([label, kind, f"{r0:g}", f"{tstar:.6f}", "scipy DOP853", str(sp.status),
                         f"{abs(sp.t[-1] - tstar) / tstar:.1e}", str(sp.nfev // 12), f"{dms:.1f}", "1.00"])
            print(" | ".join(rows[-1]), flush=True)
            for m in METHODS:
                if not applies(REGISTRY[m], P):
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r, ms = _cpu(lambda m=m: s.simulate(x0, T, steps=None, method=m, backend="numpy", rtol=RTOL,
                                                        atol=RTOL / 100, max_steps=MAX_STEPS))
                rel = abs(float(r.t[-1]) - tstar) / tstar
                ok = r.status == -1 and rel <= 1e-6 and r.message.startswith("the step size fell below")
                w = summary.setdefault(m, [0, 0, 0.0])
                w[0] += 1
                w[1] += ok
                w[2] = max(w[2], ms / dms)
                how = ("collapsed step" if r.message.startswith("the step size fell below") else
                       "an invariant drifted, then the step collapsed" if r.message.startswith("an invariant drifted")
                       else "budget" if "budget" in r.message else r.message[:40])
                rows.append([label, kind, f"{r0:g}", f"{tstar:.6f}", m, f"{r.status} ({how})", f"{rel:.1e}",
                             str(r.nsteps + r.nrejected), f"{ms:.1f}", f"{ms / dms:.2f}"])
                print(" | ".join(rows[-1]), flush=True)
    md = ("## Runs into a finite-time blow-up (issue 24)\n\n"
          "The drawn systems (benchmarks/drawn_systems.py, seed 24) whose motion reaches a singularity before t = 10 "
          "(the first r0 in 1, 2, 4 where DOP853 at rtol 1e-13 with the hand-written rhs stops with |z| > 1e6 r0; its "
          "end is t*), through `s.simulate(x0, 10, steps=None, method=..., backend=\"numpy\", rtol=1e-9, "
          "atol=1e-11, max_steps=100000)`, against scipy's DOP853 at the same rtol; CPU time, median of "
          f"{REPS}; `attempts`: accepted + rejected steps (DOP853: nfev / 12). A method reaches t* when it ends with "
          f"status -1 within 1e-6 t* of it by a collapsed step (a run the end-of-run check cut earlier, where a Casimir the "
          f"method does not keep drifted beyond its tolerance, does not). References given up after {REF_EVALS} "
          f"evaluations (their steps creep): {', '.join(skipped) if skipped else 'none'}. "
          f"Total time {time.time() - t_start:.0f} s.\n\n"
          + markdown_table(["method", "runs", "reach t*", "worst time / DOP853"],
                           [[m, str(w[0]), str(w[1]), f"{w[2]:.2f}"] for m, w in summary.items()]) + "\n\n"
          + markdown_table(["algebra", "system", "r0", "t*", "method", "status", "|t_end - t*| / t*", "attempts",
                            "CPU [ms]", "/ DOP853"], rows))
    update_section("blow_up", md, "python benchmarks/blow_up.py")


if __name__ == "__main__":
    main()
