"""Kozlov's one-sided Chaplygin sleigh
===================================

Kozlov's one-sided Chaplygin sleigh (Theor. Appl. Mech. 46 (2019), section 3): v >= 0.

Start with v = 0, u = u0 > 0, w0 < 0: the sleigh leaves the constraint at once, slides on a straight
line with constant speed while the blade turns, joins the constraint after half a turn
(t = pi/|w0|) and then stays on a circle of radius u0/|w0| forever. Reversing the velocity at a point
of the circle does not retrace the path: the reversed sleigh stays on the circle (not reversible).

Run:  .venv/bin/python examples/one_sided_sleigh.py   (figure in examples/output/one_sided_sleigh.png)
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

from servo import LagrangianSystem  # noqa: E402

OUT = Path(__file__).resolve().parent / "output"


def main(u0=1.0, w0=-0.7, t_end=14.0):
    x, y, phi = dynamicsymbols("x y phi")
    L = LagrangianSystem((x.diff() ** 2 + y.diff() ** 2 + phi.diff() ** 2) / 2, 0, [x, y, phi])
    v = -x.diff() * sp.sin(phi) + y.diff() * sp.cos(phi)          # transverse velocity of the blade
    sleigh = L.constrain(v >= 0, model="one_sided")
    fwd = sleigh.simulate([0, 0, 0], [u0, 0, w0], t_end, steps=700)
    back = sleigh.simulate(fwd.q[-1], -fwd.qd[-1], t_end, steps=700)

    print("one-sided Chaplygin sleigh, v >= 0, u0 = %g, w0 = %g" % (u0, w0))
    print("forward events :", [(round(float(t), 12), k, i) for t, k, i in fwd.events])
    print("  join expected at pi/|w0| = %.12f" % (np.pi / abs(w0)))
    centre = np.array([u0 * np.pi / abs(w0), u0 / w0])
    r = np.linalg.norm(fwd.q[fwd.t > np.pi / abs(w0) + 1e-9, :2] - centre, axis=1)
    print("  radius on the circle: %.12f .. %.12f (expected u0/|w0| = %.12f)" % (r.min(), r.max(), u0 / abs(w0)))
    print("reversed events:", back.events, "(stays on the circle; distance to the start at the end: %.3f)"
          % np.linalg.norm(back.q[-1, :2]))

    OUT.mkdir(exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.plot(fwd.q[:, 0], fwd.q[:, 1], lw=2, label="forward: leave, line, join, circle")
    ax.plot(back.q[:, 0], back.q[:, 1], "--", lw=1.5, label="velocity reversed: stays on the circle")
    tj = np.pi / abs(w0)
    ax.plot([u0 * tj], [0], "ko", label="join, t = pi/|w0|")
    ax.plot([0], [0], "k^", label="start")
    ax.set_aspect("equal")
    ax.legend(loc="lower left", fontsize=9)
    ax.set_title("One-sided Chaplygin sleigh (Kozlov 2019, Fig. 3)")
    fig.savefig(OUT / "one_sided_sleigh.png", dpi=120)
    print("figure:", OUT / "one_sided_sleigh.png")
    return fwd, back


if __name__ == "__main__":
    main()
