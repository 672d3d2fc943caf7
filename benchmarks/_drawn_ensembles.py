"""The ensemble part of benchmarks/drawn_systems.py: 10^4 (10^3 with --quick) initial states through
``s.simulate(X0, ..., ensemble="independent", backend="numba")`` and the numpy ensemble with shared steps, against
diffrax (JAX, when installed) at matched accuracy; wall and CPU time, the threads each tool ran on, and the
compiled kernel's own CPU time and arithmetic rate (drawn_systems' docstring says how).

Two compiled liedyn rows: "liedyn numba independent", the specialised ensemble kernel of the structure
(:func:`integrators.backends.batch_kernels.adaptive_independent`; ``--specialised-ensembles``: "compile" compiles it
in the first call where numba's disk cache does not have it, minutes on a random basis; "cached" measures it only
where it is compiled or on disk; "skip" never), and "liedyn generic independent", the generic ensemble kernel
(:mod:`integrators.backends.generic_ensemble`: the structure as data, compiled once per machine), which runs on every
drawn system with no compile of its own."""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks._drawn_common import KINDS, T, build_system, choose, hand_rhs, reference, sysseed, timed, zend
from benchmarks._drawn_single import generic_covers


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
                                  saveat=diffrax.SaveAt(t1=True), max_steps=100000,
                                  throw=False)   # a trajectory that blows up ends alone (NaN), as liedyn's
        return sol.ys[-1], sol.stats["num_accepted_steps"], sol.stats["num_rejected_steps"]

    run = jax.jit(jax.vmap(one, in_axes=(0, None, None)))

    def go(Z, tol, stats=False):
        y, na, nr = jax.block_until_ready(run(jnp.asarray(Z), tol, tol * 1e-2))
        return (np.asarray(y), np.asarray(na), np.asarray(nr)) if stats else np.asarray(y)
    return go


class _Kernel:
    """The engine's choice of the ensemble kernel and the policy pinned during one call: ``mode`` "numba" (the
    specialised kernel, compiled in the call when not ready: policy "wait") or "generic" (the generic ensemble
    kernel, whatever is compiled)."""

    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        from integrators.backends import auto_compile
        self.saved = auto_compile.choose_numba_independent, os.environ.get("LIEDYN_AUTO_COMPILE")
        mode = self.mode
        auto_compile.choose_numba_independent = lambda pl, grid: mode
        os.environ["LIEDYN_AUTO_COMPILE"] = "wait"
        return self

    def __exit__(self, *exc):
        from integrators.backends import auto_compile
        auto_compile.choose_numba_independent, pol = self.saved
        if pol is None:
            os.environ.pop("LIEDYN_AUTO_COMPILE", None)
        else:
            os.environ["LIEDYN_AUTO_COMPILE"] = pol


def _specialised_ready(P):
    """True when the specialised ensemble kernel of the system's default method is compiled in this process or in
    numba's disk cache (its marker)."""
    from integrators import METHODS
    from integrators.backends import auto_compile, batch_kernels, fastpath
    from integrators.codegen import linear_projection, projection
    from servo.lie import method_choice
    meth = METHODS[method_choice.choose(P)[0]]
    proj = projection.of_algebra(P.algebra) if meth.project else linear_projection.kept(P, meth)
    z = np.zeros((2, P.dim)) + np.random.default_rng(0).standard_normal(P.dim)
    pl = fastpath.plan(P, meth.tableau, meth.lie, meth.terms, z, proj)
    return pl is not None and (batch_kernels.independent_ready(pl, False)
                               or auto_compile.specialised_on_disk(pl, "independent"))


