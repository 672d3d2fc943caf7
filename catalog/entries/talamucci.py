"""Two material points with Talamucci's nonlinear velocity constraints (Talamucci (2025), Example 2),
Cetaev's model (``servo.LagrangianSystem.constrain``).

In the plane, q = (x1, y1, x2, y2), T = (|P1'|^2 + |P2'|^2)/2, V = k (|P1|^2 + |P2 - (1, 0)|^2)/2, and one
constraint:

| constraint | phi(q') | homogeneous of degree |
| --- | --- | --- |
| parallel | x1' y2' - y1' x2' | 2 |
| perpendicular | x1' x2' + y1' y2' | 2 |
| equal_speeds | |P1'|^2 - |P2'|^2 | 2 |
| nonhomogeneous | |P1'|^2 - |P2'|^2 - 1/2 | none |

In space, q = (q1..q6) with P1 = (q1, q2, q3), P2 = (q4, q5, q6), V = k (|P1|^2 + |P2 - e_x|^2)/2, Example 2
in its printed three-equation form (three components of a cross product = 0, of rank 2: redundant but
consistent, solved with the minimum-norm multiplier):

| constraint | phi | homogeneous of degree |
| --- | --- | --- |
| parallel_3d (i) | P1' x P2' = 0 | 2 |
| midpoint_3d (iv) | (P1 - P2) x (P1' + P2') = 0 | 1 |

Talamucci (Proposition 1 and eqs. (39)-(44)): for constraints positively homogeneous in q' the Cetaev reaction
lambda dphi/dq' does no work (Euler: (dphi/dq', q') = sigma phi = 0), so E = T + V is conserved. For the
non-homogeneous one the power is lambda (dphi/dq', q') = 2 lambda (|P1'|^2 - |P2'|^2) = lambda, and E changes.
"""

from __future__ import annotations

import numpy as np

from ..registry import Entry, register

#: Talamucci (2025), Example 2 and Proposition 1; Cetaev's rule for virtual displacements
REFERENCES = ["talamucci2025", "cetaev1932"]

KINDS = {
    "parallel": ([1.0, 0.5], [0.4, 0.2], 2),
    "perpendicular": ([1.0, 0.5], [-0.2, 0.4], 2),
    "equal_speeds": ([1.0, 0.5], [0.5, 1.0], 2),
    "nonhomogeneous": ([1.0, 0.5], [0.5, float(np.sqrt(0.5))], None),
}


#: Example 2 (i) and (iv) in space, three equations each: initial (q0, qd0) on the constraint
KINDS_3D = {
    "parallel_3d": ([0.3, 0.0, 0.1, 1.0, 0.2, 0.0], [0.2, 1.0, -0.1, -0.3, -1.5, 0.15], 2),
    "midpoint_3d": ([0.3, 1.0, 0.1, 0.0, 0.0, 0.0], [0.45, 0.9, 0.35, -0.15, 0.1, -0.25], 1),
}


def _phi3(kind, q, v):
    """The three printed equations of Example 2 (i) or (iv), for sympy or numpy components."""
    x1, y1, z1, x2, y2, z2 = v
    if kind == "parallel_3d":  # P1' x P2'
        return [y1 * z2 - z1 * y2, z1 * x2 - x1 * z2, x1 * y2 - y1 * x2]
    d = [q[0] - q[3], q[1] - q[4], q[2] - q[5]]
    b = [x1 + x2, y1 + y2, z1 + z2]  # 2 B'
    return [d[1] * b[2] - d[2] * b[1], d[2] * b[0] - d[0] * b[2], d[0] * b[1] - d[1] * b[0]]


def _phi(kind, v):
    x1, y1, x2, y2 = v
    return {"parallel": x1 * y2 - y1 * x2, "perpendicular": x1 * x2 + y1 * y2,
            "equal_speeds": x1**2 + y1**2 - x2**2 - y2**2,
            "nonhomogeneous": x1**2 + y1**2 - x2**2 - y2**2 - 0.5}[kind]


@register("talamucci_two_points", family="coordinates",
          defaults={"constraint": "parallel", "k": 1.0, "t_end": 6.0, "steps": 300},
          title="Two points with a nonlinear velocity constraint (Talamucci)")
