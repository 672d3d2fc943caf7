"""The systems on a drawn algebra and the yardstick the parts of benchmarks/drawn_systems.py measure them with:
the three kinds of system and their seeded data, the hand-written numpy rhs and the tight DOP853 reference, the
matched-accuracy choice of a tolerance and the interleaved CPU-time rounds (drawn_systems' docstring says how)."""

from __future__ import annotations

import os

# as drawn_systems (a threaded BLAS slows scipy's stage sums on a shared machine); set here as well so that the
# scripts that import these systems (cold_start, rkmk_accuracy, user_path) and the processes they start see it
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402
import zlib  # noqa: E402

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

T = 10.0
TARGET = 1e-8
STEPS = 1000
LADDER = [10 ** (-k / 2) for k in range(8, 27)]      # rtol 1e-4 .. 1e-13, atol = rtol / 100


KINDS = ("free", "servo1", "servo2")


def sysseed(label, kind, seed):
    """The seed of one system's data, from its algebra's label, its kind and the draw's seed."""
    return zlib.crc32(f"{label}|{kind}|{seed}".encode())


def _spd(rng, n):
    B = rng.standard_normal((n, n))
    return B @ B.T / n + np.eye(n)


def build_system(alg, kind, seed):
    """(system, x0 builder r0 -> state) for one drawn algebra and kind."""
    from servo import EulerPoincare, ServoFirstKind, ServoSecondKind
    rng = np.random.default_rng(seed)
    n = alg.dim
    I = _spd(rng, n)
    a, b, m = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
    if kind == "free":
        s = EulerPoincare(alg, I, name=f"free on {alg.name}")
        return s, lambda r0: r0 * m / np.linalg.norm(m)
    if kind == "servo1":
        s = ServoFirstKind(alg, I, a=a, b=b, name=f"servo1 on {alg.name}")
        mp = s.check_state(m, project=True)
        return s, lambda r0: r0 * mp / np.linalg.norm(mp)
    s = ServoSecondKind(alg, I, a=a, b=b, name=f"servo2 on {alg.name}")
    mp = s.check_state(np.append(m, 0.0), project=True)[:n]

    def x0(r0):
        return np.append(r0 * mp / np.linalg.norm(mp), 0.1 * r0)
    return s, x0


def hand_rhs(P):
    """The rhs a user writes for a generic algebra: w = W z + c, ad*_w z = ((w @ C2).reshape(n, n)) @ z with
    C2 = C.reshape(n, n n) ((ad*_w z)_j = sum_ik w_i C[i, j, k] z_k), minus the multiplier force
    (c_L, g) b / (c_L, b) for a servo-constraint of the first kind. Checked against problem.rhs."""
    n = P.dim
    C2 = np.ascontiguousarray(P.algebra.structure_constants.reshape(n, n * n))
    c = np.asarray(P.velocity(np.zeros(n)), dtype=float)
    WT = np.ascontiguousarray(np.asarray(P.velocity(np.eye(n)), dtype=float) - c)   # rows W e_i: z @ WT = W z
    if P.forcing is None:
        def f(t, z):
            return ((z @ WT + c) @ C2).reshape(n, n) @ z
    else:
        cl = P.linear_invariants[0]
        probe = np.random.default_rng(0).standard_normal(n)
        bv = np.asarray(P.forcing(probe), dtype=float)
        bv = bv / (cl @ bv)

        def f(t, z):
            g = ((z @ WT + c) @ C2).reshape(n, n) @ z
            return g - (g @ cl) * bv
    for z in np.random.default_rng(1).standard_normal((4, n)) * 0.3:
        assert np.max(np.abs(f(0.0, z) - P.rhs(0.0, z))) <= 1e-12 * max(1.0, np.max(np.abs(P.rhs(0.0, z)))), \
            "hand-written rhs disagrees with problem.rhs"
    return f


def reference(f, z0):
    r = solve_ivp(f, (0.0, T), z0, method="DOP853", rtol=1e-13, atol=1e-15)
    return r


def zend(res):
    return np.asarray(res.outputs["z"] if "z" in res.outputs else res.y)[-1]


def choose(go, ref, ladder=LADDER):
    """The loosest rtol of the ladder whose final error is <= TARGET: (tol, error) or (None, best error)."""
    best = np.inf
    for tol in ladder:
        err = float(np.max(np.abs(go(tol) - ref)))
        best = min(best, err)
        if err <= TARGET:
            return tol, err
    return None, best


def timed(cases, reps, cpu=False, clock=time.process_time):
    """cases: name -> zero-argument callable; ``reps`` interleaved rounds, median CPU time of this process
    (time.process_time, all its threads: on a shared machine the wall time of a longer call takes more of the
    other jobs' preemptions, which a ratio of wall times would count against it); ``clock=time.thread_time``
    for calls that run in the calling thread alone (one trajectory): a compile that liedyn's background thread
    runs meanwhile is then not counted against them; with ``cpu``: (median wall, median CPU time), each a
    median of its own."""
    times = {k: [] for k in cases}
    cpus = {k: [] for k in cases}
    for _ in range(reps):
        for k, go in cases.items():
            c, t = clock(), time.perf_counter()
            go()
            times[k].append(time.perf_counter() - t)
            cpus[k].append(clock() - c)
    if cpu:
        return {k: (float(np.median(times[k])), float(np.median(cpus[k]))) for k in cases}
    return {k: float(np.median(v)) for k, v in cpus.items()}
