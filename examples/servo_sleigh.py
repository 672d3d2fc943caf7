"""Chaplygin's servo-sleigh on E(2)
================================

Chaplygin's servo-sleigh on E(2) (Kozlov, servo-constraint slides, "Сервосани Чаплыгина").

T = m (u^2 + v^2)/2 + I w^2/2 on se(2) with velocities (u, v, w); the constraint v = 0 (a = (0, 1, 0)) is
realized by the control force lambda (a_u, b_v, c_w) (a servo-constraint of the first kind). The script
prints the equations, the realizability number and the integrals, checks u(t) against the exact
solution u = gamma/(beta + C e^(gamma t)), reconstructs the sleigh's path in the plane and saves
examples/output/servo_sleigh.png (phase portrait in (u, w) and paths).

Run: .venv/bin/python examples/servo_sleigh.py
"""

import sys
from pathlib import Path

import matplotlib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402

from liegroups import named  # noqa: E402
from servo import ServoFirstKind, planar_path, reconstruct_motion  # noqa: E402

OUT = Path(__file__).resolve().parent / "output"


def main():
    m, I, au, bv, cw = sp.symbols("m I a_u b_v c_w", positive=True)
    sym = ServoFirstKind(named.se2(), [m, m, I], a=[0, 1, 0], b=[au, bv, cw])
    print("Equations of motion (first kind, lambda b = lambda (a_u, b_v, c_w)):")
    print(sym.equations().on_constraint())
    print("\nrealizability (I^-1 a, b) =", sym.realizability())
    red = sym.reduced()
    print("reduced system:", ", ".join(f"{v}' = {e}" for v, e in zip(red.variables, red.exprs)))
    for f in sym.first_integrals():
        print(f"first integral {f.name}: {sp.simplify(f.expr_w)}  (in omega1 = u, omega3 = w)")

    M, J, AU, BV, CW = 1.0, 0.5, 0.4, 1.0, -0.3
    alpha, beta = AU / BV, M * CW / (J * BV)
    s = ServoFirstKind(named.se2(), [M, M, J], a=[0, 1, 0], b=[AU, BV, CW])
    print(f"\nnumeric: alpha = {alpha}, beta = {beta}, realizability = {s.realizability()}")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.5))
    rng = np.random.default_rng(0)
    for u0, w0 in [(1.0, 0.5), (0.5, -1.0), (1.5, 1.0), (0.2, 2.0), (2.0, -0.5)]:
        T = 8.0
        res = s.simulate(s.state_from(w=[u0, 0.0, w0]), T, steps=1600)
        u, w = res.w[:, 0], res.w[:, 2]
        gamma = beta * u0 - alpha * w0
        C = gamma / u0 - beta
        exact = gamma / (beta + C * np.exp(gamma * res.t))
        print(f"u0 = {u0:+.1f}, w0 = {w0:+.1f}: gamma = {gamma:+.3f}, max |u - exact| = "
              f"{np.max(np.abs(u - exact)):.2e}, drift of beta u - alpha w = "
              f"{np.ptp(beta * u - alpha * w):.1e}")
        ax1.plot(u, w, color=rng.uniform(0, 0.8, 3))
        g = reconstruct_motion(res, substeps=2)
        x, y, _ = planar_path(g.y)
        ax2.plot(x, y)
        print(f"    path: max group defect {np.max(g.constraints['group_defect']):.1e}, end point "
              f"({x[-1]:+.3f}, {y[-1]:+.3f})")
    # finite-time blow-up on an invariant line: u0 = -0.5, w0 = 0.8 gives beta + C e^(gamma t) = 0 at t*
    u0, w0 = -0.5, 0.8
    gamma = beta * u0 - alpha * w0
    C = gamma / u0 - beta
    tstar = np.log(-beta / C) / gamma
    res = s.simulate(s.state_from(w=[u0, 0.0, w0]), 6.0, steps=1200)
    print(f"u0 = -0.5, w0 = +0.8: exact solution blows up at t* = {tstar:.4f}; integrator status "
          f"{res.status} ({res.message}), last finite time {res.t[np.isfinite(res.y).all(-1)][-1]:.3f}")
    uu = np.linspace(-1, 2.5, 5)
    for c in np.linspace(-2, 2, 9):
        ax1.plot(uu, (beta * uu - c) / alpha, "k:", lw=0.5)
    ax1.set(xlabel="u", ylabel="w", title="servo-sleigh: trajectories on the lines beta u - alpha w = gamma")
    ax2.set(xlabel="x", ylabel="y", title="paths of the sleigh in the plane", aspect="equal")
    OUT.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(OUT / "servo_sleigh.png", dpi=110)
    print(f"\nsaved {OUT / 'servo_sleigh.png'}")


if __name__ == "__main__":
    main()
