"""Reduction of a constrained Lie-group system to a homogeneous quadratic system on the constraint.

Kozlov's lectures on servo-constraints ("Системы на группах Ли", "Общие свойства приведенных
систем", "Сервосани Чаплыгина"). Choose a basis E = (e'_1..e'_{n-1}) of the hyperplane (a, w) = 0 (the
exact sympy null space of a^T, so a = e_k gives the other unit vectors and the coordinates are the
remaining velocities) and write w = E x.

* First kind: I E x' = ad*_{Ex}(I E x) + lambda b. With M1 = [I E | -b] (invertible iff (I^-1 a, b) != 0)
  [x'; lambda] = M1^-1 ad*_{Ex}(I E x): x' = v(x) is homogeneous quadratic, p = n - 1.
* Second kind: I E x' + lambda' b = ad*_{Ex}(I E x + lambda b). With M2 = [I E | b],
  [x'; lambda'] = M2^-1 ad*_{Ex}(I E x + lambda b): homogeneous quadratic in (x, lambda), p = n.
* Free (no linear term): x = m, x' = ad*_{K x} x, p = n.

Q[i,j,k] = (1/2) d^2 v_i / dx_j dx_k. The maps: state = to_state @ x, x = from_state @ state, where the
state is m (first kind, free) or (m, lambda) (second kind) and from_state @ to_state = identity.

The reduced system prints exactly: :meth:`Reduced.exact_exprs` redoes the reduction in sympy with every
float datum replaced by its exact rational (:func:`servo.lie.printing.exact_number`: 0.7 -> 7/10), so
``print(red)`` reads ``u̇ = (109/100) w λ + (3/10) u w`` and ``red.latex()`` is an align block to paste.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from ..errors import ServoError, SymbolicParameterError
from ..quadratic.system import QuadraticSystem
from .printing import exact, polynomial_text, symbol_text
from .symbols import coad_sym

__all__ = ["Reduced", "reduce_free", "reduce_first_kind", "reduce_second_kind", "constraint_basis"]


class ReductionSource(Protocol):
    """What :class:`Reduced` keeps of the system it reduces (a :class:`servo.lie.LieSystem`, whose file
    imports this one, hence a protocol and not that class): its name."""

    name: str


class Reduced:
    """The reduced homogeneous quadratic system x' = v(x) with the linear maps to and from the state.

    Attributes
    ----------
    variables : tuple of sympy Symbols (x_1..x_p)
    exprs : list of sympy expressions v_i(x) (parameters may be symbolic)
    Q_sym : sympy MutableDenseNDimArray (p, p, p), Q[i,j,k] = (1/2) d2 v_i / dx_j dx_k
    to_state_sym, from_state_sym : sympy Matrices (state_dim x p) and (p x state_dim)
    system : servo.QuadraticSystem (numeric parameters only)
    to_state, from_state : float arrays of the maps (numeric parameters only)
    """

    def __init__(self, source: ReductionSource, variables: Sequence[sp.Symbol], to_state: sp.Matrix,
                 from_state: sp.Matrix, exprs: Sequence[sp.Expr] | None = None, Q: ArrayLike | None = None) -> None:
        self.source = source
        self.variables = tuple(variables)
        self.p = p = len(self.variables)
        self.to_state_sym = to_state
        self.from_state_sym = from_state
        if Q is not None:  # numeric fast path: Q computed by tensor contraction
            self._system = QuadraticSystem(Q, variables=[str(v) for v in self.variables])
            Qs = self._system.Q
            self.Q_sym = sp.MutableDenseNDimArray(Qs.tolist())
            self.exprs = [sp.expand(sum(float(Qs[i, j, k]) * self.variables[j] * self.variables[k]
                                        for j in range(p) for k in range(p) if Qs[i, j, k] != 0))
                          for i in range(p)]
            self.is_numeric = True
        else:
            self.exprs = [sp.simplify(e) for e in exprs]
            Q = sp.MutableDenseNDimArray.zeros(p, p, p)
            for i, e in enumerate(self.exprs):
                for j in range(p):
                    dj = sp.diff(e, self.variables[j])
                    for k in range(p):
                        Q[i, j, k] = sp.simplify(sp.diff(dj, self.variables[k]) / 2)
            self.Q_sym = Q
            self.is_numeric = False
        if self.is_numeric:
            self.to_state = np.atleast_2d(np.array(to_state.evalf(17).tolist(), dtype=float))
            self.from_state = np.atleast_2d(np.array(from_state.evalf(17).tolist(), dtype=float))

    @property
    def system(self) -> QuadraticSystem:
        """The :class:`servo.QuadraticSystem` (raises SymbolicParameterError for symbolic parameters)."""
        if not self.is_numeric:
            raise SymbolicParameterError(
                f"the reduced system of {self.source.name} has symbolic coefficients "
                f"{sorted(map(str, self.Q_sym.free_symbols))}; use source.subs({{...}}).reduced()")
        return self._system

    def lift(self, x: ArrayLike) -> NDArray[np.float64]:
        """The state (m, or (m, lambda)) for reduced coordinates x, batched: state = to_state @ x."""
        self.system  # raises for symbolic parameters
        return np.asarray(x, dtype=float) @ self.to_state.T

    def project(self, state: ArrayLike) -> NDArray[np.float64]:
        """Reduced coordinates x of a state on the constraint, batched: x = from_state @ state."""
        self.system  # raises for symbolic parameters
        return np.asarray(state, dtype=float) @ self.from_state.T

    @property
    def exact_exprs(self) -> list[sp.Expr]:
        """v_i(x) with exact rational coefficients: the reduction redone in sympy on the exact data
        (floats of the data as their exact rationals, :func:`servo.lie.printing.exact`); for data that are
        no short decimal or small fraction, the floats stay."""
        if "_exact" not in self.__dict__:
            if not self.is_numeric:
                self._exact = [exact(e) for e in self.exprs]
            else:
                kind = getattr(self.source, "kind", "")
                reducer = {"free": reduce_free, "servo1": reduce_first_kind, "nonholonomic": reduce_first_kind,
                           "servo2": reduce_second_kind, "vakonomic": reduce_second_kind,
                           "one_sided_servo2": reduce_second_kind}.get(kind)
                if reducer is None or not hasattr(self.source, "algebra"):
                    self._exact = [exact(e) for e in self.exprs]
                else:
                    red = reducer(_ExactData(self.source))
                    self._exact = [sp.expand(e) for e in red.exprs]
        return self._exact

    def _rows(self, style):
        names = [re.sub(r"^([A-Za-z]+)(\d+)$", r"\1_\2", str(v)) for v in self.variables]  # m1 -> m_1: m₁
        return [(symbol_text(n, style, dot=True), polynomial_text(e, list(self.variables), names, style))
                for n, e in zip(names, self.exact_exprs)]

    def text(self) -> str:
        """One line per equation in unicode, exact coefficients: ``u̇ = (3/10) u ω + (109/100) ω λ``."""
        return "\n".join(f"{lhs} = {rhs}" for lhs, rhs in self._rows("unicode"))

    def latex(self, env: str = "align") -> str:
        """The reduced system as a LaTeX ``align`` block (``env="aligned"`` inside $$...$$), exact coefficients."""
        body = " \\\\\n".join(f"{lhs} &= {rhs}" for lhs, rhs in self._rows("latex"))
        return f"\\begin{{{env}}}\n{body}\n\\end{{{env}}}"

    def _repr_latex_(self) -> str:
        return "$$" + self.latex(env="aligned") + "$$"

    def __str__(self) -> str:
        return f"reduced system of {self.source.name}, p = {self.p}:\n" + self.text()

    def __repr__(self):
        body = ", ".join(f"{v}' = {sp.sstr(e)}" for v, e in zip(self.variables, self.exact_exprs))
        return f"<Reduced p={self.p}: {body}>"


class _ExactData:
    """A system's data with every float replaced by its exact rational, for the symbolic reduction
    (the reducers read these attributes only)."""

    def __init__(self, system):
        self.name, self.algebra, self.n = system.name, system.algebra, system.n
        self.k = getattr(system, "k", 0)
        self.is_numeric = False
        self.has_linear_term = getattr(system, "has_linear_term", False)
        I_sym = getattr(system, "I_sym", None)
        self.I_sym = None if I_sym is None else exact(I_sym)
        self.Iinv_sym = self.I_sym.inv() if self.I_sym is not None else exact(system.Iinv_sym)
        for key in ("A_sym", "B_sym"):
            if getattr(system, key, None) is not None:
                setattr(self, key, exact(getattr(system, key)))


def constraint_basis(a_sym):
    """Exact basis E (n x (n-k), sympy) of the subspace A w = 0 and a left inverse L (L E = 1); ``a_sym``
    is one covector (a column) or the n x k matrix whose columns are the a_i."""
    A = sp.Matrix(a_sym)
    A = A.T
    E = sp.Matrix.hstack(*A.nullspace())
    E = E.applyfunc(sp.simplify)
    L = (E.T * E).inv() * E.T
    return E, L.applyfunc(sp.simplify)


def _names(system, E):
    n, p = E.shape
    generic = list(system.algebra.basis) == [f"e{i + 1}" for i in range(n)]
    names = []
    for j in range(p):
        col = list(E[:, j])
        nz = [i for i, x in enumerate(col) if x != 0]
        if len(nz) == 1 and col[nz[0]] == 1:
            i = nz[0]
            names.append(f"w{i + 1}" if generic else str(system.algebra.basis[i]))
        else:
            names.append(f"x{j + 1}")
    if len(set(names)) < len(names) or "lambda" in names:
        names = [f"x{j + 1}" for j in range(p)]
    return names


def _numeric_Q(C, Ew, G, Minv):
    """Q[r,a,b] = sum_j Minv[r,j] sum_{i,k} Ew[i,a] C[i,j,k] G[k,b]: the field Minv ad*_{Ew y}(G y)."""
    T = np.einsum("ia,ijk,kb->jab", Ew, C, G)
    Q = np.einsum("rj,jab->rab", Minv, T)
    Q[np.abs(Q) < 1e-14 * max(float(np.abs(Q).max()), 1e-300)] = 0.0  # round-off of exact zeros
    return Q


def reduce_free(system):
    """The :class:`Reduced` system of a free Euler-Poincare system without linear term: x = m, x' = ad*_{K x} x.

    Numeric parameters: Q by tensor contraction (fast, any dimension); symbolic: sympy (exact).
    """
    n = system.n
    if system.has_linear_term:
        raise ServoError("a Hamiltonian with a linear term c gives w = K m + c, which is not homogeneous "
                         "quadratic; reduced() needs c = 0")
    x = sp.Matrix(sp.symbols(f"m1:{n + 1}", real=True))
    if system.is_numeric:
        return Reduced(system, list(x), sp.eye(n), sp.eye(n),
                       Q=_numeric_Q(system.algebra.structure_constants, system.Iinv, np.eye(n), np.eye(n)))
    v = coad_sym(system.algebra, system.Iinv_sym * x, x)
    return Reduced(system, list(x), sp.eye(n), sp.eye(n), exprs=list(v))


def _on_constraint(system):
    """w = E x on the hyperplane (a, w) = 0: (E, L, IE, x symbols)."""
    E, L = constraint_basis(system.A_sym)
    xs = sp.symbols(" ".join(_names(system, E)), real=True)
    xs = list(xs) if isinstance(xs, (tuple, list)) else [xs]
    return E, L, system.I_sym * E, xs


def reduce_first_kind(system):
    """The :class:`Reduced` system of a servo-constraint of the first kind (nonholonomic for b = a):
    [x'; lambda] = [I E | -B^T]^-1 ad*_{Ex}(I E x), p = n - k for k constraints."""
    C, b = system.algebra.structure_constants, system.B_sym
    E, L, IE, xs = _on_constraint(system)
    to_state, from_state, p = IE, L * system.Iinv_sym, system.n - system.k
    if system.is_numeric:
        En, IEn = (np.array(M.evalf(17).tolist(), dtype=float) for M in (E, IE))
        M = np.hstack([IEn, -system.B.T])
        return Reduced(system, xs, to_state, from_state, Q=_numeric_Q(C, En, IEn, np.linalg.inv(M)[:p]))
    x = sp.Matrix(xs)
    sol = sp.Matrix.hstack(IE, -b).LUsolve(coad_sym(system.algebra, E * x, IE * x))
    return Reduced(system, xs, to_state, from_state, exprs=[sol[i] for i in range(p)])


def reduce_second_kind(system):
    """The :class:`Reduced` system of a servo-constraint of the second kind (vakonomic for b = a):
    [x'; lambda'] = [I E | B^T]^-1 ad*_{Ex}(I E x + B^T lambda), p = n (n - k velocities, k multipliers)."""
    n, k, C, b = system.n, system.k, system.algebra.structure_constants, system.B_sym
    E, L, IE, xs = _on_constraint(system)
    lams = [sp.Symbol("lambda", real=True)] if k == 1 else list(sp.symbols(f"lambda1:{k + 1}", real=True))
    to_state = sp.diag(IE, sp.eye(k))
    from_state = sp.diag(L * system.Iinv_sym, sp.eye(k))
    variables = xs + lams
    if system.is_numeric:
        En, IEn = (np.array(M.evalf(17).tolist(), dtype=float) for M in (E, IE))
        G = np.hstack([IEn, system.B.T])
        Q = _numeric_Q(C, np.hstack([En, np.zeros((n, k))]), G, np.linalg.inv(G))
        return Reduced(system, variables, to_state, from_state, Q=Q)
    x = sp.Matrix(xs)
    sol = sp.Matrix.hstack(IE, b).LUsolve(coad_sym(system.algebra, E * x, IE * x + b * sp.Matrix(lams)))
    return Reduced(system, variables, to_state, from_state, exprs=[sol[i] for i in range(n)])
