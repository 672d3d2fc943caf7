"""The registry of integration methods: :data:`METHODS` (name -> method), what applies to a problem and
what each keeps. A method is data: a kind of :mod:`integrators.methods.kinds` applied to coefficients of
:mod:`integrators.tableaux`; adding a Runge-Kutta method is one tableau there and one row here. The
table of every method with its order, what it keeps and its reference is :func:`method_table` (the
docstring of :func:`integrators.integrate` is built from it).

Notes on the rows:

* the adaptive RKMK pairs sum dexp^-1 to round-off (``terms`` = :data:`ROUNDOFF_TERMS`, see
  :func:`integrators.geometry.spaces.dexpinv_series`): a truncation is the same in both solutions of
  the pair, so the error estimate cannot see it. Truncated after ad^(q-2) (the order q needs it:
  Hairer, Lubich and Wanner (2006), IV.8) the measured final error on the free rigid body was 13x
  (rkmk45) and 10x (rkmk853) the tolerance, and with 9 terms rkmk853 on so(5) (|z| = 3) still 2.7-7.8x
  rtol against 1.2-2.0x summed to round-off (benchmarks/rkmk_accuracy.py); the fixed-step methods
  keep their truncation (rkmk4: ad^2). rkmk853's error norm is DOP853's in RKMK form
  (:mod:`integrators.core.controller`: Hairer's extrapolation from the third- and fifth-order estimates
  is 15x less pessimistic for the RKMK stage equation's order-8 error than for the ambient pair's on so(4);
  its exponent 1/5 instead of 1/2 is calibrated): its final error was 1.4-63x rk853_projected's at the same
  rtol on so(4), so(5), se(3) and random bases with Hairer's norm, at most 1.8x with its own, in
  1.0-1.8x rk853_projected's steps (the same cost at matched error);
* ``midpoint`` keeps all quadratic invariants (Cooper 1987), solved by fixed-point iteration;
* ``cf4``: Celledoni, Marthinsen and Owren (2003); ``cg3``: Crouch and Grossman (1993); the splittings:
  McLachlan (1993) with Yoshida's (1990) compositions; ``moser_veselov``: Moser and Veselov (1991);
* the scipy adapters: for the variable-order BDF and LSODA ``order`` is the largest order they use. The
  bare scipy names ("DOP853", "Radau", ...) are aliases (:data:`ALIASES`); a result carries the canonical name.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import MethodError
from ..core.problems import CoadjointProblem, ODEProblem, ReconstructionProblem
from ..tableaux import DOP853, DP5, EULER, HEUN, RK4, TSIT5, lie_group
from .kinds import (CASIMIRS, GROUP, LINEAR, NONHOLONOMIC, QUADRATIC, REVERSIBLE, CommutatorFree,
                    DiscreteMechanics, ImplicitMidpoint, Method, MoserVeselov, RungeKutta, ScipyMethod, Splitting)

_LP = frozenset({CASIMIRS, GROUP})
_LIN = frozenset({LINEAR})


def _rk(name, tab):
    """The ordinary Runge-Kutta form of ``tab`` (keeps linear invariants)."""
    kinds = ("ode", "coadjoint") if tab.adaptive else ("ode", "coadjoint", "reconstruction")
    return RungeKutta(name, tab.order, _LIN, kinds, tableau=tab, form="rk")


#: ``terms`` meaning "dexp^-1 summed to round-off" (equal to integrators.geometry.spaces.ROUNDOFF_TERMS;
#: the methods room sits below geometry, a test checks the two agree)
ROUNDOFF_TERMS = 100


def _rkmk(name, tab, terms):
    """The RKMK form of ``tab`` with dexp^-1 to ``terms`` terms (keeps the Casimirs and the group)."""
    kinds = ("coadjoint",) if tab.adaptive else ("coadjoint", "reconstruction")
    return RungeKutta(name, tab.order, frozenset({CASIMIRS}) if tab.adaptive else _LP, kinds, tableau=tab,
                      form="rkmk", terms=terms)


def _projected(name, tab):
    """The Casimir-projected form of ``tab`` (keeps the polynomial Casimirs)."""
    return RungeKutta(name, tab.order, frozenset({CASIMIRS}), ("coadjoint",), tableau=tab, form="projected")


def _scipy(name, order):
    return ScipyMethod(f"scipy:{name}", order, _LIN, scipy_name=name, reference="scipy.integrate.solve_ivp")


METHODS = {
    "rk4": _rk("rk4", RK4),
    "midpoint": ImplicitMidpoint("midpoint", 2, frozenset({LINEAR, QUADRATIC}), reference="Cooper (1987)"),
    "lie_euler": _rkmk("lie_euler", EULER, 1),
    "rkmk2": _rkmk("rkmk2", HEUN, 1),
    "rkmk4": _rkmk("rkmk4", RK4, 3),
    "cf4": CommutatorFree("cf4", 4, _LP, stages=lie_group.CF4_STAGES, update=lie_group.CF4_UPDATE,
                          c=lie_group.CF4_C, reference="Celledoni, Marthinsen and Owren (2003)"),
    "cg3": CommutatorFree("cg3", 3, _LP, stages=lie_group.CG3_STAGES, update=lie_group.CG3_UPDATE,
                          c=lie_group.CG3_C, reference="Crouch and Grossman (1993)"),
    "splitting": Splitting("splitting", 2, frozenset({CASIMIRS}), gammas=lie_group.STRANG,
                           reference="McLachlan (1993)"),
    "splitting4": Splitting("splitting4", 4, frozenset({CASIMIRS}), gammas=lie_group.YOSHIDA4,
                            reference="McLachlan (1993); Yoshida (1990)"),
    "splitting6": Splitting("splitting6", 6, frozenset({CASIMIRS}), gammas=lie_group.YOSHIDA6,
                            reference="McLachlan (1993); Yoshida (1990)"),
    "moser_veselov": MoserVeselov("moser_veselov", 2, frozenset({CASIMIRS, QUADRATIC}),
                                  reference="Moser and Veselov (1991)"),
    "scipy:RK45": _scipy("RK45", 5),
    "scipy:DOP853": _scipy("DOP853", 8),
    "scipy:Radau": _scipy("Radau", 5),
    "scipy:RK23": _scipy("RK23", 3),
    "scipy:BDF": _scipy("BDF", 5),
    "scipy:LSODA": _scipy("LSODA", 12),
    "rkmk45": _rkmk("rkmk45", DP5, ROUNDOFF_TERMS),
    "rkmk853": _rkmk("rkmk853", DOP853, ROUNDOFF_TERMS),
    "rk45": _rk("rk45", DP5),
    "rk853": _rk("rk853", DOP853),
    "rk45_projected": _projected("rk45_projected", DP5),
    "rk853_projected": _projected("rk853_projected", DOP853),
    "tsit5": _rk("tsit5", TSIT5),
    "rkmk_tsit5": _rkmk("rkmk_tsit5", TSIT5, ROUNDOFF_TERMS),
    "tsit5_projected": _projected("tsit5_projected", TSIT5),
    # integrators.reference.nonholonomic (the state keeps A w = 0, resp. A(q) v = 0, to round-off at every step)
    "dlas_exp": DiscreteMechanics("dlas_exp", 2, frozenset({LINEAR}), scheme="dlas", retraction="exp",
                                  structure="lie_nonholonomic", reference="Fedorov and Zenkov (2005)"),
    "dlas_cay": DiscreteMechanics("dlas_cay", 2, frozenset({LINEAR}), scheme="dlas", retraction="cay",
                                  structure="lie_nonholonomic", reference="Fedorov and Zenkov (2005)"),
    "dvak_exp": DiscreteMechanics("dvak_exp", 2, frozenset({CASIMIRS}), scheme="dvak", retraction="exp",
                                  structure="lie_second_kind", reference="Benito and Martin de Diego (2005)"),
    "dvak_cay": DiscreteMechanics("dvak_cay", 2, frozenset({CASIMIRS}), scheme="dvak", retraction="cay",
                                  structure="lie_second_kind", reference="Benito and Martin de Diego (2005)"),
    "mp_lda": DiscreteMechanics("mp_lda", 2, frozenset({NONHOLONOMIC, REVERSIBLE}), scheme="mp",
                                structure="lagrange_dalembert", reference="McLachlan and Perlmutter (2006)"),
    "nh_rattle": DiscreteMechanics("nh_rattle", 2, frozenset({NONHOLONOMIC, REVERSIBLE}), scheme="rattle",
                                   structure="lagrange_dalembert",
                                   reference="Ferraro, Iglesias and Martin de Diego (2008)"),
    "lie_rattle_exp": DiscreteMechanics("lie_rattle_exp", 2, frozenset({LINEAR}), scheme="lierattle",
                                        retraction="exp", structure="lie_nonholonomic",
                                        reference="Ferraro, Iglesias and Martin de Diego (2008) on g* "
                                                  "(cf. Ferraro, Jimenez and Martin de Diego 2015)"),
    "lie_rattle_cay": DiscreteMechanics("lie_rattle_cay", 2, frozenset({LINEAR}), scheme="lierattle",
                                        retraction="cay", structure="lie_nonholonomic",
                                        reference="Ferraro, Iglesias and Martin de Diego (2008) on g* "
                                                  "(cf. Ferraro, Jimenez and Martin de Diego 2015)"),
    # the state (q, v, lambda) keeps phi(q, v) = 0 at every node (the node Legendre transform solves it)
    "dvak_mid": DiscreteMechanics("dvak_mid", 2, frozenset({NONHOLONOMIC}), scheme="dvakq",
                                  structure="vakonomic_coordinates", kinds=("ode",),
                                  reference="Benito and Martin de Diego (2005)"),
}

#: the bare scipy.integrate.solve_ivp names, accepted wherever a method name is
ALIASES = {m.scipy_name: name for name, m in METHODS.items() if isinstance(m, ScipyMethod)}

#: CF4 with its two final exponentials in the WRONG order (for the test that it drops to order 2)
CF4_SWAPPED = CommutatorFree("cf4_swapped", 2, _LP, stages=lie_group.CF4_STAGES,
                             update=lie_group.CF4_SWAPPED_UPDATE, c=lie_group.CF4_C)


def describe(m):
    """One line on a method: its kind, steps and what it keeps (built from its data)."""
    if isinstance(m, RungeKutta):
        form = {"rk": "Runge-Kutta", "rkmk": "Runge-Kutta-Munthe-Kaas",
                "projected": "Runge-Kutta + Casimir projection"}[m.form]
        steps = (f"adaptive {m.tableau.order}({m.tableau.err_order}) pair"
                 + (f", dense output of order {m.tableau.dense_order}" if m.tableau.P is not None else "")
                 if m.tableau.adaptive else "fixed step")
        kind = f"{form}, tableau {m.tableau.name}, {steps}"
    elif isinstance(m, ScipyMethod):
        kind = f"scipy.integrate.solve_ivp {m.scipy_name} (adaptive)"
    else:
        kind = {ImplicitMidpoint: "implicit midpoint rule, fixed step",
                CommutatorFree: "commutator-free Lie-group method, fixed step",
                Splitting: "splitting of the free rigid body on so(3)*, fixed step",
                MoserVeselov: "discrete Moser-Veselov map of the free rigid body, fixed step",
                DiscreteMechanics: "discrete mechanics (variational, implicit: Newton per step), fixed step"}[type(m)]
    keeps = ", ".join(sorted(m.preserves)) or "nothing exactly"
    return f"{kind}; order {m.order}; keeps {keeps}; {m.reference}"


def method_table(indent=""):
    """Every method of :data:`METHODS`, a line each (``name``: :func:`describe`), for docstrings."""
    return "\n".join(f"{indent}* ``{name}``: {describe(m)}" for name, m in METHODS.items())


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
    lie = isinstance(method, CommutatorFree) or (isinstance(method, RungeKutta) and method.lie)
    if problem.kind == "reconstruction":
        return lie
    if isinstance(method, RungeKutta) and method.project:
        return getattr(problem, "forcing", None) is None and has_polynomial_casimirs(problem)
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
                   f"integrators.reference.nonholonomic.problems" + ("; the Cayley schemes also need the group's "
                                                                    "hat/vee" if m.retraction == "cay" else "") + ")")
        elif isinstance(m, RungeKutta) and m.project and problem.kind == "coadjoint":
            why = ("the projected pairs need an unforced coadjoint problem (a forcing changes the Casimirs they "
                   "project onto; use rk45 or rk853 with a forcing)"
                   if problem.forcing is not None else
                   f"the algebra {problem.algebra.name} has no polynomial Casimir (up to degree 4) to project onto")
        else:
            why = f"it does not apply to {problem.kind} problems"
        raise MethodError(f"method {m.name!r} does not apply to {problem.name}: {why}; methods that "
                          f"apply: {', '.join(applicable_methods(problem))}")
    return m


def preserved(method, problem):
    """What ``method`` keeps on ``problem``: Casimirs only without forcing (by the Lie-group step, or for
    the projected forms by the projection onto the polynomial Casimirs, which they need
    to apply at all); "group" on reconstruction."""
    keep = set(method.preserves)
    if getattr(problem, "forcing", None) is not None:
        keep.discard(CASIMIRS)
    if problem.kind != "coadjoint":
        keep.discard(CASIMIRS)
    if (getattr(problem, "forcing", None) is not None and getattr(problem, "linear_invariants", None) is not None
            and (isinstance(method, CommutatorFree) or (isinstance(method, RungeKutta) and method.lie))):
        keep.add(LINEAR)  # by the orthogonal projection of the driver
    if problem.kind != "reconstruction":
        keep.discard(GROUP)
    return frozenset(keep)
