"""Final error of the adaptive RKMK pairs against rk853_projected at the same rtol, and their cost per step
with dexp^-1 truncated (the old terms: 5, 9, 5) and summed to round-off (now).

    .venv/bin/python benchmarks/rkmk_accuracy.py [--numba]

Writes the section "rkmk_accuracy" of benchmarks/RESULTS.md. Systems: free Euler-Poincare z' = ad*_{W z} z
with W = inverse of a random SPD inertia (B B^T / n + I, seed 1) and |z0| = 3 on so(5)
(``LieAlgebra.from_matrices`` of the 10 elementary skew matrices), so(4), se(3), and so(5), so(4) in a
random basis (``change_basis`` with P = I + 0.3 N(0, 1)); t in [0, 10], atol = rtol / 100; final
error |z(10) - ref| / |z0| against solve_ivp DOP853 at rtol 1e-13, reported as a multiple of rtol.
Cost per step: the wall time of the whole ``integrate`` call (generated code, numpy backend unless
--numba, compiled code cached before timing) divided by its accepted steps, median of 5 interleaved
repetitions, old and new terms alternating.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

from benchmarks._results import markdown_table, update_section  # noqa: E402
from integrators import METHODS, CoadjointProblem, integrate  # noqa: E402
from liegroups import named  # noqa: E402

RTOLS = (1e-6, 1e-8, 1e-10)
PAIRS = ("rkmk45", "rkmk853", "rkmk_tsit5")
OLD_TERMS = {"rkmk45": 5, "rkmk853": 9, "rkmk_tsit5": 5}
BACKEND = "numba" if "--numba" in sys.argv else "numpy"
REPS = 5




def systems():
    out = []
    for name, g in (("so(5)", named.so(5)), ("so(4)", named.so4()), ("se(3)", named.se3())):
        out.append((name, g))
        if name != "se(3)":
            P = np.eye(g.dim) + 0.3 * np.random.default_rng(5).standard_normal((g.dim, g.dim))
            out.append((name + " random basis", g.change_basis(P)))
    return out


def problem(g):
    rng = np.random.default_rng(1)
    n = g.dim
    B = rng.standard_normal((n, n))
    W = np.linalg.inv(B @ B.T / n + np.eye(n))
    z0 = rng.standard_normal(n)
    z0 *= 3.0 / np.linalg.norm(z0)
    P = CoadjointProblem(g, lambda z: z @ W.T, velocity_matrix=W, record_casimirs=False)
    ref = solve_ivp(lambda t, z: P.rhs(t, z), (0.0, 10.0), z0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
    return P, z0, ref


def run(P, z0, ref, method, rtol):
    t = time.perf_counter()
    r = integrate(P, z0, (0.0, 10.0), method=method, rtol=rtol, atol=rtol / 100, backend=BACKEND)
    dt = time.perf_counter() - t
    return np.linalg.norm(r.y[-1] - ref) / np.linalg.norm(z0) / rtol, dt / (len(r.t) - 1), len(r.t) - 1


def main():
    acc_rows, cost_rows = [], []
    for name, g in systems():
        P, z0, ref = problem(g)
        for rtol in RTOLS:
            proj = run(P, z0, ref, "rk853_projected", rtol)[0]
            row = [name, f"{rtol:.0e}", f"{proj:.2f}"]
            for m in PAIRS:
                old = dataclasses.replace(METHODS[m], terms=OLD_TERMS[m])
                e_new, _, _ = run(P, z0, ref, METHODS[m], rtol)
                e_old, _, _ = run(P, z0, ref, old, rtol)
                row.append(f"{e_new:.2f} ({e_new / proj:.1f}x) / {e_old:.1f}")
                if rtol == 1e-8:
                    t_new, t_old = [], []
                    for _ in range(REPS):
                        t_old.append(run(P, z0, ref, old, rtol)[1])
                        t_new.append(run(P, z0, ref, METHODS[m], rtol)[1])
                    cost_rows.append([name, m, f"{1e6 * np.median(t_old):.0f}", f"{1e6 * np.median(t_new):.0f}",
                                      f"{np.median(t_new) / np.median(t_old):.2f}"])
            acc_rows.append(row)
            print(" | ".join(row), flush=True)
    for r in cost_rows:
        print(" | ".join(r))
    md = ("Final error / rtol (relative to |z0| = 3) of the adaptive RKMK pairs with dexp^-1 summed to round-off, "
          "in parentheses its ratio to rk853_projected's on the same run, after the slash the same pair with the old "
          "truncated dexp^-1 (terms 5, 9, 5). Target of issue 24: <= 3x rk853_projected.\n\n"
          + markdown_table(["system", "rtol", "rk853_projected"] + [f"{m} new (x proj) / old" for m in PAIRS], acc_rows)
          + f"\n\nCost per accepted step at rtol 1e-8 ({BACKEND} backend, whole integrate call / steps, median of {REPS}), "
          "us:\n\n" + markdown_table(["system", "method", "old terms", "round-off", "new / old"], cost_rows))
    update_section(f"rkmk_accuracy_{BACKEND}", md, f"python benchmarks/rkmk_accuracy.py{' --numba' if BACKEND == 'numba' else ''}")


if __name__ == "__main__":
    main()
