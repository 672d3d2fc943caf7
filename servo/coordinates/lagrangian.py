"""Lagrangian systems in coordinates: L = T - V, generalized forces F, Lagrange derivative [.].

Conventions (Kozlov, "On the dynamics of systems with one-sided non-integrable constraints", 2019,
section 1-2; Kozlov's lectures on servo-constraints):

- coordinates q = (q_1..q_n) are ``dynamicsymbols`` (functions of t), velocities q' = dq/dt;
- the Lagrange (variational) derivative is [Phi] = d/dt dPhi/dq' - dPhi/dq;
- the free equations are [L] = F, i.e. [T] = F - dV/dq, written as A q'' + b = F with
  A = d^2 L / dq'^2 (the inertia operator, positive definite) and
  b = (d^2 L / dq' dq) q' + d^2 L / dq' dt - dL/dq;
- the energy is the Jacobi function E = (dL/dq', q') - L (= T + V for T quadratic in q').

Symbolic work is sympy, done once; the numerical pieces A, b, F, E are lambdified once on first use
and cached. Every numerical function is vectorized over leading batch axes: q, qd of shape (..., n).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from typing import Any, Protocol

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray
from sympy.physics.mechanics import dynamicsymbols

from . import integration
from .symbolic import free_parameters, require_numeric, vectorize
from ..errors import LagrangianError


class ConstraintModel(Protocol):
    """What ``LagrangianSystem.constrain`` returns, whatever the model (``ConstrainedSystem`` of
    ``constraint_models``, ``OneSidedSystem`` of ``one_sided``): this module imports neither."""

    @property
    def is_numeric(self) -> bool:
        """True when no parameter symbols remain."""

    def subs(self, mapping: dict[Any, Any]) -> ConstraintModel:
        """The same constrained system with parameters replaced by values."""

    def equations(self) -> list[sp.Basic]:
        """The equations of motion (sympy)."""

    def realizability(self) -> sp.Expr:
        """The realizability determinant."""

    def constraint_values(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
        """The constraint functions at a state, shape (..., k)."""

    def simulate(self, q0: ArrayLike, qd0: ArrayLike, t_end: float, *args: Any,
                 **kwargs: Any) -> integration.IntegrationResult:
        """Integrate the constrained motion."""


#: constraint models by name (filled by ``constraint_models`` and ``one_sided`` when the package loads, so
#: that this module imports none of them): name -> factory(system, phi, model, control)
MODELS: dict[str, Callable[..., ConstraintModel]] = {}
#: realizations by name ("with_friction", "with_added_mass"; filled by ``realization``)
BUILDERS: dict[str, Callable[..., LagrangianSystem]] = {}


def register_model(names: Iterable[str], factory: Callable[..., ConstraintModel]) -> None:
    """Make ``LagrangianSystem.constrain(phi, model=name)`` build ``factory(system, phi, model, control)``."""
    for name in names:
        MODELS[name] = factory


def register_builder(name: str, func: Callable[..., LagrangianSystem]) -> None:
    """Make ``LagrangianSystem.<name>(*args, **kw)`` call ``func(system, *args, **kw)``."""
    BUILDERS[name] = func


class LagrangianSystem:
    """A mechanical system L = T - V with generalized forces F in coordinates q (Kozlov 2019, sect. 1).

    Parameters
    ----------
    T, V : sympy expressions in q(t), q'(t) and t (kinetic and potential energy).
    q : list of ``dynamicsymbols`` (functions of t only).
    forces : None or n sympy expressions F_i(q, q', t) (generalized forces, covector).
    period : float, optional (keyword)
        The period T of a system whose T, V or forces depend on t periodically (a forced or parametrically
        excited system): checked (T, V and F at t + T equal their values at t at sample states, relative
        1e-9) and kept on :meth:`problem` for the phase-space tools (:func:`integrators.lyapunov_spectrum`
        per period, stroboscopic :func:`integrators.poincare_section`).

    Notes
    -----
    Equations of motion: [T] = F - dV/dq, numerically A q'' = F - b (see the module docstring).
    ``constrain`` adds constraints with the models of ``servo.coordinates.constraint_models`` and
    ``servo.coordinates.one_sided``; ``with_friction`` / ``with_added_mass`` build the realizations of
    ``servo.coordinates.realization``.
    """

    def __init__(self, T: Any, V: Any, q: Iterable[sp.Function], forces: Sequence[Any] | sp.MatrixBase | None = None,
                 *, period: float | None = None) -> None:
        self.t = dynamicsymbols._t
        self.q = list(q)
        if not self.q:
            raise LagrangianError("q is empty: a Lagrangian system needs at least one coordinate")
        for qi in self.q:
            if not (isinstance(qi, sp.core.function.AppliedUndef) and qi.args == (self.t,)):
                raise LagrangianError(f"coordinate {qi!r} is not a dynamicsymbol q(t) of time t")
        self.n = len(self.q)
        self.qd = [qi.diff(self.t) for qi in self.q]
        self.T = sp.sympify(T)
        self.V = sp.sympify(V)
        self.L = self.T - self.V
        if forces is None:
            self.forces = [sp.S.Zero] * self.n
        else:
            self.forces = [sp.sympify(f) for f in (list(forces) if not isinstance(forces, sp.MatrixBase)
                                                    else list(forces))]
            if len(self.forces) != self.n:
                raise LagrangianError(f"forces has {len(self.forces)} entries, expected n = {self.n}")
        # plain symbols for lambdify: q_i -> qs_i, q_i' -> u_i (derivatives replaced first by xreplace)
        self.qs = list(sp.symbols(f"q_0:{self.n}", real=True))
        self.us = list(sp.symbols(f"u_0:{self.n}", real=True))
        self._to_plain = {**dict(zip(self.qd, self.us)), **dict(zip(self.q, self.qs))}
        self._to_dyn = {**{s: d for d, s in zip(self.qd, self.us)}, **{s: d for d, s in zip(self.q, self.qs)}}
        allowed = set(self.qs) | set(self.us) | {self.t}
        for name, e in [("T", self.T), ("V", self.V)] + [(f"F[{i}]", f) for i, f in enumerate(self.forces)]:
            p = self.plain(e)
            if p.has(sp.Derivative):
                raise LagrangianError(f"{name} contains accelerations or derivatives other than q'(t): {e}")
        #: sympy symbols other than q, q', t (parameters): allowed for the symbolic methods
        #: (equations, realizability, homogeneity_degree); numbers are needed to simulate (see ``subs``)
        self.symbols = free_parameters([self.plain(e) for e in [self.T, self.V, *self.forces]], allowed)
        Lp = self.plain(self.L)
        self.A_sym = sp.hessian(Lp, self.us)
        if sp.simplify(self.A_sym.det()) == 0:
            raise LagrangianError("the inertia operator A = d^2 L/dq'^2 is singular (det A == 0 identically)")
        p = [sp.diff(Lp, u) for u in self.us]
        self.b_sym = sp.Matrix([sum(sp.diff(p[i], qj) * uj for qj, uj in zip(self.qs, self.us))
                                + sp.diff(p[i], self.t) - sp.diff(Lp, self.qs[i]) for i in range(self.n)])
        self.F_sym = sp.Matrix([self.plain(f) for f in self.forces])
        self.E_sym = sum(pi * u for pi, u in zip(p, self.us)) - Lp
        self.period = None
        if period is not None:
            self.period = self._check_period(period)

    def _check_period(self, period: Any) -> float:
        """The period T (positive, finite) after checking that T, V and F are T-periodic in t: each is
        evaluated at t and t + T on 5 seeded sample points (t, q, q'); with parameter symbols left the
        check waits for ``subs`` (the numeric system checks it)."""
        if isinstance(period, bool) or not isinstance(period, (int, float, np.floating, np.integer)) \
                or not 0 < float(period) < np.inf:
            raise LagrangianError(f"period must be a positive finite number (the period of T, V, F in t), "
                                  f"got {period!r}")
        Tp = float(period)
        if self.symbols:
            return Tp
        exprs = [self.plain(self.T), self.plain(self.V), *self.F_sym]
        f = vectorize(exprs, (self.t, *self.qs, *self.us))
        rng = np.random.default_rng(0)
        pts = rng.uniform(-1.0, 1.0, (5, 2 * self.n))
        ts = rng.uniform(0.0, Tp, 5)
        a = f(ts, *pts.T)
        b = f(ts + Tp, *pts.T)
        err = np.abs(b - a) / np.maximum(1.0, np.abs(a))
        if not np.all(np.isfinite(err)) or float(np.max(err)) > 1e-9:
            j = int(np.argmax(np.where(np.isfinite(err), err, np.inf)) % len(exprs))
            name = ["T", "V"][j] if j < 2 else f"F[{j - 2}]"
            raise LagrangianError(f"{name} is not {Tp:.6g}-periodic in t: its values at t and t + T differ by "
                                  f"{float(np.nanmax(np.abs(b - a))):.3e} ({name} = {exprs[j]})")
        return Tp

    # ----------------------------------------------------------------- parameters
    @property
    def is_numeric(self) -> bool:
        """True when T, V and the forces have no symbols besides q, q', t (required to simulate)."""
        return not self.symbols

    def subs(self, mapping: dict[Any, Any]) -> LagrangianSystem:
        """The same system with parameters replaced by values: ``L.subs({m: 2.0, g: 9.81})``."""
        return LagrangianSystem(sp.sympify(self.T).subs(mapping), sp.sympify(self.V).subs(mapping), self.q,
                                forces=[sp.sympify(f).subs(mapping) for f in self.forces], period=self.period)

    # ----------------------------------------------------------------- symbolic helpers
    def plain(self, expr: Any) -> sp.Expr:
        """Replace q(t), q'(t) by plain symbols q_i, u_i (for differentiation and lambdify)."""
        return sp.sympify(expr).xreplace(self._to_plain)

    def dynamic(self, expr: Any) -> sp.Expr:
        """Inverse of ``plain``: back to q(t), q'(t) for printing."""
        return sp.sympify(expr).xreplace(self._to_dyn)

    def lagrange_derivative(self, expr: Any) -> sp.Matrix:
        """[Phi] = d/dt dPhi/dq' - dPhi/dq as a sympy column (Kozlov 2019, eq. (2.1))."""
        expr = sp.sympify(expr)
        return sp.Matrix([sp.diff(expr, qd).diff(self.t) - sp.diff(expr, q) for q, qd in zip(self.q, self.qd)])

    def equations(self) -> list[sp.Eq]:
        """The free Lagrange equations [T] - F + dV/dq = 0 as a list of ``sympy.Eq``."""
        lhs = self.lagrange_derivative(self.L)
        return [sp.Eq(sp.simplify(lhs[i]), self.forces[i]) for i in range(self.n)]

    # ----------------------------------------------------------------- numerics (cached)
    @cached_property
    def _num(self) -> dict[str, Callable[..., NDArray[np.float64]]]:
        require_numeric(self.symbols, "a numeric evaluation", repr(self))
        args = (self.t, *self.qs, *self.us)
        return {"A": vectorize(list(self.A_sym), args), "b": vectorize(list(self.b_sym), args),
                "F": vectorize(list(self.F_sym), args), "E": vectorize([self.E_sym], args),
                "AR": vectorize(list(self.A_sym) + list(self.F_sym - self.b_sym), args)}

    def _args(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> tuple[Any, ...]:
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        if q.shape[-1:] != (self.n,) or qd.shape[-1:] != (self.n,):
            raise LagrangianError(f"q and qd must have last axis n = {self.n}, got {q.shape} and {qd.shape}")
        if q.ndim == 1 and qd.ndim == 1:  # one state: plain floats (the integrators' hot path)
            return (t, *q.tolist(), *qd.tolist())
        return (t, *np.moveaxis(q, -1, 0), *np.moveaxis(qd, -1, 0))

    def inertia_and_rhs(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(A, F - b) at once (one lambdified call), shapes (..., n, n) and (..., n)."""
        n = self.n
        AR = self._num["AR"](*self._args(t, q, qd))
        return AR[..., :n * n].reshape(AR.shape[:-1] + (n, n)), AR[..., n * n:]

    def mass_matrix(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
        """A(q, q', t) = d^2 L/dq'^2, shape (..., n, n)."""
        A = self._num["A"](*self._args(t, q, qd))
        return A.reshape(A.shape[:-1] + (self.n, self.n))

    def bias(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
        """b(q, q', t) with [L] = A q'' + b, shape (..., n)."""
        return self._num["b"](*self._args(t, q, qd))

    def force(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
        """Generalized force F(q, q', t), shape (..., n)."""
        return self._num["F"](*self._args(t, q, qd))

    def energy(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
        """Jacobi energy E = (dL/dq', q') - L, shape (...)."""
        return self._num["E"](*self._args(t, q, qd))[..., 0]

    def free_acceleration(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
        """q''_free = A^-1 (F - b): the acceleration of the unconstrained system, shape (..., n)."""
        A, R = self.inertia_and_rhs(t, q, qd)
        return np.linalg.solve(A, R[..., None])[..., 0]

    @cached_property
    def _jac_num(self) -> Callable[..., NDArray[np.float64]]:
        require_numeric(self.symbols, "a numeric evaluation", repr(self))
        z = self.qs + self.us
        R = self.F_sym - self.b_sym
        dA = [sp.diff(self.A_sym[i, j], zk) for i in range(self.n) for j in range(self.n) for zk in z]
        dR = [sp.diff(R[i], zk) for i in range(self.n) for zk in z]
        return vectorize(dA + dR, (self.t, *self.qs, *self.us))

    def first_order_jacobian(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
        """d(q', q'')/d(q, q') of the free first-order system, shape (..., 2n, 2n).

        With a = A^-1 R, R = F - b: da/dz = A^-1 (dR/dz - (dA/dz) a); derivatives taken symbolically once.
        Passed to stiff solvers (Radau, BDF) instead of finite differences.
        """
        n = self.n
        v = self._jac_num(*self._args(t, q, qd))
        dA = v[..., :n * n * 2 * n].reshape(v.shape[:-1] + (n, n, 2 * n))
        dR = v[..., n * n * 2 * n:].reshape(v.shape[:-1] + (n, 2 * n))
        A = self.mass_matrix(t, q, qd)
        a = self.free_acceleration(t, q, qd)
        da = np.linalg.solve(A, dR - np.einsum("...ijk,...j->...ik", dA, a))
        top = np.concatenate([np.zeros(da.shape[:-2] + (n, n)), np.broadcast_to(np.eye(n), da.shape[:-2] + (n, n))],
                             axis=-1)
        return np.concatenate([top, da], axis=-2)

    def simulate(self, q0: ArrayLike, qd0: ArrayLike, t_end: float, steps: int = 200, t0: float = 0.0,
                 method: str = integration.DEFAULT_METHOD, rtol: float = 1e-12, atol: float = 1e-12
                 ) -> integration.IntegrationResult:
        """Integrate the free equations A q'' = F - b with ``integrators.integrate``.

        Returns an ``IntegrationResult`` on the grid linspace(t0, t_end, steps + 1) with outputs "q",
        "qd" and an empty "lambda" (res.q, res.qd, res.lam). Use method="scipy:Radau" (or "Radau") for
        stiff runs (large anisotropic friction): the symbolic Jacobian is passed to it.
        """
        require_numeric(self.symbols, "simulate", repr(self))
        n = self.n
        q0, qd0 = integration.check_state(q0, qd0, n)
        problem = self.problem()
        grid = integration.time_grid(t0, t_end, steps)
        res = integration.run(problem, np.concatenate([q0, qd0]), t0, t_end, method, rtol, atol, t_eval=grid,
                              steps=steps)
        return integration.finish(res, self, np.zeros((len(res.t), 0)), self.labels)

    def problem(self) -> integration.ODEProblem:
        """The free first-order system y = (q, q'), y' = (q', A^-1 (F - b)) as an :class:`integrators.ODEProblem`
        with the symbolic Jacobian (``jac``), the outputs "q", "qd" and this system's ``period`` (what
        :func:`integrators.lyapunov_spectrum` and :func:`integrators.poincare_section` take)."""
        require_numeric(self.symbols, "problem", repr(self))
        n = self.n

        def acc(t, q, qd, _extra):
            return self.free_acceleration(t, q, qd)

        def jac(t, y):
            return self.first_order_jacobian(t, y[..., :n], y[..., n:])

        return integration.first_order_problem(n, acc, jac=jac, name=repr(self), period=self.period)

    @property
    def labels(self) -> tuple[str, ...]:
        """Names of the state components (q_i, then q_i')."""
        return tuple(str(x.func) for x in self.q) + tuple(f"{x.func}'" for x in self.q)

    # ----------------------------------------------------------------- constraints and realizations
    def constrain(self, phi: Any, model: str = "nonholonomic", control: Any = None) -> ConstraintModel:
        """Impose constraints phi(q, q', t) = 0 (or one-sided ones) with a model.

        model: "nonholonomic" (Cetaev), "vakonomic", "servo1" (control = covector(s) M),
        "servo2" (control = function(s) N in T* = T + lambda N), "one_sided" (phi: relationals f >= 0
        or a pair (W, h) meaning W q' + h <= 0; optional control = M for a one-sided servo-constraint of
        the first kind with lambda >= 0) or "one_sided_servo2" (control = N: a one-sided servo-constraint
        of the second kind, T* = T + lambda N with lambda >= 0). See ``servo.coordinates.constraint_models``
        and ``servo.coordinates.one_sided``.
        """
        if model not in MODELS:
            raise LagrangianError(f"unknown model {model!r}; expected one of {sorted(MODELS)}")
        return MODELS[model](self, phi, model=model, control=control)

    def with_friction(self, a_covector: Any, N: float, one_sided: bool = False, k: float = 0.0, h: Any = 0
                      ) -> LagrangianSystem:
        """A new system with the anisotropic viscous force -N ((a, q') + h) a (Kozlov 2019, sect. 4;
        Salnikova, Kugushev and Demidov (2023), eq. (10) for h != 0).

        one_sided=True applies it only where the one-sided constraint (a, q') + h >= 0 is violated and
        -k ((a, q') + h) a on the allowed side (Salnikova et al. 2023, section 4). See
        ``servo.coordinates.realization``.
        """
        return BUILDERS["with_friction"](self, a_covector, N, one_sided=one_sided, k=k, h=h)

    def with_added_mass(self, a_covector: Any, N: float) -> LagrangianSystem:
        """A new system with T_N = T + N (a, q')^2 / 2 (added masses; Theorem 2 of Kozlov's slides)."""
        return BUILDERS["with_added_mass"](self, a_covector, N)

    def __repr__(self) -> str:
        return f"LagrangianSystem(n={self.n}, q={self.q})"
