"""A transcendental Casimir kept on Bianchi VI
=============================================

The Lie-Poisson equations m' = ad*_w m, w = I^-1 m, on the Bianchi VI_a algebra ([e1, e3] = e1,
[e2, e3] = a e2, here a = -2.5) in a random basis, as a researcher might meet them.

In the built basis m1' = -w3 m1 and m2' = -a w3 m2, so C = a log|m1| - log|m2| is constant: a Casimir,
and no polynomial one exists: a projection method has nothing to project onto. The coadjoint orbits are
{(m1 e^(-s), m2 e^(-a s), m3 + c)} (in the built basis), and liedyn's Lie-group methods move along them with
the abelian group of the (s, c) acting (``integrators.geometry.orbit_space``), so they keep C to round-off at
the cost of an ambient Runge-Kutta pair. The script integrates the same motion with rkmk853 (the default here) and with
rk853 at the same tolerance, prints the drift of C and of the energy, and saves
examples/output/bianchi_orbit.png.

Run: .venv/bin/python examples/bianchi_orbit.py
"""

import sys
from pathlib import Path

import matplotlib

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from liegroups import named  # noqa: E402
from servo import EulerPoincare  # noqa: E402

OUT = Path(__file__).resolve().parent / "output"
A = -2.5


def main():
    rng = np.random.default_rng(3)
    P = np.linalg.qr(rng.standard_normal((3, 3)))[0] * rng.uniform(0.5, 2.0, 3)   # f_a = sum_i P[a, i] e_i
    alg = named.bianchi("VI", a=A).change_basis(P)
    body = EulerPoincare(alg, np.diag([1.0, 1.6, 0.7]) + 0.1)
    m0 = P @ np.array([0.6, -0.4, 0.5])          # momenta in the new basis: m' = P m

    def casimir(m):
        mb = m @ np.linalg.inv(P).T                # back to the built basis
        return A * np.log(np.abs(mb[..., 0])) - np.log(np.abs(mb[..., 1]))

    T = 40.0
    runs = {name: body.simulate(m0, T, steps=2000, method=name, rtol=1e-8, atol=1e-10)
            for name in ("rkmk853", "rk853")}
    print(f"default method on this algebra: {body.simulate(m0, 1.0, steps=10).method}")
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for name, r in runs.items():
        c = casimir(r.y)
        e = body.energy(r.y)
        print(f"{name:8s} {r.nsteps:4d} steps: max |C - C(0)| = {np.max(np.abs(c - c[0])):.1e}, "
              f"max |H - H(0)| / H(0) = {np.max(np.abs(e - e[0])) / abs(e[0]):.1e}")
        ax.semilogy(r.t[1:], np.abs(c[1:] - c[0]) + 1e-17, label=name)
    ax.set_xlabel("t")
    ax.set_ylabel("|C(t) - C(0)|")
    ax.set_title("Bianchi VI$_{-2.5}$: the Casimir a log|m1| - log|m2|")
    ax.legend()
    fig.tight_layout()
    OUT.mkdir(exist_ok=True)
    fig.savefig(OUT / "bianchi_orbit.png", dpi=110)
    print(f"saved {OUT / 'bianchi_orbit.png'}")


if __name__ == "__main__":
    main()
