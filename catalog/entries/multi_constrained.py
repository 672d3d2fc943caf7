"""Rigid bodies with two left-invariant constraints (w, l_1) = (w, l_2) = 0 on so(3) and two controls.

The two constraints leave one direction: w(t) = s(t) nu with nu = l_1 x l_2 / |l_1 x l_2|. Both exact
solutions below are derived here from the equations, independently of ``servo`` (convention of the
library: on so(3), ad*_w m = m x w):

* ``two_axis_beghin_body`` (first kind, I w' = (I w) x w + lambda_1 n_1 + lambda_2 n_2). Dotting with
  c = n_1 x n_2, which is orthogonal to both control torques, gives (c, I nu) s' = s^2 (c, (I nu) x nu),
  so s' = kappa s^2 with kappa = (c, (I nu) x nu) / (c, I nu), and

      s(t) = s0 / (1 - kappa s0 t),   m(t) = I nu s(t).

  Realizable iff det R != 0, R_ij = (I^-1 l_i, n_j); by Binet-Cauchy det R = det(I^-1) (I nu', c) with
  nu' = l_1 x l_2, i.e. iff (c, I nu) != 0, the same number that divides kappa.
* ``two_axis_vakonomic_body`` (second kind with n_i = l_i: z = m + lambda_1 l_1 + lambda_2 l_2,
  z' = z x w). With u = lambda_1 l_1 + lambda_2 l_2 (orthogonal to nu), dotting with nu gives
  (nu, I nu) s' = 0: s is constant. The rest is linear: u' = s u x nu + s^2 (I nu) x nu, solved by

      u(t) = u* + Rot(nu, -s t)(u0 - u*),   u* = -s (I nu - (nu, I nu) nu),

  and lambda(t) = (L L^T)^-1 L u(t) with L the 2 x 3 matrix of rows l_1, l_2. The energy and the Casimir
  |m + lambda_1 l_1 + lambda_2 l_2|^2 are conserved.

References: Kozlov's lectures on servo-constraints (systems on Lie groups), Kozlov (2019) sections 6-7.
"""

from __future__ import annotations

import numpy as np

from ..errors import CatalogError
from ..registry import Entry, register
from ..verify.claims import constraint_residuals, model_integrals
from .build import lie_system

REF = ["kozlov_servo_lectures", "kozlov2019"]

INERTIA = {"I11": 3.0, "I22": 2.0, "I33": 1.0, "I12": 0.2, "I13": 0.4, "I23": 0.3}
AXES = {"l1": (1.0, 0.0, 0.0), "l2": (0.0, 1.0, 0.5)}


def _inertia(p):
    return np.array([[p["I11"], p["I12"], p["I13"]], [p["I12"], p["I22"], p["I23"]],
                     [p["I13"], p["I23"], p["I33"]]])


def _nu(l1, l2):
    v = np.cross(l1, l2)
    if np.linalg.norm(v) < 1e-12 * np.linalg.norm(l1) * np.linalg.norm(l2):
        raise CatalogError(f"the constraint axes l1 = {list(l1)} and l2 = {list(l2)} are parallel: two "
                           f"constraints need independent axes")
    return v / np.linalg.norm(v)


def beghin_kappa(I, l1, l2, n1, n2):
    """kappa in s' = kappa s^2 for the first kind (see the module docstring)."""
    nu = _nu(l1, l2)
    c = np.cross(n1, n2)
    return float(c @ np.cross(I @ nu, nu) / (c @ (I @ nu)))


def _so3():
    from liegroups import named

    return named.so3()


@register("two_axis_beghin_body", family="rigid",
          defaults={**INERTIA, **AXES, "n1": (0.8, 0.0, 0.3), "n2": (0.1, 1.2, 0.0), "s0": 2.0,
                    "t_end": 10.0, "steps": 1000},
          title="Rigid body with two control torques (first kind, two constraints)")
