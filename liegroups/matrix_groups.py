"""Matrix groups SO(3), SE(2), SE(3) for reconstruction g' = g w, with closed-form exp and log.

Bases match the named algebras (see :mod:`liegroups.named`):

* so(3): x = (x1, x2, x3) -> hat(x), hat(x) y = x cross y;
* se(2): x = (u, v, w) (translation along e1, along e2, rotation) ->
  [[0, -w, u], [w, 0, v], [0, 0, 0]];
* se(3): x = (omega, v) (rotation first, then translation) -> [[hat(omega), v], [0, 0]].

The formulas (Rodrigues, the SE(2) / SE(3) exponentials, V and V^-1, the logarithm accurate at every
angle) are those of :mod:`liegroups.closed_forms`. All functions are batched over leading axes and safe
at small angles.
"""

from __future__ import annotations

from typing import Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import named
from .algebra import LieAlgebra
from .closed_forms import (hat3, rodrigues, rodrigues_minus_identity, se2_Ad, se2_exp, se2_exp_minus_identity,
                           se2_V_entries, se3_Ad, se3_exp, se3_exp_minus_identity, se3_V, so3_log, vee3)
from .errors import LieAlgebraError
from .validation import check_finite, real_array

#: SO3.log refuses matrices farther than this from SO(3) (max |R^T R - I|, |det R - 1|)
LOG_DEFECT_TOL = 1e-6


class _Group:
    name = ""
    matrix_size = 0
    dim = 0

    def _vec(self, x):
        x = check_finite(real_array(x, f"{self.name} algebra vector"), f"{self.name} algebra vector")
        if x.shape[-1:] != (self.dim,):
            raise LieAlgebraError(f"{self.name}: algebra vectors need last axis {self.dim}, got shape {x.shape}")
        return x

    def _mat(self, g):
        g = check_finite(real_array(g, f"{self.name} group element"), f"{self.name} group element")
        k = self.matrix_size
        if g.shape[-2:] != (k, k):
            raise LieAlgebraError(f"{self.name}: group elements are ({k}, {k}) matrices, got shape {g.shape}")
        return g

    def identity(self, batch: tuple[int, ...] = ()) -> NDArray[np.float64]:
        """Identity matrices of shape batch + (k, k)."""
        return np.broadcast_to(np.eye(self.matrix_size), tuple(batch) + (self.matrix_size,) * 2).copy()

    def compose(self, g: ArrayLike, h: ArrayLike) -> NDArray[np.float64]:
        """Group product g h (matrix product), batched."""
        return self._mat(g) @ self._mat(h)

    @property
    def algebra(self) -> LieAlgebra:
        """The named Lie algebra in the same basis."""
        return getattr(named, self.name.lower())()


class SO3Group(_Group):
    """The rotation group SO(3); exp is Rodrigues' formula."""

    name = "SO3"
    matrix_size = 3
    dim = 3

    def hat(self, x: ArrayLike) -> NDArray[np.float64]:
        """hat(x), the matrix with hat(x) y = x cross y."""
        return hat3(self._vec(x))

    def vee(self, X: ArrayLike) -> NDArray[np.float64]:
        """Inverse of hat (reads the antisymmetric entries)."""
        return vee3(self._mat(X))

    def exp(self, x: ArrayLike) -> NDArray[np.float64]:
        """R = I + (sin t / t) X + ((1 - cos t)/t^2) X^2, t = |x|."""
        return rodrigues(self._vec(x))

    def expm1(self, x: ArrayLike) -> NDArray[np.float64]:
        """exp(hat x) - I = a X + b X^2 without cancellation (entries accurate relative to |x|)."""
        return rodrigues_minus_identity(self._vec(x))

    def log(self, R: ArrayLike) -> NDArray[np.float64]:
        """Inverse of exp with |x| <= pi (at exactly pi either of the two axes is returned).
        LieAlgebraError when R is not a rotation (max |R^T R - I|, |det R - 1| above LOG_DEFECT_TOL)."""
        R = self._mat(R)
        d = self.defect(R)
        if np.any(d > LOG_DEFECT_TOL):
            raise LieAlgebraError(f"SO3.log needs rotation matrices: max |R^T R - I| and |det R - 1| reach "
                                  f"{float(np.max(d)):.3e} (tolerance {LOG_DEFECT_TOL:.0e})")
        return so3_log(R)

    def inverse(self, R: ArrayLike) -> NDArray[np.float64]:
        """R^-1 = R^T."""
        return np.swapaxes(self._mat(R), -1, -2)

    def Ad(self, R: ArrayLike) -> NDArray[np.float64]:
        """Ad_R = R on so(3) = R^3."""
        return self._mat(R).copy()

    def defect(self, R: ArrayLike) -> NDArray[np.float64]:
        """max |R^T R - I| and |det R - 1|: how far R is from the group."""
        R = self._mat(R)
        o = np.max(np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)), axis=(-2, -1))
        return np.maximum(o, np.abs(np.linalg.det(R) - 1.0))


