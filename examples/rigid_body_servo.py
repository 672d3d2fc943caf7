"""Rigid body with a left-invariant servo-constraint
=================================================

Rigid body with a left-invariant servo-constraint (Kozlov, servo-constraint slides, "Твердое тело с
левоинвариантной сервосвязью", "Инвариантные многообразия").

so(3), constraint w3 = 0 (a = e3), control b = (0, b2, b3). The script prints the symbolic second-kind
equations and the realizability condition, integrates the first- and second-kind systems for a numeric
body, reports the first integrals (|I w + lambda b|^2 kept to round-off by the Lie-Poisson method; the
energy only for b parallel to a), the Euler form for b2 = 0, the energy on the Poisson sphere and the
Haar-measure divergence, and saves examples/output/rigid_body_servo.png.

Run: .venv/bin/python examples/rigid_body_servo.py
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
from servo import (PoissonSphere, ServoFirstKind, ServoSecondKind, Vakonomic, euler_angle_divergence,  # noqa: E402
                   euler_form)

OUT = Path(__file__).resolve().parent / "output"


def symbolic_part():
    I11, I12, I13, I22, I23, I33, b2, b3 = sp.symbols("I11 I12 I13 I22 I23 I33 b2 b3", real=True)
    I = sp.Matrix([[I11, I12, I13], [I12, I22, I23], [I13, I23, I33]])
    s = ServoSecondKind(named.so3(), I, a=[0, 0, 1], b=[0, b2, b3])
    print("Second-kind equations on the constraint w3 = 0:")
    print(s.equations().on_constraint())
    print("\nLaTeX:\n" + s.equations().on_constraint().latex())
    print("\nrealizability: det(I) (I^-1 a, b) =", sp.factor(sp.simplify(s.realizability() * I.det())))
    for f in s.first_integrals():
        print(f"first integral {f.name}: {sp.factor(f.expr_w.subs(sp.Symbol('omega3', real=True), 0))}")


def numeric_part():
    I = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.7]])
    a, b = [0.0, 0.0, 1.0], [0.0, 0.4, 1.0]
    s2 = ServoSecondKind(named.so3(), I, a=a, b=b)
    s1 = ServoFirstKind(named.so3(), I, a=a, b=b)
    v = Vakonomic(named.so3(), I, a=a)
    print(f"\nnumeric body: (I^-1 a, b) = {s2.realizability():.6f}")
    T = 20.0
    r2 = s2.simulate(s2.state_from(w=[1.0, 0.5, 0.0], lam=0.3), T, steps=2000)
    r1 = s1.simulate(s1.state_from(w=[1.0, 0.5, 0.0]), T, steps=2000)
    rv = v.simulate(v.state_from(w=[1.0, 0.5, 0.0], lam=0.3), T, steps=2000)
    cas = [f for f in s2.first_integrals() if f.kind == "casimir"][0]
    print(f"second kind ({r2.method}): drift of {cas.name} = {np.ptp(cas(r2.y)) / abs(cas(r2.y[0])):.1e}, "
          f"energy varies by {np.ptp(s2.energy(r2.y)):.3f} (not an integral for b not parallel to a), "
          f"max |(a, w)| = {r2.max_residual('(a, w)'):.1e}")
    print(f"first kind ({r1.method}): max |(a, w)| = {r1.max_residual('(a, w)'):.1e}, energy varies by "
          f"{np.ptp(s1.energy(r1.y)):.3f}")
    print(f"vakonomic ({rv.method}): energy drift {rv.drift('energy'):.1e}")
    # b2 = 0: Euler form
    s0 = ServoSecondKind(named.so3(), I, a=a, b=[0.0, 0.0, 2.0])
    ef = euler_form(s0)
    r0 = s0.simulate(s0.state_from(w=[1.0, 0.5, 0.0], lam=0.3), 5.0, steps=500)
    m = ef.from_state(r0.y)
    dm = np.gradient(m, r0.t, axis=0, edge_order=2)
    print(f"b2 = 0: J = {np.round(ef.J, 6)}, max |m' - Euler(m)| along the trajectory (finite differences) = "
          f"{np.max(np.abs(dm - ef.rhs(m))[2:-2]):.1e}")
    # invariant manifold I w + lambda b = k gamma
    ps = PoissonSphere(v, 1.0)
    g1, g2, g3 = sp.symbols("gamma1:4", real=True)
    print("vakonomic energy on the Poisson sphere (k = 1):", sp.nsimplify(ps.energy_expr((g1, g2, g3)),
                                                                          tolerance=1e-10, rational=True))
    def chop(e):
        e = sp.expand(e)
        return e.xreplace({x: 0 for x in e.atoms(sp.Float) if abs(x) < 1e-12}).evalf(6)

    print("Haar divergence, vakonomic:", chop(euler_angle_divergence(sp.Matrix(v.W))))
    print("Haar divergence, b = (0, 0.4, 1):", chop(euler_angle_divergence(sp.Matrix(s2.W))))

    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.8))
    axes[0].plot(r2.w[:, 0], r2.w[:, 1], label="second kind")
    axes[0].plot(r1.w[:, 0], r1.w[:, 1], label="first kind")
    axes[0].plot(rv.w[:, 0], rv.w[:, 1], label="vakonomic")
    axes[0].set(xlabel="w1", ylabel="w2", title="velocities on the constraint w3 = 0")
    axes[0].legend()
    axes[1].plot(r2.t, r2.y[:, 3], label="lambda (second kind)")
    axes[1].plot(r1.t, r1.multiplier, label="lambda (first kind)")
    axes[1].set(xlabel="t", title="multipliers")
    axes[1].legend()
    axes[2].semilogy(r2.t, np.abs(cas(r2.y) - cas(r2.y[0])) + 1e-18, label="|F(m + lambda b) - F0|")
    axes[2].semilogy(rv.t, np.abs(rv.invariants["energy"] - rv.invariants["energy"][0]) + 1e-18,
                     label="|T - T0| vakonomic")
    axes[2].set(xlabel="t", title="first integrals (rkmk4)")
    axes[2].legend()
    OUT.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(OUT / "rigid_body_servo.png", dpi=110)
    print(f"saved {OUT / 'rigid_body_servo.png'}")


if __name__ == "__main__":
    symbolic_part()
    numeric_part()