def two_axis_beghin_body(l1, l2, n1, n2, s0, t_end, steps, **p):
    """Two servo-constraints of the first kind: torques lambda_1 b_1 + lambda_2 b_2 (b_i = n_i) keep
    (a_1, w) = (a_2, w) = 0 (a_i = l_i)."""
    g = _so3()
    I = _inertia(p)
    A, B = np.array([l1, l2], float), np.array([n1, n2], float)
    nu = _nu(A[0], A[1])
    system = lie_system("servo1", g, I, A, B)
    kappa = beghin_kappa(I, A[0], A[1], B[0], B[1])
    if 1.0 - kappa * s0 * t_end <= 0.05:
        raise CatalogError(f"with s0 = {s0} the motion blows up at t = 1/(kappa s0) = {1 / (kappa * s0):.4g} "
                           f"<= t_end = {t_end} (kappa = {kappa:.4g}); take s0 of the sign of -kappa")

    def exact(t):
        s = s0 / (1.0 - kappa * s0 * np.asarray(t, float))
        return s[:, None] * (I @ nu)

    return Entry(
        name="two_axis_beghin_body", system=system, initial_state=s0 * (I @ nu), t_end=t_end, parameters={},
        steps=int(steps), method=None, model="servo1", kind="lie-group",
        description="A rigid body whose angular velocity is kept on the axis nu = a1 x a2, (a1, w) = (a2, w) = 0 "
                    "(parameters l1, l2), by two control torques lambda1 b1 + lambda2 b2 along b1 and b2 "
                    "(parameters n1, n2): two servo-constraints of the first kind. The speed obeys "
                    f"s' = kappa s^2 (kappa = {kappa:.6g} here), s(t) = s0 / (1 - kappa s0 t).",
        references=REF, first_integrals={}, exact_solution=exact, labels=("m1", "m2", "m3"),
        tags=("so3", "servo1", "several constraints"), tolerances={"exact": 1e-8, "constraint": 1e-9},
        extras={"algebra": g, "inertia": I, "a": A, "b": B, "constraints": constraint_residuals(I, A, 3)},
    )


def _rotate(v, axis, angle):
    """Rodrigues: the rotation of v about the unit axis by ``angle`` (angles (K,) -> (K, 3))."""
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    return v * c + np.cross(axis, v) * s + np.outer(1.0 - np.cos(angle), axis) * (axis @ v)


@register("two_axis_vakonomic_body", family="rigid",
          defaults={**INERTIA, **AXES, "s": 0.6, "lam1": 0.3, "lam2": -0.4, "t_end": 10.0, "steps": 1000},
          title="Vakonomic rigid body with two constraints")
def two_axis_vakonomic_body(l1, l2, s, lam1, lam2, t_end, steps, **p):
    """The vakonomic model of (a_1, w) = (a_2, w) = 0 (a_i = l_i): uniform rotation about nu, lambda rotating."""
    g = _so3()
    I = _inertia(p)
    A = np.array([l1, l2], float)
    nu = _nu(A[0], A[1])
    system = lie_system("vakonomic", g, I, A, A)
    lam0 = np.array([lam1, lam2], float)
    ustar = -s * (I @ nu - (nu @ I @ nu) * nu)
    u0 = lam0 @ A

    def exact(t):
        t = np.asarray(t, float)
        u = ustar + _rotate(u0 - ustar, nu, -s * t)
        lam = np.linalg.solve(A @ A.T, A @ u.T).T
        return np.concatenate([np.broadcast_to(s * (I @ nu), (len(t), 3)), lam], axis=-1)

    return Entry(
        name="two_axis_vakonomic_body", system=system, initial_state=np.concatenate([s * (I @ nu), lam0]),
        t_end=t_end, parameters={}, steps=int(steps), method=None, model="vakonomic", kind="lie-group",
        description="The vakonomic rigid body with two constraints (a1, w) = (a2, w) = 0 (parameters l1, l2): "
                    "it turns uniformly about nu = a1 x a2 while the multipliers rotate about nu (exact "
                    "solution in the module docstring). The energy and |m + lambda1 a1 + lambda2 a2|^2 are "
                    "conserved.",
        references=REF, first_integrals=model_integrals(g, I, "vakonomic", A, A), exact_solution=exact,
        labels=("m1", "m2", "m3", "lambda1", "lambda2"), tags=("so3", "vakonomic", "several constraints"),
        tolerances={"integral": 1e-8, "exact": 1e-8, "constraint": 1e-9},
        extras={"algebra": g, "inertia": I, "a": A, "b": A, "constraints": constraint_residuals(I, A, 3)},
    )
