"""Phase-space tools: cost of a Lyapunov spectrum against the flow alone, ensembles, Poincare sections,
and a resumable chart of the largest exponent on dask.

1. One trajectory of a 6-dimensional coadjoint problem (Kirchhoff body on se(3)*, affine velocity),
   5000 rk4 steps with a QR every step, the whole 6 x 6 tangent (leaf=None): ``lyapunov_spectrum`` with
   its defaults (backend "auto"), with backend="numba", with k=1 (the largest exponent only, numba) and
   the numpy loop (fast=False), against ``integrate`` (rk4, the same h and steps) with its defaults and
   with backend="numba"; interleaved, median of --repeat (the first, compiling, call is not counted).
2. An ensemble of --traj trajectories of the same system over --qr QR steps (h = dt = 0.05), numba,
   the whole spectrum; the numpy loop on --traj-ref x --qr-ref for its rate.
3. Sections of --orbits rigid-body orbits (rk4, h = 0.05, hyperplane m2 = 0, |m| = 2, random
   directions) until each has --crossings crossings (or t = --t-sec), with the defaults (the compiled
   section when numba is installed); the numpy path (backend="numpy") on --orbits-ref orbits for its rate.
4. A --chart x --chart chart of the largest exponent of ``sleigh_oscillating_mass`` over (A, xi) on a
   LocalCluster of 2 workers with ``store=``: interrupted after half of its chunks, resumed, and compared
   with an uninterrupted serial run (the tables must be identical).

Run:  python benchmarks/phase_space.py [--repeat 5] [--traj 1000] [--qr 10000] [--orbits 1000]
      [--crossings 1000] [--chart 10]
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


def _timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--traj", type=int, default=1000)
    ap.add_argument("--qr", type=int, default=10000)
    ap.add_argument("--traj-ref", type=int, default=100)
    ap.add_argument("--qr-ref", type=int, default=200)
    ap.add_argument("--orbits", type=int, default=1000)
    ap.add_argument("--crossings", type=int, default=1000)
    ap.add_argument("--t-sec", type=float, default=20000.0)
    ap.add_argument("--orbits-ref", type=int, default=100)
    ap.add_argument("--chart", type=int, default=10)
    a = ap.parse_args()
    rows = []
    loads = [os.getloadavg()[0]]
    p = kirchhoff()
    y0 = np.array([0.3, 0.2, 0.9, 1.0, 0.4, 0.1])
    h, n = 0.02, 5000
    runs = {
        "spectrum, defaults": lambda: integrators.lyapunov_spectrum(p, y0, n * h, dt=h, h=h, leaf=None),
        "spectrum, numba": lambda: integrators.lyapunov_spectrum(p, y0, n * h, dt=h, h=h, leaf=None, backend="numba"),
        "largest exponent (k=1), numba": lambda: integrators.lyapunov_spectrum(p, y0, n * h, dt=h, h=h, leaf=None,
                                                                               backend="numba", k=1),
        "spectrum, numpy loop (fast=False)": lambda: integrators.lyapunov_spectrum(p, y0, n * h, dt=h, h=h, leaf=None,
                                                                                   fast=False),
        "flow alone: integrate rk4, defaults": lambda: integrators.integrate(p, y0, (0, n * h), method="rk4", h=h,
                                                                            save_every=n),
        "flow alone: integrate rk4, numba": lambda: integrators.integrate(p, y0, (0, n * h), method="rk4", h=h,
                                                                         save_every=n, backend="numba"),
    }
    first = {k: _timed(f) for k, f in runs.items()}          # compiles (or loads numba's disk cache)
    times = {k: [] for k in runs}
    for _ in range(a.repeat):
        for k, f in runs.items():
            times[k].append(_timed(f)[0])
    med = {k: statistics.median(v) for k, v in times.items()}
    used = {k: getattr(first[k][1], "backend", "") for k in runs}
    flow_auto, flow_nb = med["flow alone: integrate rk4, defaults"], med["flow alone: integrate rk4, numba"]
    for k in runs:
        if k.startswith("flow"):
            note = f"backend {used[k]}"
        else:
            note = (f"backend {used[k]}; / flow (defaults, {used['flow alone: integrate rk4, defaults']}): "
                    f"{med[k] / flow_auto:.2f}x; / flow (numba): {med[k] / flow_nb:.1f}x")
        rows.append([f"1 trajectory, 5000 rk4 steps, QR every step: {k}", f"{med[k] * 1e3:.2f} ms",
                     note + f"; first call {first[k][0]:.2f} s"])
    loads.append(os.getloadavg()[0])
    rng = np.random.default_rng(0)
    Y = y0 + 0.1 * rng.standard_normal((a.traj, 6))
    te, res = _timed(lambda: integrators.lyapunov_spectrum(p, Y, a.qr * 0.05, dt=0.05, h=0.05, leaf=None,
                                                           backend="numba"))
    rows.append([f"{a.traj} trajectories x {a.qr} QR steps, whole 6 x 6 spectrum, numba", f"{te:.2f} s",
                 f"{te / (a.traj * a.qr) * 1e6:.2f} us per trajectory-step on {os.cpu_count()} cores (target: "
                 f"10^3 x 10^4 in 30 s); status {res.status}, largest exponent median "
                 f"{float(np.median(res.largest)):.3f}"])
    Yr = Y[:a.traj_ref]
    tr, _ = _timed(lambda: integrators.lyapunov_spectrum(p, Yr, a.qr_ref * 0.05, dt=0.05, h=0.05, leaf=None,
                                                         fast=False))
    rows.append([f"{a.traj_ref} trajectories x {a.qr_ref} QR steps, numpy loop (fast=False)", f"{tr:.2f} s",
                 f"{tr / (a.traj_ref * a.qr_ref) * 1e6:.1f} us per trajectory-step: 10^3 x 10^4 at this rate "
                 f"{tr / (a.traj_ref * a.qr_ref) * 1e7:.0f} s"])
    loads.append(os.getloadavg()[0])
    I = np.array([1.0, 2.0, 3.0])
    rb = integrators.CoadjointProblem(named.so3(), lambda z: z / I, velocity_matrix=np.diag(1 / I))
    Z = rng.standard_normal((a.orbits, 3))
    Z *= 2.0 / np.linalg.norm(Z, axis=1)[:, None]
    plane = (np.array([0.0, 1.0, 0.0]), 0.0)
    integrators.poincare_section(rb, Z[:2], plane, 10.0, h=0.05, backend="numba")   # compile / load
    ts, sec = _timed(lambda: integrators.poincare_section(rb, Z, plane, a.t_sec, h=0.05, max_crossings=a.crossings))
    cr = np.asarray(sec.info["crossings"])
    rows.append([f"sections: {a.orbits} rigid-body orbits up to {a.crossings} crossings each (rk4, h = 0.05, "
                 f"defaults)", f"{ts:.2f} s",
                 f"backend {sec.backend}; {int(cr.sum())} crossings ({int(np.count_nonzero(cr >= a.crossings))} "
                 f"orbits reached {a.crossings}; the fewest {int(cr.min())} by t = {a.t_sec:g}), "
                 f"{ts / max(int(cr.sum()), 1) * 1e6:.1f} us each (target 10^6 in 10 s); max |g| at the points "
                 f"{sec.residual:.1e}"])
    Zr = Z[:a.orbits_ref]
    tn, secn = _timed(lambda: integrators.poincare_section(rb, Zr, plane, 200.0, h=0.05, backend="numpy"))
    nc = int(np.sum(secn.info["crossings"]))
    rows.append([f"sections, numpy path: {a.orbits_ref} orbits, 200 time units", f"{tn:.2f} s",
                 f"{nc} crossings, {tn / max(nc, 1) * 1e6:.0f} us each"])
    loads.append(os.getloadavg()[0])
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
    loads.append(os.getloadavg()[0])
    md = ("Phase-space tools (integrators.analysis.phase_space, catalog.sweep store=). The machine (2 cores) is "
          "shared by 7 engineers: the load average (1 min) is given per part; the rates are extrapolated where "
          "marked.\n\n" + markdown_table(["case", "time", "notes"], rows)
          + "\n\nload average at the start and after each part (spectra of 1 trajectory, ensemble, sections, "
          "chart): " + ", ".join(f"{v:.1f}" for v in loads))
    print(md)
    update_section("phase_space", md, "python benchmarks/phase_space.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
