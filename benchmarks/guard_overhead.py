"""Cost of the guards of integrators.engine.guard (check=True, the default) against check=False, same runs,
interleaved, median of several repetitions: fixed-step runs on the generic numpy path (Euler-Poincare
on se(3), servo of the first kind on so(3)) and on the generated so(3) path (free rigid body), and a
short adaptive run on the compiled path (Suslov's problem, rk45 numba, the run of
benchmarks/compare_integrators.py), where the check is a large part of the whole call (each of its
repetitions is the mean of 200 calls).

Writes its table to benchmarks/RESULTS.md (section ``guard_overhead``).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from integrators import integrate
from integrators.backends import numba_kernels
from integrators.analysis.rigid_body import REFERENCE_INERTIA, free_rigid_body
from liegroups import named
from servo import EulerPoincare, Nonholonomic, ServoFirstKind

from _results import markdown_table, update_section


def cases():
    se3 = EulerPoincare(named.se3(), [2.0, 1.0, 0.5, 1.0, 1.0, 1.0])
    s1 = ServoFirstKind(named.so3(), [2.0, 1.0, 0.5], a=[0.0, 0.0, 1.0], b=[0.0, 1.0, 1.0])
    body = free_rigid_body((2.0, 1.0, 0.5))
    m0 = np.array([1.0, 0.3, 0.2, 0.1, 0.5, 0.2])
    sus = Nonholonomic(named.so3(), np.diag(REFERENCE_INERTIA), a=[1.0, 0.5, -0.2])
    P, z0 = sus.problem(), sus.state_from(w=[0.6, 0.4, 0.0], project=True)
    backend = "numba" if numba_kernels.available() else "numpy"
    short = [(f"Suslov so(3), rk45 {backend}, rtol 3e-7 (12 steps)",
              lambda c: integrate(P, z0, (0.0, 10.0), "rk45", rtol=3e-7, atol=3e-9, backend=backend, check=c), 200)]
    return short + [(name, run, 1) for name, run in [
        ("EP se(3), rkmk4, 2000 steps", lambda c: integrate(se3.problem(), m0, (0, 10), "rkmk4", steps=2000, check=c)),
        ("servo1 so(3), rk4, 2000 steps", lambda c: s1.simulate(s1.state_from(w=[1.0, 0.5, 0.0]), 10, steps=2000,
                                                               method="rk4", check=c)),
        ("servo1 so(3), cf4, 2000 steps", lambda c: s1.simulate(s1.state_from(w=[1.0, 0.5, 0.0]), 10, steps=2000,
                                                               method="cf4", check=c)),
        ("rigid body so(3) (generated), rkmk4, 20000 steps",
         lambda c: integrate(body, [1.0, 0.2, 0.3], (0, 100), "rkmk4", steps=20000, check=c)),
    ]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    for name, run, inner in cases():
        run(True), run(False)  # warm up (compilation, caches)
        on, off = [], []
        for _ in range(args.repeat):
            for flag, acc in ((True, on), (False, off)):
                t = time.perf_counter()
                for _ in range(inner):
                    res = run(flag)
                acc.append((time.perf_counter() - t) / inner)
            assert res.status == 0, res.message
        a, b = statistics.median(on), statistics.median(off)
        rows.append([name, f"{b * 1e3:.3g}", f"{a * 1e3:.3g}", f"{100 * (a / b - 1):+.1f}%",
                     f"{100 * (min(on) / min(off) - 1):+.1f}%"])
    md = "\n\n".join([f"Whole `integrate` / `simulate` call, median of {args.repeat} interleaved repetitions.",
                      markdown_table(["run", "check=False [ms]", "check=True [ms]", "overhead (medians)",
                                      "overhead (best of each)"], rows)])
    print(md)
    if not args.no_write:
        update_section("guard_overhead", md, "python benchmarks/guard_overhead.py")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
