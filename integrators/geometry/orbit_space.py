"""The coadjoint orbits of an almost abelian algebra as a homogeneous space of the abelian group R^2, the space
the Lie-group (RKMK, commutator-free) methods move an unforced coadjoint problem on such an algebra in.

Derivation. In the adapted basis of :mod:`integrators.geometry.almost_abelian` (f0, then a basis of the abelian
ideal h in which D = ad_{f0}|h is block diagonal), the structure constants are [f0, f_k] = sum_l D[l, k] f_l and
[f_i, f_k] = 0 on h, so for a covector z = (z0, y) (coordinates zhat = T^T z) and w = (w0, v) (what = T^-1 w) the
Lie-Poisson equation z' = ad*_w z, (ad*_w z)_j = sum_{i,k} w_i C[i, j, k] z_k, reads

    y' = w0 D^T y,        z0' = -v . D^T y.

A coadjoint orbit is therefore {(z0 + c, e^(s D^T) y) : s, c real} (a point, a line or a plane), and the abelian
group R^2 acts on g* by (s, c) . (z0, y) = (z0 + c, e^(s D^T) y), with infinitesimal action (sigma, gamma) ->
(gamma, sigma D^T y) at (z0, y): the field is that action of the generator

    xi(z) = (sigma, gamma) = (w0, -v . D^T y),        w = w(z).

Munthe-Kaas's methods take any Lie group acting on the manifold (Munthe-Kaas 1999; Iserles, Munthe-Kaas,
Norsett and Zanna 2000, section 3): with this action the group is abelian, dexp^-1 is the identity and an RKMK
step is the Runge-Kutta step of theta' = xi(theta . z_n), theta(0) = 0 in R^2, whose stages
theta_i . z_n lie on the orbit of z_n (e^(s D^T) is exact blockwise: e^(s lambda) on a real eigenvalue, e^(s
alpha) times a rotation by s beta on a pair alpha +- i beta), so the Casimirs (transcendental on these algebras)
are kept to round-off. Compared with the coadjoint action of the group itself (exp(ad x)^T z, dexp^-1 by
Bernoulli functions of the blocks of ad_x): the same orbit, two stage components instead of n, no dexp^-1, and
one scalar exponential per block of D a stage. The step's error estimate is mapped to the state by the
infinitesimal action at z (:meth:`OrbitSpace.to_state`).

Used where the generated code uses :class:`integrators.codegen.orbit_source.OrbitSource`
(:func:`integrators.codegen.orbit_source.applies`): an unforced, autonomous coadjoint problem whose algebra's
closed form is "almost_abelian" (:func:`integrators.geometry.recognition.closed_form`).
"""

from __future__ import annotations

import numpy as np

from .almost_abelian import almost_abelian
from .recognition import closed_form


def applies(problem):
    """True when the Lie-group methods move ``problem`` by :class:`OrbitSpace`: a coadjoint problem without a
    forcing, not time-dependent, on an algebra whose closed form is "almost_abelian"."""
    return (getattr(problem, "kind", None) == "coadjoint" and problem.forcing is None
            and not getattr(problem, "time_dependent", False)
            and closed_form(problem.algebra.structure_constants) == "almost_abelian")


class OrbitForm:
    """The data of the orbit action of an almost abelian algebra with structure constants C: ``T``, ``Tinv``
    (the adapted basis), ``Dt`` = D^T in the adapted coordinates of h ((n-1) x (n-1), block diagonal),
    ``reals`` [(i, lambda)] and ``pairs`` [(i, alpha, beta)] of :class:`integrators.geometry.almost_abelian.
    AlmostAbelian` (on a pair, D^T acts on y_i + i y_(i+1) as multiplication by alpha + i beta)."""

    def __init__(self, C):
        form = almost_abelian(C)
        if form is None:
            raise ValueError("the orbit action needs an almost abelian algebra with a diagonalisable D")
        self.T, self.Tinv = form.T, form.Tinv
        self.reals, self.pairs = form.reals, form.pairs
        self.Dt = form.block_matrix().T
        self.n = form.T.shape[0]

    def adapted(self, z):
        """zhat = T^T z (rows of a batch)."""
        return z @ self.T

    def back(self, zhat):
        """z = T^-T zhat."""
        return zhat @ self.Tinv

    def generator(self, z, w):
        """xi = (w0, -v . D^T y) in the adapted coordinates (module docstring), (..., 2)."""
        zh, wh = self.adapted(z), w @ self.Tinv.T
        gamma = -np.einsum("...i,...i->...", wh[..., 1:], zh[..., 1:] @ self.Dt.T)
        return np.stack([wh[..., 0], gamma], axis=-1)

    def delta_adapted(self, x, zh):
        """(s, c) . zhat - zhat = (c, (e^(s D^T) - 1) y) without cancellation (expm1 and half angles)."""
        s, c = x[..., 0], x[..., 1]
        d = np.zeros(np.broadcast_shapes(zh.shape, s.shape + (self.n,)))
        d[..., 0] = c
        for i, lam in self.reals:
            d[..., i] = np.expm1(s * lam) * zh[..., i]
        for i, al, be in self.pairs:
            j = i + 1
            em, h = np.expm1(s * al), np.sin(0.5 * s * be)
            er = em * np.cos(s * be) - 2.0 * h * h          # e^(s al) cos(s be) - 1
            ei = (em + 1.0) * np.sin(s * be)                # e^(s al) sin(s be)
            d[..., i] = er * zh[..., i] - ei * zh[..., j]
            d[..., j] = er * zh[..., j] + ei * zh[..., i]
        return d

    def to_state_adapted(self, x, zh):
        """The infinitesimal action of x = (sigma, gamma) at zhat: (gamma, sigma D^T y)."""
        d = np.zeros(np.broadcast_shapes(zh.shape, x.shape[:-1] + (self.n,)))
        d[..., 0] = x[..., 1]
        d[..., 1:] = x[..., :1] * (zh[..., 1:] @ self.Dt.T)
        return d


class OrbitSpace:
    """The coadjoint orbits of an almost abelian algebra, R^2 acting (module docstring): generators (sigma,
    gamma), act((s, c), z) = T^-T ((s, c) . T^T z), bracket 0 (dexp^-1 = identity)."""

    preserves = frozenset({"casimirs"})
    #: the group is abelian: dexp^-1 is the identity (integrators.geometry.closed_dexpinv.space_dexpinv)
    abelian = True
    xdim = 2

    def __init__(self, problem):
        self.problem = problem
        self.algebra = problem.algebra
        self.velocity = problem.velocity
        self.form = OrbitForm(self.algebra.structure_constants)

    def field(self, t, z):
        return self.form.generator(z, self.velocity(z))

    def act_delta(self, x, z):
        """act(x, z) - z without cancellation."""
        f = self.form
        return f.back(f.delta_adapted(np.asarray(x, dtype=float), f.adapted(z)))

    def act(self, x, z):
        return z + self.act_delta(x, z)

    def bracket(self, x, y):
        return np.zeros(np.broadcast_shapes(np.shape(x), np.shape(y)))

    def to_state(self, x, z):
        """The state change of a generator to leading order, d/ds act(s x, z) at s = 0 (the error estimate of an
        adaptive pair)."""
        f = self.form
        return f.back(f.to_state_adapted(np.asarray(x, dtype=float), f.adapted(z)))
