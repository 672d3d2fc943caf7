"""The PyPI package `bertini` (Bertini 2's Python binding) as a comparator of benchmarks/invariant_lines.py:
the affine system v(eta) = eta, whose finite roots are eta = 0 and one eta per line with c != 0. Never a
dependency of the package; the callers skip it when it is not importable."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servo import QuadraticSystem  # noqa: E402


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
    out = []
    for s in solver.solutions():
        try:
            out.append(np.array([complex(v) for v in system.dehomogenize_point(s)]))
        except RuntimeError:          # a failed path comes back as an empty point: counted as a non-finite root
            out.append(np.full(p, np.nan, dtype=complex))
    return out


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
