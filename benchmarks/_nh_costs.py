"""The cost table of benchmarks/nonholonomic.py: microseconds a step of every scheme and backend against
hand-written rk4 loops, Newton iterations, the ratios and verdicts written under the table, and
``--costs-only`` (the table replaced in its section, the rest kept)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from integrators import integrate  # noqa: E402
from integrators.reference.nonholonomic import contact_oscillator, contact_oscillator_initial, compiled  # noqa: E402
from integrators.backends import nonholonomic_loops, numba_kernels  # noqa: E402
from integrators.core.result import record  # noqa: E402
from integrators.methods import METHODS  # noqa: E402
from integrators.reference.stepping import make_stepper  # noqa: E402

from _results import RESULTS, markdown_table, update_section  # noqa: E402
from _nh_systems import EPS, SLEIGH_I, sleigh_system, suslov_system, vakonomic_so3, vakonomic_skate  # noqa: E402


def _ratio_range(rows, prefix):
    r = [float(row[4]) for row in rows if row[1].startswith(prefix)]
    return f"{min(r):.2f}" if min(r) == max(r) else f"{min(r):.2f}-{max(r):.2f}"


COST_HEADER = ["problem", "method", "backend", "us/step", "ratio to rk4", "Newton iterations / step",
               "iterations / step while moving", "Jacobians / step (analytic)"]


def _jacobians(p, y0, h, m, N):
    """Analytic Jacobians per step of the generated Lie-group loop over N steps (the stepper counts
    them; integrate does not report them)."""
    st = make_stepper(METHODS[m], p)
    if m.startswith("dvak"):
        compiled.run_dvak_lie(st, y0, 0.0, h, N, 1, nonholonomic_loops.dvak_loop)
        return st.jacobians / N
    kw = {"lam0": st._lambda(y0)} if m.startswith("lie_rattle") else {}
    compiled.run_dlas(st, y0, 0.0, h, N, 1, numba_kernels.jit, generated=nonholonomic_loops.dlas_loop, **kw)
    return st.jacobians / N


def _rk4_contact_loop():
    """rk4 with numba on the contact oscillator's Lagrange-d'Alembert field, written by hand as a user would
    (the library's rk4 has no compiled path on this ODE problem): A = [1, 0, y], M = 1, the multiplier from
    d/dt (v_x + y v_z) = 0: lambda = -(F_x + y F_z + v_y v_z) / (1 + y^2); every step saved, as integrate does."""
    import numba

    @numba.njit(error_model="numpy")
    def field(q0, q1, q2, v0, v1, v2):
        F0 = -(q0 + EPS * q0 * q2 * q2)
        F2 = -(q2 + EPS * q0 * q0 * q2)
        lam = -(F0 + q1 * F2 + v1 * v2) / (1.0 + q1 * q1)
        return v0, v1, v2, F0 + lam, -q1, F2 + q1 * lam

    @numba.njit(error_model="numpy")
    def run(Y0, h, n):
        B = Y0.shape[0]
        ys = np.empty((n + 1, B, 6))
        ys[0] = Y0
        for b in range(B):
            y = Y0[b].copy()
            for k in range(1, n + 1):
                k1 = field(y[0], y[1], y[2], y[3], y[4], y[5])
                k2 = field(y[0] + 0.5 * h * k1[0], y[1] + 0.5 * h * k1[1], y[2] + 0.5 * h * k1[2],
                           y[3] + 0.5 * h * k1[3], y[4] + 0.5 * h * k1[4], y[5] + 0.5 * h * k1[5])
                k3 = field(y[0] + 0.5 * h * k2[0], y[1] + 0.5 * h * k2[1], y[2] + 0.5 * h * k2[2],
                           y[3] + 0.5 * h * k2[3], y[4] + 0.5 * h * k2[4], y[5] + 0.5 * h * k2[5])
                k4 = field(y[0] + h * k3[0], y[1] + h * k3[1], y[2] + h * k3[2],
                           y[3] + h * k3[3], y[4] + h * k3[4], y[5] + h * k3[5])
                y[0] += h / 6.0 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0])
                y[1] += h / 6.0 * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1])
                y[2] += h / 6.0 * (k1[2] + 2.0 * k2[2] + 2.0 * k3[2] + k4[2])
                y[3] += h / 6.0 * (k1[3] + 2.0 * k2[3] + 2.0 * k3[3] + k4[3])
                y[4] += h / 6.0 * (k1[4] + 2.0 * k2[4] + 2.0 * k3[4] + k4[4])
                y[5] += h / 6.0 * (k1[5] + 2.0 * k2[5] + 2.0 * k3[5] + k4[5])
                ys[k, b] = y
        return ys
    return run


def costs(repeat=5, N=20000):
    """Microseconds of CPU time per step (one trajectory; the contact oscillator a batch of 10, per trajectory
    step), interleaved, median of ``repeat``, each method through the public call (integrate, every step saved,
    the outputs computed): the compiled schemes against the library's rk4 with backend numba on the coadjoint
    problems; on the contact oscillator, where the library's rk4 has no compiled path, against rk4 with numba
    on the same field written by hand (its loop alone: no outputs; the library's numpy rk4 as a second row).
    "while moving": the Newton iterations per step over the first 100 steps (t <= 5 on the Lie groups)."""
    su = suslov_system()
    co = contact_oscillator(EPS)
    vk, vz = vakonomic_so3()
    cases = [("vakonomic so(3)", vk, vz, 0.05, ["dvak_exp", "dvak_cay", "rk4"]),
             ("sleigh", sleigh_system(), np.array([0.3, 0.0, 1.2]) @ SLEIGH_I, 0.05,
              ["dlas_exp", "dlas_cay", "lie_rattle_exp", "lie_rattle_cay", "rk4"]),
             ("Suslov", su, np.array([1.0, 0.5, 0.0]) @ su.discrete.I, 0.05,
              ["dlas_exp", "dlas_cay", "lie_rattle_exp", "lie_rattle_cay", "rk4"]),
             ("contact oscillator (10)", co, contact_oscillator_initial(np.linspace(-0.9, 0.9, 10), EPS),
              2 * np.sin(np.pi / 40), ["mp_lda", "nh_rattle", "rk4 (numba, hand-written field)",
                                       "rk4 (numba, hand-written field) + outputs", "rk4"])]
    rows = []
    load = [os.getloadavg()[0]]
    for label, p, y0, h, names in cases:
        B = max(1, y0.size // p.dim)
        times = {m: [] for m in names}
        backend, iters, moving, jacs = {}, {}, {}, {}
        hand = None
        for m in names:
            if m.startswith("rk4 (numba"):
                hand = _rk4_contact_loop()
                hand(y0, h, 10)
                backend[m], iters[m], moving[m] = "numba", "-", "-"
                continue
            be = "numba" if m != "rk4" or p.kind == "coadjoint" else "numpy"
            r = integrate(p, y0, (0.0, 10 * h), method=m, h=h, backend=be)
            # the backend that ran (result.backend may describe more: "numba (specialised fixed loop compiled
            # in this call ...)" on a cold cache; the warm-up call compiled it)
            backend[m] = r.backend.split(" ")[0]
            iters[m] = moving[m] = "-"
            if not m.startswith("rk4") and m != "nh_rattle":   # Newton iterations per step (nh_rattle: explicit)
                rr = integrate(p, y0, (0.0, N * h), steps=N, method=m, check=False, backend=backend[m])
                iters[m] = f"{rr.nfev / (rr.nsteps * B):.2f}"
                if p.kind == "coadjoint":
                    jacs[m] = f"{_jacobians(p, y0, h, m, N):.3f}"
                rr = integrate(p, y0, (0.0, 100 * h), steps=100, method=m, check=False, backend=backend[m])
                moving[m] = f"{rr.nfev / (rr.nsteps * B):.2f}"
            elif m == "nh_rattle":
                iters[m] = moving[m] = "0 (explicit)"
        for _ in range(repeat):
            for m in names:
                steps = N if backend[m] == "numba" else max(50, N // 100)
                t0 = time.process_time()
                if m == "rk4 (numba, hand-written field)":
                    hand(y0, h, steps)
                elif m.startswith("rk4 (numba"):            # and the invariants and constraints integrate records
                    record(p, hand(y0, h, steps))
                else:
                    integrate(p, y0, (0.0, steps * h), steps=steps, method=m, check=False, backend=backend[m])
                times[m].append((time.process_time() - t0) / (steps * B))
        base = np.median(times["rk4 (numba, hand-written field)" if hand is not None else "rk4"])
        for m in names:
            med = np.median(times[m])
            rows.append([label, m, backend[m], f"{1e6 * med:.3f}", f"{med / base:.2f}", iters[m], moving[m],
                         jacs.get(m, "-")])
    rows += _skate_costs(repeat)
    load.append(os.getloadavg()[0])
    return rows, load


def _rk4_skate_loop():
    """rk4 with numba on the continuous vakonomic equations of the skate (the problem of :func:`vakonomic_skate`),
    written by hand as a user would (the library's rk4 has no compiled path there), every step saved.

    Derivation (L* = L - lambda phi, L = (x'^2 + y'^2 + phi'^2)/2 + x, phi = x' sin phi - y' cos phi; s, c = sin phi,
    cos phi, u = x' c + y' s): the Euler-Lagrange equations of L* with lambda a state variable,

        d/dt (x' - lambda s) = 1,   d/dt (y' + lambda c) = 0,   phi'' = dL*/dphi = -lambda u,

    give x'' = 1 + lambda' s + lambda c phi', y'' = -lambda' c + lambda s phi'; the constraint differentiated,
    x'' s - y'' c + phi' u = 0, then gives s + lambda' + phi' u = 0: lambda' = -s - phi' u. The state
    (x, y, phi, x', y', phi', lambda), as the library's (ConstrainedSystem.simulate); :func:`_skate_costs` checks
    that this loop and the library's numpy rk4 on the same problem agree to round-off."""
    import numba

    @numba.njit(error_model="numpy")
    def field(vx, vy, ph, vph, lam):
        s = np.sin(ph)
        c = np.cos(ph)
        u = vx * c + vy * s
        dl = -s - vph * u
        return 1.0 + dl * s + lam * c * vph, -dl * c + lam * s * vph, -lam * u, dl

    @numba.njit(error_model="numpy")
    def run(Y0, h, n):
        ys = np.empty((n + 1, 7))
        ys[0] = Y0
        x, y, ph, vx, vy, vph, lam = Y0[0], Y0[1], Y0[2], Y0[3], Y0[4], Y0[5], Y0[6]
        for k in range(1, n + 1):
            a1, b1, c1, d1 = field(vx, vy, ph, vph, lam)
            a2, b2, c2, d2 = field(vx + 0.5 * h * a1, vy + 0.5 * h * b1, ph + 0.5 * h * vph, vph + 0.5 * h * c1,
                                   lam + 0.5 * h * d1)
            a3, b3, c3, d3 = field(vx + 0.5 * h * a2, vy + 0.5 * h * b2, ph + 0.5 * h * (vph + 0.5 * h * c1),
                                   vph + 0.5 * h * c2, lam + 0.5 * h * d2)
            a4, b4, c4, d4 = field(vx + h * a3, vy + h * b3, ph + h * (vph + 0.5 * h * c2), vph + h * c3,
                                   lam + h * d3)
            x += h / 6.0 * (vx + 2.0 * (vx + 0.5 * h * a1) + 2.0 * (vx + 0.5 * h * a2) + (vx + h * a3))
            y += h / 6.0 * (vy + 2.0 * (vy + 0.5 * h * b1) + 2.0 * (vy + 0.5 * h * b2) + (vy + h * b3))
            ph += h / 6.0 * (vph + 2.0 * (vph + 0.5 * h * c1) + 2.0 * (vph + 0.5 * h * c2) + (vph + h * c3))
            vx += h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
            vy += h / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4)
            vph += h / 6.0 * (c1 + 2.0 * c2 + 2.0 * c3 + c4)
            lam += h / 6.0 * (d1 + 2.0 * d2 + 2.0 * d3 + d4)
            ys[k, 0], ys[k, 1], ys[k, 2], ys[k, 3], ys[k, 4], ys[k, 5], ys[k, 6] = x, y, ph, vx, vy, vph, lam
        return ys
    return run


#: the hand-written rk4 on the skate against the library's numpy rk4 (same problem, 2000 steps): the largest
#: difference, filled by :func:`_skate_costs` for the text
SKATE_CHECK = {}


def _skate_costs(repeat):
    """dvak_mid on the vakonomic skate (h = 0.001 from q' = (0, 0, 0.8), lambda = 0): its generated loop through
    integrate (the problem carrying servo's data and expression source) and ConstrainedSystem.simulate (numpy),
    against rk4 with numba on the continuous vakonomic equations written by hand (:func:`_rk4_skate_loop`; the
    library's rk4 has no compiled path there: checked here to agree with the library's numpy rk4 to round-off),
    and the library's rk4 (simulate, numpy) as a second row."""
    from integrators import ODEProblem
    vak, _ = vakonomic_skate()
    p = ODEProblem(lambda t, y: y, 7)
    p.discrete = vak.vakonomic_problem()
    y0 = np.array([0, 0, 0, 0, 0, 0.8, 0.0])
    h = 1e-3
    hand = _rk4_skate_loop()
    lib = vak.simulate([0, 0, 0], [0, 0, 0.8], 2000 * h, steps=2000, lam0=[0.0], method="rk4")
    diff = float(np.max(np.abs(np.concatenate([lib.q, lib.qd, lib.lam], axis=1) - hand(y0, h, 2000))))
    if not diff <= 1e-12 * float(np.max(np.abs(lib.q))):
        raise AssertionError(f"the hand-written rk4 is not the library's rk4 on the skate: differs by {diff:.3e}")
    SKATE_CHECK["diff"] = diff
    r = integrate(p, y0, (0.0, 10 * h), steps=10, method="dvak_mid", backend="numba")
    st = make_stepper(METHODS["dvak_mid"], p)
    compiled.run_dvak(st, y0, 0.0, h, 20000, 1, numba_kernels.jit, nonholonomic_loops.vakonomic_loop)
    its, jac = f"{st.nfev_total / 20000:.2f} (interval and node)", f"{st.jacobians / 20000:.3f}"
    compiled.run_dvak(st, y0, 0.0, h, 100, 1, numba_kernels.jit, nonholonomic_loops.vakonomic_loop)
    moving = f"{st.nfev_total / 100:.2f}"
    hname = "rk4 (numba, hand-written field)"
    runs = {("dvak_mid", r.backend): lambda N: integrate(p, y0, (0.0, N * h), steps=N, method="dvak_mid",
                                                         backend="numba", check=False),
            (hname, "numba"): lambda N: hand(y0, h, N),
            ("dvak_mid", "numpy"): lambda N: vak.simulate([0, 0, 0], [0, 0, 0.8], N * h, steps=N, lam0=[0.0],
                                                          method="dvak_mid"),
            ("rk4", "numpy"): lambda N: vak.simulate([0, 0, 0], [0, 0, 0.8], N * h, steps=N, lam0=[0.0], method="rk4")}
    times = {k: [] for k in runs}
    for _ in range(repeat):
        for (m, be), f in runs.items():
            N = 20000 if be == "numba" else 200
            t0 = time.process_time()
            f(N)
            times[(m, be)].append((time.process_time() - t0) / N)
    base = np.median(times[(hname, "numba")])
    out = []
    for (m, be), v in times.items():
        gen = m == "dvak_mid" and be == "numba"
        out.append(["vakonomic skate", m, be, f"{1e6 * np.median(v):.3f}", f"{np.median(v) / base:.3f}",
                    its if gen else "-", moving if gen else "-", jac if gen else "-"])
    return out


def _ratio_to(rows, method, base):
    """us/step of ``method`` on the contact oscillator over that of the row ``base``."""
    us = {r[1]: float(r[3]) for r in rows if r[0].startswith("contact")}
    return us[method] / us[base]


def _verdict(rows, prefix):
    """'meets the target' or 'misses the target' (2x rk4) for the rows of ``prefix`` in this run."""
    r = [float(row[4]) for row in rows if row[1].startswith(prefix)]
    return "meets the target" if max(r) <= 2.0 else ("meets the target on some problems and misses it on others"
                                                     if min(r) <= 2.0 else "misses the target")


def _jacobian_weight(problem, method):
    """One analytic Jacobian in residual evaluations, by the count of arithmetic operations (+ - * / **) in the
    generated lines of each (integrators.codegen.nonholonomic_source: DlasSource.jacobian and .residual; beta
    and dbeta calls not counted): a proxy for its cost, not a timing."""
    import re
    from integrators.codegen.nonholonomic_source import DlasSource
    from integrators.codegen.source_text import Lines
    st = make_stepper(METHODS[method], problem)
    d = problem.discrete
    mode, C, S, N, Pc = compiled.dlas_data_of(st.retraction, d, st.tau)
    if method.startswith("lie_rattle"):
        N, Pc = np.eye(d.n), 2.0 * Pc - np.eye(d.n)
    src = DlasSource(mode, C, S, N, Pc, Pc, d.I, d.Iinv, 2 if method.startswith("lie_rattle") else 1)

    def ops(emit):
        L = Lines(indent=0)
        emit(L)
        return sum(len(re.findall(r"(?<![eE(*])[-+*/](?!\*)|\*\*", ln.split("=", 1)[1]))
                   for ln in L.text().splitlines() if "=" in ln)
    return ops(lambda L: src.jacobian(L, "j_")) / ops(lambda L: src.residual(L, [f"e{a}" for a in range(src.p)], ""))


def _rattle_bound(rows):
    """What bounds the Lie-group RATTLE, from the table: residual evaluations a step (Newton's plus, per analytic
    Jacobian, its weight in residuals by operation count, :func:`_jacobian_weight`), the cost of one residual
    (the slope between dlas and lie_rattle with the same retraction on the same problem) in rk4 stages (rk4's
    step / 4), and the residuals a step 2x rk4 would allow."""
    out = []
    problems = {"sleigh": sleigh_system(), "Suslov": suslov_system()}
    for prob in ("sleigh", "Suslov"):
        r = {row[1]: row for row in rows if row[0] == prob}
        stage = float(r["rk4"][3]) / 4
        for tau in ("exp", "cay"):
            d, lr = r[f"dlas_{tau}"], r[f"lie_rattle_{tau}"]
            wd = _jacobian_weight(problems[prob], f"dlas_{tau}")
            wl = _jacobian_weight(problems[prob], f"lie_rattle_{tau}")
            nd = float(d[5]) + wd * float(d[7])
            nl = float(lr[5]) + wl * float(lr[7])
            if not (nl > nd and float(lr[3]) > float(d[3])):
                # a short run (--repeat 1) can time both alike: no slope to read, rather than a division by zero
                out.append(f"{prob} {tau}: {nl:.1f} residuals a step (a Jacobian {wl:.1f}) against dlas's {nd:.1f}; "
                           f"the cost of one residual is not resolved by this run (the two rows do not differ)")
                continue
            c = (float(lr[3]) - float(d[3])) / (nl - nd)
            fixed = float(d[3]) - c * nd
            allow = (2 * float(r["rk4"][3]) - fixed) / c
            out.append(f"{prob} {tau}: {nl:.1f} residuals a step (a Jacobian {wl:.1f}) against dlas's {nd:.1f}, "
                       f"one residual {c / stage:.1f} rk4 stages, 2x rk4 would allow {allow:.1f}")
    return "; ".join(out)


def cost_md(cost_rows, load):
    """The cost part of the section: its text, the table and the reading of it."""
    hand, outs = "rk4 (numba, hand-written field)", "rk4 (numba, hand-written field) + outputs"
    return [
        "Cost per step (microseconds of CPU time; interleaved, median of the repetitions; one trajectory, the "
        "contact oscillator a batch of 10, per trajectory step; every method through integrate with every step "
        "saved and the outputs computed). The Lie-group schemes run the generated straight-line loops "
        "(integrators.codegen.nonholonomic_source: simplified Newton, the p x p inverse Jacobian kept across steps "
        "and refreshed when the contraction degrades, the Jacobian analytic (derived by sympy when the text is "
        "written, after cse), the "
        "output from ad_x^T w at the "
        "solution), the coordinate schemes theirs (integrators.codegen.coordinate_source: grad V, A, dA written in "
        "from the problem's expression source, M^-1 folded in; mp_lda's Newton with the exact k x k Jacobian and "
        "the stop on the error estimated from its measured quadratic convergence, nh_rattle explicit with grad V "
        "and A once a step); rk4 runs the library's generated code with numba on the coadjoint problems; on the "
        "contact oscillator, an ODE problem where the library's rk4 has no compiled path, the reference is rk4 with "
        "numba on the same field written by hand, its loop alone (it pays no outputs: in its favour) and, as a "
        "library call would, followed by the invariants and the constraint integrate records on every saved state "
        "(integrators.core.result.record), with the library's numpy rk4 below; on the vakonomic skate, likewise an "
        "ODE problem without a compiled rk4, dvak_mid's generated loop (integrate on the problem carrying servo's "
        "data and expression source) and simulate (numpy) against rk4 with numba on the continuous vakonomic "
        "equations written by hand, with the library's numpy rk4 below. 1-minute load "
        f"average {load[0]:.1f} at the start, {load[1]:.1f} at the end (2 cores shared with other jobs):",
        "",
        markdown_table(COST_HEADER, cost_rows), "",
        "Newton iterations per step (residual evaluations; the Jacobians not counted) over the "
        "timed runs (20000 steps of h = 0.05): the sleigh and Suslov's problem approach steady motions, where the "
        "predictor is at round-off and one residual suffices; 'while moving' over the first 100 steps. Target of "
        f"the issue: within 2x rk4 (numba). dlas costs {_ratio_range(cost_rows, 'dlas')} rk4 steps in this run; "
        f"mp_lda {_ratio_range(cost_rows, 'mp_lda')} and nh_rattle {_ratio_range(cost_rows, 'nh_rattle')} times "
        f"the bare hand-written loop, {_ratio_to(cost_rows, 'mp_lda', outs):.2f} and "
        f"{_ratio_to(cost_rows, 'nh_rattle', outs):.2f} times it with the same outputs: their loops cost less than "
        "rk4's (one residual a step for mp_lda, whose residual is linear in lambda here; one grad V and one A for "
        "nh_rattle, against rk4's four field evaluations), the rest of the call is the numpy evaluation of the "
        f"energy, H_y and the constraint on every saved state ({_ratio_to(cost_rows, outs, hand):.2f} bare rk4 "
        "loops in this run), which every method of integrate pays. The Lie-group RATTLE "
        f"{_ratio_range(cost_rows, 'lie_rattle')} {_verdict(cost_rows, 'lie_rattle')}. Its parasitic mode "
        "(-1)^k delta keeps its solution moving and alternating (and over these 1000 time units it grows until the "
        "solution is destroyed: the long runs below), so no predictor from consecutive steps reaches the root. Its "
        "loop predicts each unknown from the solutions of the same parity (steps k-2, k-4, ..., k-18: the "
        "polynomial of degree 8 through them, exact for P(k) + (-1)^k Q(k) with P, Q of degree 8; the quadratic "
        "of the same parity before, whose median error on the sleigh's m (|m| ~ 1.2) was 4e-5, 1e-8 at degree 6) "
        "and keeps "
        "one Jacobian per parity, refreshed when the contraction exceeds 3e-3 (1e-4 before), the kept solutions in a "
        "ring, the exponential's beta(s) by Estrin's scheme (shorter chain per Newton iteration): 4.3-4.6 residual "
        "evaluations a step (Jacobians included) became those in the reading below, and 2.37-3.05 rk4 steps the "
        "ratios above (degree 10 measured as fast on the sleigh and slower on Suslov's problem, 12 slower on both: "
        "the larger coefficients' round-off and the longer history outweigh the nearer start). The Jacobian is now "
        "analytic (before: forward differences, p + 1 residuals each; 1.55-2.12 rk4 steps in the last run with "
        "them). "
        "From this table (per-residual cost from the slope between dlas and lie_rattle; fixed part from dlas): "
        f"{_rattle_bound(cost_rows)} (the slope now lumps the RATTLE's own fixed cost, the "
        "extrapolation from its 18 kept solutions, into the residual's: an upper bound on one residual). "
        + ("Where it is still above 2x the residuals it takes exceed those allowed: "
           if _verdict(cost_rows, "lie_rattle") != "meets the target" else
           "What bounds it (the ratios move with the load: compare them within one run): ")
        + "the sleigh's alternating mode grows to 1e-3 of the solution (second differences), where the "
        "extrapolation's error stays ~1e-8, two or three simplified-Newton residuals to the stop at 4e-16; what "
        "is left is a cheaper residual (one dtau^-1 costs the rk4 stages above; Broyden's update of the kept "
        "inverse, tried on an earlier branch, took fewer residual evaluations, 3.7 a step, but its own p^2 work a "
        "residual made it no faster).", ""]


def dvak_md(rows):
    """The reading of the dvak rows (the discrete vakonomic map's generated loop) of the cost table."""
    r = {row[1]: row for row in rows if row[0] == "vakonomic so(3)"}
    return [
        "The discrete vakonomic map (dvak_exp, dvak_cay, eq. (2) of integrators.reference.nonholonomic.lie_schemes) "
        "on servo.lie.Vakonomic(so(3), I = diag(1, 2, 3), a = (1, 1, 0)) from w = (1, -1, 0.5), lambda = 0.3, "
        "h = 0.05, runs its generated loop (integrators.codegen.nonholonomic_source.DvakSource: the same "
        "simplified Newton in the n unknowns (eta, lambda), no projection, z_(k+1) = z_k + ad_x^T w at the root): "
        f"{_ratio_range(list(r.values()), 'dvak')} rk4 (numba) steps, {_verdict(list(r.values()), 'dvak')} "
        f"(the calls with check=False as for every row; dvak_exp "
        f"{r['dvak_exp'][5]} and dvak_cay {r['dvak_cay'][5]} residuals a step, {r['dvak_exp'][7]} and "
        f"{r['dvak_cay'][7]} Jacobians of n + 1 residuals; its motion is not steady, so the predictor does not "
        "reach round-off and every step takes two or more residuals).", ""]


def skate_md(rows):
    """The reading of the vakonomic skate's rows of the cost table (dvak_mid's generated loop)."""
    r = {(row[1], row[2]): row for row in rows if row[0] == "vakonomic skate"}
    g, hand = r[("dvak_mid", "numba")], r[("rk4 (numba, hand-written field)", "numba")]
    ratio = float(g[4])
    return [
        "dvak_mid (the discrete vakonomic scheme in coordinates) on the vakonomic skate, h = 0.001 from q' = (0, 0, "
        "0.8), lambda = 0, 20000 steps (t = 20, where the angle turns ~0.02 rad a step), every step saved: its "
        "generated loop (integrators.codegen.vakonomic_source, written from the L* and phi servo.coordinates "
        "prints: residuals and Jacobians of the interval's (q_1, mu) and of the node's (v_1, lambda_1) equations "
        "derived by sympy once and cse'd, simplified Newton with the interval's inverse Jacobian kept across steps "
        "and refreshed by a straight-line Gauss-Jordan when the contraction exceeds 3e-3, the predictor of degree "
        "5 through the last solutions, p_1 carried to the next step and linearised to the root from the last "
        "residual, the node, affine in (v_1, lambda_1) here, solved by one exact Newton step (straight-line "
        f"elimination) where the state is saved) costs {g[3]} us a step, {ratio:.2f} times rk4 with numba on the continuous equations written by "
        f"hand ({hand[3]} us; its loop alone, state in locals), "
        + ("within the 2x target" if ratio <= 2.0 else "ABOVE the 2x target")
        + f" ({g[5]} residual evaluations a step, {g[7]} Jacobians of which one is the node's; {g[6]} while "
        "moving in the first 100 steps). The hand-written rk4 (benchmarks/nonholonomic.py, _rk4_skate_loop; its "
        "equations derived in its docstring) agrees with the library's numpy rk4 on the same problem to "
        f"{SKATE_CHECK.get('diff', float('nan')):.1e} over 2000 steps (checked in every run). Before, dvak_mid's "
        "compiled loop (kernels.make_dvak_run, still the path of problems with scalar functions only) took ~3.9 us "
        "a step: two full Newton solves a step, five iterations each with complex-step Jacobians.", ""]


def update_costs(md, repeat, tables_cmd=None):
    """Replace the cost part of the section (from its first paragraph to the orders' paragraph) by ``md``,
    keeping the rest of the section and naming both runs in the stamp: the run of the other tables is
    ``tables_cmd``, else read from the old stamp (its "other tables" command when it was a costs-only run)."""
    text = RESULTS.read_text()
    start, end = "<!-- begin nonholonomic -->", "<!-- end nonholonomic -->"
    body = text.split(start, 1)[1].split(end, 1)[0]
    lines = body.strip("\n").split("\n")
    stamp = lines[-1]
    key = "the other tables from `"
    old_cmd = (tables_cmd if tables_cmd else stamp.split(key, 1)[1].split("`")[0] if key in stamp
               else stamp.split("`")[1] if stamp.startswith("_Measured") else "an earlier run")
    body = "\n".join(lines[:-1] if stamp.startswith("_Measured") else lines)
    a, b = body.index("Cost per step"), body.index("Orders over h")
    body = body[:a] + "\n".join(md) + "\n" + body[b:]
    update_section("nonholonomic", body, f"python benchmarks/nonholonomic.py --costs-only --repeat {repeat}` "
                                         f"(the cost table and its text; the other tables from `{old_cmd}")
