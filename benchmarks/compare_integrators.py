"""Integrators against the tools a user would pick instead, at matched accuracy.

    .venv/bin/python benchmarks/compare_integrators.py [--quick]

Writes the section "integrators" of benchmarks/RESULTS.md (batches and ensembles: benchmarks/batches.py). Protocol for every time-to-error figure:
for each method a tolerance ladder (rtol 1e-4 .. 1e-13 in half decades, atol = rtol / 100) is scanned
once for the loosest setting whose final error against a tight reference (DOP853, rtol 1e-13) is
<= 1e-8 on t in [0, 10]; then all methods
of a system are timed at their settings in 5 interleaved rounds and the median is kept. Baselines:
scipy.integrate.solve_ivp(method="DOP853") with a hand-written numpy right-hand side (w = W @ z, then
ad*_w z component by component from the structure constants, returned with np.array; for a forced
system plus the multiplier lambda b), and the Fortran DOP853 of scipy.integrate.ode("dop853") with the
same rhs. The hand-written rhs is checked against problem.rhs before timing. Numba figures exclude
compilation (the compiled code is cached on disk; see integrators/numba_kernels.py). liedyn is called
as a user calls it: ``integrate(s.problem(), ...)`` with the system's own problem (its invariants,
constraints and outputs recorded and checked), default save_every (every step kept, as solve_ivp
keeps them). The liedyn candidates keep what the system needs to round-off: on the Casimir systems
rkmk853, rkmk45 (RKMK form) and rk853_projected (the DOP853 pair projected onto the Casimirs after
every step), on the constrained ones rk853, rk45 (linear invariants).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy.integrate import ode, solve_ivp  # noqa: E402

from benchmarks._results import markdown_table, update_section  # noqa: E402
from integrators import CoadjointProblem, integrate  # noqa: E402
from integrators.backends import numba_kernels
from integrators.analysis.rigid_body import REFERENCE_INERTIA, free_rigid_body  # noqa: E402
from liegroups import named  # noqa: E402
from servo.lie import EulerPoincare, Nonholonomic, ServoFirstKind, ServoSecondKind  # noqa: E402

QUICK = "--quick" in sys.argv
REPS = 5
T = 10.0
TARGET = 1e-8
NUMBA = numba_kernels.available()


# ------------------------------------------------------------------------------------ systems
def _spd(rng, n):
    B = rng.standard_normal((n, n))
    return B @ B.T / n + np.eye(n)


def systems():
    out = []
    rng = np.random.default_rng(11)
    for alg in ("se3", "so4"):
        g = getattr(named, alg)()
        n = g.dim
        s = ServoSecondKind(g, _spd(rng, n), a=rng.standard_normal(n), b=rng.standard_normal(n))
        x0 = s.state_from(w=0.5 * rng.standard_normal(n), lam=0.1, project=True)
        out.append((f"ServoSecondKind {alg}", s.problem(), s.to_problem(x0), "casimirs"))
    J = np.array([1.0, 1.0, 0.5])
    Iinv = np.zeros((6, 6))
    Iinv[:3, :3] = np.diag(1 / J)
    top = EulerPoincare(named.se3(), inverse_inertia=Iinv, linear_term=[0, 0, 0, 0, 0, 1.0])
    out.append(("heavy top se(3)*", top.problem(), np.array([0.3, 0.1, 2.0, 0.0, np.sin(0.4), np.cos(0.4)]),
                "casimirs"))
    sus = Nonholonomic(named.so3(), np.diag(REFERENCE_INERTIA), a=[1.0, 0.5, -0.2])
    out.append(("Suslov so(3)", sus.problem(), sus.state_from(w=[0.6, 0.4, 0.0], project=True), "constraint"))
    sl = ServoFirstKind(named.se2(), np.diag([1.0, 1.0, 1.0]), a=[0.0, 1.0, 0.0], b=[0.5, 1.0, -0.5])
    out.append(("servo-sleigh se(2)", sl.problem(), np.array([1.0, 0.0, 0.5]), "constraint"))
    out.append(("free rigid body so(3)", free_rigid_body(REFERENCE_INERTIA),
                np.array([np.cos(1.1), 0.0, np.sin(1.1)]), "casimirs"))
    return out


def _lin(terms):
    return " + ".join(f"({c!r})*{v}" for c, v in terms) or "0.0"


def hand_rhs(P, batch=False):
    """The rhs a user writes: w = z @ W.T + c, ad*_w z by components, plus lambda b when forced."""
    C = P.algebra.structure_constants
    n = P.dim
    W = np.asarray(P.velocity(np.eye(n)) - P.velocity(np.zeros(n))).T
    c = np.asarray(P.velocity(np.zeros(n)))
    ix = "[:, {}]" if batch else "[{}]"
    comps = []
    for j in range(n):
        comps.append(_lin([(float(C[i, j, k]), f"w{ix.format(i)}*z{ix.format(k)}") for i in range(n) for k in range(n)
                           if C[i, j, k] != 0]))
    body = f"    w = z @ WT + cc\n    g = np.{'stack' if batch else 'array'}([{', '.join(comps)}]{', -1' if batch else ''})\n"
    if P.forcing is not None:
        cvec = P.linear_invariants[0]
        bvec = P.forcing(np.eye(n)[:1] * 0 + np.random.default_rng(0).standard_normal((1, n)))[0]
        bvec = bvec / np.max(np.abs(bvec))
        body += "    g = g - np.multiply.outer(g @ CV, BV)\n"
        env_extra = {"CV": cvec, "BV": bvec / (cvec @ bvec)}
    else:
        env_extra = {}
    src = "def f(t, y):\n" + (f"    z = y.reshape(-1, {n})\n" if batch else "    z = y\n") + body + \
        ("    return g.ravel()\n" if batch else "    return g\n")
    env = {"np": np, "WT": W.T.copy(), "cc": c, **env_extra}
    exec(src, env)
    f = env["f"]
    z = np.random.default_rng(1).standard_normal((4, n)) * 0.3
    for zz in z:
        fz = f(0.0, zz.ravel()) if not batch else f(0.0, zz[None].ravel())
        assert np.max(np.abs(fz - P.rhs(0.0, zz))) < 1e-12, "hand-written rhs disagrees with problem.rhs"
    return f


# ------------------------------------------------------------------------------------ runners
def run_dop(f, z0, tol):
    r = solve_ivp(f, (0.0, T), z0, method="DOP853", rtol=tol, atol=tol * 1e-2)
    return r.y[:, -1]


def run_fortran(f, z0, tol):
    o = ode(f).set_integrator("dop853", rtol=tol, atol=tol * 1e-2, nsteps=10 ** 7)
    o.set_initial_value(z0, 0.0)
    return o.integrate(T)


def run_liedyn(P, method, backend):
    def go(z0, tol):
        r = integrate(P, z0, (0.0, T), method=method, rtol=tol, atol=tol * 1e-2, backend=backend)
        # the coordinates of the hand-written rhs: the raw state z where the system maps it to
        # (m, lambda) for display
        return (r.outputs["z"] if "z" in r.outputs else r.y)[-1]
    return go


#: 1e-4 .. 1e-13 in half decades: every method is timed at the loosest setting that reaches TARGET (at
#: 1e-7 DOP853 is already over-accurate on the short runs, 1.5e-9 on Suslov's problem)
LADDER = [10 ** (-k / 2) for k in range(8, 27)]


def choose(go, z0, ref, ladder=LADDER):
    for tol in ladder:
        err = float(np.max(np.abs(go(z0, tol) - ref)))
        if err <= TARGET:
            return tol, err
    return None, err


def timed(cases, z0):
    """cases: name -> (go, setting); 5 interleaved rounds, median wall time."""
    times = {k: [] for k in cases}
    for _ in range(REPS):
        for k, (go, s) in cases.items():
            t = time.perf_counter()
            go(z0, s)
            times[k].append(time.perf_counter() - t)
    return {k: float(np.median(v)) for k, v in times.items()}


def section_single():
    rows = []
    verdict = []
    for title, P, z0, keeps in systems():
        f = hand_rhs(P)
        ref = solve_ivp(f, (0.0, T), z0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
        geo = ["rkmk853", "rkmk45", "rk853_projected"] if keeps == "casimirs" else ["rk853", "rk45"]
        cands = {"scipy DOP853 (solve_ivp)": lambda z, tol, f=f: run_dop(f, z, tol),
                 "Fortran dop853 (scipy ode)": lambda z, tol, f=f: run_fortran(f, z, tol)}
        for m in geo:
            cands[f"{m} numpy"] = run_liedyn(P, m, "numpy")
            if NUMBA:
                cands[f"{m} numba"] = run_liedyn(P, m, "numba")
        chosen = {}
        for k, go in cands.items():
            tol, err = choose(go, z0, ref)
            if tol is not None:
                chosen[k] = (go, tol, err)
        tm = timed({k: (v[0], v[1]) for k, v in chosen.items()}, z0)
        base = tm["scipy DOP853 (solve_ivp)"]
        fort = tm["Fortran dop853 (scipy ode)"]
        for k, (go, tol, err) in chosen.items():
            rows.append([title, k, f"{tol:.0e}", f"{err:.1e}", f"{tm[k] * 1e3:.2f}", f"{tm[k] / base:.2f}x",
                         f"{tm[k] / fort:.2f}x"])
        best_np = min((tm[k], k) for k in chosen if k.endswith("numpy"))
        line = f"{title}: best numpy {best_np[1]} {best_np[0] / base:.2f}x DOP853"
        if NUMBA:
            best_nb = min((tm[k], k) for k in chosen if k.endswith("numba"))
            line += f"; best numba {best_nb[1]} {best_nb[0] / base:.3f}x DOP853, {best_nb[0] / fort:.2f}x Fortran"
        verdict.append(line)
        print(line, flush=True)
    return rows, verdict


def section_per_step():
    rows = []
    rng = np.random.default_rng(2)
    for alg in ("so3", "se3", "sl2", "so4"):
        g = getattr(named, alg)()
        n = g.dim
        M = _spd(rng, n)
        P = CoadjointProblem(g, lambda z, M=M: z @ M, velocity_matrix=M, record_casimirs=False)
        z0 = 0.3 * rng.standard_normal(n)
        N = 2000
        out = [alg, n]
        for be in ("numpy",) + (("numba",) if NUMBA else ()):
            integrate(P, z0, (0.0, 1.0), steps=10, backend=be)
            ts = []
            for _ in range(REPS):
                t = time.perf_counter()
                integrate(P, z0, (0.0, 1.0), steps=N, save_every=N, backend=be)
                ts.append(time.perf_counter() - t)
            out.append(f"{np.median(ts) / N * 1e6:.2f}")
        rows.append(out)
    return rows


def _casimir_drift(r):
    """(max |C(t) - C(0)| / |C(0)|, max |C(t) - C(0)| / max_t |z(t)|^2) over the Casimirs: the second is
    the drift on the scale of the state, the meaningful one for an indefinite Casimir (sl(2), the
    se(3) pairing m.p), whose value at the start can be small beside |z|^2."""
    ks = [k for k in r.invariants if k.startswith("casimir:")]
    scale = float(np.max(np.sum(np.asarray(r.y, dtype=float) ** 2, axis=-1)))
    d = max(float(np.max(r.drift(k))) for k in ks)
    ds = max(float(np.max(np.abs(np.asarray(r.invariants[k]) - r.invariants[k][0]))) for k in ks) / scale
    return d, ds


def _verdict(r, ds, target):
    if r.status != 0:
        return "run ended with status -1 (the orbit is not compact and the order-1 method leaves the energy level)"
    return "met" if ds <= target else "not met"


def section_drift():
    rows = []
    if not NUMBA:
        return rows
    rng = np.random.default_rng(6)
    n_steps = 10 ** 5 if QUICK else 10 ** 6

    for alg in ("so3", "se3", "sl2", "so4"):
        g = getattr(named, alg)()
        M = _spd(rng, g.dim)
        P = CoadjointProblem(g, lambda z, M=M: z @ M, velocity_matrix=M)
        z0 = 0.3 * rng.standard_normal(g.dim)
        for meth in ("rkmk4", "lie_euler"):
            r = integrate(P, z0, (0.0, n_steps * 0.01), method=meth, steps=n_steps, save_every=n_steps // 50,
                          backend="numba")
            d, ds = _casimir_drift(r)
            rows.append([alg, meth, n_steps, r.status, f"{d:.1e}", f"{ds:.1e}",
                         _verdict(r, ds, 1e-13)])
        for meth in ("rkmk853", "rk853_projected"):   # the adaptive methods that declare "casimirs"
            r = integrate(P, z0, (0.0, 1000.0), method=meth, rtol=1e-10, atol=1e-12, backend="numba")
            d, ds = _casimir_drift(r)
            rows.append([alg, f"{meth} rtol 1e-10, t in [0, 1000]", r.nsteps, r.status, f"{d:.1e}", f"{ds:.1e}",
                         _verdict(r, ds, 1e-14)])
    return rows


def section_nfev():
    """The adaptive RKMK at rtol 1e-10 against DOP853 tuned to the same final error: right-hand-side
    evaluations (target <= 2x DOP853's), t in [0, 10], the Casimir systems of section_drift."""
    rows = []
    rng = np.random.default_rng(6)
    for alg in ("so3", "se3", "sl2", "so4"):
        g = getattr(named, alg)()
        M = _spd(rng, g.dim)
        P = CoadjointProblem(g, lambda z, M=M: z @ M, velocity_matrix=M)
        z0 = 0.3 * rng.standard_normal(g.dim)
        ref = solve_ivp(P.rhs, (0.0, T), z0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
        r = integrate(P, z0, (0.0, T), method="rkmk853", rtol=1e-10, atol=1e-12, save_every=10 ** 9)
        err = float(np.max(np.abs(r.y[-1] - ref)))
        for tol in [10 ** (-k / 4) for k in range(24, 53)]:  # 1e-6 .. 1e-13
            d = solve_ivp(P.rhs, (0.0, T), z0, method="DOP853", rtol=tol, atol=tol * 1e-2)
            errd = float(np.max(np.abs(d.y[:, -1] - ref)))
            if errd <= err:
                break
        ratio = r.nfev / d.nfev
        rows.append([alg, r.nfev, f"{err:.1e}", f"{tol:.1e}", d.nfev, f"{errd:.1e}", f"{ratio:.2f}",
                     "met" if ratio <= 2.0 else "not met"])
    return rows


def section_startup():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = []
    for what, cmd in (("import servo", [sys.executable, "-c", "import servo"]),
                      ("liedyn list", [sys.executable, "-m", "catalog", "list"])):
        ts = []
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run(cmd, env=env, capture_output=True, check=False)
            ts.append(time.perf_counter() - t)
        out.append([what, f"{np.median(ts):.2f}"])
    return out


def main():
    start = time.perf_counter()
    load = os.getloadavg()[0]
    md = [f"Machine shared with other jobs (load average {load:.1f} on {os.cpu_count()} cores at the start); "
          "compare ratios within this run. numba: " + ("installed" if NUMBA else "not installed") + ".", ""]
    rows, verdict = section_single()
    md += ["**One trajectory, time to final error <= 1e-8 on t in [0, 10]** (ratio to solve_ivp DOP853 and to "
           "Fortran dop853 with the same hand-written rhs; targets: best geometric method <= 1.0x DOP853 "
           "with numpy, <= 0.2x with numba, numba <= 1.0x Fortran)", "",
           markdown_table(["system", "method", "rtol", "final error", "time [ms]", "/ DOP853", "/ Fortran"], rows), ""]
    md += ["- " + v for v in verdict] + [""]
    ps = section_per_step()
    md += ["**RKMK4 per step, one trajectory [us]** (targets <= 30 numpy, <= 2 numba for dim <= 6; "
           "so(3) numpy runs the generated loop of integrators/codegen/programs.py)", "",
           markdown_table(["algebra", "dim", "numpy", "numba"][:2 + 1 + NUMBA], ps), ""]
    print(ps, flush=True)
    dr = section_drift()
    if dr:
        md += ["**Casimir drift (max relative, numba backend)** (targets: <= 1e-13 after 10^6 fixed steps, "
               "<= 1e-14 for the adaptive pairs that keep them (rkmk853, rk853_projected) at rtol 1e-10)", "",
               markdown_table(["algebra", "method", "steps", "status", "Casimir drift / |C(0)|", "Casimir drift / max |z|^2", "target (on the state scale)"], dr), ""]
        print(dr, flush=True)
    nf = section_nfev()
    md += ["**Right-hand-side evaluations of the adaptive RKMK at rtol 1e-10** against DOP853 tuned to the "
           "same final error on t in [0, 10] (target <= 2x DOP853's; the Casimir systems of the drift table)", "",
           markdown_table(["algebra", "rkmk853 fev", "rkmk853 final error", "DOP853 rtol", "DOP853 fev",
                           "DOP853 final error", "fev ratio", "target <= 2x"], nf), ""]
    print(nf, flush=True)
    st = section_startup()
    md += ["**Start-up** (target <= 0.5 s)", "", markdown_table(["command", "median time [s]"], st), ""]
    print(st, flush=True)
    md.append(f"Total benchmark time {time.perf_counter() - start:.0f} s{' (--quick)' if QUICK else ''}.")
    update_section("integrators", "## Integrators\n\n" + "\n".join(md),
                   "python benchmarks/compare_integrators.py" + (" --quick" if QUICK else ""))


if __name__ == "__main__":
    main()
