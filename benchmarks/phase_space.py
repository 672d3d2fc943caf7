"""Phase-space tools: cost of a Lyapunov spectrum against the flow alone, ensembles, Poincare sections,
and a resumable chart of the largest exponent on dask.

1. One trajectory of a 6-dimensional coadjoint problem (Kirchhoff body on se(3)*, affine velocity):
   ``integrators.lyapunov_spectrum`` (rk4, QR every step) against ``integrators.integrate`` (rk4, the same
   h and number of steps, the generated path with its default backend); interleaved, median of --repeat.
2. An ensemble of --traj trajectories of the same system over --qr QR steps (numpy, vectorized).
3. Sections of --orbits rigid-body orbits (rk4, hyperplane m2 = 0) for --t-sec time units.
4. A --chart x --chart chart of the largest exponent of ``sleigh_oscillating_mass`` over (A, xi) on a
   LocalCluster of 2 workers with ``store=``: interrupted after half of its chunks, resumed, and compared
   with an uninterrupted serial run (the tables must be identical).

Run:  python benchmarks/phase_space.py [--repeat 3] [--traj 100] [--qr 1000] [--orbits 100] [--chart 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import markdown_table, update_section  # noqa: E402

import catalog  # noqa: E402
import integrators  # noqa: E402
from catalog.sweeps import LargestExponent  # noqa: E402
from liegroups import named  # noqa: E402


def kirchhoff():
    g = named.se3()
    W = np.diag([1.0, 0.5, 1 / 3, 1.0, 0.8, 0.6])
    W[0, 4] = W[4, 0] = 0.1
    return integrators.CoadjointProblem(g, lambda z: z @ W.T, velocity_matrix=W)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--traj", type=int, default=100)
    ap.add_argument("--qr", type=int, default=1000)
    ap.add_argument("--orbits", type=int, default=100)
    ap.add_argument("--t-sec", type=float, default=200.0)
    ap.add_argument("--chart", type=int, default=10)
    a = ap.parse_args()
    rows = []
    p = kirchhoff()
    y0 = np.array([0.3, 0.2, 0.9, 1.0, 0.4, 0.1])
    h, n = 0.02, 5000
    tl, tf = [], []
    for _ in range(a.repeat):
        t = time.perf_counter()
        integrators.lyapunov_spectrum(p, y0, n * h, dt=h, h=h, leaf=None)
        tl.append(time.perf_counter() - t)
        t = time.perf_counter()
        integrators.integrate(p, y0, (0, n * h), method="rk4", h=h, save_every=n)
        tf.append(time.perf_counter() - t)
    ml, mf = statistics.median(tl), statistics.median(tf)
    rows.append(["spectrum of 1 trajectory, 6 x 6 tangent, 5000 rk4 steps, QR every step", f"{ml:.3f} s",
                 f"flow alone (integrate rk4): {mf:.3f} s; ratio {ml / mf:.1f}x (target <= 3x)"])
    rng = np.random.default_rng(0)
    Y = y0 + 0.1 * rng.standard_normal((a.traj, 6))
    t = time.perf_counter()
    integrators.lyapunov_spectrum(p, Y, a.qr * 0.05, dt=0.05, h=0.05, leaf=None)
    te = time.perf_counter() - t
    rows.append([f"{a.traj} trajectories x {a.qr} QR steps (numpy)", f"{te:.2f} s",
                 f"{te / (a.traj * a.qr) * 1e6:.1f} us per trajectory-step; 10^3 x 10^4 at this rate: "
                 f"{te / (a.traj * a.qr) * 1e7:.0f} s (target 30 s with numba)"])
    I = np.array([1.0, 2.0, 3.0])
    rb = integrators.CoadjointProblem(named.so3(), lambda z: z / I, velocity_matrix=np.diag(1 / I))
    Z = rng.standard_normal((a.orbits, 3))
    t = time.perf_counter()
    sec = integrators.poincare_section(rb, Z, (np.array([0.0, 1.0, 0.0]), 0.0), a.t_sec, h=0.05)
    ts = time.perf_counter() - t
    nc = int(np.sum(sec.info["crossings"]))
    rows.append([f"sections: {a.orbits} rigid-body orbits, {a.t_sec:g} time units (rk4, h = 0.05)", f"{ts:.2f} s",
                 f"{nc} crossings, {ts / max(nc, 1) * 1e6:.0f} us each; 10^6 crossings at this rate: "
                 f"{ts / max(nc, 1) * 1e6:.0f} s (target 10 s); max |g| at the points {sec.residual:.1e}"])
    k = a.chart
    grid = {"A": f"0.5:2:{k}", "xi": f"-0.5:0.5:{k}"}
    meas = LargestExponent(t_end=100.0, transient=20.0, steps_per_period=30)
    t = time.perf_counter()
    ref = catalog.sweep("sleigh_oscillating_mass", grid, meas, serial=True)
    t_ser = time.perf_counter() - t
    from catalog.sweeps import store as store_mod
    real = store_mod.ChunkStore.write
    with tempfile.TemporaryDirectory() as d:
        calls = {"n": 0}

        def dying(self, idx, cols):
            if calls["n"] >= 4:
                raise KeyboardInterrupt("interrupted")
            calls["n"] += 1
            real(self, idx, cols)

        store_mod.ChunkStore.write = dying
        t = time.perf_counter()
        try:
            catalog.sweep("sleigh_oscillating_mass", grid, meas, workers=2, store=Path(d) / "chart", chunk=max(1, k * k // 16))
        except KeyboardInterrupt:
            pass
        t_int = time.perf_counter() - t
        store_mod.ChunkStore.write = real
        t = time.perf_counter()
        res = catalog.sweep("sleigh_oscillating_mass", grid, meas, workers=2, store=Path(d) / "chart",
                            chunk=max(1, k * k // 16))
        t_res = time.perf_counter() - t
    same = all(np.array_equal(res.columns[c], ref.columns[c]) for c in ref.columns)
    rows.append([f"chart {k} x {k} of the largest exponent (sleigh_oscillating_mass, A x xi), 2 dask workers",
                 f"{t_int + t_res:.1f} s", f"interrupted after 4 chunks ({t_int:.1f} s, cluster start included), "
                 f"resumed ({t_res:.1f} s, {res.info['resumed']} points read back); serial uninterrupted "
                 f"{t_ser:.1f} s; tables identical: {same}; chaotic points: "
                 f"{int(np.sum(ref.columns['largest_exponent'] > 0.01))}"])
    md = ("Phase-space tools (integrators.analysis.phase_space, catalog.sweep store=). Reduced sizes: the machine is "
          "shared by 7 engineers; the rates are extrapolated where marked.\n\n"
          + markdown_table(["case", "time", "notes"], rows) + f"\n\nload average {os.getloadavg()[0]:.1f}")
    print(md)
    update_section("phase_space", md, "python benchmarks/phase_space.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
