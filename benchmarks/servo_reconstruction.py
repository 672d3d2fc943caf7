"""Group reconstruction g' = g w(t) on SO(3), SE(2), SE(3): time per step, group defect, and the
time to reach a final error of 1e-8 against what a user would do instead.

1. Per step, 10^5 steps on t in [0, 50], w(t) = c cos(f t) + 0.3 (random c, f): microseconds per
   step of ``integrators.reconstruct`` (the fast path: all steps at once and a prefix-product scan)
   with the callable w written the obvious way (one call per time) and with a vectorized w (one call
   for all times); target <= 20 us per step with numpy. Beside it the generic one-step-at-a-time path
   (``fast=False``, the reference and the code of the previous release) on 2000 steps. Max group defect
   (max |R^T R - I|, |det R - 1|, homogeneous row) over the 10^5 steps.
2. Matched error, t in [0, 10]: rkmk4 (fast path, callable w) with the fewest steps whose final error
   is <= 1e-8, against ``scipy.integrate.solve_ivp(method="DOP853")`` on the 9 (SO(3), SE(2)) or 16
   (SE(3)) matrix entries with a hand-written rhs Y hat(w(t)) and the loosest rtol (atol = rtol / 100)
   whose final error is <= 1e-8. Reference: DOP853 at rtol 1e-13, atol 1e-15 (its distance to rkmk4
   with 20000 steps is reported). Times are paired and interleaved, median of 11 repetitions; the
   ratio is the median of the paired ratios (liedyn / DOP853, below 1 means liedyn is faster).

Run: /work/venv/bin/python benchmarks/servo_reconstruction.py [steps]   (a few minutes)
"""

import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.integrate

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # the repository

from _results import markdown_table, update_section  # noqa: E402

from integrators import reconstruct  # noqa: E402
from liegroups import SE2, SE3, SO3  # noqa: E402

TARGET_US = 20.0
REPS = 5
#: repetitions of the (millisecond) matched-error runs
MATCHED_REPS = 11
ERROR = 1e-8


def _hat(G):
    """The hand-written hat a user would pass to solve_ivp (no validation)."""
    if G is SO3:
        return lambda x: np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])
    if G is SE2:
        return lambda x: np.array([[0.0, -x[2], x[0]], [x[2], 0.0, x[1]], [0.0, 0.0, 0.0]])
    return lambda x: np.array([[0.0, -x[2], x[1], x[3]], [x[2], 0.0, -x[0], x[4]],
                               [-x[1], x[0], 0.0, x[5]], [0.0, 0.0, 0.0, 0.0]])


def _problem(G, seed=1):
    rng = np.random.default_rng(seed)
    c, f = rng.standard_normal(G.dim), rng.uniform(0.5, 2.0, G.dim)
    return (lambda s: c * np.cos(f * s) + 0.3), (lambda s: c * np.cos(f * s[:, None]) + 0.3)


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def per_step(steps):
    rows = []
    for G in (SO3, SE2, SE3):
        w, wv = _problem(G)
        t = np.linspace(0.0, 50.0, steps + 1)
        tg = t[:2001]
        for method in ("lie_euler", "rkmk4"):
            scal, vec, gen, defect = [], [], [], 0.0
            for rep in range(REPS):  # interleaved
                dt, res = _timed(lambda: reconstruct(G, w, G.identity(), t, method=method))
                scal.append(dt / steps)
                defect = max(defect, float(np.max(res.constraints["group_defect"])))
                dt, res = _timed(lambda: reconstruct(G, wv, G.identity(), t, method=method, vectorized=True))
                vec.append(dt / steps)
                defect = max(defect, float(np.max(res.constraints["group_defect"])))
                if rep < 3:
                    dt, _ = _timed(lambda: reconstruct(G, w, G.identity(), tg, method=method, fast=False))
                    gen.append(dt / (len(tg) - 1))
            us_s, us_v, us_g = (1e6 * float(np.median(x)) for x in (scal, vec, gen))
            rows.append([G.name, method, steps, f"{us_s:.1f}", f"{us_v:.1f}",
                         "met" if us_s <= TARGET_US else "NOT met", f"{us_g:.0f}", f"{us_g / us_s:.0f}x",
                         f"{defect:.1e}"])
            print(*rows[-1], flush=True)
    return rows


