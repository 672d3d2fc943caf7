"""Friction rate of the Chaplygin sleigh (sweep)
=============================================

Realization of the Chaplygin sleigh by anisotropic friction: the rate in N, as a sweep.

Kozlov's Theorem 1 (Kozlov's lectures on servo-constraints; Kozlov 2019, section 4): replacing the blade
of the Chaplygin sleigh (entry ``chaplygin_sleigh``) by viscous friction -N v across it (entry
``sleigh_friction``) gives motions that tend to the nonholonomic ones as N -> infinity, with an error
O(1/N) on a finite time interval. The ``friction_rate`` measure runs the friction sleigh at each N and
compares its body velocities (u, v, w) with the exact nonholonomic solution u = U tanh(k t + c),
w = w0 cosh(c)/cosh(k t + c); ``catalog.sweeps.fit_rate`` fits e(N) = C N^p (expected p = -1), and
N e(N) tends to C. A second sweep varies the initial spin w0 at fixed N: the constant C grows with it.

Run:  python examples/sweep_friction_rate.py [--full] [--workers N | --scheduler ADDR | --serial]
      (default 6 values of N in [10, 1000] and 5 of w0; --full 25 and 25). Output in
      examples/output/sweep_friction*/.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a source checkout
import catalog  # noqa: E402
from catalog.sweeps import fit_rate  # noqa: E402

OUT = Path(__file__).resolve().parent / "output"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="25 values of N and of w0")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--scheduler", default=None)
    ap.add_argument("--serial", action="store_true")
    a = ap.parse_args(argv)
    n = 25 if a.full else 6
    run = dict(workers=a.workers, scheduler=a.scheduler, serial=a.serial, options={"t_end": 3.0, "steps": 60})

    r = catalog.sweep("sleigh_friction", {"N": f"10:1000:{n}:log"}, "friction_rate", **run)
    r.save(OUT / "sweep_friction")
    p, C = fit_rate(r)
    print(f"sleigh_friction -> chaplygin_sleigh over N in [10, 1000] ({r.grid.size} points, {r.info['engine']}, "
          f"{r.info['wall_time']:.1f} s, {r.failed} failed)")
    print(f"{'N':>10s} {'e(N)':>12s} {'N e(N)':>10s}")
    for N, e, Ne in zip(r.column("N"), r.column("limit_error"), r.column("N_times_error")):
        print(f"{N:10.1f} {e:12.4e} {Ne:10.4f}")
    print(f"fit e(N) = C N^p: p = {p:.4f} (Theorem 1: p = -1), C = {C:.4f}")

    m = 25 if a.full else 5
    s = catalog.sweep("sleigh_friction", {"w0": f"0.25:2:{m}"}, "friction_rate", fixed={"N": 200.0}, **run)
    s.save(OUT / "sweep_friction_w0")
    print(f"at N = 200 over w0 in [0.25, 2]: N e(N) = " +
          ", ".join(f"{w:.2f}: {v:.3f}" for w, v in zip(s.column("w0"), s.column("N_times_error"))))


if __name__ == "__main__":
    main()
