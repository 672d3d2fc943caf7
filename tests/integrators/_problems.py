"""Shared test problems (independent of the code under test except for the problem protocol)."""

import numpy as np

from integrators import METHODS, CoadjointProblem
from integrators.methods import DiscreteMechanics
from liegroups import named


def quadratic_problem(algebra, seed, forcing=None, **kw):
    """z' = ad*_{w} z with w = M z, M symmetric positive definite (a Lie-Poisson system, H = z.Mz/2)."""
    rng = np.random.default_rng(seed)
    n = algebra.dim
    B = rng.standard_normal((n, n))
    M = B @ B.T / n + np.eye(n)
    return CoadjointProblem(algebra, lambda z: z @ M, velocity_matrix=M, forcing=forcing,
                            hamiltonian=lambda z: 0.5 * np.einsum("...i,ij,...j->...", z, M, z), **kw)


def start(n, seed, batch=()):
    return 0.5 * np.random.default_rng(seed + 100).standard_normal(tuple(batch) + (n,))


#: methods that only apply to the free rigid body on so(3)* (diagonal velocity matrix)
RIGID_ONLY = ("splitting", "splitting4", "splitting6", "moser_veselov")

ALGEBRAS = {"so3": named.so3, "se3": named.se3, "sl2": named.sl2, "so4": named.so4}

#: the adaptive Runge-Kutta methods of the registry, by form (every test of the pairs reads these)
def _rk_methods(form):
    from integrators.methods import METHODS, RungeKutta

    return [n for n, m in METHODS.items() if isinstance(m, RungeKutta) and not m.fixed_step and m.form == form]


ADAPTIVE_RK = _rk_methods("rk")
ADAPTIVE_RKMK = _rk_methods("rkmk")
ADAPTIVE_PROJECTED = _rk_methods("projected")

#: the discrete mechanics schemes need a problem carrying its structure (problem.discrete); they are tested
#: on their own problems in test_nonholonomic.py
STRUCTURED = tuple(n for n, m in METHODS.items() if isinstance(m, DiscreteMechanics))


def suslov():
    """Suslov's problem on so(3) as a coadjoint problem written by hand: m' = m x w + lambda a, w = m / I,
    the multiplier lambda keeping (c, m) = 0, c = a / I (a linear invariant); returns (problem, m0 on the
    constraint, c, a)."""
    inertia = np.array([2.0, 1.0, 2.0 / 3.0])
    a = np.array([1.0, 0.5, -0.2])
    c = a / inertia

    def forcing(m):
        lam = -np.sum(c * np.cross(m, m / inertia), axis=-1) / np.dot(c, a)
        return lam[..., None] * a

    P = CoadjointProblem(named.so3(), lambda m: m / inertia, forcing=forcing, linear_invariants=c)
    m0 = np.array([0.6, 0.4, 0.0])
    return P, m0 - c * (m0 @ c) / (c @ c), c, a


def generated_plan(P, method, y0):
    """The plan of the generated code for problem P, method and initial state(s) y0, with the projection the method
    runs (the Casimirs of a projected pair, else the linear invariants a forced problem's pair keeps)."""
    from integrators.backends import fastpath
    from integrators.codegen import linear_projection, projection
    M = METHODS[method]
    proj = projection.of_algebra(P.algebra) if M.project else linear_projection.kept(P, M)
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, y0, proj)
    assert pl is not None
    return pl

