"""Invariant-line structure over two parameters (sweep)
====================================================

Invariant-line structure of two reduced systems over two parameters: where real lines appear,
merge, or change stability.

* The Chaplygin servo-sleigh (entry ``servo_sleigh``; Kozlov's lectures on servo-constraints) reduces to
  u' = alpha u w, w' = beta u w with alpha = a_u/b_v, beta = M c_w/(I b_v). Its invariant lines are u = 0
  and w = 0 (lines of equilibria, c = 0) and xi = (alpha, beta) with c = |alpha beta|/|(alpha, beta)|:
  three real lines for alpha beta != 0, two when a_u = 0 or c_w = 0 (the third merges with an axis).
  The stability of the rays on the circle of directions changes with the signs of alpha and beta.
* The rigid body with a flywheel (entry ``flywheel_body``, servo-constraint of the second kind,
  b = (0, b2, b3)): a reduced system with p = 3 (up to 2^3 - 1 = 7 lines).

The sweep runs ``invariant_lines`` (servo.invariant_lines: homotopy continuation, certified counts) at every
grid point; the heat maps show the number of real lines and of attracting rays. This script checks
the servo-sleigh map against the formula above and prints, for each system, the regions of the
(parameter, parameter) plane with their line structure.

Run:  python examples/sweep_invariant_lines.py [--full] [--workers N | --scheduler ADDR | --serial]
      (default 11 x 11 points per system; --full 81 x 81). Output in examples/output/sweep_lines_*/.
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a source checkout
import catalog  # noqa: E402

OUT = Path(__file__).resolve().parent / "output"


def regions(res, keys):
    """Count the grid points by (real lines, attracting, repelling, saddle)."""
    ok = res.column("error") == ""
    c = Counter(tuple(int(x) for x in row) for row in zip(*(res.column(k)[ok] for k in keys)))
    return sorted(c.items(), key=lambda kv: -kv[1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="81 x 81 points per system")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--scheduler", default=None)
    ap.add_argument("--serial", action="store_true")
    a = ap.parse_args(argv)
    n = 81 if a.full else 11
    run = dict(workers=a.workers, scheduler=a.scheduler, serial=a.serial)
    keys = ["real_lines", "attracting", "repelling", "saddle"]

    s = catalog.sweep("servo_sleigh", {"a_u": f"-1:1:{n}", "c_w": f"-1:1:{n}"}, "invariant_lines", **run)
    s.save(OUT / "sweep_lines_servo_sleigh")
    au, cw = s.column("a_u"), s.column("c_w")
    # M = I = b_v = 1: alpha = a_u, beta = c_w; at alpha = beta = 0 the field vanishes (a family, no isolated line)
    expect = np.where((au != 0) & (cw != 0), 3, np.where((au == 0) & (cw == 0), 0, 2))
    print(f"servo_sleigh over a_u x c_w ({s.grid.size} points, {s.info['engine']}, {s.info['wall_time']:.1f} s)")
    print(f"  real lines = 3 off the axes a_u = 0, c_w = 0, 2 on them, none isolated at the origin (v = 0): "
          f"{'yes' if np.array_equal(s.column('real_lines'), expect) else 'NO'} ({s.failed} failed points)")
    third = (au != 0) & (cw != 0)
    c_expect = np.abs(au * cw) / np.where(third, np.hypot(au, cw), 1.0)
    c_max = np.max(np.nan_to_num(np.stack([s.column(f"c_{k}") for k in (1, 2, 3)]), nan=-np.inf), axis=0)
    print(f"  c of the line (alpha, beta) against |alpha beta|/|(alpha, beta)|: max error "
          f"{np.max(np.abs(c_max[third] - c_expect[third])):.2e}")
    print("  regions (real lines, attracting, repelling, saddle): points")
    for k, v in regions(s, keys):
        print(f"    {k}: {v}")

    f = catalog.sweep("flywheel_body", {"b2": f"-1:1:{n}", "b3": f"0.2:2:{n}"}, "invariant_lines", **run)
    f.save(OUT / "sweep_lines_flywheel_body")
    print(f"flywheel_body over b2 x b3 ({f.grid.size} points, {f.info['engine']}, {f.info['wall_time']:.1f} s); "
          f"certified complete at {int(np.sum(f.column('certified') == 1))} points, {f.failed} failed")
    print("  regions (real lines, attracting, repelling, saddle): points")
    for k, v in regions(f, keys):
        print(f"    {k}: {v}")
    A = f.on_grid("attracting")
    b2 = f.grid.axes["b2"]
    changes = sorted({float(b2[i]) for i in range(len(b2) - 1) if np.any(A[i] != A[i + 1])})
    print(f"  the number of attracting rays changes between consecutive b2 grid values from: "
          f"{np.round(changes, 3).tolist()} (b2 = 0 is the Euler top: degenerate rays)")
    print(f"figures: {OUT / 'sweep_lines_servo_sleigh' / 'sweep.png'}, {OUT / 'sweep_lines_flywheel_body' / 'sweep.png'}")


if __name__ == "__main__":
    main()
