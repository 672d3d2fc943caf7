"""The tangent flow of a problem: its vector field F(t, y), the Jacobian DF(t, y) and the leaf.

For a coadjoint problem z' = Q ad*_{W z + c} z (Q = I - P, P the multiplier projector of a
servo-constraint of the first kind or of a nonholonomic constraint, Q = I without forcing) the
Jacobian is derived once from the structure constants: with (ad*_x m)_j = sum_{i,k} x_i C[i,j,k] m_k,

    d/dz_l (ad*_{W z + c} z)_j = sum_i x_i C[i,j,l] + sum_{i,k} W[i,l] C[i,j,k] z_k,   x = W z + c,

i.e. DF(z) = Q (M(x) + A(z)^T W) with M(x)[j,l] = sum_i x_i C[i,j,l] and A(z)[i,j] = sum_k C[i,j,k] z_k,
evaluated by ``np.einsum`` over a leading batch axis (no sympy, no loop over trajectories). W, c and P
are recognised from the problem's callables by :mod:`integrators.recognition` (the same recognition
the generated integrators use). A coadjoint problem whose velocity is not affine, or whose forcing is
not a multiplier force, and a plain ODE problem use the Jacobian the caller gives (``jac`` argument or
``problem.jac``, a callable (t, y) -> (..., n, n)); without one, central differences of F with the step
eps^(1/3) max(1, |y|) (error O(eps^(2/3)) relative; the result's ``jacobian`` says which was used).

The leaf (:func:`leaf_normals`): the tangent flow of an unforced coadjoint problem maps the tangent
space of the coadjoint orbit into itself; its normal space at z is spanned by the gradients of the
Casimirs (``algebra.casimirs()``), and for a problem with linear invariants C z = const by the rows of C.
The Lyapunov spectrum on the leaf uses tangent vectors kept in that space
(:mod:`integrators.analysis.phase_space.lyapunov`).
"""

from __future__ import annotations

import numpy as np

from ...core.errors import IntegrationInputError
from ...geometry import recognition

#: the relative step of the central differences: eps^(1/3)
FD_STEP = np.finfo(float).eps ** (1.0 / 3.0)


class TangentField:
    """F(t, y) (..., n) and DF(t, y) (..., n, n) of a problem; ``kind`` says how DF is obtained
    ("structure constants", "user jacobian" or "finite differences")."""

    def __init__(self, f, jac, n, kind, time_dependent=True):
        self.f, self._jac, self.n, self.kind = f, jac, n, kind
        self.time_dependent = time_dependent

    def jac(self, t, y):
        return self._jac(t, y)

    def jvp(self, t, y, V):
        """DF(t, y) V for V of shape (..., n, k)."""
        return self._jac(t, y) @ V


def _coadjoint_parts(problem):
    """(C, W, c, Q) of an affine coadjoint problem with no forcing or a multiplier forcing, else None."""
    n = problem.dim
    if getattr(problem, "time_dependent", False):
        return None       # w(t, z): no closed form from W, c (the caller's jac or differences of rhs)
    Wc = recognition.affine_velocity(problem.velocity, n)
    if Wc is None:
        return None
    W, c = Wc
    Q = np.eye(n)
    if problem.forcing is not None:
        P = recognition.multiplier_projector(problem, W, c)
        if P is None:
            return None
        Q = Q - P
    return np.asarray(problem.algebra.structure_constants, dtype=float), W, c, Q


def coadjoint_jacobian(C, W, c, Q=None):
    """(F, DF) for F(z) = Q ad*_{W z + c} z, both vectorized over the leading axes of z (closed form
    from the structure constants, see the module docstring)."""
    C = np.asarray(C, dtype=float)
    n = C.shape[0]
    Q = np.eye(n) if Q is None else np.asarray(Q, dtype=float)
    WT = np.ascontiguousarray(W.T)

    def F(t, z):
        x = z @ WT + c
        g = np.einsum("...i,ijk,...k->...j", x, C, z, optimize=True)
        return g @ Q.T

    def DF(t, z):
        x = z @ WT + c
        M = np.einsum("...i,ijl->...jl", x, C)
        A = np.einsum("ijk,...k->...ij", C, z)
        return Q @ (M + np.swapaxes(A, -1, -2) @ W)

    return F, DF


