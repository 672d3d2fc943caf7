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

from functools import cached_property

import numpy as np
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols
from ..errors import LagrangianError


def vectorize(exprs, args):
    """Lambdify a list of scalar sympy expressions once into f(*arrays) -> array (..., len(exprs)).

    Constants and broadcast inputs are expanded to the common batch shape, so the result always has
    shape broadcast(args) + (len(exprs),).
    """
    exprs = [sp.sympify(e) for e in exprs]
    f = sp.lambdify(args, exprs, modules="numpy", cse=True)

    m = len(exprs)

    def call(*vals):
        vals = [np.asarray(v, dtype=float) for v in vals]
        shape = np.broadcast_shapes(*[v.shape for v in vals]) if vals else ()
        outs = f(*vals)
        if shape == ():
            return np.array(outs, dtype=float).reshape(m)
        out = np.empty(shape + (m,))
        for i, o in enumerate(outs):
            out[..., i] = o
        return out

    return call


def as_covector(a, n, what="covector"):
    """Turn a list / sympy Matrix / 1-d array of n entries into a list of sympy expressions."""
    if isinstance(a, (sp.MatrixBase, np.ndarray)):
        a = list(np.asarray(a, dtype=object).ravel()) if isinstance(a, np.ndarray) else list(a)
    a = [sp.sympify(x) for x in a]
    if len(a) != n:
        raise LagrangianError(f"{what} has {len(a)} entries, the system has n = {n} coordinates")
    if all(x == 0 for x in a):
        raise LagrangianError(f"{what} is identically zero; condition a != 0 (Kozlov 2019, (1.1)) fails")
    return a


