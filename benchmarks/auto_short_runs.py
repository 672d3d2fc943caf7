"""Short runs under backend="auto" once the generic kernel is loaded: the kernel, numpy, and what "auto" takes.

    .venv/bin/python benchmarks/auto_short_runs.py [--reps R] [--no-write]

Writes the section "auto_short_runs" of benchmarks/RESULTS.md (issue 24). On drawn systems of
benchmarks/drawn_systems.py (seed 24), ``s.simulate(x0, t1, rtol=1e-8, atol=1e-10, steps=...)`` for runs of 1 to
~30 steps, with and without an output grid, three ways in interleaved rounds (median CPU time of the calling
thread): backend="numba" made to take the generic kernel (what backend="numba" runs before the structure's own
loop is compiled), backend="numpy", and backend="auto" as it chooses with the generic kernel loaded in the process
and no specialised loop compiled (the auto column's backend is listed). The figure behind
integrators.backends.auto_compile.GENERIC_WORK (the work from which a loaded generic kernel is taken).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks._drawn_algebras import draw  # noqa: E402
from benchmarks._drawn_common import build_system, sysseed  # noqa: E402
from benchmarks._drawn_single import generic_covers, generic_only  # noqa: E402
from benchmarks._results import markdown_table, publish  # noqa: E402

SYSTEMS = (("so(4)", "free"), ("so(4)", "servo1"), ("Bianchi VI_-2.5", "free"), ("se(3) random basis", "servo2"),
           ("solvable R x_D R^5, random basis", "free"), ("so(5) random basis", "free"))
RUNS = ((0.05, 10), (1.0, 100), (10.0, None), (10.0, 1000))


def main():
    from integrators.backends import auto_compile, generic_kernel
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    generic_kernel.warm()
    auto_compile.compiled = lambda pl, kind: False        # no specialised loop: what auto takes before any compile
    auto_compile.submit = lambda key, job: None           # nothing queued
    drawn = dict(draw(24, False))
    rows = []
    for label, kind in SYSTEMS:
        alg = drawn[label]()
        alg.casimirs()
        s, x0f = build_system(alg, kind, sysseed(label, kind, 24))
        x0 = x0f(1.0)
        for t1, steps in RUNS:
            kw = dict(rtol=1e-8, atol=1e-10, steps=steps)
            go = {"numpy": lambda: s.simulate(x0, t1, backend="numpy", **kw),
                  "auto": lambda: s.simulate(x0, t1, backend="auto", **kw)}
            covered = generic_covers(s, x0, s.simulate(x0, t1, backend="numpy", **kw).method)
            if covered:   # (not the orbit space's RKMK steps of an almost abelian algebra: no generic kernel there)
                go["generic"] = lambda: generic_only(s.simulate, x0, t1, backend="numba", **kw)
            res = {k: f() for k, f in go.items()}
            tm = {k: [] for k in go}
            for _ in range(args.reps):
                for k, f in go.items():
                    c = time.thread_time()
                    f()
                    tm[k].append(time.thread_time() - c)
            med = {k: float(np.median(v)) * 1e3 for k, v in tm.items()}
            rows.append([label, kind, f"{t1:g}", "none" if steps is None else steps + 1, res["numpy"].nsteps,
                         res["numpy"].method, f"{med['generic']:.2f}" if covered else "(not run)", f"{med['numpy']:.2f}",
                         f"{med['auto']:.2f}", res["auto"].backend,
                         f"{med['numpy'] / med['generic']:.1f}x" if covered else "-"])
            print(" | ".join(map(str, rows[-1])), flush=True)
    load = os.getloadavg()
    md = [f"Load average {load[0]:.1f} at the end (2 cores, shared). Median of {args.reps} interleaved rounds, CPU "
          "time of the calling thread, rtol 1e-8, atol 1e-10; the generic kernel loaded, no specialised loop.", "",
          markdown_table(["algebra", "system", "t1", "grid points", "steps", "method", "generic kernel [ms]",
                          "numpy [ms]", "auto [ms]", "auto ran", "numpy / generic"], rows)]
    publish(md, "auto_short_runs", "Short runs under auto with the generic kernel loaded (issue 24)", not args.no_write,
            "benchmarks/auto_short_runs.py")


if __name__ == "__main__":
    main()
