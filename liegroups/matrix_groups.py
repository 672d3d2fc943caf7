"""Matrix groups SO(3), SE(2), SE(3) for reconstruction g' = g w, with closed-form exp and log.

Bases match the named algebras (see :mod:`liegroups.named`):

* so(3): x = (x1, x2, x3) -> hat(x), hat(x) y = x cross y;
* se(2): x = (u, v, w) (translation along e1, along e2, rotation) ->
  [[0, -w, u], [w, 0, v], [0, 0, 0]];
* se(3): x = (omega, v) (rotation first, then translation) -> [[hat(omega), v], [0, 0]].

All functions are batched over leading axes and safe at small angles (Taylor branches).
"""

from __future__ import annotations

import numpy as np

from .exponential import _so3_coeffs, hat3, rodrigues


def _vee3(X):
    return np.stack([X[..., 2, 1], X[..., 0, 2], X[..., 1, 0]], axis=-1)


def _so3_log(R):
    R = np.asarray(R, dtype=float)
    tr = np.trace(R, axis1=-2, axis2=-1)
    cos = np.clip((tr - 1.0) / 2.0, -1.0, 1.0)
    theta = np.arccos(cos)
    w = _vee3(R - np.swapaxes(R, -1, -2)) / 2.0  # = sin(theta) * axis
    sin = np.sin(theta)
    small = theta < 1e-6
    near_pi = np.pi - theta < 1e-4
    scale = np.where(small, 1.0 + theta**2 / 6.0, theta / np.where(small | near_pi, 1.0, sin))
    out = scale[..., None] * w
    if np.any(near_pi):
        # axis from the symmetric part: R = I + 2 aa^T - 2I near pi -> (R + I)/2 = a a^T
        S = (R + np.eye(3)) / 2.0
        diag = np.diagonal(S, axis1=-2, axis2=-1)
        k = np.argmax(diag, axis=-1)
        col = np.take_along_axis(S, k[..., None, None] * np.ones((1, 3, 1), dtype=int), axis=-1)[..., 0]
        axis = col / np.sqrt(np.maximum(np.take_along_axis(diag, k[..., None], -1), 1e-300))
        # fix the sign with the antisymmetric part
        sgn = np.where(np.sum(axis * w, axis=-1) < 0, -1.0, 1.0)
        axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True) * sgn[..., None]
        out = np.where(near_pi[..., None], theta[..., None] * axis, out)
    return out


class _Group:
    name = ""
    matrix_size = 0
    dim = 0

    def identity(self, batch=()):
        return np.broadcast_to(np.eye(self.matrix_size), tuple(batch) + (self.matrix_size,) * 2).copy()

    def compose(self, g, h):
        return np.asarray(g) @ np.asarray(h)

    @property
    def algebra(self):
        from . import named

        return getattr(named, self.name.lower())()


class SO3Group(_Group):
    """The rotation group SO(3); exp is Rodrigues' formula."""

    name = "SO3"
    matrix_size = 3
    dim = 3

    def hat(self, x):
        return hat3(x)

    def vee(self, X):
        return _vee3(X)

    def exp(self, x):
        """R = I + (sin t / t) X + ((1 - cos t)/t^2) X^2, t = |x|."""
        return rodrigues(x)

    def log(self, R):
        """Inverse of exp with |x| <= pi."""
        return _so3_log(R)

    def inverse(self, R):
        return np.swapaxes(np.asarray(R), -1, -2)

    def Ad(self, R):
        return np.asarray(R, dtype=float)

    def defect(self, R):
        """max |R^T R - I| and |det R - 1|: how far R is from the group."""
        R = np.asarray(R, dtype=float)
        o = np.max(np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)), axis=(-2, -1))
        return np.maximum(o, np.abs(np.linalg.det(R) - 1.0))


