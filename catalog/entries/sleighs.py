"""Sleighs on E(2) = SE(2), velocities (u, v, w) in the body frame at the blade (se(2) basis of
``liegroups.named.se2``): the constraint v = 0 is the covector a = (0, 1, 0).

* ``chaplygin_sleigh``: nonholonomic, centre of mass at distance ell along the blade. With
  T = M (u^2 + (v + ell w)^2)/2 + J w^2/2, the equations are u' = ell w^2, (J + M ell^2) w' = -M ell u w, so
  u(t) = U tanh(k t + c), w(t) = w0 cosh(c)/cosh(k t + c), U = sqrt(2E/M), k = M ell U/(J + M ell^2),
  c = artanh(u0/U): the classic asymptotic straight-line motion (derived here from the energy integral;
  Kozlov 2019, section 3).
* ``chaplygin_sleigh_on_blade``: ell = 0: u and w constant, a circle of radius u/w.
* ``servo_sleigh``: T = M(u^2 + v^2)/2 + I w^2/2, v = 0 kept by the control force lambda (a_u, b_v, c_w) (first kind):
  u' = alpha u w, w' = beta u w, alpha = a_u/b_v, beta = M c_w/(I b_v); gamma = beta u - alpha w is conserved and
  u(t) = gamma/(beta + C e^{gamma t}) (Kozlov's lectures, "Сервосани Чаплыгина").
The path in the plane comes from the group reconstruction g' = g w on SE(2) (``servo.reconstruct_motion``),
or, for runs without velocities, from x' = u cos(theta), y' = u sin(theta), theta' = w by trapezoidal quadrature.
"""

from __future__ import annotations

import numpy as np
import scipy  # scipy.integrate loads on first use (scipy's own lazy submodules)
from servo import planar_path, reconstruct_motion

from .build import lie_system
from ..verify.claims import constraint_residuals, model_integrals
from ..verify.exact import servo_sleigh_u
from ..registry import Entry, register

#: Chaplygin (1911), the sleigh; Kozlov (2019), section 3; the lectures: "Chaplygin skate (sleigh)"
REF_SLEIGH = ["chaplygin1911", "kozlov2019", "kozlov_servo_lectures"]


def plane_path(u_of, w_of):
    """path(run) -> (K, 2): SE(2) reconstruction along the run, else quadrature of u(y), w(y)."""

    def path(run):
        if "w" in run.outputs and hasattr(run.system, "algebra"):  # group reconstruction g' = g w on SE(2)
            x, y, _ = planar_path(reconstruct_motion(run).y)
            return np.stack([x, y], -1)
        u, w = u_of(run.y), w_of(run.y)
        th = scipy.integrate.cumulative_trapezoid(w, run.t, initial=0.0)
        x = scipy.integrate.cumulative_trapezoid(u * np.cos(th), run.t, initial=0.0)
        y = scipy.integrate.cumulative_trapezoid(u * np.sin(th), run.t, initial=0.0)
        return np.stack([x, y], -1)

    return path


def _sleigh_inertia(M, J, ell):
    return np.array([[M, 0.0, 0.0], [0.0, M, M * ell], [0.0, M * ell, J + M * ell**2]])


def _sleigh(name, M, J, ell, u0, w0, t_end, steps, description, tags):
    from liegroups import named

    g = named.se2()
    I = _sleigh_inertia(M, J, ell)
    a = np.array([0.0, 1.0, 0.0])
    x0 = np.array([u0, 0.0, w0])
    Jc = J + M * ell**2
    E = 0.5 * (M * u0**2 + Jc * w0**2)
    U = np.sqrt(2 * E / M)
    k = M * ell * U / Jc
    c = np.arctanh(u0 / U) if abs(u0) < U else None

    def exact(t):
        t = np.asarray(t, float)
        if ell == 0:
            u, w = np.full_like(t, u0), np.full_like(t, w0)
        else:
            u = U * np.tanh(k * t + c)
            w = w0 * np.cosh(c) / np.cosh(k * t + c)
        return np.stack([M * u, M * ell * w, Jc * w], -1)

    Iinv = np.linalg.inv(I)
    vel = lambda y: y @ Iinv.T
    return Entry(
        name=name, system=lie_system("nonholonomic", g, I, a), initial_state=I @ x0, t_end=t_end,
        parameters={}, steps=int(steps), method=None, model="nonholonomic", kind="lie-group",
        description=description, references=REF_SLEIGH,
        first_integrals=model_integrals(g, I, "nonholonomic", a),
        exact_solution=exact if (ell == 0 or c is not None) else None,
        labels=("p_u", "p_v", "p_w"), tags=("se2", "sleigh") + tags,
        tolerances={"integral": 1e-8, "exact": 1e-6, "constraint": 1e-9},
        path=plane_path(lambda y: vel(y)[:, 0], lambda y: vel(y)[:, 2]),
        extras={"algebra": g, "inertia": I, "a": a, "b": a, "constraints": constraint_residuals(I, a, 3)},
    )


