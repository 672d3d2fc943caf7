"""The skate on an inclined plane: three models
============================================

The Chaplygin skate on an inclined plane: nonholonomic, vakonomic and added-mass motions side by side.

L = (x'^2 + y'^2 + phi'^2)/2 + x, constraint x' sin phi - y' cos phi = 0, start at rest with phi' = w
(Kozlov's lectures on servo-constraints):

- nonholonomic (Cetaev): x = sin^2(wt)/(2w^2), y = (wt - sin 2wt / 2)/(2w^2), phi = wt
  ("on the average the skate does not slide down the inclined plane");
- vakonomic with lambda(0) = 0: phi'' = t^2 sin phi cos phi, x' = t cos^2 phi, y' = t sin phi cos phi;
- added masses T + N (a, q')^2/2 (Theorem 2): converge to the vakonomic motion as N grows,
  while large friction -N (a, q') a (Theorem 1) converges to the nonholonomic one.

Run:  .venv/bin/python examples/skate_inclined.py   (figure in examples/output/skate_inclined.png)
"""

import sys
from pathlib import Path

import matplotlib

# run from a source checkout even if the editable install maps servo as a namespace package
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402
from sympy.physics.mechanics import dynamicsymbols  # noqa: E402

from servo import LagrangianSystem, fit_power_law  # noqa: E402

OUT = Path(__file__).resolve().parent / "output"


def main(w=0.8, t_end=4.0, steps=400):
    x, y, phi = dynamicsymbols("x y phi")
    L = LagrangianSystem((x.diff() ** 2 + y.diff() ** 2 + phi.diff() ** 2) / 2, -x, [x, y, phi])
    constraint = x.diff() * sp.sin(phi) - y.diff() * sp.cos(phi)
    a = [sp.sin(phi), -sp.cos(phi), 0]
    q0, qd0 = [0, 0, 0], [0, 0, w]
    nh_model = L.constrain(constraint)
    vk_model = L.constrain(constraint, model="vakonomic")
    print("nonholonomic equations:")
    for e in nh_model.equations():
        print("   ", e)
    print("vakonomic equations:")
    for e in vk_model.equations():
        print("   ", e)
    nh = nh_model.simulate(q0, qd0, t_end, steps=steps)
    vk = vk_model.simulate(q0, qd0, t_end, steps=steps, lam0=[0.0])
    tt = nh.t
    exact = np.stack([np.sin(w * tt) ** 2 / (2 * w ** 2), (w * tt - np.sin(2 * w * tt) / 2) / (2 * w ** 2)], -1)
    print("nonholonomic vs exact solution: max error %.2e" % np.abs(nh.q[:, :2] - exact).max())
    print("%8s %22s %22s" % ("N", "added mass - vakonomic", "friction - nonholonomic"))
    Ns = [10.0, 100.0, 1000.0]
    em, ef, added = [], [], {}
    for N in Ns:
        am = L.with_added_mass(a, N).simulate(q0, qd0, t_end, steps=steps, rtol=1e-10, atol=1e-12)
        fr = L.with_friction(a, N).simulate(q0, qd0, t_end, steps=steps, method="BDF", rtol=1e-9, atol=1e-11)
        added[N] = am
        em.append(np.abs(am.q - vk.q).max())
        ef.append(np.abs(fr.q - nh.q).max())
        print("%8g %22.3e %22.3e" % (N, em[-1], ef[-1]))
    print("fitted rates: added mass N^%.3f, friction N^%.3f" % (fit_power_law(Ns, em)[0], fit_power_law(Ns, ef)[0]))

    OUT.mkdir(exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.plot(nh.q[:, 1], nh.q[:, 0], lw=2, label="nonholonomic (Cetaev)")
    ax.plot(vk.q[:, 1], vk.q[:, 0], lw=2, label="vakonomic, lambda(0) = 0")
    for N, r in added.items():
        ax.plot(r.q[:, 1], r.q[:, 0], "--", lw=1, label="added mass N = %g" % N)
    ax.set_xlabel("y (across the slope)")
    ax.set_ylabel("x (down the slope)")
    ax.invert_yaxis()
    ax.legend(fontsize=9)
    ax.set_title("Chaplygin skate on an inclined plane, w = %g" % w)
    fig.tight_layout()
    fig.savefig(OUT / "skate_inclined.png", dpi=120)
    print("figure:", OUT / "skate_inclined.png")


if __name__ == "__main__":
    main()