def talamucci_two_points(constraint, k, t_end, steps):
    """Two points in the plane joined by springs to fixed centres, with one of Talamucci's nonlinear constraints."""
    from sympy.physics.mechanics import dynamicsymbols

    from servo import LagrangianSystem

    if constraint in KINDS_3D:
        return _two_points_3d(constraint, k, t_end, steps)
    if constraint not in KINDS:
        raise ValueError(f"talamucci_two_points: constraint must be one of {', '.join([*KINDS, *KINDS_3D])}, "
                         f"got {constraint!r}")
    q = dynamicsymbols("x1 y1 x2 y2")
    t = dynamicsymbols._t
    v = [qi.diff(t) for qi in q]
    T = sum(vi**2 for vi in v) / 2
    V = k * (q[0] ** 2 + q[1] ** 2 + (q[2] - 1) ** 2 + q[3] ** 2) / 2
    c = LagrangianSystem(T, V, q).constrain(_phi(constraint, v), model="nonholonomic")
    v1, v2, degree = KINDS[constraint]
    energy = lambda y: 0.5 * np.sum(y[..., 4:] ** 2, -1) + 0.5 * k * (
        y[..., 0] ** 2 + y[..., 1] ** 2 + (y[..., 2] - 1) ** 2 + y[..., 3] ** 2)
    residual = {f"phi ({constraint})": lambda y: _phi(constraint, np.moveaxis(y[..., 4:], -1, 0))}
    if degree is not None:
        ints = {"energy T + V": energy}
        checks = {"homogeneity degree (|degree - 2|)":
                  lambda run: (abs(float(c.homogeneity_degree() or 0) - degree), 0.0)}
    else:
        ints = {}
        checks = {"energy changes (1e-3 / max |E - E0|)":
                  lambda run: (1e-3 / max(float(np.max(np.abs(energy(run.y) - energy(run.y[0])))), 1e-300), 1.0),
                  "not homogeneous": lambda run: (0.0 if c.homogeneity_degree() is None else 1.0, 0.0)}
    return Entry(
        name="talamucci_two_points", system=c,
        initial_state={"q0": [0.3, 0.0, 1.0, 0.2], "qd0": v1 + v2}, t_end=t_end, parameters={}, steps=int(steps),
        model="nonholonomic", kind="coordinates",
        description=(f"Two material points in the plane, each tied by a spring to a fixed centre, with the nonlinear "
                     f"constraint '{constraint}' and Cetaev's virtual displacements (Talamucci, Example 2). "
                     + ("The constraint is homogeneous of degree 2 in the velocities, so the reaction does no work "
                        "and the energy is conserved." if degree else
                        "The constraint is not homogeneous: the reaction does work and the energy changes.")),
        references=REFERENCES,
        first_integrals=ints, labels=("x1", "y1", "x2", "y2", "x1'", "y1'", "x2'", "y2'"),
        tags=("two-point", "nonlinear", constraint), tolerances={"integral": 1e-8, "constraint": 1e-8},
        path=lambda run: run.y[:, :2], extras={"constraints": residual, "checks": checks})


def _two_points_3d(constraint, k, t_end, steps):
    """Example 2 (i) or (iv) in space, as printed: three equations of rank 2 (redundant, consistent)."""
    from sympy.physics.mechanics import dynamicsymbols

    from servo import LagrangianSystem

    q = dynamicsymbols("q1:7")
    t = dynamicsymbols._t
    v = [qi.diff(t) for qi in q]
    T = sum(vi**2 for vi in v) / 2
    V = k * (q[0] ** 2 + q[1] ** 2 + q[2] ** 2 + (q[3] - 1) ** 2 + q[4] ** 2 + q[5] ** 2) / 2
    c = LagrangianSystem(T, V, q).constrain(_phi3(constraint, q, v), model="nonholonomic")
    q0, qd0, degree = KINDS_3D[constraint]
    energy = lambda y: 0.5 * np.sum(y[..., 6:] ** 2, -1) + 0.5 * k * (
        np.sum(y[..., :3] ** 2, -1) + (y[..., 3] - 1) ** 2 + y[..., 4] ** 2 + y[..., 5] ** 2)
    residual = {f"phi ({constraint}, |three components|)":
                lambda y: np.linalg.norm(np.stack(_phi3(constraint, np.moveaxis(y[..., :6], -1, 0),
                                                        np.moveaxis(y[..., 6:], -1, 0)), -1), axis=-1)}
    checks = {"homogeneity degree (max |degree - expected|)":
              lambda run: (max(abs(float(d) - degree) for d in c.homogeneity_degree()), 0.0)}
    what = {"parallel_3d": "(i) parallel velocities, P1' x P2' = 0",
            "midpoint_3d": "(iv) the midpoint velocity parallel to the joining line, (P1 - P2) x (P1' + P2') = 0"}
    return Entry(
        name="talamucci_two_points", system=c, initial_state={"q0": q0, "qd0": qd0}, t_end=t_end, parameters={},
        steps=int(steps), model="nonholonomic", kind="coordinates",
        description=(f"Two material points in space, each tied by a spring to a fixed centre, with Talamucci's "
                     f"Example 2 {what[constraint]} written as printed: three equations of rank 2. The "
                     f"constraints are redundant but consistent: the motion is determined, the multipliers are "
                     f"not (the minimum-norm ones are reported). Homogeneous of degree {degree} in the "
                     f"velocities, so the energy is conserved."),
        references=REFERENCES, first_integrals={"energy T + V": energy},
        labels=tuple(f"q{i}" for i in range(1, 7)) + tuple(f"q{i}'" for i in range(1, 7)),
        tags=("two-point", "nonlinear", "redundant", constraint), tolerances={"integral": 1e-8, "constraint": 1e-8},
        path=lambda run: run.y[:, :2], extras={"constraints": residual, "checks": checks})
