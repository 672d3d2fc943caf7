"""The free rigid body on so(3)* and its exact solution in Jacobi elliptic functions.

Euler's equations m' = m x w, w = I^-1 m (Euler-Poincare on so(3), C = epsilon), with the Casimir
C = |m|^2 and the energy D = 2H = sum m_i^2 / I_i.

Exact solution (derived here; Jacobi 1849; Landau and Lifshitz 1976, *Mechanics*, section 37).
Write a_i = 1/I_i and relabel the axes so that a_1 < a_2 < a_3 and the body turns about axis 3 (D > a_2 C; otherwise
swap axes 1 and 3). Then m1' = (a3 - a2) m2 m3, m2' = (a1 - a3) m3 m1, m3' = (a2 - a1) m1 m2 and

    m1 = A1 cn(u, k),  m2 = -s A2 sn(u, k),  m3 = s A3 dn(u, k),  u = lam t + u0,
    A1^2 = (a3 C - D)/(a3 - a1),  A2^2 = (a3 C - D)/(a3 - a2),  A3^2 = (D - a1 C)/(a3 - a1),
    k^2 = A2^2 (a2 - a1) / ((a3 - a1) A3^2),  lam = (a3 - a1) A1 A3 / A2,  s = sign m3(0),

which one checks by differentiating (sn' = cn dn, cn' = -sn dn, dn' = -k^2 sn cn) and using
C = m.m, D = sum a_i m_i^2. The phase u0 = F(phi0 | k^2) with tan phi0 = sn(u0)/cn(u0) =
(-s m2(0)/A2) / (m1(0)/A1). A relabelling by an odd permutation changes the sign of m x w in the new
coordinates, i.e. reverses time; it is undone by t -> -t. With swap 1 <-> 3 the same formulas hold
(all signs are identities), with lam < 0.
"""

from __future__ import annotations

import numpy as np
import scipy.special

from liegroups import named

from ..core.errors import IntegrationInputError
from ..core.problems import CoadjointProblem


def free_rigid_body(inertia, name=None):
    """CoadjointProblem of the free rigid body on so(3)* with principal moments ``inertia`` (3,).

    velocity w = m / I, velocity_matrix = diag(1/I), hamiltonian H = sum m_i^2 / (2 I_i); records
    the energy and the Casimir |m|^2.
    """
    Iv = np.asarray(inertia, dtype=float)
    if Iv.shape != (3,) or not np.all(np.isfinite(Iv)) or np.any(Iv <= 0):
        raise IntegrationInputError(f"inertia must be three positive finite moments, got {inertia!r}")
    a = 1.0 / Iv
    return CoadjointProblem(named.so3(), lambda m: m * a, velocity_matrix=np.diag(a),
                            hamiltonian=lambda m: 0.5 * ((m * m) @ a),
                            name=name or f"free rigid body I = {tuple(float(v) for v in Iv)}")


def _perm_sign(p):
    p = list(p)
    s = 1
    for i in range(len(p)):
        while p[i] != i:
            j = p[i]
            p[i], p[j] = p[j], p[i]
            s = -s
    return s


def rigid_body_exact(inertia, m0, t):
    """Exact m(t) of Euler's equations m' = m x (m / I) for a single m0 (3,) at times t (...,) -> (..., 3).

    Raises ValueError for equal moments or an initial condition on a separatrix (D = C / I_middle,
    where the solution is not given by elliptic functions with k < 1).
    """
    I = np.asarray(inertia, dtype=float)
    m0 = np.asarray(m0, dtype=float)
    a = 1.0 / I
    if len(set(np.round(a, 14))) < 3:
        raise IntegrationInputError(f"rigid_body_exact needs three distinct moments of inertia, got {I}")
    C = float(m0 @ m0)
    D = float(np.sum(a * m0 * m0))
    p = list(np.argsort(a))  # a[p] ascending
    sign = _perm_sign(p)
    if abs(D - a[p[1]] * C) <= 1e-14 * max(1.0, D):
        raise IntegrationInputError(f"initial condition on the separatrix: 2H - |m|^2/I_mid = {D - a[p[1]] * C:.2e}")
    if D < a[p[1]] * C:  # turns about the axis of smallest a: swap the end axes
        p = [p[2], p[1], p[0]]
        sign = -sign
    a1, a2, a3 = a[p]
    x0 = m0[p]
    A1 = np.sqrt((a3 * C - D) / (a3 - a1))
    A2 = np.sqrt((a3 * C - D) / (a3 - a2))
    A3 = np.sqrt((D - a1 * C) / (a3 - a1))
    k2 = A2 ** 2 * (a2 - a1) / ((a3 - a1) * A3 ** 2)
    lam = (a3 - a1) * A1 * A3 / A2
    s = 1.0 if x0[2] >= 0 else -1.0
    phi0 = np.arctan2(-s * x0[1] / A2, x0[0] / A1)
    u0 = scipy.special.ellipkinc(phi0, k2)
    u = lam * sign * np.asarray(t, dtype=float) + u0
    sn, cn, dn, _ = scipy.special.ellipj(u, k2)
    x = np.stack([A1 * cn, -s * A2 * sn, s * A3 * dn], axis=-1)
    out = np.empty_like(x)
    out[..., p] = x
    return out


#: the reference body of the tests and benchmarks: I = (2, 1, 2/3), m0 = (cos 1.1, 0, sin 1.1)
REFERENCE_INERTIA = (2.0, 1.0, 2.0 / 3.0)
REFERENCE_M0 = (np.cos(1.1), 0.0, np.sin(1.1))
