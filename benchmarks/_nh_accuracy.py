"""The accuracy parts of benchmarks/nonholonomic.py: measured orders against exact solutions, the
McLachlan-Perlmutter contact oscillator (drift fits over every step, the detuned beat), long runs of the sleigh
and Suslov's problem, and their figures."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import liegroups  # noqa: E402
from liegroups import named  # noqa: E402
from integrators import ConvergenceError, integrate  # noqa: E402
from integrators.reference.nonholonomic import (contact_oscillator, contact_oscillator_initial,  # noqa: E402
                                                suslov_problem)

from _nh_systems import (EPS, FIG, MARKERS, SLEIGH_I, disk_exact, disk_problem, sleigh_exact,  # noqa: E402
                         sleigh_system, suslov_system, vakonomic_skate)


def orders():
    rows, curves = [], {}
    hs = 0.1 * 2.0 ** -np.arange(7)
    sl = suslov_problem(named.se2(), SLEIGH_I, [0, 1, 0], group=liegroups.SE2)
    m0 = np.array([0.3, 0.0, 1.2]) @ SLEIGH_I
    q0 = np.array([0.1, -0.2, 0.2, 0.3])
    y0 = np.concatenate([q0, [np.cos(0.2) * 1.3, np.sin(0.2) * 1.3, 0.8, 1.3]])
    cases = [("sleigh, t = 2", "dlas_exp"), ("sleigh, t = 2", "dlas_cay"), ("sleigh, t = 2", "lie_rattle_exp"),
             ("sleigh, t = 2", "lie_rattle_cay"), ("sleigh, t = 2", "rk4"),
             ("rolling disk, t = 5", "mp_lda"), ("rolling disk, t = 5", "nh_rattle"), ("rolling disk, t = 5", "rk4"),
             ("vakonomic skate, t = 2", "dvak_mid"), ("vakonomic skate, t = 2", "scipy:DOP853 (continuous)")]
    vak, vak_ref = vakonomic_skate()
    for prob, name in cases:
        errs, cons, wall = [], 0.0, 0.0
        for h in hs:
            t0 = time.perf_counter()
            if prob.startswith("vakonomic"):
                n = int(round(2.0 / h))
                kw = ({"method": "dvak_mid"} if name == "dvak_mid" else
                      {"method": "scipy:DOP853", "rtol": 1e-3 * h ** 4, "atol": 1e-3 * h ** 4})
                r = vak.simulate([0, 0, 0], [0, 0, 0.8], 2.0, steps=n, lam0=[0.0], **kw)
                e = np.max(np.abs(r.q - vak_ref(r.t)), axis=1)
                cons = max(cons, float(np.max(np.abs(r.constraints["phi"]))))
            elif prob.startswith("sleigh"):
                r = integrate(sl, m0, (0.0, 2.0), method=name, h=h)
                w = r.y @ np.linalg.inv(SLEIGH_I).T
                u, om = sleigh_exact(r.t)
                e = np.maximum(np.abs(w[:, 0] - u), np.abs(w[:, 2] - om))
                cons = max(cons, float(np.max(np.abs(w[:, 1]))))
            else:
                r = integrate(disk_problem(), y0, (0.0, 5.0), method=name, h=h)
                e = np.max(np.abs(r.y[:, :4] - disk_exact(r.t, q0).T), axis=1)
                cons = max(cons, max(float(np.max(np.abs(c))) for c in r.constraints.values()))
            wall += time.perf_counter() - t0
            errs.append(e[-1])
            if h == hs[3]:
                curves[(prob, name)] = (r.t, e)
        slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
        T = 5.0 if prob.startswith("rolling") else 2.0
        rows.append([prob, name, f"{slope:.3f}" if "continuous" not in name else "(rtol 1e-3 h^4)", f"{errs[0]:.2e}",
                     f"{errs[-1]:.2e}", f"{cons:.1e}", f"{1e6 * wall / sum(int(round(T / h)) for h in hs):.0f}"])
    return rows, curves


def contact(periods, problem=None, methods=("mp_lda", "nh_rattle"), label=""):
    """McLachlan and Perlmutter (2006), section 5.2 (integrators.reference.nonholonomic.contact_oscillator):
    h = 2 sin(pi/40), H0 = 1.5, H_y = 0.5, z0 in linspace(-0.9, 0.9, 10), every step saved: the drift is fitted
    on every step (:func:`drift_fit`). With the compiled loops (the reversible problem) each trajectory is one
    public call (10^5 periods of one batch would not fit in memory), else one call with the batch of 10.
    DOP853 (rtol 1e-8) is given the wall time of the first method on the 10 trajectories (max_wall_time, one
    batch of 10): the same cost."""
    p = contact_oscillator(EPS) if problem is None else problem
    y0 = contact_oscillator_initial(np.linspace(-0.9, 0.9, 10), EPS)
    h = 2 * np.sin(np.pi / 40)
    # a whole number of steps of exactly h: integrate fits n = ceil(T/h) steps into t_span by taking h = T/n, and
    # a step detuned by up to 1/n (2.5e-7 here) is no longer the one that makes y'' = -y 40-step periodic:
    # the phase of y then beats slowly against the grid, and nh_rattle's mean energy error follows that beat
    # (fitted slope 7e-10 over 10^5 periods for z0 = -0.9, against 1e-14 with the exact step)
    n = int(np.ceil(2 * np.pi * periods / h))
    T = n * h
    H, Hy = p.invariants["energy"], p.invariants["H_y"]
    compiled = p.discrete.scalar is not None and (getattr(p.discrete, "gauge", None) is None
                                                  or p.discrete.scalar[3] is not None)
    backend = "numba" if compiled else "numpy"
    rows, curves = [], {}
    for name in methods:
        integrate(p, y0[0], (0.0, 10 * h), method=name, h=h, backend=backend)          # compile
        fits, wall, nsteps, env = [], 0.0, 0, []
        note = ""
        for y in (y0 if compiled else [y0]):
            t0 = time.perf_counter()
            Tm, nm = T, n
            while True:
                try:
                    r = integrate(p, y, (0.0, Tm), method=name, steps=nm, check=False, backend=backend)
                    break
                except ConvergenceError:       # the energy grew without bound: report the longest run that passed
                    nm //= 2
                    Tm = nm * h
                    note = f", Newton failed beyond t = {Tm:.3g}: H grows without bound"
            wall += time.perf_counter() - t0
            Y = r.y if compiled else np.moveaxis(r.y, 1, 0)
            for yi in ([Y] if compiled else Y):
                fits.append(drift_fit(r.t, yi, H, Hy))
                env.append(envelope(r.t, yi, H, Hy))
            nsteps += r.nsteps * (1 if compiled else len(y0))
            del r, Y
        rows.append(_drift_row(f"{name} ({backend}{note})", fits, wall, nsteps))
        curves[name] = _merge(env)
    budget = float(rows[0][-1])
    t0 = time.perf_counter()
    r = integrate(p, y0, (0.0, T), method="scipy:DOP853", rtol=1e-8, atol=1e-10, check=False, max_wall_time=budget,
                  max_steps=10 ** 8)
    wall = time.perf_counter() - t0
    fits = [drift_fit(r.t, r.y[:, i], H, Hy) for i in range(r.y.shape[1])]
    rows.append(_drift_row(f"scipy:DOP853 rtol 1e-8 (reached t = {r.t[-1]:.3g})", fits, wall, r.nsteps))
    curves["scipy:DOP853"] = _merge([envelope(r.t, r.y[:, i], H, Hy) for i in range(r.y.shape[1])])
    return rows, curves


def detuned_beat(steps, periods):
    """nh_rattle from z0 = -0.9 with the step integrate takes for t_span = (0, 2 pi P) and h = 2 sin(pi/40)
    (h' = T/ceil(T/h), detuned), over ``steps`` steps, saved every 7001st (coprime with 40: the samples run
    through every phase of y); means of H - H0 over 40 blocks. Bounded if the block means turn around."""
    p = contact_oscillator(EPS)
    y0 = contact_oscillator_initial(np.array([-0.9]), EPS)[0]
    h = 2 * np.sin(np.pi / 40)
    T = 2 * np.pi * periods
    hd = T / int(np.ceil(T / h))
    r = integrate(p, y0, (0.0, steps * hd), method="nh_rattle", steps=steps, save_every=7001, check=False,
                  backend="numba")
    H = p.invariants["energy"]
    dH = H(r.y) - H(r.y[:1])
    K = (len(dH) - 1) // 40
    bm = dH[1:1 + 40 * K].reshape(40, K).mean(1)
    return (h - hd) / h, r.t[-1], bm


def drift_fit(t, y, H, Hy):
    """(slope of H - H0, max |H - H0|, slope of H_y - H_y0, max |H_y - H_y0|, max |dx + y dz|) of one trajectory,
    the slopes by least squares over EVERY saved state (t centred). Fitting a subsample at a fixed stride is
    wrong here: h = 2 sin(pi/40) makes y'' = -y exactly 40-step periodic in the discrete schemes, so a stride
    that is a multiple of 20 samples the O(h^2) oscillation of H at one phase, and that stroboscopic signal
    carries the slow quasi-periodic motion of (x, z) (amplitude ~1e-3 over t ~ 10^5): the fit of it showed
    |slope| 2.6e-9 where the fit over every step gives ~1e-14."""
    tc = t - t.mean()
    den = float(tc @ tc)
    dH, dHy = H(y) - H(y[:1]), Hy(y) - Hy(y[:1])
    cons = np.max(np.abs(y[:, 3] + y[:, 1] * y[:, 5]))
    return (float(tc @ dH) / den, float(np.max(np.abs(dH))), float(tc @ dHy) / den, float(np.max(np.abs(dHy))),
            float(cons))


def envelope(t, y, H, Hy, windows=4000):
    """(t, max |H - H0|, max |H_y - H_y0|) over ``windows`` windows of the run (for the figure: the largest
    error in each window, not a stroboscopic sample)."""
    k = max(1, len(t) // windows)
    m = (len(t) - 1) // k * k
    dH = np.abs(H(y[1:m + 1]) - H(y[:1])).reshape(-1, k).max(1)
    dHy = np.abs(Hy(y[1:m + 1]) - Hy(y[:1])).reshape(-1, k).max(1)
    return t[k:m + 1:k], dH, dHy


def _merge(envs):
    n = min(len(e[0]) for e in envs)
    return (envs[0][0][:n], np.max([e[1][:n] for e in envs], axis=0), np.max([e[2][:n] for e in envs], axis=0))


def _drift_row(name, fits, wall, nsteps):
    f = np.array(fits)
    i = int(np.argmax(np.abs(f[:, 0])))
    j = int(np.argmax(np.abs(f[:, 2])))
    return [name, f"{f[i, 0]:.1e}", f"{np.max(f[:, 1]):.1e}", f"{f[j, 2]:.1e}", f"{np.max(f[:, 3]):.1e}",
            f"{np.max(f[:, 4]):.1e}", nsteps, f"{wall:.2f}"]


def long_runs(N):
    """N steps of h = 0.05 (numba for every method): relative energy drift, largest constraint residual."""
    rows, curves = [], {}
    su = suslov_system()
    for label, p, m0 in [("sleigh", sleigh_system(), np.array([0.3, 0.0, 1.2]) @ SLEIGH_I),
                         ("Suslov", su, np.array([1.0, 0.5, 0.0]) @ su.discrete.I)]:
        for name in ("dlas_exp", "dlas_cay", "lie_rattle_exp", "lie_rattle_cay", "rk4"):
            integrate(p, m0, (0.0, 0.5), method=name, steps=10, backend="numba")      # compile
            t0 = time.perf_counter()
            r = integrate(p, m0, (0.0, 0.05 * N), method=name, steps=N, save_every=max(1, N // 5000), backend="numba")
            wall = time.perf_counter() - t0
            c = max(float(np.max(np.abs(v))) for v in r.constraints.values())
            E = r.invariants["energy"]
            rows.append([label, name, N, f"{np.max(np.abs(E - E[0]) / abs(E[0])):.1e}", f"{c:.1e}",
                         f"{1e6 * wall / N:.2f}", r.backend])
            curves[(label, name)] = (r.t, np.abs(E - E[0]) / abs(E[0]))
    return rows, curves


def figures(curves_o, curves_c, curves_l):
    import matplotlib.pyplot as plt
    FIG.mkdir(exist_ok=True)
    out = []
    for prob in ("sleigh, t = 2", "rolling disk, t = 5", "vakonomic skate, t = 2"):
        fig, ax = plt.subplots(figsize=(6, 4))
        for (pr, name), (t, e) in curves_o.items():
            if pr == prob:
                ax.semilogy(t, np.maximum(e, 1e-17), marker=MARKERS[name], markevery=max(1, len(t) // 12), label=name)
        ax.set_xlabel("t"), ax.set_ylabel("error against the exact solution (h = 0.0125)")
        ax.set_title(prob.split(",")[0]), ax.legend()
        f = FIG / f"nonholonomic_{prob.split(',')[0].replace(' ', '_')}.png"
        fig.tight_layout(), fig.savefig(f, dpi=160), fig.savefig(f.with_suffix(".svg")), plt.close(fig)
        out.append(f.name)
    for key, (curves, title) in curves_c.items():
        fig, axs = plt.subplots(1, 2, figsize=(10, 4))
        for name, (t, dH, dHy) in curves.items():
            for ax, d, lab in ((axs[0], dH, "|H - H0|"), (axs[1], dHy, "|H_y - H_y0|")):
                ax.loglog(t, np.maximum(d, 1e-17), marker=MARKERS[name], markevery=max(1, len(t) // 12), label=name)
                ax.set_xlabel("t"), ax.set_ylabel(lab + " (largest in each window, over the 10 z0)")
        axs[0].legend(), fig.suptitle(title)
        f = FIG / f"nonholonomic_{key}.png"
        fig.tight_layout(), fig.savefig(f, dpi=160), fig.savefig(f.with_suffix(".svg")), plt.close(fig)
        out.append(f.name)
    for label in ("sleigh", "Suslov"):
        fig, ax = plt.subplots(figsize=(6, 4))
        for (lab, name), (t, e) in curves_l.items():
            if lab == label:
                ax.loglog(t[1:], np.maximum(e[1:], 1e-17), marker=MARKERS[name], markevery=max(1, len(t) // 12),
                          label=name)
        ax.set_xlabel("t"), ax.set_ylabel("relative energy error (h = 0.05)")
        ax.set_title(f"{label}: long run"), ax.legend()
        f = FIG / f"nonholonomic_{label.lower()}_long.png"
        fig.tight_layout(), fig.savefig(f, dpi=160), fig.savefig(f.with_suffix(".svg")), plt.close(fig)
        out.append(f.name)
    return out
