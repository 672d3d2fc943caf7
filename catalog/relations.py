"""Numerical checks of the relation-graph edges (:data:`catalog.graph.EDGES`).

Each check builds both entries, runs them, and returns a :class:`catalog.run.Verdict` whose value is
the measured discrepancy (or the measured convergence rate) and whose tolerance is what the
relation promises.
"""

from __future__ import annotations

import numpy as np

from .run import Verdict


def check_edge(u, v, data):
    """Run the check named in the edge data and return its :class:`Verdict`."""
    fn = globals().get(data["check"])
    if fn is None:
        raise ValueError(f"edge {u} -> {v}: no check function {data['check']!r} in catalog.relations")
    return fn()


def _same_motion(u_name, u_params, v_name, v_params, what, tol=1e-10, steps=None):
    """Max difference of the two entries' trajectories (same steps, same method)."""
    from .registry import get
    from .run import simulate

    eu, ev = get(u_name, **u_params), get(v_name, **v_params)
    ru = simulate(eu, steps=steps, method="rk4")
    rv = simulate(ev, steps=steps, method="rk4")
    n = min(ru.y.shape[-1], rv.y.shape[-1])
    return Verdict(what, "relation", float(np.max(np.abs(ru.y[:, :n] - rv.y[:, :n]))), tol, " max trajectory difference")


def suslov_is_beghin():
    """Beghin's body with n = l moves exactly as Suslov's (same inertia, same initial velocity)."""
    return _same_motion("suslov", {}, "beghin_body", {"n": (0.0, 0.0, 1.0)}, "suslov = beghin_body(n = l)",
                        steps=300)


def vakonomic_is_flywheel():
    """The flywheel body with b = a = e3 (b2 = 0, b3 = 1) moves exactly as the vakonomic body (states (m, lambda))."""
    return _same_motion("vakonomic_body", {}, "flywheel_body", {"b2": 0.0, "b3": 1.0},
                        "vakonomic_body = flywheel_body(b = a)", steps=300)


def on_blade_is_servo():
    """The servo-sleigh with the control force along the constraint (a_u = c_w = 0), M = 1 and I = J,
    moves as the nonholonomic sleigh with its centre of mass on the blade."""
    from .registry import defaults

    d = defaults("chaplygin_sleigh_on_blade")
    return _same_motion("chaplygin_sleigh_on_blade", {}, "servo_sleigh",
                        {"a_u": 0.0, "c_w": 0.0, "M": d["M"], "I": d["J"], "u0": d["u0"], "w0": d["w0"],
                         "t_end": d["t_end"]}, "on_blade = servo_sleigh(a_u = c_w = 0)", steps=300)


def flywheel_is_euler():
    """Second kind with b2 = 0: with K the upper 2x2 block of I, z = m + lambda b obeys z' = z x w with
    w = (K^-1 (z1, z2), 0), i.e. Euler's equations with inverse moments blockdiag(K^-1, 0); rotating the
    (1, 2)-plane to the eigenvectors of K^-1 gives m' = m x J m, J = diag(k1, k2, 0). The check maps the
    flywheel trajectory by z = R^T (m + lambda b) and compares it with an independent DOP853 solution of
    Euler's equations with those J (tight tolerances)."""
    from scipy.integrate import solve_ivp

    from .registry import get
    from .run import simulate

    e = get("flywheel_body", b2=0.0)
    run = simulate(e, steps=800, method="rkmk4")
    b = e.extras["b"]
    I = e.extras["inertia"]
    K = I[:2, :2]
    kap, V = np.linalg.eigh(np.linalg.inv(K))
    R = np.eye(3)
    R[:2, :2] = V
    if np.linalg.det(R) < 0:  # a rotation is needed: the cross product changes sign under reflections
        R[:, 0] *= -1
    Jd = np.array([kap[0], kap[1], 0.0])
    z = (run.y[:, :3] + run.y[:, 3:4] * b) @ R  # z' = R^T z
    sol = solve_ivp(lambda t, m: np.cross(m, Jd * m), (0, run.t[-1]), z[0], t_eval=run.t, rtol=1e-12, atol=1e-13,
                    method="DOP853")
    return Verdict("flywheel_body(b2 = 0) ~ Euler top with J = " + np.array2string(Jd, precision=4), "relation",
                   float(np.max(np.abs(sol.y.T - z))), 1e-7, " max difference after the linear map")
