"""Phase-space tools: cost of a Lyapunov spectrum against the flow alone, ensembles, Poincare sections,
and a resumable chart of the largest exponent on dask.

1. One trajectory of a 6-dimensional coadjoint problem (Kirchhoff body on se(3)*, affine velocity),
   5000 rk4 steps with a QR every step, the whole 6 x 6 tangent (leaf=None): ``lyapunov_spectrum`` with
   its defaults (backend "auto"), with backend="numba", with k=1 (the largest exponent only, numba) and
   the numpy loop (fast=False), against ``integrate`` (rk4, the same h and steps) with its defaults and
   with backend="numba"; CPU time of the process, median of --repeat interleaved calls in a shuffled order
   (each call after other work, as a script makes it: the call after a long numpy case pays 0.1-0.25 ms for
   the caches it emptied, whichever case it is), and the median of 10 x --repeat calls back to back (warm
   caches; the ratios of both are given); the first, compiling, call is not counted, and what
   backend="auto" queued in the background is waited for before the repetitions.
2. An ensemble of --traj trajectories of the same system over --qr QR steps (h = dt = 0.05), numba,
   the whole spectrum; the numpy loop on --traj-ref x --qr-ref for its rate.
3. Sections of --orbits rigid-body orbits (rk4, h = 0.05, hyperplane m2 = 0, |m| = 2, random
   directions) until each has --crossings crossings (or t = --t-sec), with the defaults (the compiled
   section when numba is installed); the numpy path (backend="numpy") on --orbits-ref orbits for its rate.
4. A --chart x --chart chart of the largest exponent of ``sleigh_oscillating_mass`` over (A, xi) on a
   LocalCluster of 2 workers with ``store=``: interrupted after half of its chunks, resumed, and compared
   with an uninterrupted serial run (the tables must be identical). Its own section (phase_space_chart).
5. The acceleration exponent of ``sleigh_rotor`` (catalog defaults): its reduced problem (v, omega)
   integrated with ``integrate(..., method="scipy:LSODA")`` (rtol 1e-8, atol 1e-11: omega relaxes at the
   rate b v, stiff for large v) to --rotor-t-end, v read stroboscopically at multiples of the period;
   the slope of log v against log t fitted over [1e3, --rotor-t-end] against 1/3 +/- 0.02 (Bizyaev,
   Borisov, Kozlov and Mamaev 2019) and against the averaged law (``rotor_speed_law``, through the run's
   v at the first fitted time) fitted over the same times; the figure
   benchmarks/figures/phase_space_rotor.svg. Its own section (phase_space_rotor).

Run:  python benchmarks/phase_space.py [--parts core,chart,rotor] [--repeat 5] [--traj 1000] [--qr 10000]
      [--orbits 1000] [--crossings 1000] [--chart 10] [--rotor-t-end 1e6]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import markdown_table, update_section  # noqa: E402

import catalog  # noqa: E402
import integrators  # noqa: E402
from catalog.entries.forced_sleighs import rotor_speed_law  # noqa: E402
from catalog.sweeps import LargestExponent  # noqa: E402
from integrators.backends import background  # noqa: E402
from liegroups import named  # noqa: E402


def kirchhoff():
    g = named.se3()
    W = np.diag([1.0, 0.5, 1 / 3, 1.0, 0.8, 0.6])
    W[0, 4] = W[4, 0] = 0.1
    return integrators.CoadjointProblem(g, lambda z: z @ W.T, velocity_matrix=W)


def _timed(f):
    """(CPU time of the process, result) of f(): the machine is shared, and every timed call runs in this
    thread (the background compiles of backend="auto" are waited for before the repetitions)."""
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


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
    ap.add_argument("--rotor-t-end", type=float, default=1e6)
    ap.add_argument("--parts", default="core,chart,rotor")
    a = ap.parse_args()
    parts = set(a.parts.split(","))
    if "core" in parts:
        core(a)
    if "chart" in parts:
        chart(a)
    if "rotor" in parts:
        rotor(a)


def core(a):
    rows = []
    loads = [os.getloadavg()[0]]
    p = kirchhoff()
    y0 = np.array([0.3, 0.2, 0.9, 1.0, 0.4, 0.1])
    h, n = 0.02, 5000
    spec = lambda **kw: (lambda: integrators.lyapunov_spectrum(p, y0, n * h, dt=h, h=h, leaf=None, **kw))
    flow = lambda **kw: (lambda: integrators.integrate(p, y0, (0, n * h), method="rk4", h=h, save_every=n, **kw))
    runs = {
        "spectrum, defaults": spec(),
        "spectrum, numba": spec(backend="numba"),
        "largest exponent (k=1), numba": spec(backend="numba", k=1),
        "spectrum, numpy (generated)": spec(backend="numpy"),
        "largest exponent (k=1), numpy (generated)": spec(backend="numpy", k=1),
        "spectrum, numpy loop (fast=False)": spec(fast=False),
        "flow alone: integrate rk4, defaults": flow(),
        "flow alone: integrate rk4, numba": flow(backend="numba"),
        "flow alone: integrate rk4, numpy": flow(backend="numpy"),
        # every default of lyapunov_spectrum: dt = 1, h = dt / 10, leaf "auto" (the 4-dimensional leaf of se(3)*,
        # its normals removed every QR step), backend "auto", up to 2000 running estimates, the convergence check
        "all defaults: lyapunov_spectrum(p, y0, 500)": lambda: integrators.lyapunov_spectrum(p, y0, 500.0),
        "all defaults, numpy: lyapunov_spectrum(p, y0, 500, backend='numpy')":
            lambda: integrators.lyapunov_spectrum(p, y0, 500.0, backend="numpy"),
        "all defaults' flow: integrate rk4, h = 0.1, numba": lambda: integrators.integrate(
            p, y0, (0, 500.0), method="rk4", h=0.1, save_every=n, backend="numba"),
        "all defaults' flow: integrate rk4, h = 0.1, numpy": lambda: integrators.integrate(
            p, y0, (0, 500.0), method="rk4", h=0.1, save_every=n, backend="numpy"),
    }
    first = {k: _timed(f) for k, f in runs.items()}          # compiles (or loads numba's disk cache)
    background.wait(600)      # what "auto" queued in the background is done before the timed calls
    times = {k: [] for k in runs}
    last = {}
    rnd = random.Random(0)
    for _ in range(a.repeat):       # interleaved, in a shuffled order (the call after a long numpy case pays for
        keys = list(runs)           # the caches it emptied: 0.1-0.25 ms, whichever case it is)
        rnd.shuffle(keys)
        for k in keys:
            dt_, last[k] = _timed(runs[k])
            times[k].append(dt_)
    med = {k: statistics.median(v) for k, v in times.items()}
    # back to back: each case called 10 times in a row (warm caches), the median of 10 a.repeat
    warm = {}
    for k, f in runs.items():
        if "fast=False" not in k:
            warm[k] = statistics.median(_timed(f)[0] for _ in range(10 * a.repeat))
    used = {k: getattr(last[k], "backend", "") for k in runs}       # the backend of the timed calls
    first_used = {k: getattr(first[k][1], "backend", "") for k in runs}
    flow_auto = med["flow alone: integrate rk4, defaults"]
    for k in runs:
        back = f"; back to back {warm[k] * 1e3:.2f} ms" if k in warm else ""
        if k.startswith("flow") or k.startswith("all defaults'"):
            note = f"backend {used[k]}" + back
        elif k.startswith("all defaults"):
            be = "numba" if used[k] == "numba" else "numpy"
            key = "all defaults' flow: integrate rk4, h = 0.1, " + be
            note = (f"backend {used[k]} (first call: {first_used[k]}); / the same 5000 rk4 steps of the flow with the "
                    f"same backend ({be}): {med[k] / med[key]:.2f}x interleaved" + back
                    + f" ({warm[k] / warm[key]:.2f}x)")
        else:
            be = "numba" if used[k] == "numba" else "numpy"
            key = "flow alone: integrate rk4, " + be
            note = (f"backend {used[k]} (first call: {first_used[k]}); / flow with the same backend ({be}): "
                    f"{med[k] / med[key]:.2f}x interleaved" + back
                    + (f" ({warm[k] / warm[key]:.2f}x)" if k in warm else "")
                    + f"; / flow (defaults, {used['flow alone: integrate rk4, defaults']}): {med[k] / flow_auto:.2f}x")
        lo = min(times[k])
        head = "1 trajectory, 5000 rk4 steps, QR every 10 steps" if k.startswith("all") else \
            "1 trajectory, 5000 rk4 steps, QR every step"
        rows.append([f"{head}: {k}", f"{med[k] * 1e3:.2f} ms",
                     note + f"; fastest of {a.repeat} {lo * 1e3:.2f} ms"
                     + ("" if k.startswith("flow") or k.startswith("all") else f" ({lo / min(times['flow alone: integrate rk4, numba']):.1f}x "
                        f"the fastest numba flow)") + f"; first call {first[k][0]:.2f} s"])
    loads.append(os.getloadavg()[0])
    rows += forced(a)
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
    md = ("Phase-space tools (integrators.analysis.phase_space). The machine (2 cores) is shared by 7 engineers: "
          "the load average (1 min) is given per part; the rates are extrapolated where marked.\n\n"
          + markdown_table(["case", "time", "notes"], rows)
          + "\n\nload average at the start and after each part (spectra of 1 trajectory, ensemble, sections): "
          + ", ".join(f"{v:.1f}" for v in loads))
    print(md)
    update_section("phase_space", md, "python benchmarks/phase_space.py --parts core " + _argv_without_parts())


def forced(a):
    """Time-dependent problems on the generated path against the numpy reference loop: the largest-exponent
    measure of a chart point (the reduced oscillating-mass sleigh, 2 exponents, rk4, 30 steps a period,
    120 periods), the adaptive pair rk853 on the reduced sleigh (an ODE problem with a period: the Fourier fit
    of its coefficients, integrators.geometry.timed_fourier) against the reference loop and scipy's DOP853 at
    the same tolerances, and on an ensemble of 1000 of its states sharing one step, and ``simulate`` of the builder's sleigh on se(2) (rk853, rtol 1e-12, 1000 output
    times)."""
    e = catalog.get("sleigh_oscillating_mass")
    red, T, y0 = e.extras["reduced"], e.extras["period"], e.initial_state[:2]
    kw = dict(dt=T, h=T / 30, transient=20 * T, period=T)
    S = e.extras["lie_system"]()
    m0 = S.state_from(np.array([0.5, 0.0, 0.2]))
    Yf = y0 + 0.2 * np.random.default_rng(1).standard_normal((1000, 2))
    runs = {
        "forced sleigh (v, omega), spectrum, numba": lambda: integrators.lyapunov_spectrum(red, y0, 100 * T,
                                                                                           backend="numba", **kw),
        "forced sleigh (v, omega), spectrum, numpy (generated)": lambda: integrators.lyapunov_spectrum(
            red, y0, 100 * T, backend="numpy", **kw),
        "forced sleigh (v, omega), spectrum, numpy loop (fast=False)": lambda: integrators.lyapunov_spectrum(
            red, y0, 100 * T, fast=False, **kw),
        "forced sleigh (v, omega), flow alone rk4, numba": lambda: integrators.integrate(
            red, y0, (0, 120 * T), method="rk4", h=T / 30, save_every=3600, backend="numba"),
        "forced sleigh (v, omega), flow alone rk4, numpy (generated)": lambda: integrators.integrate(
            red, y0, (0, 120 * T), method="rk4", h=T / 30, save_every=3600, backend="numpy"),
        "forced sleigh (v, omega), ODE problem with a period: integrate rk853 rtol 1e-10, 60 time units, numba":
            lambda: integrators.integrate(red, y0, (0, 60.0), method="rk853", rtol=1e-10, atol=1e-12, backend="numba"),
        "forced sleigh (v, omega), ODE problem with a period: integrate rk853, numpy (generated)":
            lambda: integrators.integrate(red, y0, (0, 60.0), method="rk853", rtol=1e-10, atol=1e-12, backend="numpy"),
        "forced sleigh (v, omega), ODE problem with a period: integrate rk853, numpy reference (fast=False)":
            lambda: integrators.integrate(red, y0, (0, 60.0), method="rk853", rtol=1e-10, atol=1e-12, fast=False),
        "forced sleigh (v, omega), ODE problem with a period: scipy solve_ivp DOP853 (same rtol, atol)":
            lambda: solve_ivp(red.f, (0, 60.0), y0, method="DOP853", rtol=1e-10, atol=1e-12),
        "forced sleigh (v, omega), 1000 trajectories sharing one step: integrate rk853 rtol 1e-10, 30 time units, "
        "numba": lambda: integrators.integrate(red, Yf, (0, 30.0), method="rk853", rtol=1e-10, atol=1e-12,
                                               backend="numba"),
        "forced sleigh (v, omega), 1000 trajectories: rk853, numpy (generated columns)": lambda: integrators.integrate(
            red, Yf, (0, 30.0), method="rk853", rtol=1e-10, atol=1e-12, backend="numpy"),
        "forced sleigh (v, omega), 1000 trajectories: rk853, numpy reference (fast=False)": lambda: integrators.integrate(
            red, Yf, (0, 30.0), method="rk853", rtol=1e-10, atol=1e-12, fast=False),
        "TimeDependentSystem sleigh on se(2): simulate 60 time units, numba": lambda: S.simulate(m0, 60.0,
                                                                                                backend="numba"),
        "TimeDependentSystem sleigh on se(2): simulate, numpy (generated)": lambda: S.simulate(m0, 60.0,
                                                                                               backend="numpy"),
        "TimeDependentSystem sleigh on se(2): simulate, numpy reference (fast=False)": lambda: S.simulate(
            m0, 60.0, fast=False),
    }
    first = {k: _timed(f) for k, f in runs.items()}
    background.wait(600)
    times = {k: [] for k in runs}
    for _ in range(a.repeat):
        for k, f in runs.items():
            times[k].append(_timed(f)[0])
    med = {k: statistics.median(v) for k, v in times.items()}
    ref_spec = med["forced sleigh (v, omega), spectrum, numpy loop (fast=False)"]
    ref_sim = med["TimeDependentSystem sleigh on se(2): simulate, numpy reference (fast=False)"]
    ref_ode = med["forced sleigh (v, omega), ODE problem with a period: integrate rk853, numpy reference (fast=False)"]
    dop = med["forced sleigh (v, omega), ODE problem with a period: scipy solve_ivp DOP853 (same rtol, atol)"]
    ref_ens = med["forced sleigh (v, omega), 1000 trajectories: rk853, numpy reference (fast=False)"]
    fl = {"numba": med["forced sleigh (v, omega), flow alone rk4, numba"],
          "numpy": med["forced sleigh (v, omega), flow alone rk4, numpy (generated)"]}
    rows = []
    for k in runs:
        if "spectrum" in k and "fast=False" not in k:
            be = "numba" if "numba" in k else "numpy"
            note = (f"{ref_spec / med[k]:.1f}x faster than the numpy loop; / flow alone with the same backend: "
                    f"{med[k] / fl[be]:.2f}x")
        elif "simulate" in k and "fast=False" not in k:
            note = f"{ref_sim / med[k]:.1f}x faster than the numpy reference"
        elif "1000 trajectories" in k and "fast=False" not in k:
            r = runs[k]()
            note = f"backend {r.backend}, {r.nsteps} steps; {ref_ens / med[k]:.1f}x faster than the numpy reference loop"
        elif "with a period" in k and "fast=False" not in k and "scipy" not in k:
            r = runs[k]()
            note = (f"backend {r.backend}, {r.nsteps} steps; {ref_ode / med[k]:.1f}x faster than the numpy reference "
                    f"loop, {med[k] / dop:.2f}x solve_ivp DOP853's time")
        else:
            note = ""
        rows.append([k, f"{med[k] * 1e3:.2f} ms", note + f"; first call {first[k][0]:.2f} s"])
    return rows


def _argv_without_parts():
    out, skip = [], False
    for x in sys.argv[1:]:
        if skip:
            skip = False
        elif x == "--parts":
            skip = True
        elif not x.startswith("--parts="):
            out.append(x)
    return " ".join(out)


def chart(a):
    rows, loads = [], [os.getloadavg()[0]]
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
    md = ("Chart of regimes (catalog.sweep with store=, resumable). The machine (2 cores) is shared by 7 "
          "engineers.\n\n" + markdown_table(["case", "time", "notes"], rows)
          + "\n\nload average (1 min) at the start and the end: " + ", ".join(f"{v:.1f}" for v in loads))
    print(md)
    update_section("phase_space_chart", md, "python benchmarks/phase_space.py --parts chart " + _argv_without_parts())


def rotor(a):
    """The acceleration exponent of the rotor sleigh from a real run (see the module docstring, part 5)."""
    e = catalog.get("sleigh_rotor")
    P, T = e.extras["parameters"], e.extras["period"]
    t_fit = 1e3
    ks = np.unique(np.round(np.geomspace(1.0, a.rotor_t_end / T, 400)).astype(int))
    te = ks * T
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    r = integrators.integrate(e.extras["reduced"], e.initial_state[:2], (0.0, te[-1]), method="scipy:LSODA",
                              rtol=1e-8, atol=1e-11, t_eval=te, max_steps=20_000_000)   # ~1.2 steps per unit time
    wall = time.perf_counter() - t
    if r.status < 0:
        raise SystemExit(f"the rotor run failed: {r.message}")
    v = r.y[:, 0]
    sel = te >= t_fit
    slope, icpt = np.polyfit(np.log(te[sel]), np.log(v[sel]), 1)
    j0 = int(np.argmax(sel))
    law = rotor_speed_law(te, P["M"], P["J"], P["ell"], P["k1"], P["Omega"], v[j0], te[j0])
    slope_law = np.polyfit(np.log(te[sel]), np.log(law[sel]), 1)[0]
    dev = float(np.max(np.abs(v[sel] / law[sel] - 1)))
    met = abs(slope - 1 / 3) <= 0.02
    rows = [[f"sleigh_rotor (catalog defaults {P}), v at {int(sel.sum())} multiples of the period in "
             f"[{te[j0]:.4g}, {te[-1]:.4g}]", f"{slope:.4f}", f"{slope_law:.4f}", f"{dev:.2e}",
             f"{wall:.1f} s (status {r.status}, {r.nfev} evaluations)",
             f"{'met' if met else 'NOT met'}: abs({slope:.4f} - 1/3) = {abs(slope - 1 / 3):.4f}"]]
    fig_path = Path(__file__).resolve().parent / "figures" / "phase_space_rotor.svg"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        ax.loglog(te, v, ".", ms=3, label="run (LSODA), v at t = k T")
        ax.loglog(te[sel], np.exp(icpt) * te[sel] ** slope, "-", lw=1.5, label=f"fit over t >= 1e3: slope {slope:.4f}")
        ax.loglog(te[sel], law[sel], "--", lw=1.2, label=f"averaged law (slope {slope_law:.4f})")
        ax.axvline(t_fit, color="0.6", lw=0.8)
        ax.set_xlabel("t")
        ax.set_ylabel("v")
        ax.set_title("Chaplygin sleigh with a periodic rotor: v ~ t^(1/3)", fontsize=10)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(fig_path)
        plt.close(fig)
        fig_note = f"\n\nFigure: benchmarks/figures/{fig_path.name}."
    except ImportError:
        fig_note = "\n\n(no figure: matplotlib is not installed)"
    md = ("Acceleration of the rotor sleigh (Bizyaev, Borisov, Kozlov and Mamaev 2019: v ~ t^(1/3); the "
          "issue's check 1/3 +/- 0.02 fitted over t in [1e3, 1e6]). The slope of log v against log t by least "
          "squares; the averaged law through the run's v at the first fitted time, fitted over the same times; "
          "max abs(v / law - 1) over the fitted times.\n\n"
          + markdown_table(["case", "fitted exponent", "averaged law's exponent", "max abs(v/law - 1)", "wall time",
                            "target 1/3 +/- 0.02"], rows)
          + f"\n\nload average (1 min) at the start: {load0:.1f}." + fig_note)
    print(md)
    update_section("phase_space_rotor", md, "python benchmarks/phase_space.py --parts rotor " + _argv_without_parts())


if __name__ == "__main__":
    main()
