"""The code writer of the Lie-group steps on the coadjoint orbits of an almost abelian algebra, with the abelian group
R^2 acting (:mod:`integrators.geometry.orbit_space`, whose numpy twin :class:`integrators.geometry.orbit_space.
OrbitSpace` is the reference these steps agree with to round-off).

In the adapted basis T of :mod:`integrators.geometry.almost_abelian` (zhat = T^T z = (z0, y), what = T^-1 w):

* the generator of a state is xi = (sigma, gamma) = (what_0, -what_h . D^T y), what = W_a zhat + c_a with
  W_a = T^-1 W T^-T and c_a = T^-1 c written into the text (2 components instead of n);
* a stage point theta . z = (z0 + c, e^(s D^T) y) stays in the adapted coordinates (the next generator reads them
  there), with e^(s D^T) - 1 blockwise as the closed-form coadjoint action writes it
  (:meth:`integrators.codegen.exp_writer.ExponentialWriter.scaling_increment`: expm1 and half angles, NaN beyond
  |s lambda| = 700);
* the step's increment and the error estimate's state change (gamma, sigma D^T y) go back with T^-T;
* dexp^-1 is the identity (the group is abelian).

A stage costs one scalar function per block of D and W_a's n^2 products (no other n x n map), against three n x n
maps, one scalar function per block for the exponential and one for dexp^-1 of the coadjoint action of the group
(:mod:`integrators.codegen.exp_writer`, :mod:`integrators.codegen.dexpinv_writer`). On the dense output's numpy
columns the maps by T are matrix products (:func:`orbit_class` over
:class:`integrators.codegen.matrix_source.MatrixSource`, :func:`integrators.codegen.programs.source`).
"""

from __future__ import annotations

from ..geometry.orbit_space import OrbitForm
from .source_text import lin
from .writer import Source


def applies(st, lie):
    """True when the Lie-group steps (``lie``) of structure ``st`` move on the orbits with R^2 acting: unforced
    (st.P None) on an algebra whose closed form is "almost_abelian" (the condition of
    :func:`integrators.geometry.orbit_space.applies` for a recognised structure)."""
    return bool(lie) and getattr(st, "P", None) is None and getattr(st, "closed", None) == "almost_abelian"


class OrbitWriter:
    """Mixin over :class:`integrators.codegen.writer.Source` (or a subclass): the generator, the action, dexp^-1
    and the error estimate's map of the orbit space (module docstring). Generators have 2 names, states n."""

    @property
    def gdim(self):
        return 2

    def _orbit(self):
        form = self.__dict__.get("_orbit_form")
        if form is None:
            form = self._orbit_form = OrbitForm(self.st.C)
            self._orbit_Wa = form.Tinv @ self.st.W @ form.Tinv.T
            self._orbit_ca = form.Tinv @ self.st.c
            self._orbit_points = set()
        return form

    def _hat(self, z):
        """The adapted coordinates of the state names z: themselves for a stage point this writer wrote, else
        T^T z (written once per z while in scope, :meth:`adapted`)."""
        self._orbit()
        if tuple(z) in self._orbit_points:
            return list(z)
        return self.adapted("TT", z, "za")

    def _Dty(self, zh):
        """The expressions of D^T y (n-1, y = zhat[1:]; D^T block diagonal in the adapted basis)."""
        Dt, m = self._orbit().Dt, self.n - 1
        return [lin([(Dt[i, k], zh[1 + k]) for k in range(m)]) for i in range(m)]

    def velocity(self, z, scale=None):
        """xi = (what_0, -what_h . D^T y) at the state z (original names, or a stage point's adapted ones)."""
        self._orbit()
        zh = self._hat(z)
        Wa, ca, n = self._orbit_Wa, self._orbit_ca, self.n
        wh = self.assign("wa", [lin([(Wa[i, k], zh[k]) for k in range(n)] + [(ca[i], "1.0")]) for i in range(n)])
        u = self.assign("du", self._Dty(zh))
        exprs = [wh[0], f"-({' + '.join(f'{wh[i]}*{u[i - 1]}' for i in range(1, n))})"]
        return self.assign("w", exprs if scale is None else [f"{scale}*({e})" for e in exprs])

    def field(self, z):
        """The ambient field z' = ad*_w z as the infinitesimal action of the generator (the starting step's)."""
        return self.to_state(self.velocity(z), z)

    def _delta_hat(self, x, zh):
        """(s, c) . zhat - zhat = (c, (e^(s D^T) - 1) y) (adapted coordinates, no cancellation)."""
        self._orbit()
        d, _ = self.scaling_increment(x[0], zh)
        d[0] = x[1]
        return self.assign("da", d)

    def stage_act(self, x, z):
        """The stage point theta . z in the adapted coordinates (read there by :meth:`velocity`)."""
        zh = self._hat(z)
        d = self._delta_hat(x, zh)
        Y = self.assign("ya", [f"{zh[i]} + {d[i]}" for i in range(self.n)])
        self._orbit_points.add(tuple(Y))
        return Y

    def act(self, x, z, delta):
        """theta . z (``delta``: minus z) in the original coordinates, the increment by T^-T."""
        d = self.adapted("TinvT", self._delta_hat(x, self._hat(z)), "d")
        return d if delta else self.assign("y", [f"{z[i]} + {d[i]}" for i in range(self.n)])

    def foldable(self):
        return False

    def dexpinv(self, theta, v, terms):
        return v

    def to_state(self, x, z):
        """(gamma, sigma D^T y) at z, back by T^-T: the state change of the generator x to leading order."""
        zh = self._hat(z)
        u = self._Dty(zh)
        dh = self.assign("ez", [x[1]] + [f"{x[0]}*({u[i]})" for i in range(self.n - 1)])
        return self.adapted("TinvT", dh, "ezo")


class OrbitSource(OrbitWriter, Source):
    """:class:`integrators.codegen.writer.Source` with the orbit space's steps (module docstring)."""


def orbit_class(base):
    """The writer class of the orbit steps over ``base`` (:class:`Source` or a subclass: the ensembles'
    :class:`integrators.codegen.batchgen.EnsembleSource`)."""
    if base is Source:
        return OrbitSource
    cls = _CLASSES.get(base)
    if cls is None:
        cls = _CLASSES[base] = type(f"Orbit{base.__name__}", (OrbitWriter, base), {"__doc__": OrbitWriter.__doc__})
    return cls


_CLASSES = {}


def writer_class(st, lie, base=Source):
    """``base`` (:class:`Source` or a subclass), or its orbit-space variant where the Lie-group steps of ``st`` move
    on an almost abelian algebra's orbits (:func:`applies`)."""
    return orbit_class(base) if applies(st, lie) else base
