"""Systems the benchmark does not choose by hand: a seeded draw of algebras of dimension 3 to 10.

    .venv/bin/python benchmarks/drawn_systems.py [--quick] [--seed N] [--numba-budget S] [--no-cold]
    .venv/bin/python benchmarks/drawn_systems.py --only-ensembles [--ensembles K] [--ensemble-reps R]
                                                 [--single-only] [--only LABEL ...]

Writes the section "drawn_systems" of benchmarks/RESULTS.md (issue 24).

The draw (seed 24 unless ``--seed``): so(5), sp(4), sl(3) (from their matrices,
``LieAlgebra.from_matrices``), so(4), se(3), two Bianchi types drawn from II..IX (VI_a, VII_a with a drawn
parameter), each once in its own basis and once in a random basis (``change_basis`` with P = Q diag(s),
Q a random rotation, s in [0.5, 2]); and two random solvable algebras, each in a random basis: n(k) + a
drawn number of random diagonal matrices (strictly upper triangular k x k matrices plus diagonal ones,
closed under the commutator) or R x_D R^(n-1) with a random D (an abelian ideal and one derivation).
On each algebra three systems with a random SPD inertia I = B B^T / n + 1, random covectors a, b and a
random initial state of norm r0: free Euler-Poincare, servo-constraint of the first kind, of the second
kind (lambda0 = 0.1). r0 = 1, halved until the tight reference stays within 10 r0 on t in [0, 10] (a
servo system does not keep its energy).

**One trajectory** through ``s.simulate(x0, 10.0, rtol=tol, atol=tol / 100, backend=...)``: its default
method (servo.lie.method_choice) and its default grid (1000 steps, states from the continuous extension),
against ``scipy.integrate.solve_ivp(method="DOP853", t_eval=the same 1001 times)`` with a hand-written
numpy rhs (w = W z + c, ad*_w z = ((w @ C.reshape(n, n n)).reshape(n, n)) @ z from the structure
constants, for the first kind minus the multiplier force; checked against ``problem.rhs``). Matched
accuracy: each tool's tolerance is the loosest of rtol 1e-4 .. 1e-13 (half decades, atol = rtol / 100)
whose final error against a tight reference (DOP853, rtol 1e-13, atol 1e-15) is <= 1e-8; then the tools
are timed in interleaved rounds, median of 5 (3 with --quick), in CPU time of the process (time.process_time). Also the fully default call
``s.simulate(x0, 10.0)`` (rtol 1e-12). numba figures exclude compilation; the first numba call of each
system (which compiles the generated code for its structure unless numba's disk cache has it) is listed,
and numba is measured on the systems in draw order until ``--numba-budget`` seconds of first calls are
spent (the rest say so; the budget is checked before a call, and one call can take minutes).

**Cold start**, in a fresh process with an empty code cache (``LIEDYN_CACHE_DIR`` a new directory): import,
building the algebra (with its Casimirs) and the system, the first default ``simulate`` (backend "auto"),
the first ``backend="numba"`` call; on the first systems of the draw (``--no-cold`` skips it).

**Ensembles of 10^4** (10^3 with --quick) random initial states around x0 on the first systems of the
draw: ``s.simulate(X0, 10.0, steps=None, ensemble="independent", backend="numba")`` and the numpy
ensemble with shared steps, against diffrax (JAX, float64, ``jax.jit(jax.vmap(...))`` on the CPU, Dopri8
and Tsit5 with a PID controller, the same rhs written in jax.numpy), each at the loosest tolerance whose
largest final error over 64 of the trajectories is <= 1e-8. diffrax is an optional comparator: without
jax the ensemble rows list liedyn alone. Compile times excluded (one warm-up call); wall and CPU time (the
process's, all threads: the work at equal cores) medians of ``--ensemble-reps`` (>= 3) interleaved rounds;
the attempted steps a trajectory; the threads each tool ran on (numba's pool; XLA's own); for the compiled
liedyn run the CPU time inside its kernel and the kernel's arithmetic rate (the flops of one attempt of
the lanes, counted in the generated text, times the attempts). ``--only-ensembles`` runs this part alone
and writes the section "drawn_ensembles".

``--single-only`` measures the one-trajectory table alone (no cold start, no ensembles) and keeps the cold-start
and ensemble tables of the section as they are, marked as from the earlier run; ``--only`` restricts the draw
to the algebras whose labels are given (with --single-only: the rows of the other algebras are kept too, marked
as from the earlier run).

OPENBLAS_NUM_THREADS=1 (a threaded BLAS slows scipy's stage sums on a shared machine). The load average
is printed beside the figures: the machine is shared, so compare ratios within one run.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import pstats  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

from benchmarks._drawn_algebras import (almost_abelian, bianchi, random_basis, sl3, sp4,  # noqa: E402
                                        solvable_triangular)

T = 10.0
TARGET = 1e-8
STEPS = 1000
LADDER = [10 ** (-k / 2) for k in range(8, 27)]      # rtol 1e-4 .. 1e-13, atol = rtol / 100


# ------------------------------------------------------------------------------------ the draw


def draw(seed, quick):
    """[(label, builder)]: the algebras of the draw, built on demand (the cold-start runs rebuild one)."""
    from liegroups import named
    rng = np.random.default_rng(seed)
    fams = [("so(5)", lambda: named.so(5)), ("sp(4)", sp4), ("sl(3)", sl3), ("so(4)", named.so4), ("se(3)", named.se3)]
    specs = []
    for _ in range(2):
        s = int(rng.integers(1 << 30))
        specs.append(("bianchi", s))
    for _ in range(2):
        specs.append(("solvable", int(rng.integers(1 << 30))))
    out = []
    for name, make in fams:
        s = int(rng.integers(1 << 30))
        out.append((name, make))
        out.append((f"{name} random basis", lambda make=make, s=s: random_basis(np.random.default_rng(s), make())))
    for i, (kind, s) in enumerate(specs):
        if kind == "bianchi":
            alg = bianchi(np.random.default_rng(s))
            if i == 0:
                out.append((alg.name, lambda alg=alg: alg))
            else:
                out.append((f"{alg.name} random basis",
                            lambda alg=alg, s=s: random_basis(np.random.default_rng(s + 1), alg)))
        else:
            r2 = np.random.default_rng(s)
            if r2.random() < 0.5:
                k = int(r2.choice([3, 4]))
                r = int(r2.integers(0, k + 1)) if k == 3 else int(r2.integers(0, 5))
                label = f"solvable n({k})+{r} diag, random basis"
                out.append((label, lambda s=s, k=k, r=r: random_basis(
                    np.random.default_rng(s + 2), solvable_triangular(np.random.default_rng(s + 1), k, r))))
            else:
                n = int(r2.integers(3, 11))
                label = f"solvable R x_D R^{n - 1}, random basis"
                out.append((label, lambda s=s, n=n: random_basis(
                    np.random.default_rng(s + 2), almost_abelian(np.random.default_rng(s + 1), n))))
    # interleaved (so that a cut of the numba budget keeps variety): so(4), Bianchi, se(3) random basis,
    # solvable, sl(3), so(5) random basis, sp(4), so(4) random basis, Bianchi random basis, se(3),
    # solvable, sl(3) random basis, so(5), sp(4) random basis
    order = [out[i] for i in (6, 10, 9, 12, 4, 1, 2, 7, 11, 8, 13, 5, 0, 3)]
    if quick:
        order = [order[0], order[1], order[3]]     # so(4), a Bianchi type, a random solvable one
    return order


KINDS = ("free", "servo1", "servo2")


def _sysseed(label, kind, seed):
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


# ------------------------------------------------------------------------------------ baselines
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


def _zend(res):
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


def timed(cases, reps, cpu=False):
    """cases: name -> zero-argument callable; ``reps`` interleaved rounds, median CPU time of this process
    (time.process_time, all its threads: on a shared machine the wall time of a longer call takes more of the
    other jobs' preemptions, which a ratio of wall times would count against it); with ``cpu``: (median
    wall, median CPU time), each a median of its own."""
    times = {k: [] for k in cases}
    cpus = {k: [] for k in cases}
    for _ in range(reps):
        for k, go in cases.items():
            c, t = time.process_time(), time.perf_counter()
            go()
            times[k].append(time.perf_counter() - t)
            cpus[k].append(time.process_time() - c)
    if cpu:
        return {k: (float(np.median(times[k])), float(np.median(cpus[k]))) for k in cases}
    return {k: float(np.median(v)) for k, v in cpus.items()}


def _thread_ticks():
    """CPU ticks of each OS thread of this process (Linux /proc; {} elsewhere)."""
    out = {}
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return out
    for t in tasks:
        try:
            f = open(f"/proc/self/task/{t}/stat").read().rsplit(")", 1)[1].split()
            out[t] = int(f[11]) + int(f[12])
        except (OSError, IndexError, ValueError):
            pass
    return out


def threads_used(go, reps=3):
    """(threads that ran on the CPU during ``reps`` calls of go, threads of the process, the largest
    share of one thread in the CPU time of the calls): how many cores a tool used."""
    a = _thread_ticks()
    for _ in range(reps):
        go()
    b = _thread_ticks()
    d = [v - a.get(t, 0) for t, v in b.items()]
    busy = [x for x in d if x > 0]
    return len(busy), len(b), (max(busy) / sum(busy) if busy else float("nan"))


def attempt_flops(pl):
    """Floating-point operations of one attempted step of plan ``pl`` in the lanes (the arithmetic
    operators + - * / of the straight-line attempt text of :func:`integrators.codegen.batchgen.attempt_lines`,
    a product with a literal coefficient counted as one operation; max, abs and the square root of the
    error norm one each; with the Casimir projection of a projected pair, which the lanes compute in the
    attempt): the work the lanes do per trajectory and attempt."""
    import re
    from integrators.codegen import batchgen
    from integrators.codegen import ensemble_source
    vproj = pl.proj is not None and not pl.lie      # the projection is in the lanes' attempt then
    _, _, al, _, _ = batchgen.attempt_lines(pl.st, pl.tab, pl.lie, pl.terms, lanes=True,
                                            proj=pl.proj if vproj else None, fixed=ensemble_source.PROJ_ITER)
    n = 0
    for ln in al:
        rhs = ln.split("=", 1)[1] if "=" in ln else ln
        rhs = re.sub(r"\d+\.\d*(e[-+]?\d+)?|\d+e[-+]?\d+", "1", rhs)   # literals
        n += len(re.findall(r"(?<![eE(,])[-+*/]|\b(?:mx|abs|sqrt|max|min)\(", rhs))
    return n


# ------------------------------------------------------------------------------------ one trajectory
def single(drawn, args, numba_ok):
    rows, notes, prof_target = [], [], None
    reps = 3 if args.quick else 5
    spent = 0.0
    systems = []
    for label, make in drawn:
        t = time.perf_counter()
        alg = make()
        alg.casimirs()
        tb = time.perf_counter() - t
        for j, kind in enumerate(KINDS):
            seed = _sysseed(label, kind, args.seed)
            try:
                s, x0f = build_system(alg, kind, seed)
            except ValueError as exc:      # e.g. an unrealizable draw (never seen; said if it happens)
                notes.append(f"{label} {kind}: not built ({exc})")
                continue
            systems.append((label, kind, alg, s, x0f, tb if j == 0 else None))
    for label, kind, alg, s, x0f, tb in systems:
        P = s.problem()
        f = hand_rhs(P)
        for r0 in (1.0, 0.5, 0.25, 0.125):
            x0 = x0f(r0)
            z0 = s.to_problem(x0)
            ref = reference(f, z0)
            if ref.status == 0 and np.max(np.abs(ref.y)) <= 10 * r0:
                break
        else:
            notes.append(f"{label} {kind}: no initial state with a bounded reference; skipped")
            continue
        zref = ref.y[:, -1]
        grid = np.linspace(0.0, T, STEPS + 1)
        cands = {
            "DOP853": lambda tol: solve_ivp(f, (0.0, T), z0, method="DOP853", t_eval=grid, rtol=tol,
                                            atol=tol * 1e-2).y[:, -1],
            "numpy": lambda tol: _zend(s.simulate(x0, T, rtol=tol, atol=tol * 1e-2, backend="numpy")),
        }
        first_numba = None
        if numba_ok and spent < args.numba_budget:
            t = time.perf_counter()
            r = s.simulate(x0, T, backend="numba")
            first_numba = time.perf_counter() - t
            spent += first_numba
            cands["numba"] = lambda tol: _zend(s.simulate(x0, T, rtol=tol, atol=tol * 1e-2, backend="numba"))
        chosen = {k: choose(go, zref) for k, go in cands.items()}
        runs = {k: (lambda go=cands[k], tol=tol: go(tol)) for k, (tol, _) in chosen.items() if tol is not None}
        d = s.simulate(x0, T)
        runs["default"] = lambda: s.simulate(x0, T)
        tm = timed(runs, reps)
        base = tm.get("DOP853")
        derr = float(np.max(np.abs(_zend(d) - zref)))

        def cell(k):
            tol, err = chosen.get(k, (None, None))
            if k not in cands:
                return "-", "-", "(budget)" if numba_ok else "(no numba)"
            if tol is None:
                return "-", f"{err:.0e}", "not reached"
            return f"{tol:.0e}", f"{tm[k] * 1e3:.2f}", (f"{tm[k] / base:.2f}x" if base else "-")

        c_dop, c_np, c_nb = cell("DOP853"), cell("numpy"), cell("numba")
        rows.append([label, alg.dim, kind, d.method, f"{r0:g}", c_dop[0], c_dop[1], c_np[0], c_np[1], c_np[2],
                     c_nb[0], c_nb[1], c_nb[2], f"{tm['default'] * 1e3:.2f}", f"{derr:.0e}",
                     "-" if first_numba is None else f"{first_numba:.1f}",
                     "-" if tb is None else f"{tb:.2f}"])
        ratio = tm["numpy"] / base if ("numpy" in tm and base) else None
        if ratio is not None and (prof_target is None or ratio > prof_target[0]):
            prof_target = (ratio, label, kind, s, x0, chosen["numpy"][0])
        print(" | ".join(str(v) for v in rows[-1]), flush=True)
    return rows, notes, prof_target


def profile_one(target):
    ratio, label, kind, s, x0, tol = target
    s.simulate(x0, T, rtol=tol, atol=tol * 1e-2, backend="numpy")
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(10):
        s.simulate(x0, T, rtol=tol, atol=tol * 1e-2, backend="numpy")
    pr.disable()
    buf = io.StringIO()
    st = pstats.Stats(pr, stream=buf)
    st.sort_stats("tottime").print_stats(10)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    keep = [ln for ln in lines if ln.strip().startswith("ncalls")][:1] + \
        [ln for ln in lines if "(" in ln and ("/" in ln or "<" in ln)][:10]
    total = st.total_tt / 10
    return label, kind, ratio, total, keep


# ------------------------------------------------------------------------------------ cold start
COLD_CODE = r"""
import os, sys, time, json
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import numpy as np
import benchmarks.drawn_systems as D
import servo, integrators
t1 = time.perf_counter()
label, make = D.draw({seed}, False)[{index}]
alg = make(); alg.casimirs()
t2 = time.perf_counter()
s, x0f = D.build_system(alg, {kind!r}, {sysseed})
x0 = x0f({r0})
t3 = time.perf_counter()
r = s.simulate(x0, D.T)
t4 = time.perf_counter()
out = dict(imp=t1 - t0, alg=t2 - t1, sys=t3 - t2, auto=t4 - t3, backend=r.backend)
try:
    t = time.perf_counter(); r = s.simulate(x0, D.T, backend="numba"); out["numba"] = time.perf_counter() - t
