"""Systems in coordinates (``servo.LagrangianSystem``, issue 6): the Chaplygin skate on an inclined plane
and its realizations, the one-sided sleigh, the sleigh with anisotropic friction.

The state of a run is (q, q'). Claims are written from the papers, not from ``servo``:

* ``skate_inclined``: L = (x'^2 + y'^2 + phi'^2)/2 + x, x' sin(phi) - y' cos(phi) = 0, from rest with
  phi' = w: x = sin^2(wt)/(2w^2), y = (wt - sin(2wt)/2)/(2w^2), phi = wt (Kozlov's lectures); the constraint is
  linear homogeneous, so the energy T - x is conserved.
* ``skate_vakonomic``: the vakonomic model with phi = 0 and y' + lambda cos(phi) = 0 at t = 0:
  phi'' = t^2 sin(phi) cos(phi), x' = t cos^2(phi), y' = t sin(phi) cos(phi) (Kozlov's lectures).
* ``skate_added_mass``: L + N (a, q')^2/2 with a = (sin(phi), -cos(phi), 0): a free system, its energy is
  conserved; as N -> infinity it tends to the vakonomic skate (Kozlov's Theorem 2).
* ``skate_friction``: the force -N (a, q') a: the energy T - x never increases (dE/dt = -N (a, q')^2);
  as N -> infinity it tends to the nonholonomic skate (Theorem 1).
* ``one_sided_sleigh``: M (x'^2 + y'^2)/2 + J theta'^2/2 with v = -x' sin(theta) + y' cos(theta) >= 0 (Kozlov 2019,
  section 3): from v = 0, u0 > 0, w0 < 0 it leaves at once, moves straight with constant speed, joins
  after half a turn (t = pi/|w0|) and stays on a circle of radius u0/|w0|.
* ``sleigh_friction``: Chaplygin's sleigh with the centre of mass at distance ell from the blade, with
  friction -N v (-sin(theta), cos(theta), 0) instead of the blade (two-sided; Theorem 1 of the slides).
* ``sleigh_one_sided_friction``: the one-sided sleigh's blade replaced by friction acting only when v < 0:
  Kozlov 2019, section 4, eqs. (4.1)-(4.5): after the half turn (u, v) solve u' = w0 v, v' = -w0 u - N v,
  v(t) < 0 and v = O(1/N) (checked against the matrix exponential).
"""

from __future__ import annotations

import numpy as np

from ..verify.exact import inclined_skate
from ..registry import Entry, register

REQ = ("servo.LagrangianSystem",)
#: friction runs are stiff for large N: a looser tolerance keeps them fast (the limits are O(1/N) anyway)
FRICTION_TOL = {"rtol": 1e-9, "atol": 1e-11}
REF_SKATE = ["Kozlov's lectures on servo-constraints: 'Example: the Chaplygin skate (sleigh)', 'The vakonomic skate', "
             "'Anisotropic friction' (Theorem 1), 'Added masses' (Theorem 2)"]
REF_ONE_SIDED = ["Kozlov (2019), sections 3-4: one-sided constraints, the sleigh "
                 "with v >= 0, friction realization",
                 "Salnikova, Kugushev and Demidov (2023): one-sided skate, circle "
                 "radius V/|omega|"]


def _skate_lagrangian():
    import sympy as sp
    from sympy.physics.mechanics import dynamicsymbols

    from servo import LagrangianSystem

    x, y, phi = dynamicsymbols("x y phi")
    t = dynamicsymbols._t
    T = (x.diff(t) ** 2 + y.diff(t) ** 2 + phi.diff(t) ** 2) / 2
    L = LagrangianSystem(T, -x, [x, y, phi])
    phi_c = x.diff(t) * sp.sin(phi) - y.diff(t) * sp.cos(phi)
    return L, phi_c, [sp.sin(phi), -sp.cos(phi), 0]


