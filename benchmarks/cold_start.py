"""Time to the first result on a new algebra, and the speed of the generic kernel (issue 24).

Two tables, written to the section "Cold start and the generic kernel (issue 24)" of RESULTS.md:

1. **First call on a structure never compiled**, each in a fresh process whose code cache
   (``LIEDYN_CACHE_DIR``) holds only the generic kernel (compiled once per machine, here by the parent
   process; its compile time is reported too): the import, building the system, the first
   ``integrate(problem, ...)`` with the defaults of the engine (``backend="auto"``) and what ran, the second
   call, the same first call with ``backend="numpy"`` in another fresh process (what "auto" ran before
   on these run sizes: they never reached the compile threshold), ``backend="numba"`` (compiles the
   specialised loop: 13-190 s on the drawn systems, ``--numba-cold`` to measure it here), and solve_ivp
   DOP853 with a hand-written numpy rhs at the same tolerances.
2. **Steady state** in one process (every cache warm): the generic kernel (the public ``integrate`` under
   "auto" while the specialised loop is not compiled: the benchmark hides it from the policy), the
   specialised numba loop (``backend="numba"``), numpy and DOP853, median of interleaved repetitions.

``--uncovered`` writes the section "cold_start_uncovered" instead: the first call of the runs no generic kernel
covers (fixed steps, a shared-step ensemble, events, time-dependent problems; :data:`UNCOVERED`) under
backend="numba", "auto" and backend="numba" compiling in the call.

Usage: ``PYTHONPATH=. python benchmarks/cold_start.py [--quick] [--reps 5] [--numba-cold] [--uncovered]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _results import markdown_table, publish, update_section  # noqa: E402

T1 = 10.0
RTOL, ATOL = 1e-10, 1e-12

#: (label, algebra builder, kind, method[, t1]): the drawn systems' algebras of benchmarks/drawn_systems.py;
#: the last row is a long run (40,000 steps), which "auto" used to continue compiled after 20,000 Python steps
SYSTEMS = [
    ("so(5)", "so5", "free", "rkmk853"),
    ("so(5)", "so5", "free", "rk853_projected"),
    ("so(4) random basis", "so4r", "free", "rkmk853"),
    ("se(3) random basis", "se3r", "free", "rk853_projected"),
    ("sl(3)", "sl3", "free", "rk853_projected"),
    ("R x_D R^8 random basis", "solv9", "free", "rkmk853"),
    ("so(4)", "so4", "servo1", "rk853"),
    ("so(5) random basis", "so5r", "free", "rkmk853"),
    ("sp(4) random basis", "sp4r", "free", "rk853_projected"),
    ("so(5), long run", "so5", "free", "rk853_projected", 20000.0),
]

#: the runs no generic kernel covers (fixed steps, a shared-step ensemble, events, time-dependent problems): (label,
#: algebra, kind, method, run) with run the number of fixed steps, "adaptive", "events" (a sign change of z_0, not
#: terminal), "shared100" (100 states z0 + 1% noise, one step sequence), "lyapunov" (lyapunov_spectrum over [0, 10],
#: dt 0.5, h 0.01: the compiled tangent flow) or "section" (poincare_section through z0 normal to e_0, both
#: directions, 1000 steps: the compiled section); kind "timed": a gyrostat whose rotor turns periodically
#: (:func:`system`); a cold backend="numba" call runs numpy while their loops compile in
#: the background (they compiled in the call before), section "cold_start_uncovered" (``--uncovered``)
UNCOVERED = [
    ("so(4) random basis", "so4r", "free", "rkmk4", 1000),
    ("so(5) random basis", "so5r", "free", "rkmk4", 1000),
    ("so(4) random basis", "so4r", "free", "rk853_projected", "events"),
    ("so(4) random basis", "so4r", "free", "rk853_projected", "shared100"),
    ("so(5) random basis", "so5r", "timed", "rk4", 1000),
    ("so(5) random basis", "so5r", "timed", "rk45", "adaptive"),
    ("so(5) random basis", "so5r", "free", "rk4", "lyapunov"),
    ("so(5) random basis", "so5r", "free", "rk4", "section"),
]


def algebra(key):
    from liegroups import named
    from _drawn_algebras import almost_abelian, random_basis, sl3, sp4
    rng = np.random.default_rng(24)
    if key == "so5":
        return named.so(5)
    if key == "so4":
        return named.so4()
    if key == "so4r":
        return random_basis(rng, named.so4())
    if key == "se3r":
        return random_basis(np.random.default_rng(25), named.se3())
    if key == "sl3":
        return sl3()
    if key == "so5r":
        return random_basis(np.random.default_rng(28), named.so(5))
    if key == "sp4r":
        return random_basis(np.random.default_rng(29), sp4())
    if key == "solv9":
        return random_basis(np.random.default_rng(27), almost_abelian(np.random.default_rng(26), 9))
    raise KeyError(key)


def system(key, kind, seed=7):
    """(problem, z0, hand-written rhs) of the free or servo1 system on the algebra ``key``
    (benchmarks/_drawn_common.build_system, r0 = 1); kind "timed": a gyrostat m' = ad*_{I^-1 (m + k(t))} m whose
    rotor's momentum k(t) = cos(pi t) e_n has period 2 (servo.TimeDependentSystem, a random SPD inertia; no
    hand-written rhs)."""
    from _drawn_common import build_system, hand_rhs
    alg = algebra(key)
    if kind == "timed":
        import sympy as sp

        from servo import TimeDependentSystem
        rng = np.random.default_rng(seed)
        n = alg.dim
        B = rng.standard_normal((n, n))
        S = TimeDependentSystem(alg, B @ B.T / n + np.eye(n), gyrostat=[0] * (n - 1) + [sp.cos(sp.pi * sp.Symbol("t"))],
                                period=2.0)
        z0 = rng.standard_normal(n)
        return S.problem(), z0 / np.linalg.norm(z0), None
    s, x0 = build_system(alg, kind, seed)
    P = s.problem()
    z0 = x0(1.0)
    return P, z0, hand_rhs(P)


COLD_CODE = """
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r}); sys.path.insert(0, {root!r} + "/benchmarks")
import numpy as np
from integrators import integrate
import cold_start
t1 = time.perf_counter()
P, z0, f = cold_start.system({key!r}, {kind!r})
t2 = time.perf_counter()
run = {steps!r}
kw = dict(method={method!r}, steps=run) if isinstance(run, int) else dict(method={method!r}, rtol={rtol!r}, atol={atol!r})
if run == "events":
    kw["events"] = lambda t, y: np.asarray(y)[..., 0]