except Exception as exc:
    out["numba_error"] = str(exc)[:200]
print("COLD" + json.dumps(out))
"""


def cold(drawn, args, picks):
    rows = []
    for index, kind, r0 in picks:
        label = drawn[index][0]
        seed = _sysseed(label, kind, args.seed)
        full_index = [lab for lab, _ in draw(args.seed, False)].index(label)
        with tempfile.TemporaryDirectory(prefix="liedyn-cold-") as cache:
            env = dict(os.environ, LIEDYN_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
            code = COLD_CODE.format(root=str(ROOT), seed=args.seed, index=full_index, kind=kind, sysseed=seed, r0=r0)
            t = time.perf_counter()
            try:
                p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                   timeout=args.cold_timeout)
                line = [ln for ln in p.stdout.splitlines() if ln.startswith("COLD")]
                out = json.loads(line[0][4:]) if line else {"numba_error": p.stderr[-300:]}
            except subprocess.TimeoutExpired:
                out = {"numba_error": f"timed out after {args.cold_timeout:.0f} s"}
            wall = time.perf_counter() - t
        nb = f"{out['numba']:.1f}" if "numba" in out else out.get("numba_error", "-")
        rows.append([label, kind, f"{out.get('imp', float('nan')):.2f}", f"{out.get('alg', float('nan')):.2f}",
                     f"{out.get('sys', float('nan')):.3f}", f"{out.get('auto', float('nan')):.3f}",
                     out.get("backend", "-"), nb, f"{wall:.1f}"])
        print(" | ".join(rows[-1]), flush=True)
    return rows


# ------------------------------------------------------------------------------------ ensembles
def _jax():
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platform_name", "cpu")
        import diffrax
        import jax.numpy as jnp
        return jax, jnp, diffrax
    except ImportError:
        return None


def jax_solver(P, solver_name, mods):
    """A jitted, vmapped diffrax solve of the same rhs: (Z0 (N, n), rtol, atol) -> final states (N, n)."""
    jax, jnp, diffrax = mods
    n = P.dim
    C2 = jnp.asarray(P.algebra.structure_constants.reshape(n, n * n))
    c = np.asarray(P.velocity(np.zeros(n)), dtype=float)
    WT = jnp.asarray(np.asarray(P.velocity(np.eye(n)), dtype=float) - c)
    c = jnp.asarray(c)
    if P.forcing is None:
        def f(t, z, args):
            return ((z @ WT + c) @ C2).reshape(n, n) @ z
    else:
        cl = np.asarray(P.linear_invariants[0])
        bv = np.asarray(P.forcing(np.random.default_rng(0).standard_normal(n)), dtype=float)
        bv = jnp.asarray(bv / (cl @ bv))
        cl = jnp.asarray(cl)

        def f(t, z, args):
            g = ((z @ WT + c) @ C2).reshape(n, n) @ z
            return g - (g @ cl) * bv
    term = diffrax.ODETerm(f)
    solver = getattr(diffrax, solver_name)()

    def one(z0, rtol, atol):
        sol = diffrax.diffeqsolve(term, solver, t0=0.0, t1=T, dt0=None, y0=z0,
                                  stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
                                  saveat=diffrax.SaveAt(t1=True), max_steps=100000)
        return sol.ys[-1], sol.stats["num_accepted_steps"], sol.stats["num_rejected_steps"]

    run = jax.jit(jax.vmap(one, in_axes=(0, None, None)))

    def go(Z, tol, stats=False):
        y, na, nr = jax.block_until_ready(run(jnp.asarray(Z), tol, tol * 1e-2))
        return (np.asarray(y), np.asarray(na), np.asarray(nr)) if stats else np.asarray(y)
    return go


def ensembles(systems, args, numba_ok):
    """The ensemble rows (module docstring) and notes: per tool its tolerance, error, mean attempted
    steps per trajectory, median wall and CPU time (interleaved rounds), the threads that ran; for the
    compiled liedyn run also the CPU time inside its kernel and the kernel's arithmetic rate."""
    from integrators.backends import batch_kernels, fastpath
    from integrators.codegen import projection
    from integrators import METHODS

    mods = _jax()
    N = 1000 if args.quick else 10000
    reps = max(3, args.ensemble_reps)
    rows, notes = [], []
    for label, kind, s, x0, r0 in systems:
        P = s.problem()
        f = hand_rhs(P)
        rng = np.random.default_rng(5)
        n = s.state_dim
        X = x0 + 0.05 * r0 * rng.standard_normal((N, n))
        X = s.check_state(X, project=True)
        Z = s.to_problem(X)
        sub = slice(0, 64)
        zref = np.array([reference(f, z).y[:, -1] for z in Z[sub]])
        info = {}

        def lied(backend, ensemble, key):
            def go(tol, rows_=slice(None), keep=False):
                r = s.simulate(X[rows_], T, steps=None, rtol=tol, atol=tol * 1e-2, backend=backend,
                               ensemble=ensemble)
                if keep:
                    info[key] = r
                return _zend(r)
            return go

        cands = {"liedyn numpy shared": lied("numpy", "shared", "np")}
        if numba_ok:
            cands["liedyn numba independent"] = lied("numba", "independent", "nb")
        if mods is not None:
            for sv in ("Dopri8", "Tsit5"):
                js = jax_solver(P, sv, mods)
                cands[f"diffrax {sv}"] = (lambda js=js: (lambda tol, rows_=slice(None), keep=False:
                                                         js(Z[rows_], tol)))()
                info[f"diffrax {sv}"] = js
        chosen = {}
        for k, go in cands.items():
            go(1e-6, sub)                                   # compile / warm up
            tol, err = choose(lambda tol, go=go: go(tol, sub), zref)
            chosen[k] = (tol, err)
        runs = {k: (lambda go=cands[k], tol=t: go(tol)) for k, (t, _) in chosen.items() if t is not None}
        steps, used = {}, {}
        for k in runs:                                       # the full ensemble (first-call costs), its steps
            tol = chosen[k][0]
            if k.startswith("diffrax"):
                _, na, nr = info[k](Z, tol, stats=True)
                steps[k] = float(np.mean(na + nr))
            else:
                cands[k](tol, keep=True)
                r = info["nb" if "numba" in k else "np"]
                steps[k] = (float(np.mean(r.nsteps_each + r.nrejected_each)) if hasattr(r, "nsteps_each")
                            else float(r.nsteps + r.nrejected))
                if "numba" in k:
                    used["lost"] = len(getattr(r, "failed", []))
                    used["method"] = r.method
            used[k] = threads_used(runs[k])
        # the compiled kernel's own CPU time, clocked inside the same rounds (the whole call minus this: Python)
        kern = []
        inner = batch_kernels.adaptive_independent

        def clocked(*a, **kw):
            c = time.process_time()
            try:
                return inner(*a, **kw)
            finally:
                kern.append(time.process_time() - c)
        batch_kernels.adaptive_independent = clocked
        try:
            tm = timed(runs, reps, cpu=True)
        finally:
            batch_kernels.adaptive_independent = inner
        dif = [k for k in tm if k.startswith("diffrax")]
        bw = min(tm[k][0] for k in dif) if dif else None
        bc = min(tm[k][1] for k in dif) if dif else None
        for k, (tol, err) in chosen.items():
            if tol is None:
                rows.append([label, kind, N, k, "-", f"{err:.0e}", "-", "not reached"] + ["-"] * 6)
                continue
            w, c = tm[k]
            th = used.get(k)
            rows.append([label, kind, N, k, f"{tol:.0e}", f"{err:.0e}", f"{steps[k]:.1f}", f"{w * 1e3:.1f}",
                         f"{c * 1e3:.1f}", f"{w / N * 1e6:.2f}", f"{c / N * 1e6:.2f}",
                         "-" if th is None else f"{th[0]} of {th[1]} ({th[2]:.0%})",
                         f"{w / bw:.3f}x" if bw else "-", f"{c / bc:.3f}x" if bc else "-"])
            print(" | ".join(str(v) for v in rows[-1]), flush=True)
        if kern:
            meth = METHODS[used["method"]]
            proj = projection.of_algebra(P.algebra) if meth.project else None
            pl = fastpath.plan(P, meth.tableau, meth.lie, meth.terms, Z[:1], proj)
            fl = attempt_flops(pl) if pl is not None else None
            kc = float(np.median(kern))
            k = "liedyn numba independent"
            att = steps[k] * N
            rate = f"{fl * att / kc / 1e9:.1f} GFlop/s of CPU" if fl else "-"
            notes.append(f"{label} {kind} ({used['method']}): kernel {kc * 1e3:.1f} ms of CPU of the call's "
                         f"{tm[k][1] * 1e3:.1f} ms (median of {reps}); {steps[k]:.1f} attempts a trajectory x "
                         f"{fl} flops an attempt = {fl * steps[k] / 1e3:.1f} kflop a trajectory: {rate}; "
                         f"{used.get('lost', 0)} trajectories lost")
    return rows, mods is not None, notes


