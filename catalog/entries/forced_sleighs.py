"""Periodically excited Chaplygin sleighs: a point mass oscillating on the platform, a rotor whose
gyrostatic momentum varies periodically. Both are non-autonomous ODE problems y' = f(t, y) with a
``period`` (``extras["period"]``) for the phase-space tools (Poincare sections, Lyapunov spectra).

Derivation (written here; the setting is that of Bizyaev, Borisov and Mamaev (2017) and of Bizyaev,
Borisov, Kozlov and Mamaev (2019)). Body frame at the blade's contact point, e1 along the blade; the
platform has mass M, moment of inertia J about its centre of mass at (ell, 0); body velocities (v, 0)
(the blade forbids v2) and omega. A material point of mass m moves on the platform along the line
x = xi transverse to the blade: r(t) = (xi, eta(t)), eta = eta0 + A sin(Omega t). With S = M (ell, 0)
+ m r (first moment), mu = M + m and I_O = J + M ell^2 + m |r|^2, the kinetic energy is

    T = mu v^2 / 2 - S2 v omega + I_O omega^2 / 2 + m xi eta' omega + m eta'^2 / 2,

the momenta P = dT/d(v, v2), K = dT/domega satisfy the Euler-Poincare equations on se(2)* with the
constraint force along e2 (P1' = omega P2, K' = -v P2), which with v2 = 0 give

    mu v' - S2 omega' = S1 omega^2 + 2 m eta' omega,
    -S2 v' + I_O omega' = -S1 v omega - 2 m eta eta' omega - m xi eta''.

For m = 0 this is Chaplygin's sleigh (``chaplygin_sleigh``: M v' = M ell omega^2, (J + M ell^2)
omega' = -M ell v omega). The rotor (gyrostatic momentum k(t) = k1 sin(Omega t) about the vertical)
adds k to K: v' = ell omega^2, I_O omega' = -M ell v omega - k'(t).

Energy balance (the checked claim): the energy function h = T2 - T0 (the parts of T quadratic and of
degree zero in the velocities) obeys dh/dt = -dT/dt|explicit, and the blade's force does no work; the
state carries W' = dT/dt|explicit, so h + W is conserved:

    oscillating mass: h = mu v^2/2 - S2 v omega + I_O omega^2/2 - m eta'^2/2,
                      dT/dt|explicit = -m eta' v omega + m eta eta' omega^2 + m xi eta'' omega + m eta' eta'';
    rotor:            h = M v^2/2 + I_O omega^2/2,  dT/dt|explicit = k'(t) omega.

Acceleration of the rotor sleigh (averaging, derived here): for large v, omega relaxes at the rate
b v, b = M ell / I_O, to the forced oscillation omega = -k'/(I_O sqrt(b^2 v^2 + Omega^2)) (shifted), so
<omega^2> = k1^2 Omega^2 / (2 I_O^2 (b^2 v^2 + Omega^2)) and v' = ell <omega^2>: integrated,
b^2 v^3 / 3 + Omega^2 v = ell k1^2 Omega^2 t / (2 I_O^2) + const, i.e. v ~ t^(1/3) (the law of
Bizyaev, Borisov, Kozlov and Mamaev 2019). :func:`rotor_speed_law` is that formula.

The same systems from the public builder: ``extras["lie_system"]()`` builds
:class:`servo.TimeDependentSystem` on se(2) with the nonholonomic blade a = e2 (v2 = 0): the body
velocities (v1, v2, omega), the inertia read off T,

    oscillating mass: I(t) = [[mu, 0, -S2(t)], [0, mu, S1], [-S2(t), S1, I_O(t)]],  k(t) = m eta'(t) (0, 1, xi),
    rotor:            I = [[M, 0, 0], [0, M, M ell], [0, M ell, J + M ell^2]],    k(t) = (0, 0, k1 sin(Omega t)),

(the builder needs I positive definite: J > 0 for the rotor; ``None`` otherwise). Its velocities (v, omega)
solve the equations above (tests/catalog/test_forced_sleighs.py).

The papers' own parameter values are not reproduced here (only their abstracts were at hand); the
defaults are chosen so that the regimes they describe appear (acceleration for the rotor, a strange
attractor for the oscillating mass at the defaults); ``extras["reduced"]`` is the problem on (v, omega)
alone, for the phase-space tools, with its period and its Jacobian (``jac``, differentiated by hand from
the equations above: the variational equation of the Lyapunov spectra without finite differences).
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from integrators import ODEProblem
from servo import TimeDependentSystem
from liegroups import named

from ..registry import Entry, register

REF_MASS = ["bizyaev2017", "chaplygin1911"]
REF_ROTOR = ["bizyaev2019", "chaplygin1911"]


def _oscillating_mass(M, J, ell, m, xi, eta0, A, Omega):
    mu = M + m

    def eta(t):
        return eta0 + A * np.sin(Omega * t), A * Omega * np.cos(Omega * t), -A * Omega ** 2 * np.sin(Omega * t)

    def vel(t, y):
        v, w = y[..., 0], y[..., 1]
        e, e1, e2 = eta(t)
        S1, S2 = M * ell + m * xi, m * e
        IO = J + M * ell ** 2 + m * (xi ** 2 + e ** 2)
        r1 = S1 * w ** 2 + 2 * m * e1 * w
        r2 = -S1 * v * w - 2 * m * e * e1 * w - m * xi * e2
        det = mu * IO - S2 ** 2
        return (IO * r1 + S2 * r2) / det, (S2 * r1 + mu * r2) / det

    def jac(t, y):
        # d(v', omega')/d(v, omega): r1, r2 are the right-hand sides above, the matrix [[mu, -S2], [-S2, IO]]
        # depends on t only; dr1/dv = 0, dr1/domega = 2 S1 omega + 2 m eta', dr2/dv = -S1 omega,
        # dr2/domega = -S1 v - 2 m eta eta'
        v, w = y[..., 0], y[..., 1]
        e, e1, _ = eta(t)
        S2 = m * e
        IO = J + M * ell ** 2 + m * (xi ** 2 + e ** 2)
        S1 = M * ell + m * xi
        a12 = 2 * S1 * w + 2 * m * e1
        b11, b12 = -S1 * w, -S1 * v - 2 * m * e * e1
        det = mu * IO - S2 ** 2
        return np.stack([np.stack([S2 * b11 / det, (IO * a12 + S2 * b12) / det], -1),
                         np.stack([mu * b11 / det, (S2 * a12 + mu * b12) / det], -1)], -2)

    def power(t, y):
        v, w = y[..., 0], y[..., 1]
        e, e1, e2 = eta(t)
        return -m * e1 * v * w + m * e * e1 * w ** 2 + m * xi * e2 * w + m * e1 * e2

    def h(t, y):
        v, w = y[..., 0], y[..., 1]
        e, e1, _ = eta(t)
        IO = J + M * ell ** 2 + m * (xi ** 2 + e ** 2)
        return 0.5 * mu * v ** 2 - m * e * v * w + 0.5 * IO * w ** 2 - 0.5 * m * e1 ** 2

    return vel, power, h, jac


def _rotor(M, J, ell, k1, Omega):
    IO = J + M * ell ** 2

    def kdot(t):
        return k1 * Omega * np.cos(Omega * t)

    def vel(t, y):
        v, w = y[..., 0], y[..., 1]
        return ell * w ** 2 + 0.0 * v, (-M * ell * v * w - kdot(t)) / IO

    def power(t, y):
        return kdot(t) * y[..., 1]

    def h(t, y):
        return 0.5 * M * y[..., 0] ** 2 + 0.5 * IO * y[..., 1] ** 2

    def jac(t, y):
        v, w = y[..., 0], y[..., 1]
        return np.stack([np.stack([0.0 * v, 2 * ell * w], -1),
                         np.stack([-M * ell * w / IO, -M * ell * v / IO], -1)], -2)

    return vel, power, h, jac


def rotor_speed_law(t, M, J, ell, k1, Omega, v_ref, t_ref):
    """v(t) of the averaged rotor sleigh through (t_ref, v_ref): the real root of
    b^2 v^3 / 3 + Omega^2 v = ell k1^2 Omega^2 (t - t_ref) / (2 I_O^2) + b^2 v_ref^3 / 3 + Omega^2 v_ref."""
    IO = J + M * ell ** 2
    b = M * ell / IO
    rhs = ell * k1 ** 2 * Omega ** 2 * (np.asarray(t, float) - t_ref) / (2 * IO ** 2) \
        + b ** 2 * v_ref ** 3 / 3 + Omega ** 2 * v_ref
    out = []
    for c in np.ravel(rhs):
        roots = np.roots([b ** 2 / 3, 0.0, Omega ** 2, -c])
        out.append(float(np.max(roots[np.abs(roots.imag) < 1e-9].real)))
    return np.reshape(out, np.shape(rhs))


def _oscillating_mass_system(M, J, ell, m, xi, eta0, A, Omega):
    """The builder's system: I(t), k(t) read off the kinetic energy (module docstring)."""
    t = sp.Symbol("t")
    eta = eta0 + A * sp.sin(Omega * t)
    mu, S1, S2 = M + m, M * ell + m * xi, m * eta
    IO = J + M * ell ** 2 + m * (xi ** 2 + eta ** 2)
    return TimeDependentSystem(named.se2(), sp.Matrix([[mu, 0, -S2], [0, mu, S1], [-S2, S1, IO]]),
                               gyrostat=m * eta.diff(t) * sp.Matrix([0, 1, xi]), a=[0, 1, 0],
                               period=2 * np.pi / Omega, time=t, name="sleigh_oscillating_mass on se(2)")


