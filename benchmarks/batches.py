"""Batches and ensembles of rigid bodies against the tools a user would pick instead.

    /work/venv/bin/python benchmarks/batches.py [--quick]

Writes the section "batches" of benchmarks/RESULTS.md.

* Batch of 10^4 free rigid bodies on so(3)*, t in [0, 10], at max final error <= 1e-8 against a
  tight reference (DOP853 rtol 1e-13 on the flattened batch): for each candidate the loosest
  tolerance of a ladder (1e-5 .. 3e-13 in steps of 10^(1/4)) that reaches the error is chosen once,
  then all candidates are timed in 5 interleaved rounds (median). Baseline: one scipy.integrate.solve_ivp(method="DOP853") call on the
  flattened batch with a vectorized hand-written rhs (the one of benchmarks/compare_integrators.py).
  liedyn: the methods that keep the Casimir |m|^2 to round-off, rkmk853 (RKMK form) and rk853_projected,
  rk45_projected (the ambient pairs projected onto the Casimirs after every step, Hairer, Lubich and
  Wanner 2006, IV.4), with the ensemble sharing one step sequence (``ensemble="shared"``) and with
  each trajectory its own steps (``ensemble="independent"``, :mod:`integrators.engine.batch`), numpy and
  numba; every row gives the largest relative drift of |m|^2 over the batch at t = 10. The independent
  results are compared with single runs (round-off).
* Ensembles of 10^5 bodies, RKMK4 fixed step (h = 0.01, 20 steps): body-steps per second on se(3)*
  (Kirchhoff's body, diagonal velocity matrix) and on so(3)* (the free rigid body), numpy and numba,
  beside a hand-written compiled kernel (numba, plain RKMK4 for the free rigid body, written below
  for this comparison only, with the same parallel loop over bodies).

OPENBLAS_NUM_THREADS defaults to 1 here: on a shared machine a threaded BLAS slows scipy's DOP853
(its stage sums are np.dot calls) several times, which would flatter liedyn. Numba figures exclude
compilation (one warm-up call; the compiled code is cached on disk).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

from benchmarks._results import markdown_table, update_section  # noqa: E402
# the protocol of compare_integrators: repetitions, time span, target error, the numba check
from benchmarks.compare_integrators import NUMBA, QUICK, REPS, TARGET, T, hand_rhs  # noqa: E402
from integrators import CoadjointProblem, integrate  # noqa: E402
from integrators.backends import numba_kernels
from integrators.analysis.rigid_body import REFERENCE_INERTIA, free_rigid_body  # noqa: E402
from liegroups import named  # noqa: E402

LADDER = [10 ** (-k / 4) for k in range(20, 51)]  # 1e-5 .. 3e-13 in steps of 10^(1/4)
#: the liedyn methods that keep the Casimirs to round-off, in the batch comparison
METHODS = ("rkmk853", "rk853_projected", "rk45_projected")


def timed(cases):
    """cases: name -> callable; REPS interleaved rounds after one warm-up, median wall time."""
    for go in cases.values():
        go()
    times = {k: [] for k in cases}
    for _ in range(REPS):
        for k, go in cases.items():
            t = time.perf_counter()
            go()
            times[k].append(time.perf_counter() - t)
    return {k: float(np.median(v)) for k, v in times.items()}


# ------------------------------------------------------------------------------------ batch
def one_thread(go):
    """go run with numba's parallel loops on one thread (the single-core figure beside the default)."""
    def run(tol):
        numba = numba_kernels.require()
        before = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return go(tol)
        finally:
            numba.set_num_threads(before)
    return run