def ensemble_section(drawn, args, numba_ok):
    """The markdown of the ensemble part: its table and notes (the first ``--ensembles`` systems of the
    draw, kinds free, servo1, servo2 in turn)."""
    from benchmarks._results import markdown_table
    ne = args.ensembles if args.ensembles is not None else (1 if args.quick else 3)
    ens_sys = []
    for label, make in drawn:
        if len(ens_sys) >= ne:
            break
        alg = make()
        kind = KINDS[len(ens_sys) % 3]
        s, x0f = build_system(alg, kind, _sysseed(label, kind, args.seed))
        ens_sys.append((label, kind, s, x0f(0.5), 0.5))
    er, have_jax, notes = ensembles(ens_sys, args, numba_ok and args.numba_budget > 0)
    try:
        import numba
        nth = f"numba {numba.get_num_threads()} threads (NUMBA_NUM_THREADS {numba.config.NUMBA_NUM_THREADS})"
    except ImportError:
        nth = "numba not installed"
    return [f"**Ensembles** of {1000 if args.quick else 10000} initial states (x0 + 5% noise, projected onto the "
            "constraint) at max final error <= 1e-8 over 64 of them, t in [0, 10] (target: liedyn <= 0.1x the best "
            "of diffrax's Dopri8 / Tsit5, JAX jit + vmap on the same CPU, float64). "
            + ("" if have_jax else "jax / diffrax not installed: liedyn alone. ")
            + f"Each tool at the loosest rtol of the ladder reaching the error; `steps`: attempted steps (accepted + "
            f"rejected) a trajectory, mean; wall and CPU (the process's CPU time, all threads: the work at equal "
            f"cores) medians of {max(3, args.ensemble_reps)} interleaved rounds; `threads`: the OS threads of the "
            f"process that ran during 3 calls, of all its threads, and the largest share one of them had of that "
            f"CPU time ({nth}; XLA's own pool for jax). The ratios: to the best diffrax by the same measure.", "",
            markdown_table(["algebra", "system", "N", "tool", "rtol", "error (64)", "steps", "wall [ms]", "CPU [ms]",
                            "wall us / traj", "CPU us / traj", "threads", "wall / best diffrax",
                            "CPU / best diffrax"], er), ""] + ["- " + x for x in notes] + [""]


