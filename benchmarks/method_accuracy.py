"""Is every adaptive method as accurate as asked, on systems no benchmark chose? The final error of each adaptive
pair of liedyn through ``s.simulate`` on the drawn systems of benchmarks/drawn_systems.py (seed 24: so(5), sp(4),
sl(3), so(4), se(3), two Bianchi types, each in its own and a random basis, two random solvable algebras; free,
servo of the first and of the second kind), next to scipy's RK45 and DOP853 at the same rtol with the hand-written
numpy rhs of drawn_systems (a user's yardstick).

Per system: its inertia and initial state (r0 = 1, halved until the tight reference -- solve_ivp DOP853 at rtol
1e-13, atol 1e-15, the hand rhs -- stays within 10 r0 on [0, 10]; a system whose reference fails at every r0 is
listed and skipped); t in [0, 10], atol = rtol / 100, no output grid; the error is |z(10) - ref|_inf over
max(|z0|_inf, |ref(10)|_inf), written as a multiple of rtol. A run that ends with status -1 is marked "!".
Summary per method: the largest error / rtol with scipy's figures on that run, and the runs above 10 rtol, with how
many of them scipy's pair of the same order (RK45 for the 5(4) pairs rk45, tsit5, rkmk45, rkmk_tsit5 and their
projected versions; DOP853 for rk853, rk853_projected, rkmk853) is above 10 rtol too.

    python benchmarks/method_accuracy.py          # writes the section method_accuracy of RESULTS.md
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._drawn_common import KINDS, T, build_system, hand_rhs, sysseed  # noqa: E402  (sets OPENBLAS_NUM_THREADS)

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

from benchmarks._drawn_algebras import draw  # noqa: E402
from benchmarks._results import markdown_table, update_section  # noqa: E402

METHODS = ("rk45", "tsit5", "rk45_projected", "tsit5_projected", "rkmk45", "rkmk_tsit5",
           "rk853", "rk853_projected", "rkmk853")
EIGHT = ("rk853", "rk853_projected", "rkmk853")
RTOLS = (1e-6, 1e-9)
MAX_STEPS = 100_000


def _system(alg, label, kind):
    """(system, z0 of the problem, x0 of the system, reference end state) or None when no r0 keeps it bounded."""
    s, x0f = build_system(alg, kind, sysseed(label, kind, 24))
    f = hand_rhs(s.problem())
    for r0 in (1.0, 0.5, 0.25, 0.125):
        x0 = x0f(r0)
        z0 = s.to_problem(x0)
        ref = solve_ivp(f, (0.0, T), z0, method="DOP853", rtol=1e-13, atol=1e-15)
        if ref.status == 0 and np.max(np.abs(ref.y)) <= 10 * r0:
            return s, f, z0, x0, ref.y[:, -1]
    return None


def main():
    from integrators import METHODS as REGISTRY
    from integrators.methods.registry import applies
    rows, worst, skipped, t_start = [], {}, [], time.time()
    for label, make in draw(24, False):
        alg = make()
        for kind in KINDS:
            got = _system(alg, label, kind)
            if got is None:
                skipped.append(f"{label} {kind}")
                continue
            s, f, z0, x0, ref = got
            P = s.problem()
            scale = max(float(np.max(np.abs(z0))), float(np.max(np.abs(ref))))
            for rtol in RTOLS:
                sp = {m: float(np.max(np.abs(solve_ivp(f, (0.0, T), z0, method=m, rtol=rtol, atol=rtol / 100).y[:, -1]
                                             - ref))) / scale / rtol for m in ("RK45", "DOP853")}
                cells = [f"{sp['RK45']:.2g}", f"{sp['DOP853']:.2g}"]
                for m in METHODS:
                    if not applies(REGISTRY[m], P):
                        cells.append("-")
                        continue
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = s.simulate(x0, T, steps=None, method=m, backend="numpy", rtol=rtol, atol=rtol / 100,
                                       max_steps=MAX_STEPS)
                    z = np.asarray(r.outputs["z"] if "z" in r.outputs else r.y)[-1][:len(ref)]
                    e = float(np.max(np.abs(z - ref))) / scale / rtol
                    base = sp["DOP853" if m in EIGHT else "RK45"]
                    w = worst.setdefault(m, [0, 0.0, "", 0, 0])   # runs, largest, where, above 10, scipy too
                    w[0] += 1
                    if e > w[1]:
                        w[1], w[2] = e, (f"{label} {kind} at {rtol:.0e} (scipy RK45 {sp['RK45']:.3g}, "
                                         f"DOP853 {sp['DOP853']:.3g})")
                    if e > 10.0:
                        w[3] += 1
                        w[4] += base > 10.0
                    cells.append(f"{e:.2g}" + ("" if r.status == 0 else " !"))
                rows.append([label, kind, f"{rtol:.0e}"] + cells)
                print(" | ".join(rows[-1]), flush=True)
    summary = markdown_table(
        ["method", "runs", "largest error / rtol", "where", "runs above 10 rtol (scipy's pair too)"],
        [[m, str(w[0]), f"{w[1]:.3g}", w[2], f"{w[3]} ({w[4]})"] for m, w in worst.items()])
    md = ("## Accuracy of every adaptive method on the drawn systems (issue 24)\n\n"
          "The final error of each adaptive pair through `s.simulate` (numpy backend, no output grid, t in [0, 10], "
          "atol = rtol / 100) on the drawn systems of benchmarks/drawn_systems.py (seed 24), as a multiple of rtol "
          "(|z(10) - ref|_inf / max(|z0|_inf, |ref(10)|_inf), ref: DOP853 at rtol 1e-13 with the hand-written rhs), "
          "next to scipy's RK45 and DOP853 on the same rhs at the same rtol; '-': the method does not apply (a "
          "projected pair needs polynomial Casimirs and no forcing); '!': the run ended with status -1. Systems "
          "whose reference leaves 10 r0 at every r0 in 1, 1/2, 1/4, 1/8 are skipped: "
          + (", ".join(skipped) if skipped else "none") + f". Total time {time.time() - t_start:.0f} s.\n\n"
          + summary + "\n\n"
          + markdown_table(["algebra", "system", "rtol", "scipy RK45", "scipy DOP853"] + list(METHODS), rows))
    update_section("method_accuracy", md, "python benchmarks/method_accuracy.py")


if __name__ == "__main__":
    main()