class LagrangianSystem:
    """A mechanical system L = T - V with generalized forces F in coordinates q (Kozlov 2019, sect. 1).

    Parameters
    ----------
    T, V : sympy expressions in q(t), q'(t) and t (kinetic and potential energy).
    q : list of ``dynamicsymbols`` (functions of t only).
    forces : None or n sympy expressions F_i(q, q', t) (generalized forces, covector).

    Equations of motion: [T] = F - dV/dq, numerically A q'' = F - b (see the module docstring).
    ``constrain`` adds constraints with the models of ``servo.coordinates.constraint_models`` and
    ``servo.coordinates.one_sided``; ``with_friction`` / ``with_added_mass`` build the realizations of
    ``servo.coordinates.realization``.
    """

    def __init__(self, T, V, q, forces=None):
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
            extra = p.free_symbols - allowed
            if extra:
                raise LagrangianError(f"{name} has free symbols {sorted(map(str, extra))} besides q, q', t; "
                                      "substitute numbers for parameters first")
        Lp = self.plain(self.L)
        self.A_sym = sp.hessian(Lp, self.us)
        if sp.simplify(self.A_sym.det()) == 0:
            raise LagrangianError("the inertia operator A = d^2 L/dq'^2 is singular (det A == 0 identically)")
        p = [sp.diff(Lp, u) for u in self.us]
        self.b_sym = sp.Matrix([sum(sp.diff(p[i], qj) * uj for qj, uj in zip(self.qs, self.us))
                                + sp.diff(p[i], self.t) - sp.diff(Lp, self.qs[i]) for i in range(self.n)])
        self.F_sym = sp.Matrix([self.plain(f) for f in self.forces])
        self.E_sym = sum(pi * u for pi, u in zip(p, self.us)) - Lp

    # ----------------------------------------------------------------- symbolic helpers
    def plain(self, expr):
        """Replace q(t), q'(t) by plain symbols q_i, u_i (for differentiation and lambdify)."""
        return sp.sympify(expr).xreplace(self._to_plain)

    def dynamic(self, expr):
        """Inverse of ``plain``: back to q(t), q'(t) for printing."""
        return sp.sympify(expr).xreplace(self._to_dyn)

    def lagrange_derivative(self, expr):
        """[Phi] = d/dt dPhi/dq' - dPhi/dq as a sympy column (Kozlov 2019, eq. (2.1))."""
        expr = sp.sympify(expr)
        return sp.Matrix([sp.diff(expr, qd).diff(self.t) - sp.diff(expr, q) for q, qd in zip(self.q, self.qd)])

    def equations(self):
        """The free Lagrange equations [T] - F + dV/dq = 0 as a list of ``sympy.Eq``."""
        lhs = self.lagrange_derivative(self.L)
        return [sp.Eq(sp.simplify(lhs[i]), self.forces[i]) for i in range(self.n)]

    # ----------------------------------------------------------------- numerics (cached)
    @cached_property
    def _num(self):
        args = (self.t, *self.qs, *self.us)
        return {"A": vectorize(list(self.A_sym), args), "b": vectorize(list(self.b_sym), args),
                "F": vectorize(list(self.F_sym), args), "E": vectorize([self.E_sym], args),
                "AR": vectorize(list(self.A_sym) + list(self.F_sym - self.b_sym), args)}

    def _args(self, t, q, qd):
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        if q.shape[-1:] != (self.n,) or qd.shape[-1:] != (self.n,):
            raise LagrangianError(f"q and qd must have last axis n = {self.n}, got {q.shape} and {qd.shape}")
        return (t, *np.moveaxis(q, -1, 0), *np.moveaxis(qd, -1, 0))

    def mass_matrix(self, t, q, qd):
        """A(q, q', t) = d^2 L/dq'^2, shape (..., n, n)."""
        A = self._num["A"](*self._args(t, q, qd))
        return A.reshape(A.shape[:-1] + (self.n, self.n))

    def bias(self, t, q, qd):
        """b(q, q', t) with [L] = A q'' + b, shape (..., n)."""
        return self._num["b"](*self._args(t, q, qd))

    def force(self, t, q, qd):
        """Generalized force F(q, q', t), shape (..., n)."""
        return self._num["F"](*self._args(t, q, qd))

    def energy(self, t, q, qd):
        """Jacobi energy E = (dL/dq', q') - L, shape (...)."""
        return self._num["E"](*self._args(t, q, qd))[..., 0]

    def free_acceleration(self, t, q, qd):
        """q''_free = A^-1 (F - b): the acceleration of the unconstrained system, shape (..., n)."""
        n = self.n
        AR = self._num["AR"](*self._args(t, q, qd))
        A = AR[..., :n * n].reshape(AR.shape[:-1] + (n, n))
        return np.linalg.solve(A, AR[..., n * n:, None])[..., 0]

    @cached_property
    def _jac_num(self):
        z = self.qs + self.us
        R = self.F_sym - self.b_sym
        dA = [sp.diff(self.A_sym[i, j], zk) for i in range(self.n) for j in range(self.n) for zk in z]
        dR = [sp.diff(R[i], zk) for i in range(self.n) for zk in z]
        return vectorize(dA + dR, (self.t, *self.qs, *self.us))

    def first_order_jacobian(self, t, q, qd):
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

    def simulate(self, q0, qd0, t_end, steps=200, t0=0.0, method="DOP853", rtol=1e-12, atol=1e-12):
        """Integrate the free equations A q'' = F - b with ``scipy.integrate.solve_ivp``.

        Returns a ``SimulationResult`` on the grid linspace(t0, t_end, steps + 1). Use method="Radau"
        for stiff runs (large anisotropic friction).
        """
        from .result import integrate_first_order

        n = self.n

        def rhs(t, y):  # vectorized: y of shape (2n,) or (2n, m) (solve_ivp's finite-difference Jacobian)
            yt = y.T
            return np.concatenate([yt[..., n:], self.free_acceleration(t, yt[..., :n], yt[..., n:])], axis=-1).T

        def jac(t, y):
            return self.first_order_jacobian(t, y[:n], y[n:])

        return integrate_first_order(rhs, q0, qd0, t_end, steps, t0, method, rtol, atol, n, vectorized=True,
                                     jac=jac if method in ("Radau", "BDF", "LSODA") else None)

    # ----------------------------------------------------------------- constraints and realizations
    def constrain(self, phi, model="nonholonomic", control=None):
        """Impose constraints phi(q, q', t) = 0 (or one-sided ones) with a model.

        model: "nonholonomic" (Cetaev), "vakonomic", "servo1" (control = covector(s) M),
        "servo2" (control = function(s) N in T* = T + lambda N) or "one_sided" (phi: relationals f >= 0
        or a pair (W, h) meaning W q' + h <= 0; optional control = M for a one-sided servo-constraint of
        the first kind with lambda >= 0). See ``servo.coordinates.constraint_models`` and ``servo.coordinates.one_sided``.
        """
        if model == "one_sided":
            from .one_sided import OneSidedSystem
            return OneSidedSystem(self, phi, control=control)
        from .constraint_models import ConstrainedSystem
        return ConstrainedSystem(self, phi, model=model, control=control)

    def with_friction(self, a_covector, N, one_sided=False, k=0.0):
        """A new system with the anisotropic viscous force -N (a, q') a (Kozlov 2019, sect. 4).

        one_sided=True applies it only where the one-sided constraint (a, q') >= 0 is violated and
        -k (a, q') a on the allowed side (Salnikova et al. 2023, section 4). See ``servo.coordinates.realization``.
        """
        from .realization import with_friction
        return with_friction(self, a_covector, N, one_sided=one_sided, k=k)

    def with_added_mass(self, a_covector, N):
        """A new system with T_N = T + N (a, q')^2 / 2 (added masses; Theorem 2 of Kozlov's slides)."""
        from .realization import with_added_mass
        return with_added_mass(self, a_covector, N)

    def __repr__(self):
        return f"LagrangianSystem(n={self.n}, q={self.q})"