def section_batch():
    nb = 2000 if QUICK else 10_000
    body = free_rigid_body(REFERENCE_INERTIA)
    rng = np.random.default_rng(4)
    m = np.array([np.cos(1.1), 0.0, np.sin(1.1)]) + 0.05 * rng.standard_normal((nb, 3))
    fb = hand_rhs(body, batch=True)
    ref = solve_ivp(fb, (0.0, T), m.ravel(), method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1].reshape(nb, 3)

    def dop(tol):
        return solve_ivp(fb, (0.0, T), m.ravel(), method="DOP853", rtol=tol, atol=tol * 1e-2).y[:, -1].reshape(nb, 3)

    def liedyn(method, backend, ensemble):
        def go(tol):
            return integrate(body, m, (0.0, T), method=method, rtol=tol, atol=tol * 1e-2, save_every=10 ** 9,
                             backend=backend, ensemble=ensemble).y[-1]
        return go

    cands = {"scipy DOP853 on the flattened batch": dop}
    for method in METHODS:
        for be in ("numpy",) + (("numba",) if NUMBA else ()):
            for ens in ("shared", "independent"):
                cands[f"{method} {be}, {ens} steps"] = liedyn(method, be, ens)
    if NUMBA and numba_kernels.require().config.NUMBA_NUM_THREADS > 1:
        cands["rkmk853 numba, independent steps, 1 thread"] = one_thread(liedyn("rkmk853", "numba", "independent"))
    chosen, drift = {}, {}
    c0 = np.sum(m * m, axis=-1)
    for k, go in cands.items():
        for tol in LADDER:
            y = go(tol)
            err = float(np.max(np.abs(y - ref)))
            if err <= TARGET:
                chosen[k] = (tol, err)
                drift[k] = float(np.max(np.abs(np.sum(y * y, axis=-1) - c0) / c0))
                break
    tm = timed({k: (lambda go=cands[k], tol=v[0]: go(tol)) for k, v in chosen.items()})
    base = tm["scipy DOP853 on the flattened batch"]
    rows = [[k, f"{v[0]:.0e}", f"{v[1]:.1e}", f"{drift[k]:.1e}", f"{tm[k] / nb * 1e6:.2f}", f"{tm[k] / base:.2f}x"]
            for k, v in chosen.items()]
    # the independent ensembles against single runs
    checks = []
    for method in METHODS:
        for be in ("numpy",) + (("numba",) if NUMBA else ()):
            k = f"{method} {be}, independent steps"
            if k not in chosen:
                continue
            tol = chosen[k][0]
            r = integrate(body, m, (0.0, T), method=method, rtol=tol, atol=tol * 1e-2, backend=be,
                          ensemble="independent")
            single = np.array([integrate(body, m[b], (0.0, T), method=method, rtol=tol, atol=tol * 1e-2,
                                         save_every=10 ** 9, backend=be).y[-1] for b in range(0, nb, nb // 20)])
            dev = float(np.max(np.abs(r.y[-1][::nb // 20] - single)))
            checks.append(f"{k}: max |batch - single run| over 20 trajectories {dev:.1e}")
    return rows, checks, nb, tm


# ------------------------------------------------------------------------------------ ensembles
def hand_kernel():
    """Plain RKMK4 for the free rigid body m' = m x w, w = m / I (hand-written, numba, comparison
    only): m(t) = exp(-hat u) m0 with xi(m) = -w(m); K1 = h xi(m0), K2 = h dexpinv(K1/2, xi(exp(K1/2)
    m0)), K3 = h dexpinv(K2/2, ...), K4 = h dexpinv(K3, ...), theta = (K1 + 2 K2 + 2 K3 + K4)/6,
    dexpinv(u, v) = v - u x v / 2 + u x (u x v) / 12 (Munthe-Kaas 1999), rotations by Rodrigues."""
    numba = numba_kernels.require()

    @numba.njit(inline="always")
    def rot(u0, u1, u2, m0, m1, m2):
        t2 = u0 * u0 + u1 * u1 + u2 * u2
        if t2 < 1e-8:
            a, b = 1.0 - t2 / 6.0, 0.5 - t2 / 24.0
        else:
            t = np.sqrt(t2)
            a, b = np.sin(t) / t, (1.0 - np.cos(t)) / t2
        c0, c1, c2 = u1 * m2 - u2 * m1, u2 * m0 - u0 * m2, u0 * m1 - u1 * m0
        d0, d1, d2 = u1 * c2 - u2 * c1, u2 * c0 - u0 * c2, u0 * c1 - u1 * c0
        return m0 + a * c0 + b * d0, m1 + a * c1 + b * d1, m2 + a * c2 + b * d2

    @numba.njit(inline="always")
    def dinv(u0, u1, u2, v0, v1, v2):
        c0, c1, c2 = u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0
        d0, d1, d2 = u1 * c2 - u2 * c1, u2 * c0 - u0 * c2, u0 * c1 - u1 * c0
        return v0 - 0.5 * c0 + d0 / 12.0, v1 - 0.5 * c1 + d1 / 12.0, v2 - 0.5 * c2 + d2 / 12.0

    @numba.njit(parallel=True)
    def run(M, ia, h, nsteps):
        out = np.empty_like(M)
        a0, a1, a2 = -h * ia[0], -h * ia[1], -h * ia[2]
        for b in numba.prange(M.shape[0]):
            m0, m1, m2 = M[b, 0], M[b, 1], M[b, 2]
            for _ in range(nsteps):
                k10, k11, k12 = a0 * m0, a1 * m1, a2 * m2
                y0, y1, y2 = rot(0.5 * k10, 0.5 * k11, 0.5 * k12, m0, m1, m2)
                k20, k21, k22 = dinv(0.5 * k10, 0.5 * k11, 0.5 * k12, a0 * y0, a1 * y1, a2 * y2)
                y0, y1, y2 = rot(0.5 * k20, 0.5 * k21, 0.5 * k22, m0, m1, m2)
                k30, k31, k32 = dinv(0.5 * k20, 0.5 * k21, 0.5 * k22, a0 * y0, a1 * y1, a2 * y2)
                y0, y1, y2 = rot(k30, k31, k32, m0, m1, m2)
                k40, k41, k42 = dinv(k30, k31, k32, a0 * y0, a1 * y1, a2 * y2)
                m0, m1, m2 = rot((k10 + 2.0 * k20 + 2.0 * k30 + k40) / 6.0, (k11 + 2.0 * k21 + 2.0 * k31 + k41) / 6.0,
                                 (k12 + 2.0 * k22 + 2.0 * k32 + k42) / 6.0, m0, m1, m2)
            out[b, 0], out[b, 1], out[b, 2] = m0, m1, m2
        return out

    return run


def section_ensembles():
    nb = 20_000 if QUICK else 100_000
    n_steps, h = 20, 0.01
    rng = np.random.default_rng(8)
    body = free_rigid_body(REFERENCE_INERTIA)
    Mk = np.diag(1.0 / np.array([1.0, 2.0, 3.0, 1.0, 1.5, 2.0]))  # Kirchhoff's body: w = M z
    kirchhoff = CoadjointProblem(named.se3(), lambda z: z @ Mk, velocity_matrix=Mk, name="Kirchhoff body se(3)*")
    systems = [("se(3)* Kirchhoff body", kirchhoff, 0.5 * rng.standard_normal((nb, 6))),
               ("so(3)* free rigid body", body, 0.5 * rng.standard_normal((nb, 3)))]
    rows, figures = [], {}
    kernel = hand_kernel() if NUMBA else None
    for title, P, Z in systems:
        cases = {}
        for be in ("numpy",) + (("numba",) if NUMBA else ()):
            cases[f"rkmk4 {be}"] = (lambda P=P, Z=Z, be=be: integrate(
                P, Z, (0.0, n_steps * h), method="rkmk4", steps=n_steps, save_every=n_steps, backend=be,
                check=False).y[-1])
        if kernel is not None and P is body:
            ia = 1.0 / np.asarray(REFERENCE_INERTIA, dtype=float)
            cases["hand-written numba kernel"] = lambda Z=Z, ia=ia: kernel(Z, ia, h, n_steps)
            dev = float(np.max(np.abs(cases["hand-written numba kernel"]() - cases["rkmk4 numba"]())))
            figures["kernel vs liedyn"] = dev
        tm = timed(cases)
        for k, v in tm.items():
            rate = nb * n_steps / v
            figures[(title, k)] = rate
            rows.append([title, k, f"{v * 1e3:.1f}", f"{rate:.2e}"])
    return rows, figures, nb, n_steps


def main():
    start = time.perf_counter()
    load = os.getloadavg()[0]
    md = [f"Machine shared with other jobs (load average {load:.1f} on {os.cpu_count()} cores at the start); "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; numba: "
          + ("installed" if NUMBA else "not installed") + " (parallel loops use "
          + (str(numba_kernels.require().config.NUMBA_NUM_THREADS) if NUMBA else "-") + " threads).", ""]
    rows, checks, nb, tm = section_batch()
    print(rows, checks, flush=True)
    md += [f"**Batch of {nb} free rigid bodies, max final error <= 1e-8 on [0, 10], per trajectory** (target "
           "<= 1.0x DOP853 on the flattened batch with numpy, <= 0.2x with numba)", "",
           markdown_table(["method", "rtol", "max final error", "max rel. drift of abs(m)^2", "us per trajectory",
                           "/ DOP853 flattened"], rows), ""]
    md += ["- " + c for c in checks]
    base = tm["scipy DOP853 on the flattened batch"]
    for be, goal in (("numpy", 1.0), ("numba", 0.2)):
        best = min(((v, k) for k, v in tm.items() if f" {be}," in k), default=None)
        if best:
            r = best[0] / base
            md.append(f"- best {be}: {best[1]} {r:.2f}x DOP853 flattened: target {goal}x "
                      f"{'met' if r <= goal else 'NOT met'}")
    md.append("")
    er, fig, ne, ns = section_ensembles()
    print(er, fig, flush=True)
    md += [f"**Ensembles of {ne} bodies, RKMK4, {ns} fixed steps of 0.01** (targets: se(3) >= 1e6 body-steps/s "
           "with numpy, >= 1e7 with numba; so(3) within 3x of a hand-written compiled kernel)", "",
           markdown_table(["system", "code", "time [ms]", "body-steps/s"], er), ""]
    se = "se(3)* Kirchhoff body"
    so = "so(3)* free rigid body"
    line = [f"se(3) numpy {fig[(se, 'rkmk4 numpy')]:.2e} body-steps/s (target 1e6 "
            f"{'met' if fig[(se, 'rkmk4 numpy')] >= 1e6 else 'NOT met'})"]
    if NUMBA:
        v = fig[(se, "rkmk4 numba")]
        line.append(f"se(3) numba {v:.2e} (target 1e7 {'met' if v >= 1e7 else 'NOT met'})")
        k = fig[(so, "hand-written numba kernel")]
        for be in ("numpy", "numba"):
            r = k / fig[(so, f"rkmk4 {be}")]
            line.append(f"so(3) {be} {r:.2f}x the time of the hand-written kernel ({k:.2e} body-steps/s; "
                        f"target 3x {'met' if r <= 3 else 'NOT met'})")
        line.append(f"hand-written kernel and liedyn's rkmk4 agree to {fig['kernel vs liedyn']:.1e}")
    md += ["- " + x for x in line] + [""]
    md.append(f"Total benchmark time {time.perf_counter() - start:.0f} s{' (--quick)' if QUICK else ''}; load average "
              f"{os.getloadavg()[0]:.1f} at the end (the numba rows with 2 threads need an idle machine: on a loaded "
              "one the second thread is often not there, compare the 1-thread row).")
    update_section("batches", "## Batches and ensembles\n\n" + "\n".join(md),
                   "python benchmarks/batches.py" + (" --quick" if QUICK else ""))


if __name__ == "__main__":
    main()