def _skate_energy(y):
    return 0.5 * np.sum(y[..., 3:] ** 2, -1) - y[..., 0]


def _skate_constraint(y):
    return y[..., 3] * np.sin(y[..., 2]) - y[..., 4] * np.cos(y[..., 2])


def _coords_entry(name, system, w, t_end, steps, model, description, **kw):
    return Entry(name=name, system=system, initial_state={"q0": [0.0, 0.0, 0.0], "qd0": [0.0, 0.0, w],
                                                           "lam0": kw.pop("lam0", None)},
                 t_end=t_end, parameters={}, steps=int(steps), model=model, kind="coordinates",
                 description=description, references=kw.pop("references", REF_SKATE),
                 labels=("x", "y", "phi", "x'", "y'", "phi'"), path=lambda run: run.y[:, :2], **kw)


@register("skate_inclined", family="coordinates", requires=REQ, defaults={"w": 1.0, "t_end": 10.0, "steps": 400},
          title="Chaplygin skate on an inclined plane (nonholonomic)")
def skate_inclined(w, t_end, steps):
    """Nonholonomic Chaplygin skate on an inclined plane, from rest with phi' = w."""
    L, phi_c, _ = _skate_lagrangian()
    return _coords_entry(
        "skate_inclined", L.constrain(phi_c, model="nonholonomic"), w, t_end, steps, "nonholonomic",
        "The Chaplygin skate on an inclined plane (x downhill): L = (x'^2 + y'^2 + phi'^2)/2 + x with "
        "x' sin(phi) - y' cos(phi) = 0. From rest with phi' = w it oscillates across the slope and on average "
        "does not slide down: x = sin^2(wt)/(2w^2).",
        first_integrals={"energy T - x": _skate_energy}, exact_solution=inclined_skate(w),
        tolerances={"integral": 1e-9, "exact": 1e-9, "constraint": 1e-9},
        extras={"constraints": {"x' sin(phi) - y' cos(phi)": _skate_constraint}})


def _vakonomic_checks(w):
    from scipy.integrate import solve_ivp

    def phi_claim(run):
        sol = solve_ivp(lambda t, s: [s[1], t**2 * np.sin(s[0]) * np.cos(s[0])], (0, run.t[-1]), [0.0, w],
                        t_eval=run.t, rtol=1e-12, atol=1e-13, method="DOP853")
        return float(np.max(np.abs(sol.y[0] - run.y[:, 2]))), 1e-7

    def xdot(run):
        ph = run.y[:, 2]
        return float(np.max(np.abs(run.y[:, 3] - run.t * np.cos(ph) ** 2))), 1e-8

    def ydot(run):
        ph = run.y[:, 2]
        return float(np.max(np.abs(run.y[:, 4] - run.t * np.sin(ph) * np.cos(ph)))), 1e-8

    return {"phi'' = t^2 sin(phi) cos(phi) (max |phi - phi_ref|)": phi_claim,
            "x' = t cos^2(phi) (max residual)": xdot, "y' = t sin(phi) cos(phi) (max residual)": ydot}


@register("skate_vakonomic", family="coordinates", requires=REQ, defaults={"w": 1.0, "t_end": 3.0, "steps": 300},
          title="Vakonomic skate on an inclined plane")
def skate_vakonomic(w, t_end, steps):
    """Vakonomic skate: phi = 0, y' + lambda cos(phi) = 0 at t = 0 (so lambda(0) = 0 from rest)."""
    L, phi_c, _ = _skate_lagrangian()
    return _coords_entry(
        "skate_vakonomic", L.constrain(phi_c, model="vakonomic"), w, t_end, steps, "vakonomic",
        "The vakonomic skate: the same Lagrangian and constraint as the nonholonomic skate but the vakonomic "
        "(variational) model. With phi = 0 and y' + lambda cos(phi) = 0 at t = 0: phi'' = t^2 sin(phi) cos(phi), "
        "x' = t cos^2(phi), y' = t sin(phi) cos(phi): the vakonomic skate slides downhill.",
        lam0=0.0, tolerances={"integral": 1e-9, "constraint": 1e-9},
        extras={"constraints": {"x' sin(phi) - y' cos(phi)": _skate_constraint}, "checks": _vakonomic_checks(w)})