def ensembles(systems, args, numba_ok):
    """The ensemble rows (module docstring) and notes: per tool its tolerance, error, mean attempted
    steps per trajectory, median wall and CPU time (interleaved rounds), the threads that ran; for the
    compiled liedyn runs also the CPU time inside their kernels and the specialised kernel's arithmetic rate."""
    from integrators.backends import batch_kernels, fastpath, generic_ensemble
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
        # the states whose trajectory blows up before t = T (the servo systems have finite-time singularities)
        # leave the ensemble: under jax.vmap one of them holds every lane in the loop to diffrax's max_steps;
        # found by one independent liedyn run (each trajectory alone: a lost one stops with status -1)
        pre = s.simulate(X, T, steps=None, rtol=1e-6, atol=1e-8, backend="numba" if numba_ok else "numpy",
                         ensemble="independent")
        lost = np.asarray(getattr(pre, "failed", []), dtype=int)
        if lost.size:
            X = np.delete(X, lost, axis=0)
            notes.append(f"{label} {kind}: {lost.size} of {N} states blow up before t = {T:g} and leave the ensemble "
                         f"(found by an independent liedyn run at rtol 1e-6); the rows are of the other {len(X)}")
        Z = s.to_problem(X)
        sub = slice(0, 64)
        refs = [reference(f, z) for z in Z[sub]]
        # a state whose tight reference does not reach t = 10 bounded (a singularity of the system: the servo
        # systems blow up in finite time from some states) has no final error: measured on the others
        good = np.array([r.status == 0 and np.all(np.isfinite(r.y)) and np.max(np.abs(r.y)) <= 10.0 * (1.0 + r0)
                         for r in refs])
        zref = np.array([r.y[:, -1] for r in refs])[good]
        if not good.all():
            notes.append(f"{label} {kind}: {int((~good).sum())} of the 64 reference states blow up before t = {T:g} "
                         "(their reference fails); the error is measured on the others; every tool integrates all "
                         f"{N} states (liedyn stops such a trajectory alone with status -1, diffrax with throw=False)")
        info = {}

        def lied(backend, ensemble, key, kernel=None):
            def go(tol, rows_=slice(None), keep=False):
                def call():
                    return s.simulate(X[rows_], T, steps=None, rtol=tol, atol=tol * 1e-2, backend=backend,
                                      ensemble=ensemble)
                if kernel is None:
                    r = call()
                else:
                    with _Kernel(kernel):
                        r = call()
                    assert r.backend.startswith("numba"), r.backend
                if keep:
                    info[key] = r
                return zend(r)
            return go

        cands = {"liedyn numpy shared": lied("numpy", "shared", "np")}
        spec = getattr(args, "specialised_ensembles", "compile")
        if numba_ok and (spec == "compile" or (spec == "cached" and _specialised_ready(P))):
            cands["liedyn numba independent"] = lied("numba", "independent", "nb", "numba")
        if numba_ok and generic_covers(s, x0, pre.method):   # not the orbit space's RKMK steps (no generic kernel)
            cands["liedyn generic independent"] = lied("numba", "independent", "gen", "generic")
        if mods is not None:
            for sv in ("Dopri8", "Tsit5"):
                js = jax_solver(P, sv, mods)
                cands[f"diffrax {sv}"] = (lambda js=js: (lambda tol, rows_=slice(None), keep=False:
                                                         js(Z[rows_], tol)))()
                info[f"diffrax {sv}"] = js
        chosen = {}
        for k, go in cands.items():
            go(1e-6, sub)                                   # compile / warm up
            tol, err = choose(lambda tol, go=go: go(tol, sub)[good], zref)
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
                r = info["nb" if "numba" in k else "gen" if "generic" in k else "np"]
                steps[k] = (float(np.mean(r.nsteps_each + r.nrejected_each)) if hasattr(r, "nsteps_each")
                            else float(r.nsteps + r.nrejected))
                if "numba" in k or "generic" in k:
                    used["lost " + k] = len(getattr(r, "failed", []))
                    used["method"] = r.method
            used[k] = threads_used(runs[k])
        # the compiled kernels' own CPU time, clocked inside the same rounds (the whole call minus this: Python)
        kern, gkern = [], []
        inner, ginner = batch_kernels.adaptive_independent, generic_ensemble.run

        def clock(fn, into):
            def clocked(*a, **kw):
                c = time.process_time()
                try:
                    return fn(*a, **kw)
                finally:
                    into.append(time.process_time() - c)
            return clocked
        batch_kernels.adaptive_independent = clock(inner, kern)
        generic_ensemble.run = clock(ginner, gkern)
        try:
            tm = timed(runs, reps, cpu=True)
        finally:
            batch_kernels.adaptive_independent, generic_ensemble.run = inner, ginner
        dif = [k for k in tm if k.startswith("diffrax")]
        bw = min(tm[k][0] for k in dif) if dif else None
        bc = min(tm[k][1] for k in dif) if dif else None
        for k, (tol, err) in chosen.items():
            if tol is None:
                rows.append([label, kind, len(X), k, "-", f"{err:.0e}", "-", "not reached"] + ["-"] * 6)
                continue
            w, c = tm[k]
            th = used.get(k)
            rows.append([label, kind, len(X), k, f"{tol:.0e}", f"{err:.0e}", f"{steps[k]:.1f}", f"{w * 1e3:.1f}",
                         f"{c * 1e3:.1f}", f"{w / len(X) * 1e6:.2f}", f"{c / len(X) * 1e6:.2f}",
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
            att = steps[k] * len(X)
            rate = f"{fl * att / kc / 1e9:.1f} GFlop/s of CPU" if fl else "-"
            notes.append(f"{label} {kind} ({used['method']}): kernel {kc * 1e3:.1f} ms of CPU of the call's "
                         f"{tm[k][1] * 1e3:.1f} ms (median of {reps}); {steps[k]:.1f} attempts a trajectory x "
                         f"{fl} flops an attempt = {fl * steps[k] / 1e3:.1f} kflop a trajectory: {rate}; "
                         f"{used.get('lost ' + k, 0)} trajectories lost")
        if gkern:
            k = "liedyn generic independent"
            notes.append(f"{label} {kind} ({used['method']}): generic ensemble kernel {np.median(gkern) * 1e3:.1f} ms "
                         f"of CPU of the call's {tm[k][1] * 1e3:.1f} ms (median of {reps}); {steps[k]:.1f} attempts a "
                         f"trajectory; {used.get('lost ' + k, 0)} trajectories lost")
    return rows, mods is not None, notes


def drawn_kinds(drawn, count):
    """(label, make, kind) of the first ``count`` systems of the draw with an ensemble: kinds free, servo1, servo2
    in turn (the systems of a full run; ``--ensemble-systems`` picks among them by label and kind)."""
    return [(label, make, KINDS[i % 3]) for i, (label, make) in enumerate(drawn[:count])]


def earlier_rows(key, picked):
    """The table rows and notes of RESULTS.md's section ``key`` that are not of the (label, kind) pairs
    ``picked`` (a rerun of some systems keeps the others' rows, said so), and that section's stamp."""
    from benchmarks._results import RESULTS
    text = RESULTS.read_text() if RESULTS.exists() else ""
    start, end = f"<!-- begin {key} -->", f"<!-- end {key} -->"
    if start not in text or end not in text:
        return [], [], None
    lines = text.split(start, 1)[1].split(end, 1)[0].strip().splitlines()
    stamp = next((ln.strip("_ ") for ln in lines if ln.startswith("_Measured")), "earlier run")
    rows = [ln for ln in lines if ln.startswith("| ") and not ln.startswith("| algebra")
            and tuple(c.strip() for c in ln.strip("|").split("|")[:2]) not in picked]
    notes = [ln for ln in lines if ln.startswith("- ")
             and not any(ln.startswith(f"- {lab} {kind}") for lab, kind in picked)]
    return rows, notes, stamp


def ensemble_section(drawn, args, numba_ok):
    """The markdown of the ensemble part: its table and notes (the first ``--ensembles`` systems of the
    draw, kinds free, servo1, servo2 in turn; with ``--ensemble-systems`` those of them only, the section's
    other rows kept from its earlier run)."""
    from benchmarks._results import markdown_table
    ne = args.ensembles if args.ensembles is not None else (1 if args.quick else 3)
    pick = getattr(args, "ensemble_systems", None)
    cands = drawn_kinds(drawn, len(drawn) if pick else ne)
    if pick:
        picked = {tuple(p.rsplit(":", 1)) for p in pick}
        unknown = picked - {(label, kind) for label, _, kind in cands}
        if unknown:
            raise SystemExit(f"--ensemble-systems: not in the draw's ensembles: {sorted(unknown)}")
        cands = [c for c in cands if (c[0], c[2]) in picked]
    ens_sys = []
    for label, make, kind in cands:
        s, x0f = build_system(make(), kind, sysseed(label, kind, args.seed))
        ens_sys.append((label, kind, s, x0f(0.5), 0.5))
    er, have_jax, notes = ensembles(ens_sys, args, numba_ok and args.numba_budget > 0)
    kept, kept_notes, stamp = earlier_rows("drawn_ensembles", picked) if pick else ([], [], None)
    try:
        import numba
        nth = f"numba {numba.get_num_threads()} threads (NUMBA_NUM_THREADS {numba.config.NUMBA_NUM_THREADS})"
    except ImportError:
        nth = "numba not installed"
    return [f"**Ensembles** of {1000 if args.quick else 10000} initial states (x0 + 5% noise, projected onto the "
            "constraint) at max final error <= 1e-8 over 64 of them, t in [0, 10] (target: liedyn <= 0.1x the best "
            "of diffrax's Dopri8 / Tsit5, JAX jit + vmap on the same CPU, float64). "
            + ("" if have_jax else "jax / diffrax not installed: liedyn alone. ")
            + "`liedyn numba independent`: the structure's specialised ensemble kernel (--specialised-ensembles "
            + f"{getattr(args, 'specialised_ensembles', 'compile')}); `liedyn generic independent`: the generic "
            "ensemble kernel (the structure as data, compiled once per machine). "
            + f"Each tool at the loosest rtol of the ladder reaching the error; `steps`: attempted steps (accepted + "
            f"rejected) a trajectory, mean; wall and CPU (the process's CPU time, all threads: the work at equal "
            f"cores) medians of {max(3, args.ensemble_reps)} interleaved rounds; `threads`: the OS threads of the "
            f"process that ran during 3 calls, of all its threads, and the largest share one of them had of that "
            f"CPU time ({nth}; XLA's own pool for jax). The ratios: to the best diffrax by the same measure.", "",
            markdown_table(["algebra", "system", "N", "tool", "rtol", "error (64)", "steps", "wall [ms]", "CPU [ms]",
                            "wall us / traj", "CPU us / traj", "threads", "wall / best diffrax",
                            "CPU / best diffrax"], er)
            + ("\n" + "\n".join(kept) if kept else ""), ""] + ["- " + x for x in notes] + kept_notes + [""] \
        + ([f"The rows of {', '.join(f'{a} {b}' for a, b in sorted(picked))} are of this run; the other rows and notes "
            f"are kept from the section's earlier run ({stamp})", ""] if kept else [])