def _dop853(G, w, T, rtol, atol):
    N = G.matrix_size
    hat = _hat(G)

    def rhs(s, y):
        return (y.reshape(N, N) @ hat(w(s))).ravel()

    sol = scipy.integrate.solve_ivp(rhs, (0.0, T), np.eye(N).ravel(), method="DOP853", rtol=rtol, atol=atol)
    return sol.y[:, -1].reshape(N, N), sol.nfev


def matched(T=10.0):
    rows = []
    for G in (SO3, SE2, SE3):
        w, _ = _problem(G, seed=2)
        ref, _ = _dop853(G, w, T, 1e-13, 1e-15)
        check = reconstruct(G, w, G.identity(), [0.0, T], substeps=20000).y[-1]
        ref_gap = float(np.max(np.abs(check - ref)))
        n = 10  # fewest rkmk4 steps (factor 1.1 ladder) with final error <= ERROR
        while True:
            err = float(np.max(np.abs(reconstruct(G, w, G.identity(), [0.0, T], substeps=n).y[-1] - ref)))
            if err <= ERROR:
                break
            n = int(np.ceil(n * 1.1))
        k = 16  # loosest rtol = 10^(-k/4) with final error <= ERROR
        while True:
            rtol = 10.0 ** (-k / 4)
            y, nfev = _dop853(G, w, T, rtol, rtol * 1e-2)
            derr = float(np.max(np.abs(y - ref)))
            if derr <= ERROR:
                break
            k += 1
        ours, theirs, ratios, ddefect = [], [], [], 0.0
        for _ in range(MATCHED_REPS):
            a, res = _timed(lambda: reconstruct(G, w, G.identity(), [0.0, T], substeps=n))
            b, (y, _) = _timed(lambda: _dop853(G, w, T, rtol, rtol * 1e-2))
            ours.append(a)
            theirs.append(b)
            ratios.append(a / b)
            ddefect = float(np.max(G.defect(y)))
        rows.append([G.name, f"{n} steps, err {err:.1e}, {1e3 * np.median(ours):.1f} ms",
                     f"rtol {rtol:.1e}, {nfev} fev, err {derr:.1e}, {1e3 * np.median(theirs):.1f} ms",
                     f"{np.median(ratios):.2f}", f"{float(np.max(res.constraints['group_defect'])):.1e}",
                     f"{ddefect:.1e}", f"{ref_gap:.0e}"])
        print(*rows[-1], flush=True)
    return rows


def main(steps=100_000):
    load = os.getloadavg()
    r1 = per_step(steps)
    r2 = matched()
    t1 = markdown_table(["group", "method", "steps", "us/step, callable w", "us/step, vectorized w",
                         f"target <= {TARGET_US:.0f} us", "generic path us/step (before)", "speed-up",
                         "max group defect"], r1)
    t2 = markdown_table(["group", "liedyn rkmk4", "solve_ivp DOP853 on the matrix entries",
                         "time ratio liedyn / DOP853", "liedyn group defect", "DOP853 group defect",
                         "reference check"], r2)
    md = ("## Servo: group reconstruction g' = g w(t)\n\n"
          f"Per step, {steps} steps, w(t) = c cos(f t) + 0.3, median of {REPS} interleaved runs (the generic "
          "path: 2000 steps, 3 runs). The fast path computes every step's exp(hat Theta) at once (closed forms) "
          "and multiplies them by a prefix scan; no projection, no compensation. "
          f"Load average at start {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} (2 cores).\n\n" + t1 +
          f"\n\nTime to a final error <= {ERROR:.0e} on t in [0, 10] (the reference is DOP853 at rtol 1e-13; "
          "'reference check' is its distance to rkmk4 with 20000 steps), paired ratio, median of "
          f"{MATCHED_REPS}:\n\n" + t2)
    update_section("servo_reconstruction", md, f"python benchmarks/servo_reconstruction.py {steps}")
    print(md)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
