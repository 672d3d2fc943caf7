"""Speed of the batched algebra operations and of the Casimir finder.

Times bracket / coad / coadjoint_exp on a batch of N = 10^6 vectors for so(3) and se(3), compares the
so(3) coadjoint operator ad*_w m = m x w with a hand-written numpy cross product (and np.cross), and
times `casimirs()` on a fresh copy of every named algebra (sympy linear algebra + lambdify, uncached).
Target: batched coad on so(3) within 3x of the hand-written cross product.

Run:  .venv/bin/python benchmarks/algebra_ops.py [--n 1000000] [--repeat 5]
Writes its table to benchmarks/RESULTS.md (section ``algebra_ops``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import markdown_table, update_section  # noqa: E402

from liegroups import LieAlgebra, named  # noqa: E402

TARGET_RATIO = 3.0


def best_time(f, repeat):
    """Minimum wall time of ``repeat`` calls (the least disturbed by other processes)."""
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def cross_by_hand(m, w):
    """m x w written out component by component (the reference a user would write)."""
    out = np.empty_like(m)
    m1, m2, m3 = m[:, 0], m[:, 1], m[:, 2]
    w1, w2, w3 = w[:, 0], w[:, 1], w[:, 2]
    out[:, 0] = m2 * w3 - m3 * w2
    out[:, 1] = m3 * w1 - m1 * w3
    out[:, 2] = m1 * w2 - m2 * w1
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="batch size (default 10^6)")
    ap.add_argument("--repeat", type=int, default=5, help="repetitions; the best is reported")
    ap.add_argument("--no-write", action="store_true", help="print only, do not update RESULTS.md")
    args = ap.parse_args(argv)
    n, rep = args.n, args.repeat
    rng = np.random.default_rng(0)

    rows = []
    so3 = named.so3()
    w, m = rng.standard_normal((2, n, 3))
    ref = cross_by_hand(m, w)
    assert np.allclose(so3.coad(w, m), ref) and np.allclose(np.cross(m, w), ref)
    t_hand = best_time(lambda: cross_by_hand(m, w), rep)
    t_np = best_time(lambda: np.cross(m, w), rep)
    rows.append(["so(3)", "hand-written m x w", f"{t_hand * 1e3:.1f}", "1.00"])
    rows.append(["so(3)", "np.cross(m, w)", f"{t_np * 1e3:.1f}", f"{t_np / t_hand:.2f}"])
    ratios = {}
    for alg in (so3, named.se3()):
        x, y = rng.standard_normal((2, n, alg.dim))
        for op, f in (("bracket", lambda: alg.bracket(x, y)), ("coad", lambda: alg.coad(x, y)),
                      ("coadjoint_exp", lambda: alg.coadjoint_exp(0.5 * x, y))):
            t = best_time(f, rep)
            ratios[(alg.name, op)] = t / t_hand
            rows.append([alg.name, op, f"{t * 1e3:.1f}", f"{t / t_hand:.2f}"])
    table1 = markdown_table(["algebra", f"operation on {n:,} vectors", "time [ms]", "/ hand-written cross"], rows)

    crows = []
    for key, g in named.all_named().items():
        fresh = LieAlgebra(g.structure_constants, name=g.name)  # no cached Casimirs
        t = time.perf_counter()
        cas = fresh.casimirs()
        dt = time.perf_counter() - t
        formulas = "; ".join(str(c) for c in cas) or "(none polynomial)"
        crows.append([key, g.dim, f"{len(cas)}/{cas.expected}", f"{dt * 1e3:.0f}", formulas])
    table2 = markdown_table(["algebra", "dim", "found/expected", "casimirs() [ms]", "Casimirs"], crows)

    ratio = ratios[("so(3)", "coad")]
    verdict = (f"Batched `coad` on so(3): {ratio:.2f}x the hand-written cross product "
               f"(target <= {TARGET_RATIO:g}x: {'met' if ratio <= TARGET_RATIO else 'MISSED'}).")
    md = "\n\n".join([f"Best of {rep} runs, batch of {n:,} vectors (float64).", table1, verdict,
                      "Casimir finder, fresh algebra (exact rational linear algebra + lambdify):", table2])
    print(md)
    if not args.no_write:
        update_section("algebra_ops", md, "python benchmarks/algebra_ops.py")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