if run == "shared100":
    z0 = z0 + 0.01 * np.random.default_rng(3).standard_normal((100, len(z0)))
def call():
    if run == "lyapunov":
        from integrators import lyapunov_spectrum
        return lyapunov_spectrum(P, z0, {t1v!r}, dt=0.5, h=0.01, backend={backend!r})
    if run == "section":
        from integrators import poincare_section
        return poincare_section(P, z0, (np.eye(len(z0))[0], float(z0[0])), {t1v!r}, steps=1000, direction=0,
                                backend={backend!r})
    return integrate(P, z0, (0.0, {t1v!r}), backend={backend!r}, **kw)
r = call()
t3 = time.perf_counter()
r2 = call()
t4 = time.perf_counter()
out = dict(imp=t1 - t0, sys=t2 - t1, first=t3 - t2, second=t4 - t3, backend=r.backend, status=r.status)
if run not in ("lyapunov", "section"):
    out.update(nsteps=r.nsteps, z=list(map(float, np.ravel(r.y[-1]))))
print("COLD" + json.dumps(out))
"""


def cold_call(key, kind, method, backend, cache, timeout, t1=T1, policy=None, steps=None):
    env = dict(os.environ, LIEDYN_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_CACHE_DIR", None)     # numba's cache beside the generated modules, in LIEDYN_CACHE_DIR
    if policy:
        env["LIEDYN_AUTO_COMPILE"] = policy
    code = COLD_CODE.format(root=str(ROOT), key=key, kind=kind, method=method, rtol=RTOL, atol=ATOL, t1v=t1,
                            backend=backend, steps=steps)
    try:
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("COLD")]
    return json.loads(line[0][4:]) if line else {"error": p.stderr.strip().splitlines()[-1][:120]}


def dop853(f, z0, t1=T1):
    from scipy.integrate import solve_ivp
    t = time.perf_counter()
    s = solve_ivp(f, (0.0, t1), z0, method="DOP853", rtol=RTOL, atol=ATOL)
    return time.perf_counter() - t, s.y[:, -1]


def warm_generic(cache):
    """Compile the generic kernel into ``cache`` in a subprocess; its compile time (or load time)."""
    env = dict(os.environ, LIEDYN_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_CACHE_DIR", None)
    code = ("import time; t = time.perf_counter(); c = time.process_time(); "
            "from integrators.backends import generic_kernel; "
            "generic_kernel.warm(); print('WARM', time.perf_counter() - t, time.process_time() - c)")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    return tuple(float(v) for v in [ln for ln in p.stdout.splitlines() if ln.startswith("WARM")][0].split()[1:])


def _fresh(base):
    """A new cache directory holding only the generic kernel (copied from ``base``)."""
    cache = tempfile.mkdtemp(prefix="liedyn-cold-")
    for name in os.listdir(base):       # only the generic kernel: every structure is new here
        src = os.path.join(base, name)
        (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, os.path.join(cache, name))
    return cache


def cold_uncovered(base, args):
    """A cold backend="numba" call of each run of UNCOVERED (no generic kernel for it), in a fresh process whose
    cache holds the generic kernel only, and the same call under "auto" in another; each also with the loops
    compiled in the call (LIEDYN_AUTO_COMPILE=wait: what backend="numba" did before)."""
    from integrators.backends.auto_compile import NUMBA_COLD_NOTE
    rows = []
    for label, key, kind, method, run in UNCOVERED:
        out = {}
        for backend, policy in (("numba", None), ("auto", None), ("numba", "wait")):
            cache = _fresh(base)
            out[backend, policy] = cold_call(key, kind, method, backend, cache, args.timeout, policy=policy,
                                             steps=run)
            shutil.rmtree(cache, ignore_errors=True)
        nb, au, wt = out["numba", None], out["auto", None], out["numba", "wait"]
        what = f"{run} fixed steps" if isinstance(run, int) else {
            "events": "adaptive, events", "adaptive": "adaptive", "shared100": "adaptive, 100 states, shared steps",
            "lyapunov": "lyapunov_spectrum, 2000 steps", "section": "poincare_section, 1000 steps"}[run]
        nan = float("nan")
        ran = nb.get("backend", nb.get("error", "-")).replace(NUMBA_COLD_NOTE, " (its loop compiling elsewhere)")
        rows.append([label, kind, method, what, f"{nb.get('first', nan):.2f}", ran,
                     f"{nb.get('second', nan):.3f}", f"{au.get('first', nan):.3f}", au.get("backend", "-"),
                     f"{wt.get('first', nan):.1f}"])
        print(" | ".join(rows[-1]), flush=True)
    return rows


def uncovered(args):
    """The section cold_start_uncovered: :func:`cold_uncovered` with the generic kernel compiled once first."""
    base = tempfile.mkdtemp(prefix="liedyn-generic-")
    try:
        load = os.getloadavg()
        warm_generic(base)
        rows = cold_uncovered(base, args)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    md = [f"Load average at the start {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on 2 cores shared with other "
          "jobs. Each call in a fresh process whose code cache holds only the generic kernel (the structure never "
          "compiled); `integrate(s.problem(), ...)` with t in [0, 10], rtol 1e-10, atol 1e-12 for the adaptive "
          "runs; `timed`: a gyrostat whose rotor's momentum cos(pi t) e_n turns with period 2 "
          "(servo.TimeDependentSystem). No generic kernel runs these: a cold backend='numba' call runs the generated loop in numpy while "
          "its compiled loops compile in the background (a fixed-step run of one trajectory continues compiled "
          "from the chunk they are ready), as 'auto' does. `numba first`: that call; `numba ran`: its "
          "result.backend; `numba second`: the next call in that process; `auto first`, `auto ran`: the same call "
          "under backend='auto' in another fresh process; `compiled in the call`: backend='numba' under "
          "LIEDYN_AUTO_COMPILE=wait, what a cold backend='numba' call did before (targets of issue 24: a cold "
          "numba call <= 10 s, no 'auto' call waits more than 2 s on a compiler).", "",
          markdown_table(["system", "kind", "method", "run", "numba first [s]", "numba ran", "numba second [s]",
                          "auto first [s]", "auto ran", "compiled in the call [s]"], rows)]
    publish(md, "cold_start_uncovered", "Cold start of the runs the generic kernel does not cover (issue 24)", True,
            "benchmarks/cold_start.py")


def cold(systems, args):
    rows = []
    base = tempfile.mkdtemp(prefix="liedyn-generic-")
    try:
        compile_s = warm_generic(base)
        load_s = warm_generic(base)[0]
        args.fresh = []
        if args.numba_cold:   # a fresh machine: nothing in the cache, not even the generic kernel
            for label, key, method, t1 in (("so(5) random basis", "so5r", "rkmk853", T1),
                                           ("so(5), long run", "so5", "rk853_projected", 20000.0)):
                empty = tempfile.mkdtemp(prefix="liedyn-empty-")
                r = cold_call(key, "free", method, "numba", empty, args.timeout, t1)
                shutil.rmtree(empty, ignore_errors=True)
                args.fresh.append(f"{label}, {method}, t1 = {t1:g}: {r.get('first', float('nan')):.2f} s, ran "
                                  f"{r.get('backend', r.get('error'))!r}, {r.get('nsteps', '-')} steps")
                print("fresh machine:", args.fresh[-1], flush=True)
        for label, key, kind, method, *rest in systems:
            t1 = rest[0] if rest else T1
            out = {}
            runs = [("auto", None), ("numpy", None)] + ([("numba", None)] if args.numba_cold else [])
            if rest:     # the long run: also "auto" as it was (compile in the call at the switch)
                runs.append(("auto", "wait"))
            for backend, policy in runs:
                cache = _fresh(base)
                out[backend if policy is None else "wait"] = cold_call(key, kind, method, backend, cache,
                                                                       args.timeout, t1, policy)
                shutil.rmtree(cache, ignore_errors=True)
            P, z0, f = system(key, kind)
            td, zd = dop853(f, z0, t1)
            a, nmp = out["auto"], out["numpy"]
            diff = np.max(np.abs(np.array(a["z"]) - zd)) if "z" in a else float("nan")

            def s(d, k, fmt="{:.3f}"):
                return fmt.format(d[k]) if k in d else d.get("error", "-")

            nb, old = out.get("numba", {}), out.get("wait", {})
            rows.append([label, kind, method, f"{t1:g}", s(a, "imp", "{:.2f}"), s(a, "sys", "{:.2f}"),
                         s(a, "first"), a.get("backend", "-"), s(a, "second"), s(nmp, "first"),
                         s(old, "first", "{:.1f}") if old else "-", s(nb, "first", "{:.2f}") if nb else "-",
                         nb.get("backend", "-") if nb else "-", s(nb, "second") if nb else "-",
                         f"{td:.3f}", f"{diff:.0e}"])
            print(" | ".join(rows[-1]), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return rows, compile_s, load_s


#: systems whose specialised loop takes minutes to compile (475 s in RESULTS "Drawn systems"): not compiled
#: in the steady-state table unless --all-numba
SLOW_NUMBA = {"solv9"}


def steady(systems, reps, all_numba=False):
    from integrators import integrate
    from integrators.backends import auto_compile, background
    hidden = auto_compile.compiled
    rows = []
    for label, key, kind, method, *rest in systems:
        if rest:
            continue         # the long run is in the first table only
        P, z0, f = system(key, kind)
        kw = dict(method=method, rtol=RTOL, atol=ATOL)
        use_numba = all_numba or key not in SLOW_NUMBA
        t = time.perf_counter()
        os.environ["LIEDYN_AUTO_COMPILE"] = "wait"   # backend="numba" compiles the specialised loop in the call
        try:
            nb = integrate(P, z0, (0.0, T1), backend="numba" if use_numba else "numpy", **kw)   # compiles
        finally:
            os.environ.pop("LIEDYN_AUTO_COMPILE")
        compile_s = time.perf_counter() - t
        # the steady state: the background thread's loads (the generic kernel, the compiled Casimir rows) done, or
        # the first rounds of "generic" would run numpy while they hold the queue
        background.wait(120)

        def gen():
            auto_compile.compiled = lambda pl, k: False                 # as on a structure not yet compiled
            try:
                return integrate(P, z0, (0.0, T1), backend="auto", **kw)
            finally:
                auto_compile.compiled = hidden
        g = gen()
        times = {"generic": [], "numba": [], "numpy": [], "DOP853": []}
        calls = {"generic": gen, "numba": lambda: integrate(P, z0, (0.0, T1), backend="numba", **kw),
                 "numpy": lambda: integrate(P, z0, (0.0, T1), backend="numpy", **kw), "DOP853": lambda: dop853(f, z0)}
        if not use_numba:
            del calls["numba"], times["numba"]
        calls["numpy"]()
        for _ in range(reps):
            for k, fn in calls.items():
                t = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t)
        med = {k: float(np.median(v)) for k, v in times.items()}
        td = med["DOP853"]
        nbm = med.get("numba")
        rows.append([label, kind, method, g.backend, g.nsteps, f"{med['generic'] * 1e3:.2f}",
                     f"{nbm * 1e3:.2f}" if nbm else "not compiled", f"{med['numpy'] * 1e3:.2f}", f"{td * 1e3:.2f}",
                     f"{med['generic'] / td:.2f}x", f"{nbm / td:.2f}x" if nbm else "-",
                     f"{med['generic'] / nbm:.2f}x" if nbm else "-", f"{compile_s:.1f}" if use_numba else "-",
                     f"{np.max(np.abs(g.y[-1] - nb.y[-1])):.0e}" + ("" if use_numba else " (vs numpy)")])
        print(" | ".join(map(str, rows[-1])), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="two systems only")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--numba-cold", action="store_true", help="also time a cold backend='numba' call")
    ap.add_argument("--skip-steady", action="store_true")
    ap.add_argument("--keep-steady", action="store_true",
                    help="keep the steady-state table of RESULTS.md (from its own earlier run, said so)")
    ap.add_argument("--all-numba", action="store_true", help="compile the specialised loop of every system")
    ap.add_argument("--uncovered", action="store_true",
                    help="only the runs no generic kernel covers (section cold_start_uncovered)")
    args = ap.parse_args()
    if args.uncovered:
        uncovered(args)
        return
    systems = SYSTEMS[:2] + SYSTEMS[-1:] if args.quick else SYSTEMS
    load = os.getloadavg()
    crows, compile_s, load_s = cold(systems, args)
    srows = [] if args.skip_steady or args.keep_steady else steady(systems, args.reps, args.all_numba)
    md = [f"Load average at the start {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on 2 cores shared with other "
          f"jobs. t in [0, {T1:g}], rtol {RTOL:g}, atol {ATOL:g}, one trajectory, `integrate(s.problem(), ...)`.",
          "",
          f"The generic kernel (integrators.backends.generic_kernel, one numba loop for every algebra and "
          f"method) compiled in {compile_s[0]:.1f} s wall / {compile_s[1]:.1f} s CPU once for this machine (empty "
          f"cache), and loads in {load_s:.2f} s in a new process (numba's import included). The caches: "
          f"``$LIEDYN_CACHE_DIR`` (default ``~/.cache/liedyn``), numba's beside the generated modules there "
          f"(NUMBA_CACHE_DIR unset).",
          ""] + (["A fresh machine (empty cache, not even the generic kernel): the first backend='numba' call "
                  "runs the generated loop in numpy (continuing compiled in chunks once a loop is ready) with the "
                  "generic kernel and the specialised loop compiling in the background: "
                  + "; ".join(args.fresh) + ". The Makefile's install step (make test, make demo) compiles the "
                  "generic kernel once.", ""] if args.fresh else []) + [
          "",
          "**First call on a structure never compiled** (fresh process; the cache holds the generic kernel "
          "only). `auto first`: the first `integrate` with backend='auto' (the default), `ran`: its "
          "result.backend; `numpy first`: the same first call with backend='numpy' in a fresh process (what "
          "'auto' ran before on these run sizes); `numba first`: backend='numba' cold (the generic kernel "
          "while the specialised loop compiles in the background; before: the specialised loop compiled in the "
          "call, 13-190 s per RESULTS 'Drawn systems'), `numba ran`: its result.backend, `numba second`: the "
          "next call in that process; `auto before`: "
          "the long run under LIEDYN_AUTO_COMPILE=wait, the former 'auto' (numpy for 20,000 steps, then it "
          "compiles the specialised loop in the call); DOP853: "
          "solve_ivp with a hand-written numpy rhs; `|auto - DOP853|`: end states.",
          "",
          markdown_table(["system", "kind", "method", "t1", "import [s]", "system [s]", "auto first [s]", "ran",
                          "auto second [s]", "numpy first [s]", "auto before [s]", "numba first [s]", "numba ran",
                          "numba second [s]", "DOP853 [s]", "|auto - DOP853|"],
                         crows)]
    if args.keep_steady:
        text = (ROOT / "benchmarks" / "RESULTS.md").read_text()
        i = text.index("**Steady state**", text.index("<!-- begin cold_start -->"))
        j = text.index("_Measured", i)
        md += ["", "(The steady-state table below is kept from the section's previous run, 2026-11-27 earlier "
               "today; this run did not repeat it.)", "", text[i:j].rstrip()]
    if srows:
        md += ["", "**Steady state** (caches warm, median of interleaved repetitions): `generic`: integrate under "
               "'auto' while the specialised loop is not compiled (what a new algebra runs); `numba`: "
               "backend='numba' (the specialised loop; `first numba [s]`: its first call, a compile or a load from the disk cache); `numpy`: "
               "backend='numpy'; `|generic - numba|`: end states.",
               "",
               markdown_table(["system", "kind", "method", "generic ran", "steps", "generic [ms]", "numba [ms]",
                               "numpy [ms]", "DOP853 [ms]", "generic / DOP853", "numba / DOP853",
                               "generic / numba", "first numba [s]", "|generic - numba|"], srows)]
    update_section("cold_start", "## Cold start and the generic kernel (issue 24)\n\n" + "\n".join(md),
                   "PYTHONPATH=. python benchmarks/cold_start.py" + (" --quick" if args.quick else "")
                   + (" --numba-cold" if args.numba_cold else "") + (" --keep-steady" if args.keep_steady else ""))


if __name__ == "__main__":
    main()