# ------------------------------------------------------------------------------------ main
def _earlier_section():
    """The section drawn_systems of RESULTS.md as it is: its one-trajectory rows (lists of cells), the text
    from the cold-start table on (without its stamp) and its stamp; None when there is none."""
    from benchmarks._results import RESULTS
    text = RESULTS.read_text() if RESULTS.exists() else ""
    start, end = "<!-- begin drawn_systems -->", "<!-- end drawn_systems -->"
    if start not in text or end not in text:
        return None
    body = text.split(start, 1)[1].split(end, 1)[0]
    lines = body.strip().splitlines()
    stamp = next((ln.strip("_ ") for ln in lines if ln.startswith("_Measured")), "earlier run")
    rows, rest, in_rest = [], [], False
    for ln in lines:
        if ln.startswith("_Measured"):
            continue
        if ln.startswith("**Cold start**") or ln.startswith("**Ensembles**"):
            in_rest = True
        if in_rest:
            if ln.startswith("The cold-start and ensemble tables below are from"):
                continue
            rest.append(ln)
        elif ln.startswith("| ") and not ln.startswith("| algebra") and ln.count("|") == 18:
            rows.append([c.strip() for c in ln.strip("|").split("|")])
    return {"rows": rows, "rest": "\n".join(rest).strip(), "stamp": stamp}


