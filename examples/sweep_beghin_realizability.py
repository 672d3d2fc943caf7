"""Realizability map of Beghin's body (sweep)
==========================================

Realizability map of Beghin's body over the direction of the control axis n.

Beghin's example (Kozlov 2019, sections 6-7; Kozlov's lectures on servo-constraints): a rigid body whose
angular velocity is kept orthogonal to the body axis l = e3 by a control torque lambda n. The
servo-constraint is realizable iff Kozlov's number (I^-1 l, n) is not zero. Over the sphere of unit
directions n = (sin(theta) cos(phi), sin(theta) sin(phi), cos(theta)) the number is the linear function
n . v, v = I^-1 l, so the unrealizable directions are the great circle orthogonal to v:
tan(theta) = -v3 / (v1 cos(phi) + v2 sin(phi)). The sweep measures the number at every grid point (the
system itself refuses to exist on the circle, which the measure records as "not realizable"), and this
script compares the map with n . v and the sign changes with the great circle.

Run:  python examples/sweep_beghin_realizability.py [--full] [--workers N | --scheduler ADDR | --serial]
      (default 19 x 37 directions; --full 181 x 361). Output in examples/output/sweep_beghin/.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a source checkout
import catalog  # noqa: E402
from catalog.sweeps import grid  # noqa: E402

OUT = Path(__file__).resolve().parent / "output" / "sweep_beghin"


def beghin(theta, phi):
    """Beghin's body with the control axis n at polar angle theta and azimuth phi."""
    n = (np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta))
    return catalog.get("beghin_body", n=n)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="181 x 361 directions")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--scheduler", default=None)
    ap.add_argument("--serial", action="store_true")
    a = ap.parse_args(argv)
    nt, nph = (181, 361) if a.full else (19, 37)
    g = grid(theta=f"0:{np.pi}:{nt}", phi=f"0:{2 * np.pi}:{nph}")
    res = catalog.sweep(beghin, g, "realizability", workers=a.workers, scheduler=a.scheduler, serial=a.serial)
    paths = res.save(OUT)

    e = catalog.get("beghin_body")
    v = np.linalg.solve(e.extras["inertia"], e.extras["a"])  # I^-1 l
    th, ph = res.column("theta"), res.column("phi")
    n = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1)
    r = res.column("realizability")
    print(f"Beghin's body, l = e3, I^-1 l = {np.round(v, 6).tolist()}: {g.describe()}, "
          f"{res.info['engine']} on {res.info['workers']} workers, {res.info['wall_time']:.1f} s")
    print(f"max |(I^-1 l, n) - n . v| over the grid: {np.nanmax(np.abs(r - n @ v)):.2e}  (failed points: {res.failed})")
    print(f"realizable directions: {int(np.sum(res.column('realizable') == 1))} of {g.size}; "
          f"(I^-1 l, n) ranges over [{np.nanmin(r):.4f}, {np.nanmax(r):.4f}] = [-|v|, |v|] = +-{np.linalg.norm(v):.4f}")
    # where the sign changes along theta at fixed phi, compare with the great circle
    R = res.on_grid("realizability")
    thetas, phis = g.axes["theta"], g.axes["phi"]
    worst = 0.0
    for j, p in enumerate(phis):
        k = np.nonzero(np.sign(R[:-1, j]) * np.sign(R[1:, j]) < 0)[0]
        t_circle = np.arctan2(-v[2], v[0] * np.cos(p) + v[1] * np.sin(p)) % np.pi
        for i in k:  # the crossing lies between thetas[i] and thetas[i + 1]
            worst = max(worst, 0.0 if thetas[i] <= t_circle <= thetas[i + 1] else np.inf)
    print("every sign change of the map brackets the great circle n . I^-1 l = 0:", "yes" if worst == 0 else "NO")
    print("files:", ", ".join(p for p in paths.values() if p))


if __name__ == "__main__":
    main()