def _rotor_system(M, J, ell, k1, Omega):
    """The builder's system (None for J = 0: the full inertia at the blade is then singular)."""
    if J <= 0:
        return None
    t = sp.Symbol("t")
    return TimeDependentSystem(named.se2(), [[M, 0, 0], [0, M, M * ell], [0, M * ell, J + M * ell ** 2]],
                               gyrostat=[0, 0, k1 * sp.sin(Omega * t)], a=[0, 1, 0], period=2 * np.pi / Omega,
                               time=t, name="sleigh_rotor on se(2)")


def _entry(name, vel, power, h, jac, period, v0, w0, t_end, steps, description, refs, tags, params, lie_system):
    def f(t, y):
        dv, dw = vel(t, y)
        return np.stack([dv, dw, power(t, y), np.ones_like(dv)], -1)

    def f2(t, y):
        return np.stack(vel(t, y), -1)

    # the state (v, omega, W, tau) carries the time tau = t, so that the energy balance h(tau, y) + W is a
    # function of the state (checked by catalog.checks like any first integral)
    balance = lambda y: h(y[..., 3], y) + y[..., 2]
    return Entry(
        name=name, system=ODEProblem(f, 4, name=name), initial_state=np.array([v0, w0, 0.0, 0.0]), t_end=t_end,
        parameters={}, steps=int(steps), method="rk4", model="forced", kind="lie-group", description=description,
        references=refs, labels=("v", "omega", "W", "t"), tags=("se2", "sleigh", "forced") + tags,
        first_integrals={"h + W (energy balance)": balance}, tolerances={"integral": 1e-8, "exact": 1e-6},
        extras={"period": period, "reduced": ODEProblem(f2, 2, name=f"{name} (v, omega)", jac=jac, period=period),
                "energy_function": h, "power": power, "parameters": params,
                # built on demand (sympy lambdify: a sweep builds thousands of entries)
                "lie_system": lie_system},
    )