@register("skate_added_mass", family="coordinates", requires=REQ,
          defaults={"w": 1.0, "N": 100.0, "t_end": 3.0, "steps": 300},
          title="Skate with a large added mass (tends to vakonomic)")
def skate_added_mass(w, N, t_end, steps):
    """Free skate with T + N (a, q')^2/2, a = (sin(phi), -cos(phi), 0)."""
    L, _, a = _skate_lagrangian()
    LN = L.with_added_mass(a, N)
    energy = lambda y: _skate_energy(y) + 0.5 * N * _skate_constraint(y) ** 2
    return _coords_entry(
        "skate_added_mass", LN, w, t_end, steps, "added-mass",
        f"The skate without a constraint but with a large added mass N (a, q')^2/2 across the blade (N = {N:g}): a "
        "free Lagrangian system whose motions tend to the vakonomic skate as N -> infinity (Kozlov's Theorem 2).",
        first_integrals={"energy T_N - x": energy}, tolerances={"integral": 1e-9})


@register("skate_friction", family="coordinates", requires=REQ,
          defaults={"w": 1.0, "N": 100.0, "t_end": 3.0, "steps": 300},
          title="Skate with anisotropic friction (tends to nonholonomic)")
def skate_friction(w, N, t_end, steps):
    """Skate with the viscous force -N (a, q') a instead of the blade."""
    L, _, a = _skate_lagrangian()

    def dissipates(run):
        E = _skate_energy(run.y)
        return float(max(np.max(np.diff(E)), 0.0)), 1e-10

    return _coords_entry(
        "skate_friction", L.with_friction(a, N), w, t_end, steps, "friction",
        f"The skate without a blade but with strong viscous friction -N (a, q') a across it (N = {N:g}): the "
        "energy decreases and the motions tend to the nonholonomic skate as N -> infinity (Kozlov's Theorem 1).",
        extras={"checks": {"energy never increases (max increase)": dissipates}, "sim_options": FRICTION_TOL})


def _sleigh_lagrangian(M, J, ell):
    import sympy as sp
    from sympy.physics.mechanics import dynamicsymbols

    from servo import LagrangianSystem

    x, y, th = dynamicsymbols("x y theta")
    t = dynamicsymbols._t
    xd, yd, thd = x.diff(t), y.diff(t), th.diff(t)
    T = M / 2 * ((xd - ell * sp.sin(th) * thd) ** 2 + (yd + ell * sp.cos(th) * thd) ** 2) + J / 2 * thd**2
    return LagrangianSystem(T, 0, [x, y, th]), -xd * sp.sin(th) + yd * sp.cos(th), [-sp.sin(th), sp.cos(th), 0]


def _v(y):
    return -y[..., 3] * np.sin(y[..., 2]) + y[..., 4] * np.cos(y[..., 2])


@register("one_sided_sleigh", family="sleigh", requires=REQ + ("servo.OneSidedSystem",),
          defaults={"M": 1.0, "J": 0.5, "u0": 1.0, "w0": -0.7, "t_end": 10.0, "steps": 500},
          title="One-sided Chaplygin sleigh (v >= 0)")
