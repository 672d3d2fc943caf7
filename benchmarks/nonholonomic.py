"""Structure-preserving integrators for nonholonomic and vakonomic systems (integrators.reference.nonholonomic):
measured orders against exact solutions, the McLachlan-Perlmutter contact oscillator, long runs of the
sleigh and Suslov's problem. Writes the section ``nonholonomic`` of RESULTS.md and figures in
benchmarks/figures/nonholonomic_*.png.

    PYTHONPATH=. MPLBACKEND=Agg OPENBLAS_NUM_THREADS=1 python benchmarks/nonholonomic.py [--periods P] [--steps N]

Reduced lengths by default (the machine is shared): the contact oscillator over P = 200 periods (the
issue asks 10^5), the long runs N = 10^4 steps (the issue asks 10^6).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import liegroups  # noqa: E402
from liegroups import named  # noqa: E402
from integrators import integrate  # noqa: E402
from integrators.reference.nonholonomic import lagrange_dalembert_problem, suslov_problem  # noqa: E402

from _results import markdown_table, update_section  # noqa: E402

FIG = Path(__file__).with_name("figures")
MARKERS = {"dlas_exp": "o", "dlas_cay": "s", "mp_lda": "^", "nh_rattle": "v", "rk4": "x", "scipy:DOP853": "+"}

# the Chaplygin sleigh (tests/integrators/test_nonholonomic.py derives the exact solution)
MASS, IC, OFF = 1.0, 0.5, 0.7
J = IC + MASS * OFF ** 2
SLEIGH_I = np.array([[MASS, 0, 0], [0, MASS, MASS * OFF], [0, MASS * OFF, J]])


def sleigh_exact(t, u0=0.3, w0=1.2):
    E = 0.5 * MASS * u0 ** 2 + 0.5 * J * w0 ** 2
    c = np.sqrt(2 * E / MASS)
    u = c * np.tanh(OFF * MASS * c * t / J + np.arctanh(u0 / c))
    return u, np.sign(w0) * np.sqrt((2 * E - MASS * u * u) / J)


def disk_problem():
    def A(q):
        phi = np.asarray(q)[..., 2]
        one, zero = np.ones_like(phi), np.zeros_like(phi)
        return np.stack([np.stack([one, zero, zero, -np.cos(phi)], -1), np.stack([zero, one, zero, -np.sin(phi)], -1)], -2)
    return lagrange_dalembert_problem(np.diag([1.0, 1.0, 0.5, 0.7]), lambda q: np.zeros_like(q), A)


def disk_exact(t, q0, Wp=0.8, Wt=1.3):
    phi0 = q0[2]
    phi = Wp * t + phi0
    rho = Wt / Wp
    return np.array([q0[0] + rho * (np.sin(phi) - np.sin(phi0)), q0[1] - rho * (np.cos(phi) - np.cos(phi0)), phi,
                     q0[3] + Wt * t])


def orders():
    rows, curves = [], {}
    hs = 0.1 * 2.0 ** -np.arange(7)
    sl = suslov_problem(named.se2(), SLEIGH_I, [0, 1, 0], group=liegroups.SE2)
    m0 = np.array([0.3, 0.0, 1.2]) @ SLEIGH_I
    q0 = np.array([0.1, -0.2, 0.2, 0.3])
    y0 = np.concatenate([q0, [np.cos(0.2) * 1.3, np.sin(0.2) * 1.3, 0.8, 1.3]])
    cases = [("sleigh, t = 2", "dlas_exp"), ("sleigh, t = 2", "dlas_cay"), ("sleigh, t = 2", "rk4"),
             ("rolling disk, t = 5", "mp_lda"), ("rolling disk, t = 5", "nh_rattle"), ("rolling disk, t = 5", "rk4")]
    for prob, name in cases:
        errs, cons, wall = [], 0.0, 0.0
        for h in hs:
            t0 = time.perf_counter()
            if prob.startswith("sleigh"):
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
        rows.append([prob, name, f"{slope:.3f}", f"{errs[0]:.2e}", f"{errs[-1]:.2e}", f"{cons:.1e}",
                     f"{1e6 * wall / sum(int(round((2.0 if prob.startswith('s') else 5.0) / h)) for h in hs):.0f}"])
    return rows, curves


def contact(periods, eps=0.1):
    """McLachlan and Perlmutter (2006), section 5.2: constraint dx + y dz = 0, H = (|v|^2 + |q|^2 + eps x^2 z^2)/2,
    H_y = (y^2 + y'^2)/2 conserved; h = 2 sin(pi/40), H0 = 1.5, H_y = 0.5, z0 in linspace(-0.9, 0.9, 10)
    (one batch of 10), from rest with y0 = 1."""
    def gradV(q):
        x, y, z = q[..., 0], q[..., 1], q[..., 2]
        return np.stack([x + eps * x * z * z, y, z + eps * x * x * z], -1)

    def A(q):
        y = np.asarray(q)[..., 1]
        return np.stack([np.ones_like(y), np.zeros_like(y), y], -1)[..., None, :]

    def dA(q):
        out = np.zeros(np.shape(q)[:-1] + (1, 3, 3))
        out[..., 0, 2, 1] = 1.0
        return out

    p = lagrange_dalembert_problem(np.eye(3), gradV, A, dA)
    z0 = np.linspace(-0.9, 0.9, 10)
    x0 = np.sqrt((2 * 1.5 - z0 ** 2 - 1.0) / (1 + eps * z0 ** 2))
    y0 = np.stack([x0, np.ones(10), z0, np.zeros(10), np.zeros(10), np.zeros(10)], -1)
    h = 2 * np.sin(np.pi / 40)
    T = 2 * np.pi * periods

    def H(Y):
        q, v = Y[..., :3], Y[..., 3:]
        return 0.5 * (np.sum(v * v, -1) + np.sum(q * q, -1) + eps * q[..., 0] ** 2 * q[..., 2] ** 2)

    def Hy(Y):
        return 0.5 * (Y[..., 1] ** 2 + Y[..., 4] ** 2)

    rows, curves = [], {}
    runs = [("mp_lda", dict(h=h)), ("nh_rattle", dict(h=h)), ("rk4", dict(h=h))]
    for name, kw in runs:
        t0 = time.perf_counter()
        r = integrate(p, y0, (0.0, T), method=name, save_every=40, check=False, **kw)
        wall = time.perf_counter() - t0
        rows.append(_drift_row(name, r, H, Hy, wall, r.nsteps))
        curves[name] = r
    # DOP853 given the wall time of mp_lda (the loosest tolerance whose run costs about as much)
    target = rows[0][-1]
    for rtol in (1e-5, 1e-7, 1e-9, 1e-11):
        t0 = time.perf_counter()
        r = integrate(p, y0, (0.0, T), method="scipy:DOP853", rtol=rtol, atol=rtol * 1e-2, t_eval=curves["mp_lda"].t,
                      check=False)
        wall = time.perf_counter() - t0
        if wall >= 0.5 * float(target) or rtol == 1e-11:
            break
    row = _drift_row(f"scipy:DOP853 (rtol {rtol:g})", r, H, Hy, wall, r.nsteps)
    rows.append(row)
    curves["scipy:DOP853"] = r
    return rows, curves, H, Hy


def _drift_row(name, r, H, Hy, wall, nsteps):
    dH = np.abs(H(r.y) - H(r.y[:1]))                   # (K, 10)
    dHy = np.abs(Hy(r.y) - Hy(r.y[:1]))
    sH = np.max(np.abs(np.polyfit(r.t, H(r.y), 1)[0]))
    sHy = np.max(np.abs(np.polyfit(r.t, Hy(r.y), 1)[0]))
    cons = np.max(np.abs(r.y[..., 3] + r.y[..., 1] * r.y[..., 5]))
    return [name, f"{sH:.1e}", f"{np.max(dH):.1e}", f"{sHy:.1e}", f"{np.max(dHy):.1e}", f"{cons:.1e}", nsteps,
            f"{wall:.2f}"]


def long_runs(N):
    rows = []
    sl = suslov_problem(named.se2(), SLEIGH_I, [0, 1, 0], group=liegroups.SE2)
    su = suslov_problem(named.so3(), np.diag([1.0, 2.0, 3.0]) + 0.3 * (np.ones((3, 3)) - np.eye(3)), [0, 0, 1.0],
                        group=liegroups.SO3)
    IS = su.discrete.I
    w0 = np.array([1.0, 0.5, 0.0])
    for label, p, m0 in [("sleigh", sl, np.array([0.3, 0.0, 1.2]) @ SLEIGH_I), ("Suslov", su, w0 @ IS)]:
        for name in ("dlas_exp", "dlas_cay", "rk4"):
            t0 = time.perf_counter()
            r = integrate(p, m0, (0.0, 0.05 * N), method=name, steps=N, save_every=max(1, N // 200))
            wall = time.perf_counter() - t0
            c = max(float(np.max(np.abs(v))) for v in r.constraints.values())
            rows.append([label, name, N, f"{r.drift('energy')[()]:.1e}", f"{c:.1e}", f"{1e6 * wall / N:.0f}"])
    return rows


def figures(curves_o, curves_c, H, Hy):
    import matplotlib.pyplot as plt
    FIG.mkdir(exist_ok=True)
    out = []
    for prob in ("sleigh, t = 2", "rolling disk, t = 5"):
        fig, ax = plt.subplots(figsize=(6, 4))
        for (pr, name), (t, e) in curves_o.items():
            if pr == prob:
                ax.semilogy(t, np.maximum(e, 1e-17), marker=MARKERS[name], markevery=max(1, len(t) // 12), label=name)
        ax.set_xlabel("t"), ax.set_ylabel("error against the exact solution (h = 0.0125)")
        ax.set_title(prob.split(",")[0]), ax.legend()
        f = FIG / f"nonholonomic_{prob.split(',')[0].replace(' ', '_')}.png"
        fig.tight_layout(), fig.savefig(f, dpi=100), plt.close(fig)
        out.append(f.name)
    fig, axs = plt.subplots(1, 2, figsize=(10, 4))
    for name, r in curves_c.items():
        for ax, Q, lab in ((axs[0], H, "|H - H0|"), (axs[1], Hy, "|H_y - H_y0|")):
            d = np.max(np.abs(Q(r.y) - Q(r.y[:1])), axis=1)
            ax.semilogy(r.t, np.maximum(d, 1e-17), marker=MARKERS[name], markevery=max(1, len(r.t) // 12), label=name)
            ax.set_xlabel("t"), ax.set_ylabel(lab + " (max over the 10 z0)")
    axs[0].legend(), fig.suptitle("McLachlan-Perlmutter contact oscillator")
    f = FIG / "nonholonomic_contact_oscillator.png"
    fig.tight_layout(), fig.savefig(f, dpi=100), plt.close(fig)
    out.append(f.name)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--periods", type=int, default=200)
    ap.add_argument("--steps", type=int, default=10_000)
    args = ap.parse_args(argv)
    o_rows, o_curves = orders()
    c_rows, c_curves, H, Hy = contact(args.periods)
    l_rows = long_runs(args.steps)
    figs = figures(o_curves, c_curves, H, Hy)
    md = ["Orders over h = 0.1 2^-k, k = 0..6 (slope of log error against log h; error at the end; the largest "
          "constraint residual over every step of every run; microseconds per step with numpy):", "",
          markdown_table(["problem", "method", "order", "error h=0.1", "error h=0.1/64", "max |constraint|",
                          "us/step"], o_rows), "",
          f"Contact oscillator (McLachlan and Perlmutter 2006, eps = 0.1), h = 2 sin(pi/40), {args.periods} periods "
          f"(reduced from 10^5: shared machine), 10 initial conditions z0 in linspace(-0.9, 0.9, 10) as one batch; "
          "fitted slope of H and H_y against t (per unit time, largest over the 10) and the largest drift; DOP853 at "
          "the loosest tolerance whose run costs about as much as mp_lda:", "",
          markdown_table(["method", "slope H", "max |dH|", "slope H_y", "max |dH_y|", "max |dx + y dz|", "steps",
                          "seconds"], c_rows), "",
          f"Long runs ({args.steps} steps of h = 0.05, reduced from 10^6): relative energy drift, largest constraint "
          "residual, microseconds per step:", "",
          markdown_table(["problem", "method", "steps", "energy drift", "max |(a, w)|", "us/step"], l_rows), "",
          "Figures: " + ", ".join(f"figures/{f}" for f in figs) + "."]
    update_section("nonholonomic", "\n".join(md),
                   f"python benchmarks/nonholonomic.py --periods {args.periods} --steps {args.steps}")
    print("\n".join(md))


if __name__ == "__main__":
    main()
