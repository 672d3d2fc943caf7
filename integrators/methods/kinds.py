"""The kinds of methods: small frozen data classes (diffrax style), each a kind applied to its
coefficients. The loops that run them live in :mod:`integrators.engine`, their steps in
:mod:`integrators.reference` and :mod:`integrators.codegen`.

Every method has ``name``, ``order`` (the order it is measured to have, tested), ``preserves`` (a subset
of {"casimirs", "linear_invariants", "quadratic_invariants", "group"}, GeometricIntegrators.jl style:
what it keeps on an unforced coadjoint problem, tested), ``kinds`` (the problem kinds it takes),
``reference`` (the work it comes from) and ``runner``: the loop of the engine that runs it ("fixed",
"adaptive" or "scipy").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import MethodError
from ..tableaux import Tableau

CASIMIRS = "casimirs"
LINEAR = "linear_invariants"
QUADRATIC = "quadratic_invariants"
GROUP = "group"
#: the discrete schemes in coordinates keep A(q) v = 0 at every step; REVERSIBLE: the map is reversible
NONHOLONOMIC = "nonholonomic_constraint"
REVERSIBLE = "reversibility"

#: the forms a Runge-Kutta tableau is applied in
FORMS = ("rk", "rkmk", "projected")


@dataclass(frozen=True)
class Method:
    """Base: ``name``, ``order``, ``preserves`` (for an unforced coadjoint problem), ``kinds``, ``reference``."""

    name: str
    order: int
    preserves: frozenset = field(default_factory=frozenset)
    kinds: tuple = ("ode", "coadjoint", "reconstruction")
    fixed_step: bool = True
    reference: str = ""

    @property
    def runner(self) -> str:
        """The engine's loop for this method: "fixed" (a step grid), "adaptive" or "scipy"."""
        return "fixed" if self.fixed_step else "adaptive"


@dataclass(frozen=True)
class RungeKutta(Method):
    """An explicit Runge-Kutta tableau (:class:`integrators.tableaux.Tableau`) applied in one of three forms:

    * "rk": the ordinary method on the ambient space, y1 = y + sum_i b_i K_i, K_i = h f(t + c_i h, y +
      sum_j a_ij K_j) (keeps linear invariants);
    * "rkmk": the Runge-Kutta-Munthe-Kaas method on g* (Munthe-Kaas 1999): K_i = h dexp^-1_{theta_i}
      (w(exp(theta_i) . y)), theta_i = sum_j a_ij K_j, y1 = exp(sum_i b_i K_i) . y, dexp^-1 truncated
      to ``terms`` terms: the order's truncation for the fixed-step methods, to round-off (ROUNDOFF_TERMS) for the
      adaptive pairs, whose error estimate cannot see a truncation (keeps the Casimirs and the group); the
      group is the space's (:func:`integrators.reference.stepping.space_for`): g x g* with the affine action for a
      forced problem, and on an almost abelian algebra the abelian R^2 moving along the coadjoint orbits
      (:mod:`integrators.geometry.orbit_space`: dexp^-1 = 1, two stage components);
    * "projected": "rk" followed, after every step, by the orthogonal projection onto the level set of
      all polynomial Casimirs of the algebra (Hairer, Lubich and Wanner 2006, IV.4, Algorithm 4.2).

    A tableau with error weights is an embedded pair: its method is adaptive (rtol, atol, as solve_ivp);
    otherwise it runs on a fixed step grid. ``A``, ``b``, ``c`` are the tableau's.
    """

    tableau: Tableau | None = None
    form: str = "rk"
    terms: int = 1

    def __post_init__(self):
        if not isinstance(self.tableau, Tableau):
            raise MethodError(f"method {self.name!r}: tableau must be a Tableau, got {self.tableau!r}")
        if self.form not in FORMS:
            raise MethodError(f"method {self.name!r}: form must be one of {', '.join(FORMS)}, got {self.form!r}")
        if self.order != self.tableau.order:
            raise MethodError(f"method {self.name!r}: order {self.order} differs from its tableau's "
                              f"({self.tableau.name}: {self.tableau.order})")
        object.__setattr__(self, "fixed_step", not self.tableau.adaptive)
        if not self.reference:
            object.__setattr__(self, "reference", self.tableau.reference)

    @property
    def lie(self) -> bool:
        return self.form == "rkmk"

    @property
    def project(self) -> bool:
        return self.form == "projected"

    @property
    def A(self):
        return self.tableau.A

    @property
    def b(self):
        return self.tableau.b

    @property
    def c(self):
        return self.tableau.c


@dataclass(frozen=True)
class ImplicitMidpoint(Method):
    """y1 = y0 + h f(t + h/2, (y0 + y1)/2), fixed-point iteration to ``tol`` (relative, max-norm)."""

    tol: float = 1e-15
    max_iter: int = 100


@dataclass(frozen=True)
class CommutatorFree(Method):
    """Commutator-free / Crouch-Grossman: each stage Y_i and the update are products of exponentials.

    ``stages[i]`` is a list of coefficient vectors (over the F_j of earlier stages); the exponentials
    are applied to y0 in list order, Y_i = exp(h alpha_{i,last} . F) ... exp(h alpha_{i,0} . F) y0.
    ``update`` likewise gives y1.
    """

    stages: tuple = ()
    update: tuple = ()
    c: tuple = ()
    kinds: tuple = ("coadjoint", "reconstruction")


@dataclass(frozen=True)
class Splitting(Method):
    """Composition of Strang steps of the free rigid body with substep fractions ``gammas``."""

    gammas: tuple = (1.0,)
    kinds: tuple = ("coadjoint",)


@dataclass(frozen=True)
class MoserVeselov(Method):
    """Discrete Moser-Veselov rigid body (implicit; see :mod:`integrators.reference.moser_veselov`)."""

    kinds: tuple = ("coadjoint",)


@dataclass(frozen=True)
class DiscreteMechanics(Method):
    """A discrete Lagrange-d'Alembert / discrete Euler-Poincare scheme of
    :mod:`integrators.reference.nonholonomic` (implicit: a Newton solve per step; ``scheme``: "dlas", "dvak",
    "mp", "rattle", "dvakq", "lierattle"; ``retraction``: "exp" or "cay"; ``structure``: the ``problem.discrete.structure`` it needs)."""

    scheme: str = "dlas"
    retraction: str = "exp"
    structure: str = "lie_nonholonomic"
    kinds: tuple = ("coadjoint", "ode")


@dataclass(frozen=True)
class ScipyMethod(Method):
    """Adapter to scipy.integrate.solve_ivp (adaptive; rtol/atol)."""

    scipy_name: str = "RK45"
    fixed_step: bool = False
    kinds: tuple = ("ode", "coadjoint")

    @property
    def runner(self) -> str:
        return "scipy"