def one_sided_sleigh(M, J, u0, w0, t_end, steps):
    """Sleigh with its centre of mass on the blade and the one-sided constraint v >= 0."""
    import sympy as sp

    L, v, _ = _sleigh_lagrangian(M, J, 0.0)
    sysm = L.constrain(sp.GreaterThan(v, 0), model="one_sided")
    t_join = np.pi / abs(w0) if (u0 > 0 and w0 < 0) else None

    def join_time(run):
        joins = [float(e[0]) for e in run.events if e[1] == "join"]
        if t_join is None:
            return 0.0, 1.0
        return (abs(joins[0] - t_join) if joins else np.inf), 1e-8

    def on_circle(run):
        if t_join is None or run.t[-1] <= t_join:
            return 0.0, 1.0
        k = run.t > t_join + 1e-6
        speed = np.hypot(run.y[k, 3], run.y[k, 4])
        R = speed / np.abs(run.y[k, 5])
        return float(np.max(np.abs(R - u0 / abs(w0)))), 1e-8

    energy = lambda y: 0.5 * M * (y[..., 3] ** 2 + y[..., 4] ** 2) + 0.5 * J * y[..., 5] ** 2
    return Entry(
        name="one_sided_sleigh", system=sysm, initial_state={"q0": [0.0, 0.0, 0.0], "qd0": [u0, 0.0, w0]},
        t_end=t_end, parameters={}, steps=int(steps), model="one-sided", kind="coordinates",
        description=("Kozlov's one-sided Chaplygin sleigh: the blade only prevents sliding to one side, v >= 0. "
                     "Started with v = 0, u0 > 0, w0 < 0 it leaves the constraint at once, moves on a straight "
                     "line with constant speed while the blade turns, joins after half a turn and then runs on a "
                     "circle of radius u0/|w0| forever: the motion is not time-reversible."),
        references=REF_ONE_SIDED, first_integrals={"energy": energy},
        labels=("x", "y", "theta", "x'", "y'", "theta'"), tags=("sleigh", "one-sided"),
        tolerances={"integral": 1e-9, "constraint": 1e-9},
        path=lambda run: run.y[:, :2],
        extras={"constraints": {"min(v, 0) (v >= 0)": lambda y: np.minimum(_v(y), 0.0)},
                "checks": {"joins at t = pi/|w0|": join_time, "radius u0/|w0| after joining": on_circle}})


@register("sleigh_friction", family="sleigh", requires=REQ,
          defaults={"M": 1.0, "J": 0.5, "ell": 0.5, "u0": 0.2, "w0": 1.0, "N": 100.0, "t_end": 6.0, "steps": 300},
          title="Sleigh with anisotropic friction (tends to Chaplygin's sleigh)")
def sleigh_friction(M, J, ell, u0, w0, N, t_end, steps):
    """Chaplygin's sleigh with the blade replaced by viscous friction -N v across it (two-sided; Theorem 1 of the slides)."""
    L, _, a = _sleigh_lagrangian(M, J, ell)

    def energy(y):
        th = y[..., 2]
        xd, yd, thd = y[..., 3], y[..., 4], y[..., 5]
        return 0.5 * M * ((xd - ell * np.sin(th) * thd) ** 2 + (yd + ell * np.cos(th) * thd) ** 2) + 0.5 * J * thd**2

    def dissipates(run):
        return float(max(np.max(np.diff(energy(run.y))), 0.0)), 1e-10

    def body(run):
        th = run.y[:, 2]
        u = run.y[:, 3] * np.cos(th) + run.y[:, 4] * np.sin(th)
        return np.stack([u, _v(run.y), run.y[:, 5]], -1)

    return Entry(
        name="sleigh_friction", system=L.with_friction(a, N),
        initial_state={"q0": [0.0, 0.0, 0.0], "qd0": [u0, 0.0, w0]}, t_end=t_end, parameters={},
        steps=int(steps), model="friction", kind="coordinates",
        description=(f"The Chaplygin sleigh without a blade, held by anisotropic viscous friction -N v across the "
                     f"blade direction (N = {N:g}). As N -> infinity it tends to the nonholonomic sleigh and the "
                     "transverse velocity v is O(1/N) (Caratheodory; Kozlov's slides, Theorem 1)."),
        references=REF_ONE_SIDED[:1], labels=("x", "y", "theta", "x'", "y'", "theta'"), tags=("sleigh", "friction"),
        path=lambda run: run.y[:, :2],
        extras={"body_velocities": body, "checks": {"energy never increases (max increase)": dissipates},
                "sim_options": FRICTION_TOL})


