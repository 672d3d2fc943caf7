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


def _against_reference(u_name, v_name, v_params, what, tol=1e-8):
    """Run u with its own code; compare it with v's equations written by hand in
    :mod:`catalog.verify.reference` at the special parameters (solved by scipy DOP853), a reference that
    shares no code with either entry, so a wrong special case or a wrong model fails."""
    from ..registry import get
    from .reference import reference
    from .run import simulate

    eu, ev = get(u_name), get(v_name, **v_params)
    ru = simulate(eu)
    ref = reference(ev, ru.t)
    return Verdict(what, "relation", float(np.max(np.abs(ru.y - ref))), tol,
                   f" max difference of {u_name}'s run from {v_name}'s equations (written in catalog.verify.reference,"
                   " DOP853 rtol 1e-12)")


def suslov_is_beghin():
    """Suslov's body (its own code, ``servo.Nonholonomic``) against Beghin's equations m' = m x w + lambda n,
    (l, w) = 0 with n = l, written by hand and solved by DOP853."""
    return _against_reference("suslov", "beghin_body", {"n": (0.0, 0.0, 1.0)}, "suslov = beghin_body(n = l)")


def vakonomic_is_flywheel():
    """The vakonomic body (its own code, ``servo.Vakonomic``) against the second-kind equations
    (m + lambda b)' = (m + lambda b) x w, w3 = 0 with b = a = e3, written by hand and solved by DOP853."""
    return _against_reference("vakonomic_body", "flywheel_body", {"b2": 0.0, "b3": 1.0},
                              "vakonomic_body = flywheel_body(b = a)")


def _on_blade_motion(v_name, v_params, what, tol=1e-9):
    """v at the special parameters (its own code) against the closed form of the sleigh with its centre of
    mass on the blade: momenta constant, the path the circle x = R sin(w0 t), y = R (1 - cos(w0 t)),
    R = u0/w0 (from the origin, heading along x)."""
    from ..registry import defaults, get
    from .run import simulate

    d = defaults("chaplygin_sleigh_on_blade")
    r = simulate(get(v_name, **v_params), steps=300)
    R, w = d["u0"] / d["w0"], d["w0"]
    circle = np.stack([R * np.sin(w * r.t), R * (1 - np.cos(w * r.t))], -1)
    m0 = np.array([d["M"] * d["u0"], 0.0, d["J"] * d["w0"]])
    value = max(float(np.max(np.abs(r.outputs["path"] - circle))), float(np.max(np.abs(r.y - m0))))
    return Verdict(what, "relation", value, tol, " max difference from the closed form (momenta (M u0, 0, J w0), "
                   "the path the circle of radius u0/w0)")


def on_blade_is_servo():
    """The servo-sleigh with the control force along the constraint (a_u = c_w = 0), M = 1 and I = J,
    moves as the nonholonomic sleigh with its centre of mass on the blade."""
    from ..registry import defaults

    d = defaults("chaplygin_sleigh_on_blade")
    return _on_blade_motion("servo_sleigh", {"a_u": 0.0, "c_w": 0.0, "M": d["M"], "I": d["J"], "u0": d["u0"],
                                             "w0": d["w0"], "t_end": d["t_end"]},
                            "on_blade = servo_sleigh(a_u = c_w = 0)")


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


#: the values of N of the limit checks: five, each twice the one before (a rate fitted from two values of N
#: cannot tell a slope from a coincidence)
NS = (25.0, 50.0, 100.0, 200.0, 400.0)


def _rate(errors, Ns, what, detail, tol=0.15):
    """Verdict on error ~ C N^p where the relation promises p = -1 (O(1/N)): the value is the largest
    |p_i + 1| over the local slopes p_i between consecutive N (every doubling must halve the error, not only
    the least-squares fit); at least four values of N. ``data`` keeps N, the errors and the fitted p for the
    log-log figure."""
    Ns, errors = np.asarray(Ns, float), np.asarray(errors, float)
    if Ns.size < 4:
        raise ValueError(f"{what}: a rate needs at least 4 values of N, got {Ns.size}")
    with np.errstate(divide="ignore", invalid="ignore"):
        local = np.diff(np.log(errors)) / np.diff(np.log(Ns))
    p = float(np.polyfit(np.log(Ns), np.log(errors), 1)[0]) if np.all(errors > 0) else float("nan")
    value = float(np.max(np.abs(local + 1.0))) if np.all(np.isfinite(local)) else float("nan")
    errs = ", ".join(f"N={N:g}: {e:.2e}" for N, e in zip(Ns, errors))
    return Verdict(what, "relation", value, tol,
                   f" max |p_i + 1| over the local slopes of error ~ N^p (fitted p = {p:.3f}; {errs}){detail}",
                   data={"N": Ns.tolist(), "error": errors.tolist(), "p": p})


def friction_to_skate(Ns=NS, t_end=2.0):
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


def added_mass_to_vakonomic(Ns=tuple(4 * N for N in NS), t_end=2.0):
    """Skate with added mass N (a, q')^2/2 against the vakonomic skate: max difference = O(1/N) (Theorem 2)."""
    from ..registry import get
    from .run import simulate

    rv = simulate(get("skate_vakonomic", t_end=t_end, steps=50))
    errs = [float(np.max(np.abs(simulate(get("skate_added_mass", N=N, t_end=t_end, steps=50)).y - rv.y)))
            for N in Ns]
    return _rate(errs, Ns, "skate_added_mass -> skate_vakonomic", "")


def friction_to_sleigh(Ns=NS, t_end=3.0):
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
    """chaplygin_sleigh with ell = 0 (its own code) moves as the closed form of chaplygin_sleigh_on_blade."""
    return _on_blade_motion("chaplygin_sleigh", {"ell": 0.0}, "on_blade = chaplygin_sleigh(ell = 0)")


def one_sided_friction_to_one_sided(Ns=NS, t_end=8.0):
    """Sleigh with one-sided friction against the event-driven one-sided sleigh (same data): max state
    difference = O(1/N) over a run that includes the join (Salnikova et al. 2023, section 4)."""
    from ..registry import get
    from .run import simulate

    r0 = simulate(get("one_sided_sleigh", t_end=t_end, steps=80))
    errs = [float(np.max(np.abs(simulate(get("sleigh_one_sided_friction", N=N, t_end=t_end, steps=80)).y - r0.y)))
            for N in Ns]
    return _rate(errs, Ns, "sleigh_one_sided_friction -> one_sided_sleigh", "")
