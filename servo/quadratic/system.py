"""Homogeneous quadratic systems x' = v(x), v_i(x) = sum_{j,k} Q[i,j,k] x_j x_k.

These are the "reduced systems" of rigid bodies with servo-constraints (Kozlov, slide
"Общие свойства приведенных систем"): after eliminating the multiplier and the
constrained velocity, the remaining momenta obey a homogeneous quadratic ODE. The tensor Q
is stored symmetrized in (j, k), so that the Jacobian is dv_i/dx_j = 2 sum_k Q[i,j,k] x_k.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import sympy as sp
from integrators import IntegrationResult, ODEProblem, integrate
from liegroups._lazy import lazy_module
from numpy.typing import ArrayLike, NDArray

from ..errors import QuadraticSystemError
from . import integrals as _integrals
from . import plot as _plot
from .invariant_lines import invariant_lines as _invariant_lines
from .kovalevskaya.obstructions import IntegrabilityObstructions
from .kovalevskaya.obstructions import integrability_obstructions as _integrability_obstructions
from .line_types import InvariantLine, InvariantLines

__all__ = ["QuadraticSystem", "QuadraticSystemError"]

_mpl_axes = lazy_module("matplotlib.axes")  # for the annotation of phase_portrait only; loaded by get_type_hints


class QuadraticSystem:
    """x' = v(x) with v_i(x) = sum_{j,k} Q[i,j,k] x_j x_k, Q symmetric in (j, k).

    .. math::

        \\dot x_i = v_i(x) = \\sum_{j,k} Q_{ijk}\\, x_j x_k, \\qquad Q_{ijk} = Q_{ikj};

    an invariant line :math:`x = s\\,\\xi` with :math:`v(\\xi) = c\\,\\xi` carries :math:`\\dot s = c\\, s^2`.

    Parameters
    ----------
    Q : array_like, shape (p, p, p), real or complex
        Coefficient tensor. It is symmetrized, Q <- (Q + Q.transpose(0, 2, 1)) / 2, which does
        not change v. Real input is stored as float64, complex input as complex128.
    variables : optional sequence of names (for printing and sympy export).

    Raises
    ------
    QuadraticSystemError
        (a ValueError) for a wrong shape or non-finite entries.
    """

    def __init__(self, Q: ArrayLike, variables: Sequence[Any] | None = None) -> None:
        Q = np.asarray(Q)
        if Q.dtype == object:
            try:
                Q = Q.astype(complex)
            except (TypeError, ValueError) as exc:
                raise QuadraticSystemError(f"Q has non-numeric entries: {exc}") from None
        if Q.ndim != 3 or not (Q.shape[0] == Q.shape[1] == Q.shape[2]) or Q.shape[0] < 1:
            raise QuadraticSystemError(
                f"Q must have shape (p, p, p) with p >= 1, got shape {Q.shape}")
        if not np.all(np.isfinite(Q)):
            bad = np.argwhere(~np.isfinite(Q))[0]
            raise QuadraticSystemError(f"Q has a non-finite entry at index {tuple(bad)}: "
                                       f"{Q[tuple(bad)]}")
        if np.iscomplexobj(Q):
            if np.all(Q.imag == 0):
                Q = Q.real
            Q = Q.astype(np.result_type(Q.dtype, np.float64))
        else:
            Q = Q.astype(np.float64)
        self._Q = 0.5 * (Q + Q.transpose(0, 2, 1))
        self._Q.setflags(write=False)
        p = self._Q.shape[0]
        if variables is None:
            variables = [f"x{i + 1}" for i in range(p)]
        variables = [str(s) for s in variables]
        if len(variables) != p:
            raise QuadraticSystemError(f"{len(variables)} variable names given for p = {p}")
        self.variables = tuple(variables)

    # ------------------------------------------------------------------ basics
    @property
    def p(self) -> int:
        """Dimension of the state space."""
        return self._Q.shape[0]

    @property
    def Q(self) -> NDArray[Any]:
        """The symmetrized coefficient tensor Q[i, j, k] (read-only view)."""
        return self._Q

    @property
    def is_real(self) -> bool:
        """True if Q is real."""
        return not np.iscomplexobj(self._Q)

    def _check_x(self, x: ArrayLike) -> NDArray[Any]:
        x = np.asarray(x)
        if x.ndim < 1 or x.shape[-1] != self.p:
            raise QuadraticSystemError(
                f"state must have shape (..., {self.p}), got shape {x.shape}")
        return x

    def v(self, x: ArrayLike) -> NDArray[Any]:
        """Vector field v_i(x) = sum_{j,k} Q[i,j,k] x_j x_k, batched over leading axes of x."""
        x = self._check_x(x)
        return np.einsum("ijk,...j,...k->...i", self._Q, x, x)

    __call__ = v

    def rhs(self, t: float, x: ArrayLike) -> NDArray[Any]:
        """scipy-style right-hand side f(t, x) = v(x)."""
        return self.v(x)

    def jacobian(self, x: ArrayLike) -> NDArray[Any]:
        """dv_i/dx_j = 2 sum_k Q[i,j,k] x_k, shape (..., p, p)."""
        x = self._check_x(x)
        return 2.0 * np.einsum("ijk,...k->...ij", self._Q, x)

    # ---------------------------------------------------------------- sympy
    @classmethod
    def from_sympy(cls, exprs: Iterable[Any], variables: Iterable[sp.Symbol]) -> QuadraticSystem:
        """Build from sympy expressions v_i(x) that are homogeneous quadratic in `variables`.

        Q[i,j,j] is the coefficient of x_j^2 in v_i and Q[i,j,k] = Q[i,k,j] = half the
        coefficient of x_j x_k (j != k). Raises QuadraticSystemError naming the component and
        the offending monomial if some term is not of degree exactly 2, or a coefficient
        contains free symbols other than `variables`.
        """
        variables = list(variables)
        exprs = list(exprs)
        p = len(variables)
        if len(exprs) != p:
            raise QuadraticSystemError(f"{len(exprs)} expressions for {p} variables")
        Q = np.zeros((p, p, p), dtype=complex)
        for i, e in enumerate(exprs):
            poly = sp.Poly(sp.expand(sp.sympify(e)), *variables)
            for monom, coeff in poly.terms():
                if coeff == 0:
                    continue
                if sum(monom) != 2:
                    raise QuadraticSystemError(
                        f"component {i} (d{variables[i]}/dt) is not homogeneous quadratic: term "
                        f"{coeff}*{sp.Mul(*[v**m for v, m in zip(variables, monom)])} "
                        f"has degree {sum(monom)}")
                if coeff.free_symbols:
                    raise QuadraticSystemError(
                        f"component {i}: coefficient {coeff} has free symbols "
                        f"{sorted(map(str, coeff.free_symbols))}; substitute numbers first")
                idx = [j for j, m in enumerate(monom) for _ in range(m)]
                c = complex(coeff)
                if idx[0] == idx[1]:
                    Q[i, idx[0], idx[0]] += c
                else:
                    Q[i, idx[0], idx[1]] += c / 2
                    Q[i, idx[1], idx[0]] += c / 2
        return cls(Q, variables=[str(v) for v in variables])

    def to_sympy(self, variables: Sequence[sp.Symbol] | None = None) -> list[sp.Expr]:
        """The components v_i as a list of sympy expressions (floats as given)."""
        xs = sp.symbols(self.variables) if variables is None else list(variables)
        out = []
        for i in range(self.p):
            e = 0
            for j in range(self.p):
                for k in range(j, self.p):
                    c = self._Q[i, j, k] * (1 if j == k else 2)
                    if c != 0:
                        c = float(c.real) if np.isreal(c) else complex(c)
                        e += c * xs[j] * xs[k]
            out.append(e)
        return out

    def __repr__(self) -> str:
        return f"QuadraticSystem(p={self.p}, variables={self.variables})"

    # ------------------------------------------------------- invariant lines
    def invariant_lines(self, **kw: Any) -> InvariantLines:
        """All solutions of v(xi) = c xi in CP^{p-1}; see :func:`servo.quadratic.invariant_lines.invariant_lines`."""
        return _invariant_lines(self, **kw)

    def linear_first_integrals(self, rtol: float = 1e-10) -> NDArray[np.float64]:
        """Rows l with l . v(x) == 0; see :mod:`servo.quadratic.integrals`."""
        return _integrals.linear_first_integrals(self, rtol)

    def quadratic_first_integrals(self, rtol: float = 1e-10) -> list[NDArray[np.float64]]:
        """Symmetric S with x^T S v(x) == 0; see :mod:`servo.quadratic.integrals`."""
        return _integrals.quadratic_first_integrals(self, rtol)

    def time_change_to_linear(self, l: ArrayLike | None = None, rtol: float = 1e-9
                              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(l, A) with v(x) = l(x) A x, so d tau = l(x) dt gives dx/dtau = A x."""
        return _integrals.time_change_to_linear(self, l, rtol)

    def integrability_obstructions(self, max_degree: int = 4, lines: Iterable[InvariantLine] | None = None,
                                   rtol: float = 1e-8, exact: bool = False) -> IntegrabilityObstructions:
        """Degrees m <= max_degree with no homogeneous polynomial first integral, proved by the Kovalevskaya
        exponents at the Darboux points; see servo.quadratic.kovalevskaya."""
        return _integrability_obstructions(self, max_degree, lines=lines, rtol=rtol, exact=exact)

    def phase_portrait(self, ax: _mpl_axes.Axes | None = None, **kw: Any) -> _mpl_axes.Axes:
        """p = 2: streamlines and invariant lines; p = 3: flow on the sphere of directions."""
        return _plot.phase_portrait(self, ax=ax, **kw)

    # ------------------------------------------------------- simulation
    def problem(self) -> ODEProblem:
        """The :class:`integrators.ODEProblem` x' = v(x) (real systems), with its Jacobian."""
        if self.is_real is False:
            raise QuadraticSystemError("simulate needs a real system (Q is complex)")
        return ODEProblem(lambda t, x: self.v(x), self.p, jac=lambda t, x: self.jacobian(x),
                          name=f"quadratic system p={self.p}")

    def simulate(self, x0: ArrayLike, t_end: float, steps: int | None = 1000, method: str = "scipy:DOP853",
                 **options: Any) -> IntegrationResult:
        """Integrate x' = v(x) from ``x0`` over [0, t_end] with ``integrators.integrate`` (any method for a
        plain ODE; ``steps`` sets the output grid of the scipy methods). Returns an IntegrationResult."""
        kw = dict(options)
        if steps is not None and "h" not in kw and "t_eval" not in kw:
            kw["steps"] = int(steps)
        res = integrate(self.problem(), np.asarray(x0, dtype=float), (0.0, float(t_end)), method=method, **kw)
        res.system = self
        res.labels = tuple(self.variables)
        return res