@register("sleigh_one_sided_friction", family="sleigh", requires=REQ,
          defaults={"M": 1.0, "J": 0.5, "u0": 1.0, "w0": -0.7, "N": 100.0, "k": 0.0, "t_end": 10.0, "steps": 200},
          title="Sleigh with one-sided friction (tends to the one-sided sleigh)")
def sleigh_one_sided_friction(M, J, u0, w0, N, k, t_end, steps):
    """The one-sided sleigh's blade replaced by friction -N v only where v < 0 (-k v where v >= 0)."""
    L, _, a = _sleigh_lagrangian(M, J, 0.0)
    energy = lambda y: 0.5 * M * (y[..., 3] ** 2 + y[..., 4] ** 2) + 0.5 * J * y[..., 5] ** 2

    def dissipates(run):
        return float(max(np.max(np.diff(energy(run.y))), 0.0)), 1e-10

    t_j = np.pi / abs(w0) if (u0 > 0 and w0 < 0 and k == 0) else None

    def kozlov_exact(t):
        """Body velocities (u, v): free, u = u0 cos(w0 t), v = -u0 sin(w0 t) until v returns to 0 at
        t_j = pi/|w0|; then the linear system u' = w0 v, v' = -w0 u - (N/M) v from (-u0, 0) (Kozlov 2019,
        (4.1)-(4.4)), solved here by the matrix exponential."""
        from scipy.linalg import expm

        A = np.array([[0.0, w0], [-w0, -N / M]])
        out = np.stack([u0 * np.cos(w0 * t), -u0 * np.sin(w0 * t)], -1)
        for i in np.nonzero(t > t_j)[0]:
            out[i] = expm(A * (t[i] - t_j)) @ np.array([-u0, 0.0])
        return out

    def body(run):
        th = run.y[:, 2]
        return np.stack([run.y[:, 3] * np.cos(th) + run.y[:, 4] * np.sin(th), _v(run.y)], -1)

    def matches_kozlov(run):
        if t_j is None:
            return 0.0, 1.0
        return float(np.max(np.abs(body(run) - kozlov_exact(run.t)))), 1e-7

    def v_negative_after_join(run):
        if t_j is None or run.t[-1] <= t_j + 0.1:
            return 0.0, 1.0
        return max(float(np.max(_v(run.y)[run.t > t_j + 0.1])), 0.0), 0.0

    checks = {"energy never increases (max increase)": dissipates,
              "(u, v) = Kozlov's exact solution (4.1)-(4.4) (max error)": matches_kozlov,
              "v < 0 after the join (max v)": v_negative_after_join}
    return Entry(
        name="sleigh_one_sided_friction", system=L.with_friction(a, N, one_sided=True, k=k),
        initial_state={"q0": [0.0, 0.0, 0.0], "qd0": [u0, 0.0, w0]}, t_end=t_end, parameters={}, steps=int(steps),
        model="friction", kind="coordinates",
        description=(f"The realization of the one-sided constraint v >= 0 by one-sided viscous friction (Kozlov 2019, "
                     f"section 4, (4.1)-(4.5); Salnikova, Kugushev, Demidov 2023): the force -N v acts across the blade "
                     f"only when v < 0 (N = {N:g}, k = {k:g} on the allowed side). As N -> infinity the motion "
                     "tends to the one-sided sleigh: straight line, then a circle of radius u0/|w0|."),
        references=REF_ONE_SIDED, labels=("x", "y", "theta", "x'", "y'", "theta'"), tags=("sleigh", "friction"),
        path=lambda run: run.y[:, :2],
        extras={"checks": checks, "sim_options": FRICTION_TOL})
