"""Rigid bodies: the free rigid body (Euler top) and the heavy top on se(3)*.

The claimed first integrals are written here by hand from the equations (not taken from ``servo``), so
the catalog tests check the mechanics and integrators against an independent statement:

* Euler top, m' = m x w, w = I^-1 m: the Casimir |m|^2 and the energy (m, I^-1 m)/2; the exact
  solution by Jacobi elliptic functions (:func:`catalog.verify.exact.euler_top_solution`).
* Heavy top as a Lie-Poisson system on se(3)* with m = (M, Gamma) and H = (M, J^-1 M)/2 + mgl (Gamma, chi):
  M' = M x Omega + mgl Gamma x chi, Gamma' = Gamma x Omega (Holm-Marsden-Ratiu-Weinstein 1985);
  Casimirs |Gamma|^2 and (M, Gamma), the energy H, and for the Lagrange top (J1 = J2, chi on the
  symmetry axis) the extra integral M3.
"""

from __future__ import annotations

import numpy as np

from ..verify.exact import NoExactSolution, euler_top_solution
from ..verify.run import orientation
from ..registry import Entry, register

#: Landau-Lifshitz section 37 (Jacobi's elliptic solution); the lectures: Euler-Poincare m' = ad*_w m on so(3)
REF_EULER = ["landau-lifshitz1976", "jacobi1849", "kozlov_servo_lectures"]


def _spatial_momentum_check(run):
    """The free body's angular momentum in space, R(t) m(t), is constant (Noether for left-invariant
    Lagrangians); R from the reconstruction g' = g w along the run."""
    R = orientation(run)
    L = np.einsum("kij,kj->ki", R, run.y)
    return float(np.max(np.abs(L - L[0]))), 1e-8


@register("euler_top", family="rigid",
          defaults={"I1": 2.0, "I2": 1.0, "I3": 2.0 / 3.0, "m1": float(np.cos(1.1)), "m2": 0.0,
                    "m3": float(np.sin(1.1)), "t_end": 10.0, "steps": 1000},
          title="Free rigid body (Euler top)")
def euler_top(I1, I2, I3, m1, m2, m3, t_end, steps):
    """Free rigid body m' = m x w on so(3)*, w = I^-1 m; defaults I = (2, 1, 2/3), m0 = (cos 1.1, 0, sin 1.1)."""
    from liegroups import named

    from servo import EulerPoincare

    g = named.so3()
    I = np.array([I1, I2, I3])
    if np.any(I <= 0):
        raise ValueError(f"euler_top: principal moments must be positive, got {I}")
    m0 = np.array([m1, m2, m3])
    try:
        exact = euler_top_solution(I, m0)
    except NoExactSolution:
        exact = None
    return Entry(
        name="euler_top", system=EulerPoincare(g, np.diag(I)), initial_state=m0, t_end=t_end,
        parameters={}, steps=int(steps), method="rkmk4", model="free", kind="lie-group",
        description=("The free rigid body: Euler's equations m' = m x w, m = I w, the Euler-Poincare "
                     "equations on so(3)*. Its Casimir |m|^2 and energy are conserved and its solution is "
                     "given by Jacobi elliptic functions."),
        references=REF_EULER,
        first_integrals={"|m|^2 (Casimir)": lambda y: np.sum(y**2, -1),
                         "energy (m, I^-1 m)/2": lambda y: 0.5 * np.sum(y**2 / I, -1)},
        exact_solution=exact, labels=("m1", "m2", "m3"), tags=("so3", "free", "integrable"),
        tolerances={"integral": 1e-9, "exact": 1e-6},
        extras={"algebra": g, "inertia": np.diag(I), "checks": {
            "spatial angular momentum R m (max change)": _spatial_momentum_check}},
    )


@register("heavy_top", family="rigid",
          defaults={"J1": 1.0, "J2": 1.0, "J3": 0.5, "mgl": 1.0, "chi": (0.0, 0.0, 1.0),
                    "M0": (0.3, 0.1, 2.0), "Gamma0": (0.0, float(np.sin(0.4)), float(np.cos(0.4))),
                    "t_end": 10.0, "steps": 1000},
          title="Heavy top on se(3)*")
def heavy_top(J1, J2, J3, mgl, chi, M0, Gamma0, t_end, steps):
    """Heavy top as a Lie-Poisson system on se(3)* (semidirect product); defaults: a Lagrange top."""
    from liegroups import named

    g = named.se3()
    J = np.array([J1, J2, J3])
    if np.any(J <= 0):
        raise ValueError(f"heavy_top: principal moments must be positive, got {J}")
    chi = np.asarray(chi, float)
    # H = (M, J^-1 M)/2 + mgl (Gamma, chi): the translation part has no kinetic term
    Iinv = np.zeros((6, 6))
    Iinv[:3, :3] = np.diag(1.0 / J)
    c = np.concatenate([np.zeros(3), mgl * chi])
    from servo import EulerPoincare

    H = lambda z: 0.5 * np.sum(z[..., :3] ** 2 / J, -1) + mgl * z[..., 3:] @ chi
    system = EulerPoincare(g, inverse_inertia=Iinv, linear_term=c, name="heavy top")
    ints = {"|Gamma|^2 (Casimir)": lambda y: np.sum(y[..., 3:] ** 2, -1),
            "(M, Gamma) (Casimir)": lambda y: np.sum(y[..., :3] * y[..., 3:], -1),
            "energy": H}
    lagrange = abs(J1 - J2) < 1e-12 and abs(chi[0]) < 1e-12 and abs(chi[1]) < 1e-12
    if lagrange:
        ints["M3 (Lagrange top)"] = lambda y: y[..., 2]
    y0 = np.concatenate([np.asarray(M0, float), np.asarray(Gamma0, float)])
    return Entry(
        name="heavy_top", system=system, initial_state=y0, t_end=t_end, parameters={},
        steps=int(steps), method="rkmk4", model="free", kind="lie-group",
        description=("The heavy top as the semidirect-product example: Lie-Poisson equations on se(3)* "
                     "with m = (M, Gamma), M' = M x Omega + mgl Gamma x chi, Gamma' = Gamma x Omega. "
                     "Casimirs |Gamma|^2 and (M, Gamma), energy, and M3 for a Lagrange top."),
        references=["holm-marsden-ratiu-weinstein1985",  # heavy top on se(3)*
                    "kozlov_servo_lectures"],  # Lie-Poisson bracket and Casimirs
        first_integrals=ints, labels=("M1", "M2", "M3", "G1", "G2", "G3"),
        tags=("se3", "semidirect", "free") + (("lagrange",) if lagrange else ()),
        tolerances={"integral": 1e-9, "exact": 1e-6},
        extras={"algebra": g, "inverse_inertia": Iinv, "hamiltonian_shift": c, "equations_text": [
            "M' = M x Omega + mgl Gamma x chi,  Omega = J^-1 M",
            "Gamma' = Gamma x Omega",
            f"J = diag({J1:g}, {J2:g}, {J3:g}), mgl = {mgl:g}, chi = ({chi[0]:g}, {chi[1]:g}, {chi[2]:g})"]},
    )
