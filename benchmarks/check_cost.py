"""The end-of-run check of one trajectory on simulate's default grid: its cost in a user's call, with and without
what makes it cheap.

    .venv/bin/python benchmarks/check_cost.py [--reps R] [--no-write]

Writes the section "check_cost" of benchmarks/RESULTS.md (issue 24). On drawn systems of
benchmarks/drawn_systems.py (seed 24), ``s.simulate(x0, 10.0, rtol=..., atol=rtol/100)`` with its default 1001-point
grid, on the generic kernel (what backend="numba" runs before the structure's own loop is compiled) and on numpy,
each call timed three ways in interleaved rounds (median CPU time of the calling thread):

* ``check``: as it is: the declared Casimirs on the saved states by the compiled row evaluator
  (integrators.backends.casimir_rows) and the figures of one long trajectory in a few array calls
  (integrators.engine.guard._figures_long);
* ``numpy check``: both replaced by what ran before them (each Casimir by its numpy monomial sums, the figures by
  the array path of ensembles, guard._figures);
* ``check=False``: no check at all (what the check costs on top of the run).

The rows are checked equal: the same states and the same checks' figures to round-off.
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

#: (algebra, system, r0, rtol): the tolerances and initial sizes drawn_systems chose for final error <= 1e-8
SYSTEMS = (("so(4)", "free", 1.0, 3e-8), ("Bianchi VI_-2.5", "servo2", 0.125, 1e-6),
           ("se(3) random basis", "servo2", 1.0, 1e-7), ("sl(3)", "servo2", 0.25, 3e-7), ("so(5)", "free", 1.0, 1e-7),
           ("sp(4) random basis", "free", 1.0, 3e-9))


def main():
    from integrators.backends import casimir_rows, generic_kernel
    from integrators.engine import guard
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if not __import__("integrators.backends.numba_kernels", fromlist=["x"]).available():
        raise SystemExit("check_cost needs numba (the generic kernel and the compiled Casimirs)")
    generic_kernel.warm()
    fast_figures, fast_values = guard._figures_long, casimir_rows.values

    def numpy_check():
        guard._figures_long = lambda q, raw, inv, kept, rts: guard._figures(q, raw, np.array(inv), np.array(kept), rts)
        casimir_rows.values = lambda *a: None

    def as_it_is():
        guard._figures_long, casimir_rows.values = fast_figures, fast_values

    drawn = dict(draw(24, False))
    rows = []
    for label, kind, r0, tol in SYSTEMS:
        alg = drawn[label]()
        alg.casimirs()
        s, x0f = build_system(alg, kind, sysseed(label, kind, 24))
        x0 = x0f(r0)
        meth = s.simulate(x0, 1.0, steps=None, backend="numpy").method
        # (no generic row where the generic kernel does not run the method: the orbit space's RKMK steps)
        for backend in ("generic", "numpy") if generic_covers(s, x0, meth) else ("numpy",):
            def call(**kw):
                if backend == "generic":
                    return generic_only(s.simulate, x0, 10.0, rtol=tol, atol=tol * 1e-2, backend="numba", **kw)
                return s.simulate(x0, 10.0, rtol=tol, atol=tol * 1e-2, backend="numpy", **kw)
            ways = {"check": (as_it_is, call), "numpy check": (numpy_check, call),
                    "check=False": (as_it_is, lambda: call(check=False))}
            out = {}
            for k, (setup, go) in ways.items():
                setup()
                out[k] = go()
            as_it_is()
            a, b = out["check"], out["numpy check"]
            assert a.status == b.status == 0 and np.array_equal(a.y, b.y), (label, kind)
            assert all(abs(a.checks[k] - b.checks[k]) <= 1e-6 * abs(b.checks[k]) + 1e-14 for k in b.checks)
            tm = {k: [] for k in ways}
            for _ in range(3):
                for setup, go in ways.values():
                    setup()
                    go()
            for _ in range(args.reps):
                for k, (setup, go) in ways.items():
                    setup()
                    c = time.thread_time()
                    go()
                    tm[k].append(time.thread_time() - c)
            as_it_is()
            med = {k: float(np.median(v)) * 1e3 for k, v in tm.items()}
            rows.append([label, kind, a.method, backend, len(a.t), f"{med['check']:.2f}", f"{med['numpy check']:.2f}",
                         f"{med['check=False']:.2f}", f"{med['check'] - med['check=False']:.2f}",
                         f"{med['numpy check'] - med['check=False']:.2f}"])
            print(" | ".join(map(str, rows[-1])), flush=True)
    load = os.getloadavg()
    md = [f"Load average {load[0]:.1f} at the end (2 cores, shared). Median of {args.reps} interleaved rounds, CPU "
          "time of the calling thread; the tolerances drawn_systems chose (final error <= 1e-8), the default grid. "
          "`check`: the call as it is; `numpy check`: the Casimirs by their numpy sums and the figures by the "
          "ensembles' array path (what ran before); `check=False`: no check; the last two columns what the check "
          "adds to the call each way.", "",
          markdown_table(["algebra", "system", "method", "backend", "saved states", "check [ms]", "numpy check [ms]",
                          "check=False [ms]", "check costs [ms]", "numpy check costs [ms]"], rows)]
    publish(md, "check_cost", "The end-of-run check of one trajectory (issue 24)", not args.no_write,
            "benchmarks/check_cost.py")


if __name__ == "__main__":
    main()