SLEIGH = {"M": 1.0, "J": 0.5, "u0": 0.2, "w0": 1.0, "t_end": 15.0, "steps": 1500}


@register("chaplygin_sleigh", family="sleigh",
          defaults={**SLEIGH, "ell": 0.5}, title="Chaplygin sleigh (centre of mass off the blade)")
def chaplygin_sleigh(M, J, ell, u0, w0, t_end, steps):
    """Nonholonomic Chaplygin sleigh on SE(2), centre of mass at distance ell ahead of the blade."""
    return _sleigh("chaplygin_sleigh", M, J, ell, u0, w0, t_end, steps,
                   "The Chaplygin sleigh: a rigid body on the plane supported by a blade that cannot slide "
                   "sideways (v = 0), centre of mass at distance ell along the blade. The rotation dies out and "
                   "the sleigh tends to a straight line with speed sqrt(2E/M): u = U tanh(kt + c).",
                   ("nonholonomic",))


@register("chaplygin_sleigh_on_blade", family="sleigh",
          defaults=dict(SLEIGH), title="Chaplygin sleigh (centre of mass on the blade)")
def chaplygin_sleigh_on_blade(M, J, u0, w0, t_end, steps):
    """Nonholonomic sleigh with its centre of mass on the blade (ell = 0): uniform motion on a circle."""
    return _sleigh("chaplygin_sleigh_on_blade", M, J, 0.0, u0, w0, t_end, steps,
                   "The Chaplygin sleigh with its centre of mass on the blade (ell = 0): u and w stay constant "
                   "and the sleigh runs on a circle of radius u/w (Kozlov 2019, section 3).",
                   ("nonholonomic", "on-blade"))


@register("servo_sleigh", family="sleigh",
          defaults={"M": 1.0, "I": 1.0, "a_u": 0.5, "b_v": 1.0, "c_w": -0.5, "u0": 1.0, "w0": 0.5,
                    "t_end": 10.0, "steps": 1000},
          title="Chaplygin servo-sleigh on E(2) (first kind)")
def servo_sleigh(M, I, a_u, b_v, c_w, u0, w0, t_end, steps):
    """Chaplygin servo-sleigh: v = 0 kept by the control force lambda (a_u, b_v, c_w) (first kind)."""
    from liegroups import named

    g = named.se2()
    In = np.diag([M, M, I])
    a = np.array([0.0, 1.0, 0.0])
    b = np.array([a_u, b_v, c_w])
    system = lie_system("servo1", g, In, a, b)  # UnrealizableConstraintError for b_v = 0: (I^-1 a, b) = b_v/M
    alpha, beta = a_u / b_v, M * c_w / (I * b_v)
    uw = servo_sleigh_u(alpha, beta, u0, w0)
    exact = lambda t: (lambda s: np.stack([M * s[..., 0], 0 * s[..., 0], I * s[..., 1]], -1))(uw(t))
    gamma = lambda y: beta * y[..., 0] / M - alpha * y[..., 2] / I
    ints = dict(model_integrals(g, In, "servo1", a, b))
    ints["gamma = beta u - alpha w"] = gamma
    return Entry(
        name="servo_sleigh", system=system, initial_state=In @ np.array([u0, 0.0, w0]),
        t_end=t_end, parameters={}, steps=int(steps), method=None, model="servo1", kind="lie-group",
        description=("The Chaplygin servo-sleigh: a body on the plane whose transverse velocity v is kept zero "
                     "by a control force lambda (a_u, b_v, c_w) instead of a blade. The reduced system "
                     "u' = alpha u w, w' = beta u w has the integral gamma = beta u - alpha w and the solution "
                     "u = gamma/(beta + C e^(gamma t))."),
        references=["kozlov_servo_lectures"],  # 'Сервосани Чаплыгина' (Chaplygin servo-sleigh)
        first_integrals=ints, exact_solution=exact, labels=("p_u", "p_v", "p_w"),
        tags=("se2", "sleigh", "servo1"), tolerances={"integral": 1e-8, "exact": 1e-7, "constraint": 1e-9},
        path=plane_path(lambda y: y[:, 0] / M, lambda y: y[:, 2] / I),
        extras={"algebra": g, "inertia": In, "a": a, "b": b, "alpha": alpha, "beta": beta,
                "constraints": constraint_residuals(In, a, 3)},
    )
