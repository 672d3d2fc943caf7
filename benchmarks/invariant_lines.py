"""Benchmark: invariant lines v(xi) = c xi of random quadratic systems by homotopy continuation.

For p = 2..8, random systems Q ~ N(0, 1) (200 per p, 50 for p = 7, 8): fraction certified complete
(target 100 %), max residual |v(xi) - c xi| / |xi|^2 (target 1e-12), median and max wall time per
system (targets: median < 0.1 s for p <= 6, < 1 s for p = 8). Side by side:
- the exact sympy path (servo.quadratic.exact: binary cubic for p = 2, Groebner + fglm for
  p = 3, 4) on integer systems, with agreement of the line sets;
- the PyPI package `bertini` (Bertini 2 binding), a comparator only, if importable: the affine
  system v(eta) = eta, whose finite roots are eta = 0 and one eta per line with c != 0.
Results go to benchmarks/RESULTS.md (section invariant_lines).

Run: .venv/bin/python benchmarks/invariant_lines.py [--quick]
OPENBLAS_NUM_THREADS defaults to 1 here: with 2 threads the many tiny batched solves were 3-8x
slower on the shared 2-core machine.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _results import markdown_table, update_section  # noqa: E402

from servo import QuadraticSystem  # noqa: E402
from servo.quadratic.exact import exact_invariant_lines  # noqa: E402

COUNTS = {2: 200, 3: 200, 4: 200, 5: 200, 6: 200, 7: 50, 8: 50}
SYMPY = {2: 20, 3: 4, 4: 1}
BERTINI = {2: 10, 3: 10, 4: 5, 5: 3, 6: 2, 7: 1, 8: 1}


def homotopy_stats(p, n):
    times, cert, res, lines = [], 0, 0.0, []
    for k in range(n):
        q = QuadraticSystem(np.random.default_rng([7, p, k]).normal(size=(p, p, p)))
        t0 = time.perf_counter()
        L = q.invariant_lines()
        times.append(time.perf_counter() - t0)
        cert += L.certified
        res = max(res, L.max_residual)
        lines.append(L)
    return np.array(times), cert / n, res, lines


def same(L, E, tol=1e-7):
    if L.total_multiplicity != E.total_multiplicity:
        return False
    return all(any(abs(abs(np.vdot(l.direction, d)) - 1) < tol and abs(l.c - c) < tol * max(1, abs(c))
                   and l.multiplicity == m for l in L) for d, c, m in E.points)


def sympy_stats(p, n):
    times, agree = [], 0
    for k in range(n):
        q = QuadraticSystem(np.random.default_rng([11, p, k]).integers(-3, 4, size=(p, p, p)).astype(float))
        t0 = time.perf_counter()
        E = exact_invariant_lines(q)
        times.append(time.perf_counter() - t0)
        agree += same(q.invariant_lines(), E)
    return np.array(times), agree


def bertini_lines(Q):
    import bertini as pb
    p = Q.shape[0]
    xs = [pb.Variable(f"x{i}") for i in range(p)]
    system = pb.System()
    for i in range(p):
        f = -xs[i]
        for j in range(p):
            for k in range(p):
                f = f + pb.multiprec.Float(repr(float(Q[i, j, k]))) * xs[j] * xs[k]
        system.add_function(f)
    system.add_variable_group(pb.VariableGroup(xs))
    system.homogenize()
    system.auto_patch()
    solver = pb.nag_algorithm.ZeroDimCauchyDoublePrecisionTotalDegree(system)
    solver.solve()
    return [np.array([complex(v) for v in system.dehomogenize_point(s)]) for s in solver.solutions()]


def bertini_stats(p, lines):
    times, agree = [], 0
    for k, L in enumerate(lines):
        q = QuadraticSystem(np.random.default_rng([7, p, k]).normal(size=(p, p, p)))
        t0 = time.perf_counter()
        sols = bertini_lines(q.Q)
        times.append(time.perf_counter() - t0)
        # eta = xi / c for the lines with c != 0; eta = 0 is the trivial root
        ours = [l.direction / l.c for l in L if not l.is_equilibrium_line]
        finite = [s for s in sols if np.all(np.isfinite(s)) and np.linalg.norm(s) > 1e-8]
        ok = len(finite) == len(ours) and all(min(np.linalg.norm(s - e) / np.linalg.norm(e) for e in ours) < 1e-6
                                              for s in finite)
        agree += ok
    return np.array(times), agree


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a tenth of the systems, no RESULTS.md update")
    args = ap.parse_args(argv)
    try:
        import bertini  # noqa: F401
        have_bertini = True
    except Exception as exc:                      # a comparator only
        have_bertini = False
        print(f"bertini not available: {exc}")
    rows = []
    for p, n in COUNTS.items():
        n = max(3, n // 10) if args.quick else n
        t, cert, res, lines = homotopy_stats(p, n)
        row = [p, n, f"{cert:.1%}", f"{res:.1e}", f"{np.median(t):.3f}", f"{t.max():.3f}"]
        if p in SYMPY:
            ts, ag = sympy_stats(p, SYMPY[p])
            row += [f"{ag}/{SYMPY[p]} agree, median {np.median(ts):.2f} s"]
        else:
            row += ["not run (Groebner cost grows steeply: see p = 4)"]
        if have_bertini and p in BERTINI:
            tb, ag = bertini_stats(p, lines[:BERTINI[p]])
            row += [f"{ag}/{BERTINI[p]} agree, median {np.median(tb):.3f} s"]
        else:
            row += ["-"]
        rows.append(row)
        print(" | ".join(map(str, row)), flush=True)
    header = ["p", "systems", "certified", "max residual", "median s", "max s",
              "sympy exact (integer Q)", "bertini 2.0.0 (PyPI)"]
    table = markdown_table(header, rows)
    print(table)
    if not args.quick:
        note = ("Homotopy continuation in numpy (servo.quadratic.invariant_lines), all 2^p paths in one batch; "
                "targets: 100 % certified, residual < 1e-12, median < 0.1 s for p <= 6 and < 1 s for "
                "p = 8. Wall times on a 2-core machine shared with other jobs, OPENBLAS_NUM_THREADS=1.")
        update_section("invariant_lines", "## Invariant lines\n\n" + note + "\n\n" + table,
                       ".venv/bin/python benchmarks/invariant_lines.py")


if __name__ == "__main__":
    main()
