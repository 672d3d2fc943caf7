"""Rigid bodies with a left-invariant constraint (w, l) = 0 on so(3) (Kozlov's lectures on servo-constraints):

* ``suslov``: nonholonomic, the reaction along l (Suslov's problem);
* ``beghin_body``: servo-constraint of the first kind, control torque along n (Beghin's example);
  realizable iff (I^-1 l, n) != 0, i.e. l and n not orthogonal in the kinetic-energy metric;
* ``flywheel_body``: servo-constraint of the second kind, T + lambda (n, w) (a rotor whose gyrostatic
  momentum is the control); with l = e3, n = (0, b2, b3) these are the slide's equations
  I11 w1' + I12 w2' + w2 (I13 w1 + I23 w2 + b3 lambda) = 0, ...;
* ``vakonomic_body``: the second kind with n = l.

Claims (:mod:`catalog.verify.claims`, derived independently of ``servo``): energy for the nonholonomic and
vakonomic bodies, |m + lambda b|^2 for the second kind, and (l, w) = 0 along every motion.
"""

from __future__ import annotations

import numpy as np

from .build import lie_system
from ..verify.claims import constraint_residuals, model_integrals
from ..registry import Entry, register

#: the lectures: 'Servo constraints (by H. Beghin)', rigid body with axes l and n; Kozlov (2019), sections 6-7:
#: servo-constraints of type I and II; Suslov's problem
REF = ["kozlov_servo_lectures", "kozlov2019", "beghin1922", "suslov1946"]

#: default inertia: a general symmetric positive definite tensor (not principal axes), so that the
#: constrained motions are not trivial uniform rotations
INERTIA = {"I11": 3.0, "I22": 2.0, "I33": 1.0, "I12": 0.2, "I13": 0.4, "I23": 0.3}
W0 = {"w1": 1.0, "w2": 0.5}


def _inertia(p):
    return np.array([[p["I11"], p["I12"], p["I13"]], [p["I12"], p["I22"], p["I23"]],
                     [p["I13"], p["I23"], p["I33"]]])


def _w0(l, w1, w2):
    """An initial velocity on the plane (l, w) = 0: w1 e1' + w2 e2' for an orthonormal basis (e1', e2') of l^perp."""
    l = np.asarray(l, float) / np.linalg.norm(l)
    e1 = np.cross(l, [0.0, 0.0, 1.0]) if abs(l[2]) < 0.9 else np.cross(l, [1.0, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(l, e1)
    if np.allclose(l, [0, 0, 1]):
        e1, e2 = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    return w1 * e1 + w2 * e2


def _entry(name, model, p, l, n, description, t_end, steps, tags):
    from liegroups import named

    g = named.so3()
    I = _inertia(p)
    l = np.asarray(l, float)
    n = np.asarray(n, float)
    system = lie_system(model, g, I, l, n)
    m0 = I @ _w0(l, p["w1"], p["w2"])
    second = model in ("servo2", "vakonomic")
    y0 = np.concatenate([m0, [p.get("lam0", 0.0)]]) if second else m0
    return Entry(
        name=name, system=system, initial_state=y0, t_end=t_end, parameters={}, steps=int(steps),
        method=None, model=model, kind="lie-group", description=description, references=REF,
        first_integrals=model_integrals(g, I, model, l, n),
        labels=("m1", "m2", "m3") + (("lambda",) if second else ()), tags=("so3",) + tags,
        tolerances={"integral": 1e-8, "constraint": 1e-9},
        extras={"algebra": g, "inertia": I, "a": l, "b": n, "constraints": constraint_residuals(I, l, 3)},
    )


@register("suslov", family="rigid",
          defaults={**INERTIA, **W0, "l": (0.0, 0.0, 1.0), "t_end": 10.0, "steps": 1000},
          title="Suslov problem (nonholonomic rigid body)")
def suslov(l, t_end, steps, **p):
    """Rigid body with the nonholonomic constraint (w, l) = 0 (Suslov's problem)."""
    return _entry("suslov", "nonholonomic", p, l, l,
                  "Suslov's problem: a rigid body whose angular velocity stays orthogonal to an axis a fixed in "
                  "the body (parameter l), the constraint (a, w) = 0 being ideal (reaction torque along a). The "
                  "energy is conserved.",
                  t_end, steps, ("nonholonomic",))


@register("beghin_body", family="rigid",
          defaults={**INERTIA, **W0, "l": (0.0, 0.0, 1.0), "n": (0.0, 0.6, 0.8), "t_end": 10.0, "steps": 1000},
          title="Rigid body with a control torque (Beghin, first kind)")
def beghin_body(l, n, t_end, steps, **p):
    """Rigid body with a servo-constraint of the first kind: control torque lambda n keeps (w, l) = 0."""
    return _entry("beghin_body", "servo1", p, l, n,
                  "Beghin's example: a rigid body whose angular velocity is kept orthogonal to the axis a "
                  "(parameter l), (a, w) = 0, by a control torque lambda b along the axis b (parameter n). "
                  "Realizable iff (I^-1 a, b) != 0; for b = a it is Suslov's problem. The control does work, so "
                  "the energy is not conserved.",
                  t_end, steps, ("servo1",))


@register("flywheel_body", family="rigid",
          defaults={**INERTIA, **W0, "lam0": 0.2, "b2": 0.5, "b3": 1.0, "t_end": 10.0, "steps": 1000},
          title="Rigid body with a flywheel (second kind)")
def flywheel_body(b2, b3, t_end, steps, **p):
    """Rigid body with a servo-constraint of the second kind: T + lambda (b, w), b = (0, b2, b3), w3 = 0."""
    return _entry("flywheel_body", "servo2", p, (0.0, 0.0, 1.0), (0.0, b2, b3),
                  "A rigid body carrying a controlled flywheel: the kinetic energy is T + lambda (b, w) with "
                  "b = (0, b2, b3), and the control keeps w3 = 0 (servo-constraint of the second kind). "
                  "|m + lambda b|^2 is conserved; for b2 = 0 the system is isomorphic to an Euler top.",
                  t_end, steps, ("servo2",))


@register("vakonomic_body", family="rigid",
          defaults={**INERTIA, **W0, "lam0": 0.2, "t_end": 10.0, "steps": 1000},
          title="Vakonomic rigid body")
def vakonomic_body(t_end, steps, **p):
    """Vakonomic rigid body: the second kind with b = a = e3."""
    return _entry("vakonomic_body", "vakonomic", p, (0.0, 0.0, 1.0), (0.0, 0.0, 1.0),
                  "The vakonomic rigid body with the constraint w3 = 0: the servo-constraint of the second kind "
                  "with b = a. The energy and |m + lambda a|^2 are conserved.",
                  t_end, steps, ("vakonomic",))
