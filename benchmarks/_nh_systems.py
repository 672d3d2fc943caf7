"""The systems of benchmarks/nonholonomic.py: the Chaplygin sleigh and the rolling disk with their exact
solutions, the vakonomic skate against its reduced equations, Suslov's problem, the contact oscillator's
perturbation EPS, and the figures' directory and markers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import liegroups  # noqa: E402
from liegroups import named  # noqa: E402
from integrators.reference.nonholonomic import lagrange_dalembert_problem, suslov_problem  # noqa: E402


FIG = Path(__file__).with_name("figures")


MARKERS = {"dlas_exp": "o", "dlas_cay": "s", "lie_rattle_exp": "D", "lie_rattle_cay": "d", "mp_lda": "^",
           "nh_rattle": "v", "dvak_mid": "*", "rk4": "x", "scipy:DOP853": "+", "scipy:DOP853 (continuous)": "+"}


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


def vakonomic_skate():
    """Kozlov's vakonomic skate on the inclined plane (servo.coordinates, L = |q'|^2/2 + x, phi = x' sin phi -
    y' cos phi, lambda(0) = 0) and its reference: the reduced equations phi'' = t^2 sin phi cos phi, x' = t cos^2
    phi, y' = t sin phi cos phi solved by scipy at rtol 1e-13 (tests/servo/coordinates/test_lagrangian_models.py)."""
    import sympy as sp
    from scipy.integrate import solve_ivp
    from sympy.physics.mechanics import dynamicsymbols
    from servo import LagrangianSystem
    x, y, ph = dynamicsymbols("x y phi")
    sk = LagrangianSystem((x.diff() ** 2 + y.diff() ** 2 + ph.diff() ** 2) / 2, -x, [x, y, ph])
    vak = sk.constrain(x.diff() * sp.sin(ph) - y.diff() * sp.cos(ph), model="vakonomic")
    ref = solve_ivp(lambda t, s: [t * np.cos(s[2]) ** 2, t * np.sin(s[2]) * np.cos(s[2]), s[3],
                                  t ** 2 * np.sin(s[2]) * np.cos(s[2])], (0, 2.0), [0, 0, 0, 0.8], rtol=1e-13,
                    atol=1e-13, method="DOP853", dense_output=True)
    return vak, lambda t: ref.sol(t)[:3].T


EPS = 0.3          # McLachlan and Perlmutter's perturbation, as in Verdier's reproduction (odelab)


def suslov_system():
    return suslov_problem(named.so3(), np.diag([1.0, 2.0, 3.0]) + 0.3 * (np.ones((3, 3)) - np.eye(3)), [0, 0, 1.0],
                          group=liegroups.SO3)


def sleigh_system():
    return suslov_problem(named.se2(), SLEIGH_I, [0, 1, 0], group=liegroups.SE2)


def vakonomic_so3():
    """(problem, z0) of servo.lie.Vakonomic(so(3), I = diag(1, 2, 3), a = (1, 1, 0)) from w = (1, -1, 0.5),
    lambda = 0.3 (the problem's state z = m + lambda a)."""
    from servo.lie import Vakonomic
    v = Vakonomic(named.so3(), [1.0, 2.0, 3.0], a=[1, 1, 0])
    return v.problem(), v.to_problem(v.state_from(w=[1.0, -1.0, 0.5], lam=0.3))