@register("sleigh_oscillating_mass", family="forced sleigh",
          defaults={"M": 1.0, "J": 1.0, "ell": 0.5, "m": 0.5, "xi": 0.5, "eta0": 0.3, "A": 2.0, "Omega": 1.0,
                    "v0": 0.5, "w0": 0.0, "t_end": 60.0, "steps": 6000},
          title="Chaplygin sleigh with an oscillating mass (parametric excitation)")
def sleigh_oscillating_mass(M, J, ell, m, xi, eta0, A, Omega, v0, w0, t_end, steps):
    """Chaplygin sleigh with a point mass oscillating transverse to the blade (Bizyaev, Borisov and Mamaev 2017)."""
    vel, power, h, jac = _oscillating_mass(M, J, ell, m, xi, eta0, A, Omega)
    return _entry("sleigh_oscillating_mass", vel, power, h, jac, 2 * np.pi / Omega, v0, w0, t_end, steps,
                  "The Chaplygin sleigh carrying a point of mass m that oscillates along the line x = xi transverse "
                  "to the blade, eta = eta0 + A sin(Omega t) (parametric excitation): a system of two first-order "
                  "equations for (v, omega) with periodic coefficients, with regimes from bounded motion to "
                  "strange attractors and unbounded acceleration (Bizyaev, Borisov and Mamaev 2017). The third "
                  "state W is the work of the excitation (h + W is conserved), the fourth the time.",
                  REF_MASS, ("oscillating-mass",),
                  dict(M=M, J=J, ell=ell, m=m, xi=xi, eta0=eta0, A=A, Omega=Omega),
                  lambda: _oscillating_mass_system(M, J, ell, m, xi, eta0, A, Omega))


@register("sleigh_rotor", family="forced sleigh",
          defaults={"M": 1.0, "J": 0.0, "ell": 1.0, "k1": 0.5, "Omega": 0.05, "v0": 0.3, "w0": 0.0,
                    "t_end": 2000.0, "steps": 20000},
          title="Chaplygin sleigh with a rotor of periodic gyrostatic momentum")
def sleigh_rotor(M, J, ell, k1, Omega, v0, w0, t_end, steps):
    """Chaplygin sleigh with a rotor, gyrostatic momentum k1 sin(Omega t) (Bizyaev, Borisov, Kozlov and Mamaev 2019)."""
    vel, power, h, jac = _rotor(M, J, ell, k1, Omega)
    return _entry("sleigh_rotor", vel, power, h, jac, 2 * np.pi / Omega, v0, w0, t_end, steps,
                  "The Chaplygin sleigh with a balanced rotor whose gyrostatic momentum varies as k1 sin(Omega t): "
                  "v' = ell omega^2, (J + M ell^2) omega' = -M ell v omega - k'(t). The sleigh speeds up without "
                  "bound, v ~ t^(1/3) (Bizyaev, Borisov, Kozlov and Mamaev 2019; the averaged law is "
                  "rotor_speed_law). The third state W is the work of the rotor (h + W is conserved), the fourth the time.",
                  REF_ROTOR, ("rotor", "acceleration"), dict(M=M, J=J, ell=ell, k1=k1, Omega=Omega),
                  lambda: _rotor_system(M, J, ell, k1, Omega))
