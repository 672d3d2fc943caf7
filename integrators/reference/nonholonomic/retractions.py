"""The two retractions tau: g -> G of the discrete schemes on Lie groups, as the linear maps on g* that the
discrete Euler-Poincare(-Suslov) equations need, batched over leading axes and complex-safe (the Newton
solves of :mod:`integrators.reference.nonholonomic.newton` differentiate them by complex steps).

For a step f = tau(x) in G (x = h xi in g) the schemes use

* ``dinv_T(x, m)`` = (dtau^-1_x)^T m, the dual of the right-trivialised inverse derivative;
* ``Ad_T(x, m)`` = Ad_{tau(x)}^T m = Ad*_{tau(x)} m, the coadjoint action of the step.

Exponential (Bou-Rabee and Marsden 2009, section 2; Hairer, Lubich and Wanner 2006, III.4):
dexp^-1_x = phi(ad x)^-1, phi(z) = (e^z - 1)/z, and Ad_{exp x} = exp(ad x). phi(A) is the top-right
block of exp([[A, I], [0, 0]]) (scipy.linalg.expm, batched).

Cayley (Bou-Rabee and Marsden 2009, section 2.2; Fedorov and Zenkov 2005 use it on SO(3)):
cay(X) = (I - X/2)^-1 (I + X/2) in a matrix representation X = hat(x); dcay^-1_x y = (I - X/2) Y (I + X/2)
(= y - [x, y]/2 - x y x / 4, an element of g for so(3), se(2), se(3)) and Ad_{cay x} y = F Y F^-1. It
needs the group's ``hat`` / ``vee`` (liegroups.SO3, SE2, SE3).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg


def _ad(C, x):
    """ad(x)[..., k, j] = sum_i x_i C[i, j, k] (complex-safe)."""
    return np.einsum("...i,ijk->...kj", x, C)


def _phi(A):
    """phi(A) = sum_k A^k / (k+1)! for a batch of (n, n) matrices."""
    n = A.shape[-1]
    big = np.zeros(A.shape[:-2] + (2 * n, 2 * n), dtype=A.dtype)
    big[..., :n, :n] = A
    big[..., :n, n:] = np.eye(n)
    return scipy.linalg.expm(big)[..., :n, n:]


class ExpRetraction:
    """tau = exp on the algebra with structure constants ``C``."""

    name = "exp"

    def __init__(self, algebra):
        self.C = np.asarray(algebra.structure_constants)
        self.n = self.C.shape[0]

    def dinv_T(self, x, m):
        """(dexp^-1_x)^T m: solve phi(ad x)^T u = m."""
        P = _phi(_ad(self.C, x))
        return np.linalg.solve(np.swapaxes(P, -1, -2), m[..., None])[..., 0]

    def Ad_T(self, x, m):
        """exp(ad x)^T m."""
        E = scipy.linalg.expm(_ad(self.C, x))
        return np.einsum("...kj,...k->...j", E, m)


class CayleyRetraction:
    """tau = cay in the matrix representation of ``group`` (hat / vee)."""

    name = "cay"

    def __init__(self, algebra, group):
        self.n = algebra.dim
        N = group.matrix_size
        self.N = N
        E = np.eye(self.n)
        self.basis = np.asarray(group.hat(E), dtype=float)          # (n, N, N): hat(e_j)
        # vee as a linear map: coefficients of a matrix in the basis (least squares on the flattened basis)
        self.vee_mat = np.linalg.pinv(self.basis.reshape(self.n, -1).T)    # (n, N*N)

    def _hat(self, x):
        return np.einsum("...i,iab->...ab", x, self.basis)

    def _vee(self, X):
        return np.einsum("ij,...j->...i", self.vee_mat, X.reshape(X.shape[:-2] + (-1,)))

    def _matrix(self, x, op):
        """The (n, n) matrix of the linear map y -> vee(op(hat y)) (column j is the image of e_j)."""
        imgs = op(self.basis.reshape((1,) * (x.ndim - 1) + self.basis.shape))   # (..., n, N, N)
        return np.swapaxes(self._vee(imgs), -1, -2)

    def dinv_T(self, x, m):
        """(dcay^-1_x)^T m with dcay^-1_x y = vee((I - X/2) Y (I + X/2))."""
        X = self._hat(x)[..., None, :, :]
        Id = np.eye(self.N)
        D = self._matrix(x, lambda Y: (Id - 0.5 * X) @ Y @ (Id + 0.5 * X))
        return np.einsum("...kj,...k->...j", D, m)

    def Ad_T(self, x, m):
        """Ad_{cay x}^T m with Ad_F y = vee(F Y F^-1), F = (I - X/2)^-1 (I + X/2)."""
        X = self._hat(x)
        Id = np.eye(self.N)
        F = np.linalg.solve(Id - 0.5 * X, Id + 0.5 * X)
        Fi = np.linalg.solve(Id + 0.5 * X, Id - 0.5 * X)
        Fb, Fib = F[..., None, :, :], Fi[..., None, :, :]
        D = self._matrix(x, lambda Y: Fb @ Y @ Fib)
        return np.einsum("...kj,...k->...j", D, m)


def retraction(name, algebra, group=None):
    """The retraction ``name`` ("exp" or "cay") on ``algebra`` (Cayley needs ``group``)."""
    if name == "exp":
        return ExpRetraction(algebra)
    return CayleyRetraction(algebra, group)