class SE2Group(_Group):
    """SE(2) as 3x3 homogeneous matrices, algebra coordinates (u, v, w)."""

    name = "SE2"
    matrix_size = 3
    dim = 3

    def hat(self, x: ArrayLike) -> NDArray[np.float64]:
        """[[0, -w, u], [w, 0, v], [0, 0, 0]] for x = (u, v, w)."""
        x = self._vec(x)
        z = np.zeros(x.shape[:-1])
        return np.stack(
            [np.stack([z, -x[..., 2], x[..., 0]], -1),
             np.stack([x[..., 2], z, x[..., 1]], -1),
             np.stack([z, z, z], -1)], -2)

    def vee(self, X: ArrayLike) -> NDArray[np.float64]:
        """Inverse of hat."""
        X = self._mat(X)
        return np.stack([X[..., 0, 2], X[..., 1, 2], X[..., 1, 0]], axis=-1)

    def exp(self, x: ArrayLike) -> NDArray[np.float64]:
        """[[R(w), V(w) (u, v)], [0, 1]], V = [[sin w/w, -(1-cos w)/w], [(1-cos w)/w, sin w/w]]."""
        return se2_exp(self._vec(x))

    def expm1(self, x: ArrayLike) -> NDArray[np.float64]:
        """exp(hat x) - I without cancellation (cos w - 1 = -2 sin^2(w/2)); the last row is exactly 0."""
        return se2_exp_minus_identity(self._vec(x))

    def log(self, g: ArrayLike) -> NDArray[np.float64]:
        """Inverse of exp with w in (-pi, pi]: w = atan2(R10, R00), (u, v) = V(w)^-1 p."""
        g = self._mat(g)
        th = np.arctan2(g[..., 1, 0], g[..., 0, 0])
        a, beta = se2_V_entries(th)
        det = a * a + beta * beta
        p1, p2 = g[..., 0, 2], g[..., 1, 2]
        return np.stack([(a * p1 + beta * p2) / det, (-beta * p1 + a * p2) / det, th], axis=-1)

    def inverse(self, g: ArrayLike) -> NDArray[np.float64]:
        """(R, p)^-1 = (R^T, -R^T p)."""
        g = self._mat(g)
        out = self.identity(g.shape[:-2])
        Rt = np.swapaxes(g[..., :2, :2], -1, -2)
        out[..., :2, :2] = Rt
        out[..., :2, 2] = -np.einsum("...ij,...j->...i", Rt, g[..., :2, 2])
        return out

    def Ad(self, g: ArrayLike) -> NDArray[np.float64]:
        """Ad_g on (u, v, w): [[R, (p2, -p1)^T], [0, 1]]."""
        return se2_Ad(self._mat(g))

    def defect(self, g: ArrayLike) -> NDArray[np.float64]:
        """max of |R^T R - I|, |det R - 1| and |last row - (0, 0, 1)|."""
        g = self._mat(g)
        R = g[..., :2, :2]
        o = np.max(np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(2)), axis=(-2, -1))
        o = np.maximum(o, np.abs(np.linalg.det(R) - 1.0))
        last = np.max(np.abs(g[..., 2, :] - np.array([0.0, 0.0, 1.0])), axis=-1)
        return np.maximum(o, last)


