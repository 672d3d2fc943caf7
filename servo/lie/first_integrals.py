"""First integrals of the Lie-group systems, each a callable on states with a sympy expression.

Derivations (Kozlov's lectures on servo-constraints):

* free, m' = ad*_w m, w = dH/dm: H is conserved, H' = (w, ad*_w m) = (ad_w w, m) = 0; every Casimir F(m).
* first kind, m' = ad*_w m + lambda b: T' = (w, m') = lambda (b, w), so T = (I w, w)/2 is conserved when
  b is parallel to a ((a, w) = 0: the nonholonomic model) and in general is not. Casimirs are not kept.
  Linear and quadratic integrals of the reduced system x' = v(x) (e.g. the servo-sleigh's
  beta u - alpha w) are found from its tensor Q: l.x is an integral iff sum_i l_i Q[i,j,k] = 0, and x^T S x
  iff the symmetrization over (l, j, k) of sum_i S[l,i] Q[i,j,k] vanishes (a null space; products of
  linear integrals are left out).
* second kind, z = m + lambda b, z' = ad*_{Wz} z: F(m + lambda b) for every Casimir F ("Сервосвязи
  второго рода"); T = (z, W z)/2 is conserved iff W is symmetric, i.e. b parallel to a (vakonomic).

Each system class asks for its own list (``free_integrals``, ``first_kind_integrals``,
``second_kind_integrals``) in its ``first_integrals()`` method.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from ..errors import SymbolicParameterError
from ..quadratic.integrals import linear_integral_conditions, nullspace_rows, quadratic_integral_conditions
from .printing import exact

__all__ = ["FirstIntegral", "free_integrals", "first_kind_integrals", "second_kind_integrals", "reduced_linear_integrals", "reduced_quadratic_integrals"]


class FirstIntegral:
    """A named first integral: ``F(state)`` (batched) and ``expr`` in the state symbols.

    Attributes
    ----------
    name : str
    kind : "energy", "casimir", "linear" or "quadratic"
    expr : sympy expression in the state symbols m1..mn (and lambda for the second kind)
    expr_w : the same in the velocities omega1..omegan (and lambda), via m = I w
    state_symbols : tuple of sympy Symbols, in the state order
    """

    def __init__(self, name: str, kind: str, expr: sp.Expr, state_symbols: Sequence[sp.Symbol],
                 expr_w: sp.Expr | None = None,
                 func: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None) -> None:
        self.name = name
        self.kind = kind
        self.expr = expr
        self.state_symbols = tuple(state_symbols)
        self.expr_w = expr_w
        self._f = None
        self._func = func

    def __call__(self, state: ArrayLike) -> NDArray[np.float64]:
        if self._func is not None:
            return self._func(np.asarray(state, dtype=float))
        if self.expr.free_symbols - set(self.state_symbols):
            raise SymbolicParameterError(f"first integral {self.name} has symbolic parameters; use subs first")
        if self._f is None:
            self._f = sp.lambdify([self.state_symbols], self.expr, "numpy")
        s = np.asarray(state, dtype=float)
        return np.broadcast_to(np.asarray(self._f(np.moveaxis(s, -1, 0)), dtype=float), s.shape[:-1]).copy()

    def __repr__(self):
        return f"FirstIntegral({self.name!r}, {self.kind}, {self.expr})"


def _exact(Q):
    items = Q.tolist() if hasattr(Q, "tolist") else Q
    flat = list(sp.flatten(items))
    return not any(isinstance(a, sp.Float) for x in flat for a in sp.sympify(x).atoms(sp.Number))


def reduced_linear_integrals(red):
    """Covectors l (sympy rows) with l . v(x) = 0 identically (:func:`servo.quadratic.integrals.linear_integral_conditions`),
    exact for rational or symbolic Q."""
    p, Q = red.p, red.Q_sym
    rows = linear_integral_conditions(Q, p)
    if _exact(Q):
        return [sp.Matrix(v).T for v in sp.Matrix(rows).nullspace()]
    N = nullspace_rows(np.array(rows, dtype=float))
    return [sp.Matrix(_readable(v)).T for v in N]


def reduced_quadratic_integrals(red, exclude=()):
    """Symmetric S (sympy) with x^T S x conserved by x' = v(x)
    (:func:`servo.quadratic.integrals.quadratic_integral_conditions`), modulo products of linear integrals
    and the span of the matrices in ``exclude`` (e.g. the energy, already listed)."""
    p, Q = red.p, red.Q_sym
    pairs, rows = quadratic_integral_conditions(Q, p)
    A = sp.Matrix(rows)
    if _exact(Q):
        vecs = [list(v) for v in A.nullspace()]
    else:
        vecs = [_readable(v) for v in nullspace_rows(np.array(A.tolist(), dtype=float), 1e-10)]
    # drop the span of products of linear integrals
    lin = reduced_linear_integrals(red)
    prods = []
    for a in range(len(lin)):
        for b in range(a, len(lin)):
            P = (lin[a].T * lin[b] + lin[b].T * lin[a]) / 2
            prods.append([P[i, j] for i, j in pairs])
    prods += [[S0[i, j] for i, j in pairs] for S0 in exclude]
    out, basis = [], list(prods)
    for v in vecs:
        M = sp.Matrix(basis + [v]) if basis else sp.Matrix([v])
        if _rank(M) > len(basis):
            basis.append(v)
            Sm = sp.zeros(p, p)
            for (i, j), x in zip(pairs, v):
                Sm[i, j] = Sm[j, i] = x
            out.append(Sm)
    return out


def _rank(M):
    if M.free_symbols or _exact(M):
        return M.rank(simplify=True)
    return int(np.linalg.matrix_rank(np.array(M.tolist(), dtype=float), tol=1e-9))


def _readable(v):
    """A float null vector as a researcher writes the integral: scaled so that its largest entry (the first
    of equal ones) is 1, then each entry within 1e-12 (relative) of a fraction p/q with q <= 1000 taken as
    that rational, the others rounded to 12 digits, entries below 1e-12 dropped. The servo-sleigh's
    (0.7071, 0.7071) becomes (1, 1), i.e. u + omega, not 0.707 u + 0.707 omega. Scaling a first integral
    gives a first integral; the snap moves an entry by at most 1e-12 of itself."""
    v = np.asarray(v, dtype=float)
    v = v / v[int(np.argmax(np.abs(v)))]
    out = []
    for x in v:
        x = float(x)
        f = Fraction(x).limit_denominator(1000)
        if abs(x) < 1e-12:
            out.append(0)
        elif abs(float(f) - x) <= 1e-12 * abs(x):
            out.append(sp.Rational(f.numerator, f.denominator))
        else:
            out.append(sp.Float(round(x, 12)))
    return out


def _state_symbols(system):
    n = system.n
    m = sp.symbols(f"m1:{n + 1}", real=True)
    lam = sp.Symbol("lambda", real=True)
    om = sp.symbols(f"omega1:{n + 1}", real=True)
    return m, lam, om


def free_integrals(system):
    """Energy H(m) = (m, K m)/2 + (c, m) and every Casimir F(m) of a free Euler-Poincare system."""
    m, lam, om = _state_symbols(system)
    M, W = sp.Matrix(m), sp.Matrix(om)
    H = sp.expand((M.T * system.Iinv_sym * M)[0, 0] / 2 + (system.c_sym.T * M)[0, 0])
    to_w = None if system.I_sym is None or any(x != 0 for x in system.c_sym) else dict(zip(m, system.I_sym * W))
    out = [FirstIntegral("energy", "energy", H, m, H.subs(to_w, simultaneous=True) if to_w else None)]
    for c in system.algebra.casimirs():
        e = c.expr.subs(dict(zip(c.symbols, m)), simultaneous=True)
        out.append(FirstIntegral(f"casimir:{c.expr}", "casimir", e, m,
                                 sp.expand(e.subs(to_w, simultaneous=True)) if to_w else None))
    return out


def _kinetic(system):
    m, lam, om = _state_symbols(system)
    M, W = sp.Matrix(m), sp.Matrix(om)
    T = sp.expand((M.T * system.Iinv_sym * M)[0, 0] / 2)
    Tw = sp.expand((W.T * system.I_sym * W)[0, 0] / 2)
    return m, lam, dict(zip(m, system.I_sym * W)), T, Tw


def first_kind_integrals(system):
    """First kind: T when b is parallel to a, and the linear and quadratic integrals of the reduced system
    pulled back to m by x = F m."""
    m, lam, to_w, T, Tw = _kinetic(system)
    out, exclude = [], []
    red = system.reduced()
    if system.b_parallel_a:
        out.append(FirstIntegral("energy", "energy", T, m, Tw))
        # T in the reduced coordinates: m = (I E) x, T = x^T (I E)^T I^-1 (I E) x / 2
        IE = red.to_state_sym
        exclude.append((IE.T * system.Iinv_sym * IE) / 2)
    x_of_m = red.from_state_sym * sp.Matrix(m)
    for k, l in enumerate(reduced_linear_integrals(red)):
        e = exact(sp.simplify((l * x_of_m)[0, 0]))  # exact: 1.0*m1 + 1.33333333333333*m3 -> m1 + 4*m3/3
        out.append(FirstIntegral(f"linear:{k + 1}", "linear", e, m,
                                 exact(sp.simplify(e.subs(to_w, simultaneous=True)))))
    for k, S in enumerate(reduced_quadratic_integrals(red, exclude)):
        e = exact(sp.expand((x_of_m.T * S * x_of_m)[0, 0]))
        out.append(FirstIntegral(f"quadratic:{k + 1}", "quadratic", e, m,
                                 exact(sp.expand(e.subs(to_w, simultaneous=True)))))
    return out


def second_kind_integrals(system):
    """Second kind: F(m + lambda b) for every Casimir F (several constraints: F(m + sum_i lambda_i b_i)),
    and T when the b_j span the a_i (vakonomic)."""
    m, lam, to_w, T, Tw = _kinetic(system)
    lams = [lam] if system.k == 1 else list(sp.symbols(f"lambda1:{system.k + 1}", real=True))
    state = tuple(m) + tuple(lams)
    out = [FirstIntegral("energy", "energy", T, state, Tw)] if system.b_parallel_a else []
    z = sp.Matrix(m) + system.B_sym * sp.Matrix(lams)
    for c in system.algebra.casimirs():
        e = sp.expand(c.expr.subs(dict(zip(c.symbols, z)), simultaneous=True))
        func = None
        if system.is_numeric:  # evaluate F at z = m + lambda b: no cancellation between large m and lambda b
            func = (lambda cas: (lambda st: cas(system.to_problem(st))))(c)
        arg = "m + lambda b" if system.k == 1 else "m + sum lambda_i b_i"
        out.append(FirstIntegral(f"casimir:{c.expr}({arg})", "casimir", e, state,
                                 sp.expand(e.subs(to_w, simultaneous=True)), func=func))
    return out
