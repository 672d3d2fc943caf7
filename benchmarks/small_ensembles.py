"""Small ensembles through ``simulate`` on algebras in a dense basis, against a loop of scipy's DOP853.

    .venv/bin/python benchmarks/small_ensembles.py [--reps R] [--no-write]

Writes the section "small_ensembles" of benchmarks/RESULTS.md (issue 24). A researcher's batch of a few initial
states on an algebra of their own: drawn systems of benchmarks/drawn_systems.py (seed 24) in random bases, B states
x0 + 5% noise (projected onto the constraint), t in [0, 10], ``s.simulate(X, 10.0, rtol=1e-8, atol=1e-10)`` with its
default method and 1000-step output grid, four ways: numpy with shared steps (simulate's default ensemble), numpy
with independent steps, "auto" with independent steps and the generic ensemble kernel loaded in the process (what
a session that ran an ensemble before takes), and the loop a user writes instead: solve_ivp DOP853 per state with
the same rtol, atol and t_eval and a hand-written numpy rhs. Median CPU time of the process over interleaved
rounds; the final error of each (the largest over the states, against DOP853 at rtol 1e-13) says the accuracies
match. The last rows: states of sp(4) in a random basis with a servo-constraint of the first kind around r0 = 2,
some of which blow up: which trajectories each tool reports as stopped (liedyn's growth check cuts a trajectory
that stepped across a pole at its peak, integrators.engine.growth), against DOP853's peaks at two tolerances.
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
from scipy.integrate import solve_ivp  # noqa: E402

from benchmarks._drawn_algebras import draw  # noqa: E402
from benchmarks._drawn_common import build_system, hand_rhs, sysseed  # noqa: E402
from benchmarks._results import markdown_table, publish  # noqa: E402

SYSTEMS = (("sl(3) random basis", "free", 1.0), ("so(5) random basis", "free", 1.0),
           ("sp(4) random basis", "servo1", 1.0), ("se(3) random basis", "servo2", 1.0))
B, T, RTOL, ATOL = 8, 10.0, 1e-8, 1e-10


def _states(s, x0, kind, seed):
    X = x0 + 0.05 * np.abs(x0).max() * np.random.default_rng(seed).standard_normal((B, x0.size))
    return s.check_state(X, project=True) if kind != "free" else X


def _z(res):
    return np.asarray(res.outputs["z"] if "z" in res.outputs else res.y)


def main():
    from integrators.backends import generic_ensemble, numba_kernels
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    have_numba = numba_kernels.available()
    if have_numba:
        generic_ensemble.warm()      # loaded in this process, as after an earlier ensemble
    drawn = dict(draw(24, False))
    grid = np.linspace(0.0, T, 1001)
    rows, blow = [], []
    for label, kind, r0 in SYSTEMS + (("sp(4) random basis", "servo1", 2.0),):
        s, x0f = build_system(drawn[label](), kind, sysseed(label, kind, 24))
        X = _states(s, x0f(r0), kind, 5)
        Z0 = s.to_problem(X)
        f = hand_rhs(s.problem())
        kw = dict(rtol=RTOL, atol=ATOL)
        go = {"numpy shared": lambda: s.simulate(X, T, backend="numpy", **kw),
              "numpy independent": lambda: s.simulate(X, T, backend="numpy", ensemble="independent", **kw),
              "DOP853 loop": lambda: [solve_ivp(f, (0.0, T), z, method="DOP853", t_eval=grid, **kw) for z in Z0]}
        if have_numba:
            go["auto independent"] = lambda: s.simulate(X, T, ensemble="independent", **kw)
        res = {k: g() for k, g in go.items()}
        tm = {k: [] for k in go}
        for _ in range(args.reps):
            for k, g in go.items():
                c = time.process_time()
                g()
                tm[k].append(time.process_time() - c)
        med = {k: float(np.median(v)) * 1e3 for k, v in tm.items()}
        if r0 != 1.0:     # the blow-up rows: what each reports
            for k in go:
                if k == "DOP853 loop":
                    stopped = [b for b, r in enumerate(res[k]) if r.status != 0]
                    ends = [f"{r.t[-1]:.4f}" for r in res[k]]
                else:
                    stopped = [int(b) for b in getattr(res[k], "failed", [])]
                    ends = [f"{v:.4f}" for v in np.ravel(getattr(res[k], "t_end", np.full(B, res[k].t[-1])))]
                blow.append([k, f"{med[k]:.0f}", str(stopped), " ".join(ends)])
            for tol in (1e-10, 1e-13):   # a pole's peak grows as the tolerance tightens; a finite excursion's does not
                refs = [solve_ivp(f, (0.0, T), z, method="DOP853", rtol=tol, atol=tol * 1e-2) for z in Z0]
                blow.append([f"DOP853 rtol {tol:g}: the largest abs(z) of each", "-",
                             str([b for b, r in enumerate(refs) if r.status != 0]),
                             " ".join(f"{np.max(np.abs(r.y)):.2e}" for r in refs)])
            continue
        ref = np.array([solve_ivp(f, (0.0, T), z, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1] for z in Z0])
        for k in go:
            end = (np.array([r.y[:, -1] for r in res[k]]) if k == "DOP853 loop" else _z(res[k])[-1])
            method = "DOP853" if k == "DOP853 loop" else res[k].method
            backend = "scipy" if k == "DOP853 loop" else res[k].backend.split(";")[0]
            rows.append([label, kind, k, method, backend, f"{float(np.max(np.abs(end - ref))):.0e}", f"{med[k]:.1f}",
                         f"{med[k] / med['DOP853 loop']:.2f}x"])
            print(" | ".join(map(str, rows[-1])), flush=True)
    load = os.getloadavg()
    md = [f"Load average {load[0]:.1f} at the end (2 cores, shared). {B} states, t in [0, {T:g}], rtol {RTOL:g}, atol "
          f"{ATOL:g}, the 1000-step grid; median of {args.reps} interleaved rounds, CPU time of the process; error: "
          "the largest final error over the states against DOP853 at rtol 1e-13.", "",
          markdown_table(["algebra", "system", "tool", "method", "ran", "error", "CPU [ms]", "/ DOP853 loop"], rows),
          "", "**Near a blow-up**: sp(4) in a random basis with a servo-constraint of the first kind, the states around "
          "r0 = 2 (the trajectories stopped early and the time each reached; for the two DOP853 references the "
          "largest abs(z) of each, which tells a pole, whose peak grows with the tolerance, from a finite excursion):",
          "", markdown_table(["tool", "CPU [ms]", "stopped", "t reached (references: the largest abs(z))"], blow)]
    publish(md, "small_ensembles", "Small ensembles in a dense basis through simulate (issue 24)", not args.no_write,
            "benchmarks/small_ensembles.py")


if __name__ == "__main__":
    main()