class SE3Group(_Group):
    """SE(3) as 4x4 homogeneous matrices, algebra coordinates (omega, v)."""

    name = "SE3"
    matrix_size = 4
    dim = 6

    def hat(self, x: ArrayLike) -> NDArray[np.float64]:
        """[[hat(omega), v], [0, 0]] for x = (omega, v)."""
        x = self._vec(x)
        X = np.zeros(x.shape[:-1] + (4, 4))
        X[..., :3, :3] = hat3(x[..., :3])
        X[..., :3, 3] = x[..., 3:]
        return X

    def vee(self, X: ArrayLike) -> NDArray[np.float64]:
        """Inverse of hat."""
        X = self._mat(X)
        return np.concatenate([vee3(X[..., :3, :3]), X[..., :3, 3]], axis=-1)

    def exp(self, x: ArrayLike) -> NDArray[np.float64]:
        """[[R(omega), V(omega) v], [0, 1]], V = I + (1-cos t)/t^2 W + (t - sin t)/t^3 W^2."""
        return se3_exp(self._vec(x))

    def expm1(self, x: ArrayLike) -> NDArray[np.float64]:
        """exp(hat x) - I = [[a W + b W^2, V v], [0, 0]] without cancellation; the last row is exactly 0."""
        return se3_exp_minus_identity(self._vec(x))

    def log(self, g: ArrayLike) -> NDArray[np.float64]:
        """Inverse of exp with |omega| <= pi: omega = log R, v = V(omega)^-1 p."""
        g = self._mat(g)
        w = so3_log(g[..., :3, :3])
        v = np.einsum("...ij,...j->...i", se3_V(w, inverse=True), g[..., :3, 3])
        return np.concatenate([w, v], axis=-1)

    def inverse(self, g: ArrayLike) -> NDArray[np.float64]:
        """(R, p)^-1 = (R^T, -R^T p)."""
        g = self._mat(g)
        out = self.identity(g.shape[:-2])
        Rt = np.swapaxes(g[..., :3, :3], -1, -2)
        out[..., :3, :3] = Rt
        out[..., :3, 3] = -np.einsum("...ij,...j->...i", Rt, g[..., :3, 3])
        return out

    def Ad(self, g: ArrayLike) -> NDArray[np.float64]:
        """Ad_g on (omega, v): [[R, 0], [hat(p) R, R]]."""
        return se3_Ad(self._mat(g))

    def defect(self, g: ArrayLike) -> NDArray[np.float64]:
        """max of the SO(3) defect of R and |last row - (0, 0, 0, 1)|."""
        g = self._mat(g)
        o = SO3.defect(g[..., :3, :3])
        last = np.max(np.abs(g[..., 3, :] - np.array([0.0, 0.0, 0.0, 1.0])), axis=-1)
        return np.maximum(o, last)


SO3 = SO3Group()
SE2 = SE2Group()
SE3 = SE3Group()


#: any of the three group objects (the type of :func:`group_for`)
MatrixGroup = Union[SO3Group, SE2Group, SE3Group]


def group_for(kind: str) -> MatrixGroup:
    """The matrix group object for an algebra kind: 'so3', 'se2' or 'se3'."""
    try:
        return {"so3": SO3, "se2": SE2, "se3": SE3}[kind]
    except KeyError:
        raise LieAlgebraError(f"no matrix group for {kind!r}; available: so3, se2, se3") from None
