"""Cost of output on a grid of 1000 points for the adaptive pairs (filled inside the generated loop,
integrators.codegen.dense_source) against the same adaptive run returning only its own accepted steps: paired,
interleaved, median of the per-pair ratios over several repetitions. Systems: the free rigid body (generated
so(3) path) and Euler-Poincare on se(3) with the defaults (backend "auto": these short runs stay in numpy),
and a Lie-Poisson system on so(5)* (dim 10, H = z.Mz/2, M symmetric positive definite) with rk853_projected
compiled (backend="numba", when numba is installed); rtol 1e-10, atol 1e-12, t in [0, 10].

Writes its table to benchmarks/RESULTS.md (section ``dense_output``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from integrators import CoadjointProblem, integrate
from integrators.analysis.rigid_body import free_rigid_body
from integrators.backends import numba_kernels
from liegroups import named
from servo import EulerPoincare

from _results import markdown_table, update_section


def cases():
    body = free_rigid_body((2.0, 1.0, 0.5))
    m0 = np.array([1.0, 0.3, 0.2])
    se3 = EulerPoincare(named.se3(), [2.0, 1.0, 0.5, 1.0, 1.0, 1.0]).problem()
    p0 = np.array([1.0, 0.3, 0.2, 0.1, 0.5, 0.2])
    out = []
    for name, prob, y0, methods in (("free rigid body so(3)", body, m0, ("rkmk45", "rkmk853", "rk45", "rk853")),
                                    ("Euler-Poincare se(3)", se3, p0, ("rkmk45", "rkmk853"))):
        out += [(f"{name}, {method}", prob, y0, method, "auto") for method in methods]
    if numba_kernels.available():
        rng = np.random.default_rng(1)
        B = rng.standard_normal((10, 10))
        M = B @ B.T / 10 + np.eye(10)
        so5 = CoadjointProblem(named.so(5), lambda z: z @ M, velocity_matrix=M, name="Lie-Poisson so(5)*")
        z0 = 0.5 * np.random.default_rng(101).standard_normal(10)
        out.append(("Lie-Poisson so(5), rk853_projected, numba", so5, z0, "rk853_projected", "numba"))
    return out


def run(reps):
    te = np.linspace(0.0, 10.0, 1000)
    rows = []
    for label, prob, y0, method, backend in cases():
        kw = dict(rtol=1e-10, atol=1e-12, backend=backend)
        bare = integrate(prob, y0, (0.0, 10.0), method=method, **kw)
        integrate(prob, y0, (0.0, 10.0), method=method, t_eval=te, **kw)
        ratios, tb, tg = [], [], []
        for _ in range(reps):
            s = time.perf_counter()
            integrate(prob, y0, (0.0, 10.0), method=method, **kw)
            b = time.perf_counter() - s
            s = time.perf_counter()
            integrate(prob, y0, (0.0, 10.0), method=method, t_eval=te, **kw)
            g = time.perf_counter() - s
            ratios.append(g / b)
            tb.append(b)
            tg.append(g)
        rows.append([label, str(bare.nsteps), f"{1e3 * statistics.median(tb):.2f}",
                     f"{1e3 * statistics.median(tg):.2f}", f"{statistics.median(ratios):.2f}",
                     f"{1e3 * (min(tg) - min(tb)):.2f}"])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--no-write", action="store_true", help="print only, do not update RESULTS.md")
    args = ap.parse_args()
    rows = run(args.reps)
    table = markdown_table(["run (rtol 1e-10, t in [0, 10])", "accepted steps", "bare ms", "1000-point grid ms",
                            "grid / bare (median of paired ratios)",
                           "grid - bare ms (fastest of each: the machine is shared)"], rows)
    md = (f"## Dense output of the adaptive pairs on a 1000-point grid\n\n"
          f"Same run with and without `t_eval` (1000 points), paired and interleaved, {args.reps} repetitions; "
          f"load average {os.getloadavg()[0]:.1f}. The generated loop fills the grid from each accepted step's own "
          f"stages (plus the interpolant's extra stages, DOP853: 3, for a step that contains output times; no "
          f"step is recomputed): per output time the weights b_i(s), theta(s) and its map to the state (the "
          f"exponential's action for RKMK, the projection for a projected pair). Compiled (the numba row) each "
          f"output time is evaluated in the loop as it is passed; the Python loops (the other rows) log the "
          f"steps that contain output times and evaluate all their output times in one generated numpy call."
          f"\n\n{table}\n")
    print(md)
    if not args.no_write:
        update_section("dense_output", md, "python benchmarks/dense_output.py")


if __name__ == "__main__":
    main()
