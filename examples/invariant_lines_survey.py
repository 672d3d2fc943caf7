"""Invariant lines of random quadratic systems
===========================================

Survey of the invariant lines of random homogeneous quadratic systems x' = v(x), p = 2..6.

For each p, seeded random systems with Q[i,j,k] ~ N(0, 1) are solved by homotopy continuation
(servo.quadratic.invariant_lines). Claim 4 of the slide "Общие свойства приведенных систем" (Kozlov's lectures) says:
if v(x) != 0 for real x != 0 and the number of invariant lines is finite, the number of real lines
(with multiplicity) is odd and at most 2^p - 1. The script counts the real lines, checks the parity
and the bound, prints a table and saves the distribution to examples/output/invariant_lines_survey.png.

Run: .venv/bin/python examples/invariant_lines_survey.py [--scale 0.5]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # run from a checkout
from servo import QuadraticSystem  # noqa: E402

COUNTS = {2: 80, 3: 50, 4: 25, 5: 12, 6: 6}


def survey(p, n, seed=0):
    rows = []
    for k in range(n):
        rng = np.random.default_rng([seed, p, k])
        q = QuadraticSystem(rng.normal(size=(p, p, p)))
        L = q.invariant_lines()
        real_eq = any(l.is_equilibrium_line for l in L.real)
        rows.append(dict(real=L.real_count, certified=L.certified, total=L.total_multiplicity,
                         real_eq=real_eq, residual=L.max_residual))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the number of systems per p")
    ap.add_argument("--out", default=str(Path(__file__).with_name("output")))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(COUNTS), figsize=(2.0 * len(COUNTS), 3), sharey=True)
    print(f"{'p':>2} {'systems':>7} {'certified':>9} {'bound 2^p-1':>11} {'mean real':>9} "
          f"{'min':>3} {'max':>3} {'odd':>5} {'<= bound':>8} {'max resid':>9} {'s/system':>8}")
    for ax, (p, n) in zip(axes, COUNTS.items()):
        n = max(2, int(n * args.scale))
        t0 = time.perf_counter()
        rows = survey(p, n)
        dt = (time.perf_counter() - t0) / n
        real = np.array([r["real"] for r in rows])
        hyp = np.array([r["certified"] and not r["real_eq"] for r in rows])
        odd = np.all(real[hyp] % 2 == 1)
        bound = np.all(real <= 2 ** p - 1)
        cert = np.mean([r["certified"] for r in rows])
        print(f"{p:>2} {n:>7} {cert:>9.0%} {2 ** p - 1:>11} {real.mean():>9.2f} {real.min():>3} "
              f"{real.max():>3} {str(odd):>5} {str(bound):>8} "
              f"{max(r['residual'] for r in rows):>9.1e} {dt:>8.3f}")
        ax.hist(real, bins=np.arange(0.5, 2 ** p + 0.5, 1), color="C0", rwidth=0.85)
        ax.set_title(f"p = {p}  ({n} systems)")
        ax.set_xlabel("real invariant lines")
        ax.set_xlim(0, min(2 ** p, 40))
    axes[0].set_ylabel("systems")
    fig.suptitle("Real invariant lines of random quadratic systems (odd, at most 2^p - 1)")
    fig.tight_layout()
    path = out / "invariant_lines_survey.png"
    fig.savefig(path, dpi=110)
    print(f"saved {path}")


if __name__ == "__main__":
    main()