def main():
    from benchmarks._results import markdown_table, update_section
    from integrators.backends import numba_kernels

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three algebras, smaller ensembles (a smoke run)")
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--numba-budget", type=float, default=None,
                    help="seconds of first numba calls (compilation) after which numba is not measured")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-start processes")
    ap.add_argument("--cold-timeout", type=float, default=300.0)
    ap.add_argument("--ensembles", type=int, default=None, help="number of drawn systems with ensembles")
    ap.add_argument("--no-write", action="store_true", help="print, do not write RESULTS.md")
    ap.add_argument("--only-ensembles", action="store_true",
                    help="run the ensemble part alone; writes the section drawn_ensembles")
    ap.add_argument("--ensemble-reps", type=int, default=3, help="interleaved rounds of the ensembles (>= 3)")
    ap.add_argument("--one-core", action="store_true",
                    help="ensembles with one thread each side (numba.set_num_threads(1); XLA without its "
                         "Eigen pool, XLA_FLAGS --xla_cpu_multi_thread_eigen=false); writes drawn_ensembles_one_core")
    ap.add_argument("--single-only", action="store_true",
                    help="the one-trajectory table only; keep the section's cold-start and ensemble tables")
    ap.add_argument("--only", nargs="*", default=None, help="algebra labels of the draw to measure")
    args = ap.parse_args()
    if args.numba_budget is None:
        args.numba_budget = 300.0 if args.quick else 900.0
    start = time.perf_counter()
    load0 = os.getloadavg()
    numba_ok = numba_kernels.available()
    drawn = draw(args.seed, args.quick)
    if args.only:
        unknown = set(args.only) - {lab for lab, _ in drawn}
        if unknown:
            raise SystemExit(f"--only: not in the draw: {sorted(unknown)}")
        drawn = [d for d in drawn if d[0] in args.only]
    print("drawn:", ", ".join(lab for lab, _ in drawn), flush=True)
    if args.one_core:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                                   " intra_op_parallelism_threads=1").strip()
        if numba_ok:
            import numba
            numba.set_num_threads(1)
        args.only_ensembles = True
    if args.only_ensembles:
        md = [f"Load average at the start {load0[0]:.1f} / {load0[1]:.1f} / {load0[2]:.1f} (1 / 5 / 15 min) on "
              f"{os.cpu_count()} cores shared with other jobs; compare ratios within this run. Seed {args.seed}"
              f"{', --quick' if args.quick else ''}.", ""]
        md += ensemble_section(drawn, args, numba_ok)
        load1 = os.getloadavg()
        md.append(f"Load average at the end {load1[0]:.1f} / {load1[1]:.1f} / {load1[2]:.1f}. "
                  f"Total benchmark time {time.perf_counter() - start:.0f} s.")
        text = "\n".join(md)
        print(text)
        if not args.no_write:
            cmd = " ".join(["python benchmarks/drawn_systems.py"] + sys.argv[1:])
            key, title = (("drawn_ensembles_one_core", "one core each side") if args.one_core else
                          ("drawn_ensembles", "the cores each tool takes"))
            update_section(key, f"## Ensembles of the drawn systems, {title} (issue 24)\n\n" + text, cmd)
        return
    rows, notes, prof = single(drawn, args, numba_ok)
    md = [f"Load average at the start {load0[0]:.1f} / {load0[1]:.1f} / {load0[2]:.1f} (1 / 5 / 15 min) on "
          f"{os.cpu_count()} cores shared with other jobs; compare ratios within this run. "
          f"numba: {'installed' if numba_ok else 'not installed'}. Seed {args.seed}"
          f"{', --quick' if args.quick else ''}.", "",
          "**One trajectory through `s.simulate` (default method, default 1000-step grid) at final error <= 1e-8**, "
          "t in [0, 10], against solve_ivp DOP853 with the same t_eval and a hand-written numpy rhs "
          "(targets: numpy <= 1.0x, numba <= 0.3x DOP853); times are CPU time of the process, median of "
          f"{3 if args.quick else 5} interleaved rounds. `default`: `s.simulate(x0, 10.0)` as it is "
          "(rtol 1e-12), its time and final error. `first numba`: the first numba call of the system in this "
          "process (compiles unless numba's disk cache has the structure). `algebra`: building it with its "
          "Casimirs.", "",
          markdown_table(["algebra", "dim", "system", "method", "r0", "DOP853 rtol", "DOP853 [ms]",
                          "numpy rtol", "numpy [ms]", "numpy / DOP853", "numba rtol", "numba [ms]",
                          "numba / DOP853", "default [ms]", "default error", "first numba [s]",
                          "algebra [s]"], rows), ""]
    old = _earlier_section() if args.single_only else None
    if old is not None and args.only:   # the rows of the algebras not measured now, from the earlier run
        kept = [r for r in old["rows"] if r[0] not in args.only]
        if kept:
            md += ["Rows of the earlier run (algebras not measured in this run; that run's tree and load):", "",
                   markdown_table(["algebra", "dim", "system", "method", "r0", "DOP853 rtol", "DOP853 [ms]",
                                   "numpy rtol", "numpy [ms]", "numpy / DOP853", "numba rtol", "numba [ms]",
                                   "numba / DOP853", "default [ms]", "default error", "first numba [s]",
                                   "algebra [s]"], kept), ""]
    md += ["- " + n for n in notes]

    def ratio(r, col):
        try:
            return float(r[col].rstrip("x"))
        except ValueError:
            return None
    np_r = [x for x in (ratio(r, 9) for r in rows) if x is not None]
    nb_r = [x for x in (ratio(r, 12) for r in rows) if x is not None]
    if np_r:
        md.append(f"- numpy / DOP853: median {np.median(np_r):.2f}x, worst {max(np_r):.2f}x; "
                  f"<= 1.0x on {sum(x <= 1.0 for x in np_r)} of {len(np_r)} systems.")
    if nb_r:
        md.append(f"- numba / DOP853: median {np.median(nb_r):.2f}x, worst {max(nb_r):.2f}x; "
                  f"<= 0.3x on {sum(x <= 0.3 for x in nb_r)} of {len(nb_r)} systems measured with numba.")
    if prof is not None:
        label, kind, r, total, keep = profile_one(prof)
        md += ["", f"Profile of one numpy call on the worst system ({kind} on {label}, {r:.2f}x DOP853; "
               f"{total * 1e3:.2f} ms a call under cProfile), top functions by own time:", "", "```",
               *keep, "```"]
    md.append("")
    if args.single_only:
        if old is not None and old["rest"]:
            md += [f"The cold-start and ensemble tables below are from the earlier run ({old['stamp']}), not rerun "
                   "with --single-only:", "", old["rest"]]
        text = "\n".join(md)
        print(text)
        if not args.no_write:
            cmd = " ".join(["python benchmarks/drawn_systems.py"] + sys.argv[1:])
            update_section("drawn_systems", "## Drawn systems (issue 24)\n\n" + text, cmd)
        return
    if not args.no_cold:
        # cold start: the first system of three kinds of algebra (the quick run: one)
        picks = [(0, "free", 1.0)] if args.quick else [(0, "free", 1.0), (2, "servo1", 1.0), (5, "free", 1.0)]
        picks = [p for p in picks if p[0] < len(drawn)]
        cr = cold(drawn, args, picks)
        md += ["**Cold start** in a fresh process with an empty code cache (targets: no \"auto\" call waits more than "
               "2 s on a compiler; the first numba call <= 10 s)", "",
               markdown_table(["algebra", "system", "import [s]", "algebra + Casimirs [s]", "system [s]",
                               "first simulate, auto [s]", "auto ran", "first numba call [s]", "process [s]"], cr),
               ""]
    md += ensemble_section(drawn, args, numba_ok)
    load1 = os.getloadavg()
    md.append(f"Load average at the end {load1[0]:.1f} / {load1[1]:.1f} / {load1[2]:.1f}. "
              f"Total benchmark time {time.perf_counter() - start:.0f} s.")
    text = "\n".join(md)
    print(text)
    if not args.no_write:
        cmd = " ".join(["python benchmarks/drawn_systems.py"] + sys.argv[1:])
        update_section("drawn_systems", "## Drawn systems (issue 24)\n\n" + text, cmd)


if __name__ == "__main__":
    main()