class SE2Group(_Group):
    """SE(2) as 3x3 homogeneous matrices, algebra coordinates (u, v, w)."""

    name = "SE2"
    matrix_size = 3
    dim = 3

    def hat(self, x):
        x = np.asarray(x, dtype=float)
        z = np.zeros(x.shape[:-1])
        return np.stack(
            [np.stack([z, -x[..., 2], x[..., 0]], -1),
             np.stack([x[..., 2], z, x[..., 1]], -1),
             np.stack([z, z, z], -1)], -2)

    def vee(self, X):
        return np.stack([X[..., 0, 2], X[..., 1, 2], X[..., 1, 0]], axis=-1)

    @staticmethod
    def _V(theta):
        t2 = theta**2
        a, b = _so3_coeffs(t2)  # sin t / t, (1 - cos t)/t^2
        bt = b * theta
        return np.stack([np.stack([a, -bt], -1), np.stack([bt, a], -1)], -2)

    def exp(self, x):
        """[[R(w), V(w) (u, v)], [0, 1]], V = [[sin w/w, -(1-cos w)/w], [(1-cos w)/w, sin w/w]]."""
        x = np.asarray(x, dtype=float)
        th = x[..., 2]
        c, s = np.cos(th), np.sin(th)
        g = self.identity(x.shape[:-1])
        g[..., 0, 0] = c
        g[..., 0, 1] = -s
        g[..., 1, 0] = s
        g[..., 1, 1] = c
        g[..., :2, 2] = np.einsum("...ij,...j->...i", self._V(th), x[..., :2])
        return g

    def log(self, g):
        g = np.asarray(g, dtype=float)
        th = np.arctan2(g[..., 1, 0], g[..., 0, 0])
        t = np.linalg.solve(self._V(th), g[..., :2, 2:3])[..., 0]
        return np.concatenate([t, th[..., None]], axis=-1)

    def inverse(self, g):
        return np.linalg.inv(g)

    def Ad(self, g):
        """Ad_g on (u, v, w): [[R, (p2, -p1)^T], [0, 1]]."""
        g = np.asarray(g, dtype=float)
        A = np.zeros(g.shape[:-2] + (3, 3))
        A[..., :2, :2] = g[..., :2, :2]
        A[..., 0, 2] = g[..., 1, 2]
        A[..., 1, 2] = -g[..., 0, 2]
        A[..., 2, 2] = 1.0
        return A

    def defect(self, g):
        g = np.asarray(g, dtype=float)
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

    def hat(self, x):
        x = np.asarray(x, dtype=float)
        X = np.zeros(x.shape[:-1] + (4, 4))
        X[..., :3, :3] = hat3(x[..., :3])
        X[..., :3, 3] = x[..., 3:]
        return X

    def vee(self, X):
        return np.concatenate([_vee3(X[..., :3, :3]), X[..., :3, 3]], axis=-1)

    @staticmethod
    def _V(w):
        t2 = np.sum(w * w, axis=-1)
        small = t2 < 1e-8
        a, b = _so3_coeffs(t2)
        c = np.where(small, 1.0 / 6.0 - t2 / 120.0, (1.0 - a) / np.where(small, 1.0, t2))
        W = hat3(w)
        return np.eye(3) + b[..., None, None] * W + c[..., None, None] * (W @ W)

    def exp(self, x):
        """[[R(omega), V(omega) v], [0, 1]], V = I + (1-cos t)/t^2 W + (t - sin t)/t^3 W^2."""
        x = np.asarray(x, dtype=float)
        g = self.identity(x.shape[:-1])
        g[..., :3, :3] = rodrigues(x[..., :3])
        g[..., :3, 3] = np.einsum("...ij,...j->...i", self._V(x[..., :3]), x[..., 3:])
        return g

    def log(self, g):
        g = np.asarray(g, dtype=float)
        w = _so3_log(g[..., :3, :3])
        v = np.linalg.solve(self._V(w), g[..., :3, 3:4])[..., 0]
        return np.concatenate([w, v], axis=-1)

    def inverse(self, g):
        g = np.asarray(g, dtype=float)
        out = self.identity(g.shape[:-2])
        Rt = np.swapaxes(g[..., :3, :3], -1, -2)
        out[..., :3, :3] = Rt
        out[..., :3, 3] = -np.einsum("...ij,...j->...i", Rt, g[..., :3, 3])
        return out

    def Ad(self, g):
        """Ad_g on (omega, v): [[R, 0], [hat(p) R, R]]."""
        g = np.asarray(g, dtype=float)
        R = g[..., :3, :3]
        A = np.zeros(g.shape[:-2] + (6, 6))
        A[..., :3, :3] = R
        A[..., 3:, 3:] = R
        A[..., 3:, :3] = hat3(g[..., :3, 3]) @ R
        return A

    def defect(self, g):
        g = np.asarray(g, dtype=float)
        o = SO3.defect(g[..., :3, :3])
        last = np.max(np.abs(g[..., 3, :] - np.array([0.0, 0.0, 0.0, 1.0])), axis=-1)
        return np.maximum(o, last)


SO3 = SO3Group()
SE2 = SE2Group()
SE3 = SE3Group()


def group_for(kind):
    """The matrix group object for an algebra kind: 'so3', 'se2' or 'se3'."""
    try:
        return {"so3": SO3, "se2": SE2, "se3": SE3}[kind]
    except KeyError:
        raise ValueError(f"no matrix group for {kind!r}; available: so3, se2, se3") from None
