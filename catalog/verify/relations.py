"""Numerical checks of the relation-graph edges (:data:`catalog.graph.EDGES`).

Each check builds both entries, runs them, and returns a :class:`catalog.verify.run.Verdict` whose value is
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
        raise ValueError(f"edge {u} -> {v}: no check function {data['check']!r} in catalog.verify.relations")
    return fn()


def _same_motion(u_name, u_params, v_name, v_params, what, tol=1e-10, steps=None):
    """Max difference of the two entries' trajectories (same steps, same method)."""
    from ..registry import get
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
    from ..registry import defaults

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

    from ..registry import get
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


def _rate(errors, Ns, what, detail):
    """Verdict on the fitted exponent p of error ~ C N^p: the relation promises p = -1 (O(1/N))."""
    p = float(np.polyfit(np.log(Ns), np.log(errors), 1)[0])
    errs = ", ".join(f"N={N:g}: {e:.2e}" for N, e in zip(Ns, errors))
    return Verdict(what, "relation", abs(p + 1.0), 0.15, f" |p + 1| for error ~ N^p, p = {p:.3f} ({errs}){detail}")


def friction_to_skate(Ns=(25.0, 50.0), t_end=2.0):
    """Skate with friction -N (a, q') a against the exact nonholonomic skate: max error = O(1/N) (Theorem 1)."""
    from .exact import inclined_skate
    from ..registry import get
    from .run import simulate

    errs = []
    for N in Ns:
        e = get("skate_friction", N=N, t_end=t_end, steps=50)
        r = simulate(e)
        errs.append(float(np.max(np.abs(r.y - inclined_skate(e.parameters["w"])(r.t)))))
    return _rate(errs, Ns, "skate_friction -> skate_inclined", "")


def added_mass_to_vakonomic(Ns=(100.0, 400.0), t_end=2.0):
    """Skate with added mass N (a, q')^2/2 against the vakonomic skate: max difference = O(1/N) (Theorem 2)."""
    from ..registry import get
    from .run import simulate

    rv = simulate(get("skate_vakonomic", t_end=t_end, steps=50))
    errs = [float(np.max(np.abs(simulate(get("skate_added_mass", N=N, t_end=t_end, steps=50)).y - rv.y)))
            for N in Ns]
    return _rate(errs, Ns, "skate_added_mass -> skate_vakonomic", "")


def friction_to_sleigh(Ns=(25.0, 50.0), t_end=3.0):
    """Sleigh with friction -N v across the blade against the exact Chaplygin sleigh (body velocities
    u, v, w): max difference = O(1/N), and v = O(1/N) (Theorem 1 of the slides)."""
    from ..registry import get
    from .run import simulate

    es = get("chaplygin_sleigh", t_end=t_end)
    Iinv = np.linalg.inv(es.extras["inertia"])
    errs = []
    for N in Ns:
        e = get("sleigh_friction", N=N, t_end=t_end, steps=50)
        r = simulate(e)
        errs.append(float(np.max(np.abs(e.extras["body_velocities"](r) - es.exact_solution(r.t) @ Iinv.T))))
    return _rate(errs, Ns, "sleigh_friction -> chaplygin_sleigh", "")


def one_sided_on_constraint(t_end=6.0):
    """With u0 w0 > 0 the one-sided sleigh's multiplier pushes inward (lambda = M u w > 0) and it never leaves:
    its path is the two-sided on-blade circle x = R sin(w t), y = R (1 - cos(w t)), R = u0/w0."""
    from ..registry import get
    from .run import simulate

    d = get("chaplygin_sleigh_on_blade").parameters
    e = get("one_sided_sleigh", M=d["M"], J=d["J"], u0=d["u0"], w0=d["w0"], t_end=t_end, steps=120)
    r = simulate(e)
    R, w = d["u0"] / d["w0"], d["w0"]
    circle = np.stack([R * np.sin(w * r.t), R * (1 - np.cos(w * r.t))], -1)
    leaves = [ev for ev in r.events if ev[1] == "leave"]
    value = float(np.max(np.abs(r.y[:, :2] - circle))) + (1.0 if leaves else 0.0)
    return Verdict("one_sided_sleigh(u0 w0 > 0) = chaplygin_sleigh_on_blade", "relation", value, 1e-8,
                   " max path difference (+1 if it left the constraint)")


def euler_in_heavy_top():
    """The heavy top with mgl = 0 and J = I: its M(t) is the Euler top's exact elliptic solution."""
    from ..registry import get
    from .run import simulate

    eu = get("euler_top")
    p = eu.parameters
    m0 = tuple(float(x) for x in eu.initial_state)
    eh = get("heavy_top", mgl=0.0, J1=p["I1"], J2=p["I2"], J3=p["I3"], M0=m0, t_end=eu.t_end, steps=500)
    r = simulate(eh)
    err = float(np.max(np.abs(r.y[:, :3] - eu.exact_solution(r.t))))
    return Verdict("heavy_top(mgl = 0) = euler_top", "relation", err, 1e-6, " max |M - m_exact|")


def on_blade_is_ell_zero():
    """chaplygin_sleigh with ell = 0 moves as chaplygin_sleigh_on_blade (and both match u, w = const)."""
    return _same_motion("chaplygin_sleigh_on_blade", {}, "chaplygin_sleigh", {"ell": 0.0},
                        "on_blade = chaplygin_sleigh(ell = 0)", steps=200)


def one_sided_friction_to_one_sided(Ns=(25.0, 50.0), t_end=8.0):
    """Sleigh with one-sided friction against the event-driven one-sided sleigh (same data): max state
    difference = O(1/N) over a run that includes the join (Salnikova et al. 2023, section 4)."""
    from ..registry import get
    from .run import simulate

    r0 = simulate(get("one_sided_sleigh", t_end=t_end, steps=80))
    errs = [float(np.max(np.abs(simulate(get("sleigh_one_sided_friction", N=N, t_end=t_end, steps=80)).y - r0.y)))
            for N in Ns]
    return _rate(errs, Ns, "sleigh_one_sided_friction -> one_sided_sleigh", "")