def finite_difference_jacobian(f):
    """DF(t, y) by central differences of f (vectorized over the batch: 2 n calls of f)."""

    def DF(t, y):
        y = np.asarray(y, dtype=float)
        n = y.shape[-1]
        scale = FD_STEP * np.maximum(1.0, np.abs(y))
        cols = []
        for l in range(n):
            e = np.zeros(n)
            e[l] = 1.0
            d = scale[..., l:l + 1]
            cols.append((np.asarray(f(t, y + d * e)) - np.asarray(f(t, y - d * e))) / (2.0 * d))
        return np.stack(cols, axis=-1)

    return DF


def check_problem(problem, jac=None):
    """The dimension n of ``problem`` after checking that the phase-space tools take it (an ODEProblem or a
    CoadjointProblem) and that ``jac`` is None or callable (without building the tangent field)."""
    kind = getattr(problem, "kind", None)
    if kind not in ("ode", "coadjoint"):
        raise IntegrationInputError(f"phase-space tools take an ODEProblem or a CoadjointProblem, got "
                                    f"{type(problem).__name__}")
    if jac is not None and not callable(jac):
        raise IntegrationInputError(f"jac must be a callable (t, y) -> (..., n, n), got {jac!r:.60}")
    return problem.dim


def tangent_field(problem, jac=None):
    """The :class:`TangentField` of ``problem`` (an ODEProblem or a CoadjointProblem)."""
    n = check_problem(problem, jac)
    kind = problem.kind
    if kind == "coadjoint" and jac is None:
        parts = _coadjoint_parts(problem)
        if parts is not None:
            F, DF = coadjoint_jacobian(*parts)
            return TangentField(F, DF, n, "structure constants", time_dependent=False)
    f = problem.rhs if kind == "coadjoint" else problem.f
    user = jac if jac is not None else getattr(problem, "jac", None)
    if user is not None:
        def DF(t, y, user=user):
            J = np.asarray(user(t, y), dtype=float)
            want = np.shape(y)[:-1] + (n, n)
            if J.shape != want:
                try:
                    J = np.broadcast_to(J, want)
                except ValueError:
                    raise IntegrationInputError(f"jac(t, y) must return (..., {n}, {n}) for y of shape "
                                                f"{np.shape(y)}; got shape {J.shape}") from None
            return J
        return TangentField(f, DF, n, "user jacobian")
    return TangentField(f, finite_difference_jacobian(f), n, "finite differences")


def leaf_normals(problem, leaf="auto"):
    """A callable y (..., n) -> (..., n, r) whose columns span the normal space of the leaf through y
    (Casimir gradients and linear invariants), or None when the leaf is the whole space.

    ``leaf``: "auto" (Casimirs of an unforced coadjoint problem, whose polynomial Casimirs are all
    found, and the rows of ``linear_invariants``), None (no leaf: the whole space), or a callable
    y -> (..., n, r) of normals given by the caller."""
    if leaf is None:
        return None
    if callable(leaf):
        return leaf
    if leaf != "auto":
        raise IntegrationInputError(f"leaf must be 'auto', None or a callable y -> (..., n, r) of normals, "
                                    f"got {leaf!r:.60}")
    if getattr(problem, "kind", None) != "coadjoint":
        return None
    grads = []
    if problem.forcing is None:
        cas = problem.algebra.casimirs()
        if len(cas) < getattr(cas, "expected", len(cas)):
            raise IntegrationInputError(
                f"the coadjoint orbits of {problem.algebra.name} have {cas.expected} Casimirs but only "
                f"{len(cas)} polynomial ones are known: give leaf=None (the whole space) or leaf=callable "
                f"y -> normals")
        grads = list(cas)
    L = getattr(problem, "linear_invariants", None)
    if not grads and L is None:
        return None

    def normals(y):
        y = np.asarray(y, dtype=float)
        cols = [np.asarray(c.grad(y), dtype=float) for c in grads]
        if L is not None:
            cols += [np.broadcast_to(row, y.shape) for row in L]
        return np.stack(cols, axis=-1)

    return normals
