"""Integration methods as small data classes: a tableau, an order and the set of things kept.

A method is data (diffrax style); the stepping code lives in :mod:`integrators.stepping` and the loop
in :mod:`integrators.driver`. Every method declares ``order`` and ``preserves``, a subset of
{"casimirs", "linear_invariants", "quadratic_invariants", "group"} (GeometricIntegrators.jl style);
the tests measure both.

Methods and sources:

* ``rk4``: the classical Runge-Kutta method of Kutta (1901), order 4, keeps linear invariants.
* ``midpoint``: implicit midpoint rule, order 2, keeps all quadratic (hence linear) invariants
  (Cooper 1987), solved by fixed-point iteration to a stated tolerance.
* ``lie_euler``, ``rkmk2``, ``rkmk4``: Runge-Kutta-Munthe-Kaas methods, Munthe-Kaas (1999): theta' =
  dexp^-1_theta(xi), y = exp(theta) . y0, with dexp^-1 truncated after ad^(q-2) for order q.
* ``cf4``: the commutator-free method of Celledoni, Marthinsen and Owren (2003), order 4, two final
  exponentials exp(h sum beta2_i F_i) exp(h sum beta1_i F_i) with beta1 = (1/4, 1/6, 1/6, -1/12)
  acting FIRST; swapping them gives order 2 (tested).
* ``cg3``: Crouch and Grossman (1993), order 3 (Hairer, Lubich and Wanner (2006), section IV.8.1).
* ``splitting``, ``splitting4``: McLachlan (1993) splitting of the free rigid body on so(3)* into
  exact axis rotations, Strang (order 2), Yoshida's triple jump (order 4) and, as ``splitting6``,
  Yoshida's (1990) seven-stage order-6 composition (solution A).
* ``moser_veselov``: the discrete Moser-Veselov (1991) rigid body, order 2, keeps |m|^2 and the
  energy, i.e. every quadratic invariant of the free rigid body (so(3) only; tested).
* ``rkmk45``, ``rkmk853``: adaptive embedded pairs (Dormand-Prince 5(4), DOP853) in RKMK form, keep
  the Casimirs; ``rk45``, ``rk853``: the same pairs as ordinary Runge-Kutta methods, keep linear
  invariants (:mod:`integrators.adaptive`; rtol, atol, first_step, max_step as in solve_ivp).
* ``rk45_projected``, ``rk853_projected``: the same ordinary pairs followed, after every accepted
  step, by the orthogonal projection onto the level set of all polynomial Casimirs of the algebra
  (the standard projection method, Hairer, Lubich and Wanner (2006), Section IV.4, Algorithm 4.2;
  simplified Newton iterations to round-off, :mod:`integrators.projection`): order 5 and 8 as the
  pairs (GNI Theorem IV.4.2), the polynomial Casimirs kept to round-off without drift. Unforced
  coadjoint problems on an algebra with at least one polynomial Casimir (Bianchi IV, for example,
  has none).
  Order q needs dexp^-1 only up to ad^(q-2) (Hairer, Lubich and Wanner (2006), IV.8), but the
  truncation error is the same in both solutions of the pair, so the error estimate cannot see it;
  with ad^(q-2) the measured error on the free rigid body was 13x (rkmk45) and 10x (rkmk853) the
  tolerance. The series is therefore carried one nonzero Bernoulli term further, to ad^4 (rkmk45,
  5 terms) and ad^8 (rkmk853, 9 terms): a bracket or two more per stage, and the error follows rtol.
* ``scipy:RK45``, ``scipy:RK23``, ``scipy:DOP853``, ``scipy:Radau``, ``scipy:BDF``, ``scipy:LSODA``:
  adapters to scipy.integrate.solve_ivp (for the variable-order BDF and LSODA ``order`` is the
  largest order they use). The bare scipy names ("DOP853", "Radau", ...) are aliases of these
  (:data:`ALIASES`); a result always carries the canonical name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import MethodError
from .problems import CoadjointProblem, ODEProblem, ReconstructionProblem

CASIMIRS = "casimirs"
LINEAR = "linear_invariants"
QUADRATIC = "quadratic_invariants"
GROUP = "group"
#: the discrete schemes in coordinates keep A(q) v = 0 at every step; REVERSIBLE: the map is reversible
NONHOLONOMIC = "nonholonomic_constraint"
REVERSIBLE = "reversibility"


@dataclass(frozen=True)
class Method:
    """Base: ``name``, ``order`` and ``preserves`` (for an unforced coadjoint problem)."""

    name: str
    order: int
    preserves: frozenset = field(default_factory=frozenset)
    kinds: tuple = ("ode", "coadjoint", "reconstruction")
    fixed_step: bool = True


@dataclass(frozen=True)
class ExplicitRK(Method):
    """Explicit Runge-Kutta tableau (A strictly lower triangular, b, c) on the plain ODE."""

    A: tuple = ()
    b: tuple = ()
    c: tuple = ()


@dataclass(frozen=True)
class ImplicitMidpoint(Method):
    """y1 = y0 + h f(t + h/2, (y0 + y1)/2), fixed-point iteration to ``tol`` (relative, max-norm)."""

    tol: float = 1e-15
    max_iter: int = 100


@dataclass(frozen=True)
class RKMK(Method):
    """Runge-Kutta-Munthe-Kaas: explicit tableau in the algebra, dexp^-1 with ``terms`` terms."""

    A: tuple = ()
    b: tuple = ()
    c: tuple = ()
    terms: int = 1
    kinds: tuple = ("coadjoint", "reconstruction")


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
    """Discrete Moser-Veselov rigid body (implicit; see :mod:`integrators.moser_veselov`)."""

    kinds: tuple = ("coadjoint",)


@dataclass(frozen=True)
class ScipyMethod(Method):
    """Adapter to scipy.integrate.solve_ivp (adaptive; rtol/atol)."""

    scipy_name: str = "RK45"
    fixed_step: bool = False
    kinds: tuple = ("ode", "coadjoint")


@dataclass(frozen=True)
class Embedded(Method):
    """Embedded Runge-Kutta pair with step-size control (see :mod:`integrators.adaptive`): the
    tableau ``tableau`` (:mod:`integrators.tableaux`) in RKMK form on g* (``lie``, dexp^-1 with
    ``terms`` terms) or as an ordinary Runge-Kutta method on the ambient space; ``project``: every
    accepted step is projected onto the level set of the algebra's polynomial Casimirs
    (:mod:`integrators.projection`)."""

    tableau: str = "dp5"
    lie: bool = True
    terms: int = 1
    project: bool = False
    fixed_step: bool = False
    kinds: tuple = ("coadjoint",)


@dataclass(frozen=True)
class DiscreteMechanics(Method):
    """A discrete Lagrange-d'Alembert / discrete Euler-Poincare scheme of :mod:`integrators.nonholonomic`
    (``scheme``: "dlas", "dvak", "mp", "rattle"; ``retraction``: "exp" or "cay"; ``structure``: the
    ``problem.discrete.structure`` it needs; ``reference``: the work it implements)."""

    scheme: str = "dlas"
    retraction: str = "exp"
    structure: str = "lie_nonholonomic"
    reference: str = ""
    kinds: tuple = ("coadjoint", "ode")


_RK4 = dict(A=((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)), b=(1 / 6, 1 / 3, 1 / 3, 1 / 6), c=(0.0, 0.5, 0.5, 1.0))
_LP = frozenset({CASIMIRS, GROUP})

_CF4_BETA1 = (0.25, 1 / 6, 1 / 6, -1 / 12)
_CF4_BETA2 = (-1 / 12, 1 / 6, 1 / 6, 0.25)
_CG3 = dict(stages=((), ((0.75,),), ((119 / 216,), (0.0, 17 / 108))),
            update=((13 / 51,), (0.0, -2 / 3), (0.0, 0.0, 24 / 17)), c=(0.0, 0.75, 17 / 24))
_Y4 = 1.0 / (2.0 - 2.0 ** (1.0 / 3.0))
# Yoshida (1990) order-6 composition, solution A: w3 w2 w1 w0 w1 w2 w3
_W6 = (0.784513610477560, 0.235573213359357, -1.17767998417887)
_Y6 = _W6 + (1.0 - 2.0 * sum(_W6),) + _W6[::-1]

METHODS = {
    "rk4": ExplicitRK("rk4", 4, frozenset({LINEAR}), **_RK4),
    "midpoint": ImplicitMidpoint("midpoint", 2, frozenset({LINEAR, QUADRATIC})),
    "lie_euler": RKMK("lie_euler", 1, _LP, A=((),), b=(1.0,), c=(0.0,), terms=1),
    "rkmk2": RKMK("rkmk2", 2, _LP, A=((), (1.0,)), b=(0.5, 0.5), c=(0.0, 1.0), terms=1),
    "rkmk4": RKMK("rkmk4", 4, _LP, terms=3, **_RK4),
    "cf4": CommutatorFree(
        "cf4", 4, _LP,
        stages=((), ((0.5,),), ((0.0, 0.5),), ((0.5,), (-0.5, 0.0, 1.0))),
        update=(_CF4_BETA1, _CF4_BETA2), c=(0.0, 0.5, 0.5, 1.0)),
    "cg3": CommutatorFree("cg3", 3, _LP, **_CG3),
    "splitting": Splitting("splitting", 2, frozenset({CASIMIRS}), gammas=(1.0,)),
    "splitting4": Splitting("splitting4", 4, frozenset({CASIMIRS}),
                            gammas=(_Y4, 1.0 - 2.0 * _Y4, _Y4)),
    "splitting6": Splitting("splitting6", 6, frozenset({CASIMIRS}), gammas=_Y6),
    "moser_veselov": MoserVeselov("moser_veselov", 2, frozenset({CASIMIRS, QUADRATIC})),
    "scipy:RK45": ScipyMethod("scipy:RK45", 5, frozenset({LINEAR}), scipy_name="RK45"),
    "scipy:DOP853": ScipyMethod("scipy:DOP853", 8, frozenset({LINEAR}), scipy_name="DOP853"),
    "scipy:Radau": ScipyMethod("scipy:Radau", 5, frozenset({LINEAR}), scipy_name="Radau"),
    "scipy:RK23": ScipyMethod("scipy:RK23", 3, frozenset({LINEAR}), scipy_name="RK23"),
    "scipy:BDF": ScipyMethod("scipy:BDF", 5, frozenset({LINEAR}), scipy_name="BDF"),
    "scipy:LSODA": ScipyMethod("scipy:LSODA", 12, frozenset({LINEAR}), scipy_name="LSODA"),
    "rkmk45": Embedded("rkmk45", 5, frozenset({CASIMIRS}), tableau="dp5", lie=True, terms=5),
    "rkmk853": Embedded("rkmk853", 8, frozenset({CASIMIRS}), tableau="dop853", lie=True, terms=9),
    "rk45": Embedded("rk45", 5, frozenset({LINEAR}), tableau="dp5", lie=False, kinds=("ode", "coadjoint")),
    "rk853": Embedded("rk853", 8, frozenset({LINEAR}), tableau="dop853", lie=False, kinds=("ode", "coadjoint")),
    "rk45_projected": Embedded("rk45_projected", 5, frozenset({CASIMIRS}), tableau="dp5", lie=False, project=True),
    "rk853_projected": Embedded("rk853_projected", 8, frozenset({CASIMIRS}), tableau="dop853", lie=False,
                                project=True),
    # integrators.nonholonomic (the state keeps A w = 0, resp. A(q) v = 0, to round-off at every step)
    "dlas_exp": DiscreteMechanics("dlas_exp", 2, frozenset({LINEAR}), scheme="dlas", retraction="exp",
                                  structure="lie_nonholonomic", reference="fedorov-zenkov2005"),
    "dlas_cay": DiscreteMechanics("dlas_cay", 2, frozenset({LINEAR}), scheme="dlas", retraction="cay",
                                  structure="lie_nonholonomic", reference="fedorov-zenkov2005"),
    "dvak_exp": DiscreteMechanics("dvak_exp", 2, frozenset({CASIMIRS}), scheme="dvak", retraction="exp",
                                  structure="lie_second_kind", reference="benito-martin-de-diego2005"),
    "dvak_cay": DiscreteMechanics("dvak_cay", 2, frozenset({CASIMIRS}), scheme="dvak", retraction="cay",
                                  structure="lie_second_kind", reference="benito-martin-de-diego2005"),
    "mp_lda": DiscreteMechanics("mp_lda", 2, frozenset({NONHOLONOMIC, REVERSIBLE}), scheme="mp",
                                structure="lagrange_dalembert", reference="mclachlan-perlmutter2006"),
    "nh_rattle": DiscreteMechanics("nh_rattle", 2, frozenset({NONHOLONOMIC}), scheme="rattle",
                                   structure="lagrange_dalembert",
                                   reference="ferraro-iglesias-martin-de-diego2008"),
}

#: the bare scipy.integrate.solve_ivp names, accepted wherever a method name is
ALIASES = {m.scipy_name: name for name, m in METHODS.items() if isinstance(m, ScipyMethod)}

#: CF4 with its two final exponentials in the WRONG order (for the test that it drops to order 2)
CF4_SWAPPED = CommutatorFree("cf4_swapped", 2, _LP, stages=METHODS["cf4"].stages,
                             update=(_CF4_BETA2, _CF4_BETA1), c=METHODS["cf4"].c)


def is_so3_free_rigid_body(problem):
    """True when the problem is an unforced coadjoint problem on so(3) with a diagonal velocity matrix."""
    W = getattr(problem, "velocity_matrix", None)
    return (getattr(problem, "kind", None) == "coadjoint" and problem.forcing is None
            and problem.algebra.closed_form == "so3"
            and W is not None and W.shape == (3, 3) and np.allclose(W, np.diag(np.diag(W)), atol=0.0))


def applies(method, problem):
    """Whether ``method`` can integrate ``problem``."""
    if problem.kind not in method.kinds:
        return False
    if isinstance(method, DiscreteMechanics):
        d = getattr(problem, "discrete", None)
        return d is not None and d.structure == method.structure and (
            method.retraction != "cay" or getattr(d, "group", None) is not None)
    if isinstance(method, (Splitting, MoserVeselov)):
        return is_so3_free_rigid_body(problem)
    if problem.kind == "reconstruction":
        return isinstance(method, (RKMK, CommutatorFree))
    if isinstance(method, Embedded) and method.project:
        return getattr(problem, "forcing", None) is None and has_polynomial_casimirs(problem)
    if isinstance(method, Embedded) and method.lie:
        return getattr(problem, "forcing", None) is None
    return True


def has_polynomial_casimirs(problem):
    """Whether the algebra of a coadjoint problem has at least one polynomial Casimir (up to degree 4,
    :meth:`liegroups.LieAlgebra.casimirs`, cached per algebra)."""
    return len(problem.algebra.casimirs()) > 0


def applicable_methods(problem: ODEProblem | CoadjointProblem | ReconstructionProblem) -> list[str]:
    """Names of all methods that apply to ``problem``."""
    return [n for n, m in METHODS.items() if applies(m, problem)]


def canonical_name(name: object) -> str | None:
    """The canonical name of a method name or alias ("DOP853" -> "scipy:DOP853"); None if unknown."""
    if not isinstance(name, str):
        return None
    name = ALIASES.get(name, name)
    return name if name in METHODS else None


def get_method(method, problem):
    """Resolve a name, an alias (:data:`ALIASES`) or a Method instance for ``problem``; raise
    MethodError listing the valid ones."""
    if isinstance(method, Method):
        m = method
    elif not isinstance(method, str):
        raise MethodError(f"method must be a method name (str) or a Method, got {type(method).__name__} "
                          f"{method!r}; methods that apply to {problem.name}: "
                          f"{', '.join(applicable_methods(problem))}")
    else:
        m = METHODS.get(ALIASES.get(method, method))
        if m is None:
            raise MethodError(f"unknown integration method {method!r}; methods that apply to "
                              f"{problem.name}: {', '.join(applicable_methods(problem))}")
    if not applies(m, problem):
        if isinstance(m, (Splitting, MoserVeselov)):
            why = "it needs an unforced so(3) free rigid body with a diagonal velocity_matrix"
        elif isinstance(m, DiscreteMechanics):
            why = (f"it needs a problem carrying {m.structure!r} data (problem.discrete, see "
                   f"integrators.nonholonomic.problems" + ("; the Cayley schemes also need the group's hat/vee"
                                                          if m.retraction == "cay" else "") + ")")
        elif isinstance(m, Embedded) and m.project and problem.kind == "coadjoint":
            why = ("the projected pairs need an unforced coadjoint problem (a forcing changes the Casimirs they "
                   "project onto; use rk45 or rk853 with a forcing)"
                   if problem.forcing is not None else
                   f"the algebra {problem.algebra.name} has no polynomial Casimir (up to degree 4) to project onto")
        elif isinstance(m, Embedded) and m.lie and problem.kind == "coadjoint":
            why = "the adaptive RKMK pairs need an unforced coadjoint problem (use rk45 or rk853 with a forcing)"
        else:
            why = f"it does not apply to {problem.kind} problems"
        raise MethodError(f"method {m.name!r} does not apply to {problem.name}: {why}; methods that "
                          f"apply: {', '.join(applicable_methods(problem))}")
    return m


def preserved(method, problem):
    """What ``method`` keeps on ``problem``: Casimirs only without forcing (by the Lie-group step, or for
    rk45_projected / rk853_projected by the projection onto the polynomial Casimirs, which they need
    to apply at all); "group" on reconstruction."""
    keep = set(method.preserves)
    if getattr(problem, "forcing", None) is not None:
        keep.discard(CASIMIRS)
    if problem.kind != "coadjoint":
        keep.discard(CASIMIRS)
    if (getattr(problem, "forcing", None) is not None and getattr(problem, "linear_invariants", None) is not None
            and isinstance(method, (RKMK, CommutatorFree))):
        keep.add(LINEAR)  # by the orthogonal projection of the driver
    if problem.kind != "reconstruction":
        keep.discard(GROUP)
    return frozenset(keep)
