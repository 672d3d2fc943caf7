"""The user's path against the prebuilt problem: ``s.simulate(...)`` minus ``integrate(s.problem(), ...)``.

    .venv/bin/python benchmarks/user_path.py [--quick]

Writes the section "user_path" of benchmarks/RESULTS.md (issue 24, target: at most 0.2 ms above
``integrate`` on any algebra of dimension <= 10).

On so(3), se(3), so(4), so(5) and sl(3) (dimensions 3, 6, 6, 10, 8; so(5) and sl(3) from their matrices)
a free Euler-Poincare system, a servo-constraint of the first and of the second kind with a random SPD
inertia and random covectors: the same run twice, ``s.simulate(x0, 10.0)`` (its default method, grid and
tolerances) and ``integrate(P, s.to_problem(x0), (0, 10), method=..., steps=1000, rtol=1e-12,
atol=1e-14)`` on the problem the system keeps, in interleaved pairs (the order alternating); the figure
is the median of the paired differences with its interquartile range, and the median time of the call
itself. The first call of each (building the problem, recognising its structure) is excluded; it is listed
separately as "first simulate". "simulate's own work": ``s.simulate`` with ``integrate`` replaced by a stub that
returns its result at once, median of 200 calls (what the wrapper adds, without the noise of whole runs).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

QUICK = "--quick" in sys.argv
PAIRS = 21 if QUICK else 61


def algebras():
    from benchmarks._drawn_algebras import sl3
    from liegroups import named
    return [("so(3)", named.so3()), ("se(3)", named.se3()), ("so(4)", named.so4()), ("so(5)", named.so(5)),
            ("sl(3)", sl3())]


def main():
    from benchmarks._results import markdown_table, update_section
    from benchmarks._drawn_common import KINDS, build_system
    from integrators import integrate
    from servo.lie.method_choice import choose

    load0 = os.getloadavg()
    rows, worst, worst_wrap = [], 0.0, 0.0
    for name, alg in algebras():
        alg.casimirs()
        for k, kind in enumerate(KINDS if not QUICK else KINDS[:1]):
            s, x0f = build_system(alg, kind, 100 + k)
            x0 = x0f(0.5)
            t = time.perf_counter()
            s.simulate(x0, 10.0)
            first = time.perf_counter() - t
            P = s.problem()
            method, opts = choose(P)
            z0 = s.to_problem(x0)

            def sim():
                return s.simulate(x0, 10.0)

            def direct():
                return integrate(P, z0, (0.0, 10.0), method=method, steps=1000, **opts)

            a, b = sim(), direct()
            assert np.array_equal(np.asarray(a.outputs.get("z", a.y)), np.asarray(b.outputs.get("z", b.y))), \
                "simulate and integrate on the kept problem differ"
            d, ts, ti = [], [], []
            for i in range(PAIRS):
                order = (sim, direct) if i % 2 == 0 else (direct, sim)
                got = {}
                for go in order:
                    t = time.perf_counter()
                    go()
                    got[go] = time.perf_counter() - t
                d.append(got[sim] - got[direct])
                ts.append(got[sim])
                ti.append(got[direct])
            # the wrapper alone: simulate with integrate answered at once (its result reused), many calls
            import servo.lie.euler_poincare as ep
            real = ep.integrate
            ep.integrate = lambda *a_, **k_: b
            try:
                sim()
                w = []
                for _ in range(200):
                    t = time.perf_counter()
                    sim()
                    w.append(time.perf_counter() - t)
            finally:
                ep.integrate = real
            wrap = float(np.median(w))
            worst_wrap = max(worst_wrap, wrap)
            med = float(np.median(d))
            q1, q3 = np.percentile(d, [25, 75])
            worst = max(worst, med)
            rows.append([name, alg.dim, kind, method, f"{np.median(ti) * 1e3:.2f}", f"{np.median(ts) * 1e3:.2f}",
                         f"{med * 1e3:+.3f}", f"[{q1 * 1e3:+.3f}, {q3 * 1e3:+.3f}]", f"{wrap * 1e3:.3f}", f"{first * 1e3:.1f}"])
            print(" | ".join(str(v) for v in rows[-1]), flush=True)
    load1 = os.getloadavg()
    md = [f"Load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end ({os.cpu_count()} cores, shared). "
          f"{PAIRS} interleaved pairs per row.", "",
          "**`s.simulate(x0, 10.0)` minus `integrate(P, z0, ...)` on the problem the system keeps** (same method, "
          "grid, tolerances; the runs are checked bit-identical; target <= 0.2 ms)", "",
          markdown_table(["algebra", "dim", "system", "method", "integrate [ms]", "simulate [ms]",
                          "simulate - integrate [ms] (median)", "IQR [ms]", "simulate's own work [ms]",
                          "first simulate [ms]"], rows), "",
          f"Largest median difference {worst * 1e3:+.3f} ms; largest own work of simulate {worst_wrap * 1e3:.3f} ms "
          "(simulate with integrate replaced by a stub that returns at once, median of 200 calls: the checks of "
          "the state, the kept problem and method, the options; the paired difference of whole runs is that "
          "plus noise, which grows with the length of the run)."]
    text = "\n".join(md)
    print(text)
    if "--no-write" not in sys.argv:
        update_section("user_path", "## The user's path: simulate against integrate (issue 24)\n\n" + text,
                       "python benchmarks/user_path.py" + (" --quick" if QUICK else ""))


if __name__ == "__main__":
    main()
