"""Systems on Lie groups with time-dependent data: inertia I(t), gyrostatic momentum k(t), torque f(t) and
constraints a(t) with controls b(t) (periodically forced systems, built by a builder rather than by hand).

The Lagrangian on g (left-invariant in the group variable, explicit in t)

    L(t, w) = (I(t) w, w)/2 + (k(t), w),     m = dL/dw = I(t) w + k(t),

gives the Euler-Poincare equations (the variation is taken at fixed t, so explicit time changes nothing
in the derivation; Holm, Marsden and Ratiu 1998; Kozlov's lectures on servo-constraints for the
constrained form)

    m' = ad*_w m + f(t) + B(t)^T lambda,    w = I(t)^-1 (m - k(t)),    A(t) w = 0,

with (ad*_w m)_j = sum_{i,k} w_i C[i,j,k] m_k. In Hamiltonian form H(t, m) = (m - k, I^-1 (m - k))/2, so
w = dH/dm = K(t) m + c(t) with K = I^-1 and the linear term c(t) = -I(t)^-1 k(t). A rotor of gyrostatic
momentum k(t) on a body, a point mass moving on a platform along a prescribed law (I(t) and k(t) from
the mass's position and velocity) and a periodic control torque are all of this form.

The multiplier of the servo-constraint of the first kind (b = a: nonholonomic) follows from
d/dt (A w) = 0 with w' = I^-1 (m' - k' - I' w):

    R(t) lambda = -A I^-1 (ad*_w m + f - k' - I' w) - A' w,     R(t) = A I^-1 B^T,

realizable where det R(t) != 0 (checked over a period, or at t = 0 for non-periodic data). The
derivatives I', k', A' are taken symbolically (sympy) once.

Without constraints and torque the motion stays on a coadjoint orbit (z' = ad*_{w(t, z)} z for any
w), so every Casimir of the algebra is a first integral; the energy is not (dH/dt = dH/dt|explicit).

The data are sympy expressions (or numbers) in one time symbol (``time``, default ``sympy.Symbol("t")``);
:meth:`TimeDependentSystem.problem` is an :class:`integrators.CoadjointProblem` with
``time_dependent=True`` and the ``period``, which the phase-space tools
(:func:`integrators.lyapunov_spectrum`, :func:`integrators.poincare_section`) read.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from integrators import CoadjointProblem, integrate

from ..errors import (ConstraintViolationError, CovectorError, InertiaError, ServoError, SymbolicParameterError,
                      UnrealizableConstraintError)

__all__ = ["TimeDependentSystem"]

#: relative mismatch of a datum at t and t + period above which ``period`` is refused
PERIOD_RTOL = 1e-9
#: relative size of det R(t) (R = A I^-1 B^T of unit covectors) below which the constraint is not realizable
REALIZABILITY_RTOL = 1e-10
#: |A w| <= CONSTRAINT_RTOL |A| max(|w|, 1) counts as on the constraint (initial states)
CONSTRAINT_RTOL = 1e-9


class _Timed:
    """A sympy array of expressions in t, with its t-derivative, evaluated at a float t or an array of t."""

    def __init__(self, expr: sp.Matrix, t: sp.Symbol, what: str) -> None:
        self.expr, self.what = expr, what
        self.shape = expr.shape
        self.constant = not expr.has(t)
        self._f = sp.lambdify(t, list(expr), modules="numpy")
        d = expr.diff(t)
        self._df = sp.lambdify(t, list(d), modules="numpy")
        self.zero_rate = all(x == 0 for x in d)
        self._const = np.array([float(x) for x in expr], dtype=float).reshape(self.shape) if self.constant else None

    def _eval(self, f, t):
        if np.ndim(t) == 0:
            return np.array(f(float(t)), dtype=float).reshape(self.shape)
        t = np.asarray(t, dtype=float)
        out = np.empty(t.shape + self.shape)
        flat = out.reshape(t.shape + (-1,))
        for i, v in enumerate(f(t)):
            flat[..., i] = v
        return out

    def __call__(self, t):
        if self._const is not None:
            return self._const if np.ndim(t) == 0 else np.broadcast_to(self._const, np.shape(t) + self.shape)
        return self._eval(self._f, t)

    def rate(self, t):
        if self.zero_rate:
            return np.zeros(np.shape(t) + self.shape)
        return self._eval(self._df, t)


def _matrix(x, shape, what, t):
    """x as a sympy Matrix of ``shape`` whose only free symbol is t (a vector of length n is a diagonal
    when shape is square)."""
    try:
        M = sp.Matrix(x) if not isinstance(x, sp.MatrixBase) else sp.Matrix(x)
    except (TypeError, ValueError, sp.SympifyError) as exc:
        raise ServoError(f"{what} must be an array of numbers or sympy expressions in {t}: {exc}") from None
    n = shape[0]
    if shape[0] == shape[1] and M.shape in ((n, 1), (1, n)) and n > 1:
        M = sp.diag(*list(M))
    if M.shape != shape and M.shape == shape[::-1]:
        M = M.T
    if M.shape != shape:
        raise ServoError(f"{what} must have shape {shape}, got {M.shape}")
    extra = M.free_symbols - {t}
    if extra:
        raise SymbolicParameterError(f"{what} may depend on the time symbol {t} only, but also has "
                                     f"{', '.join(sorted(map(str, extra)))}; substitute numbers first")
    for x in M:
        if x.has(sp.I) or x.has(sp.zoo, sp.oo, sp.nan):
            raise ServoError(f"{what} must be real and finite, got the entry {x}")
    return M


class TimeDependentSystem:
    """m' = ad*_w m + f(t) + B(t)^T lambda, w = I(t)^-1 (m - k(t)), A(t) w = 0 (module docstring).

    .. math::

        \\dot m = \\operatorname{ad}^*_{\\omega} m + f(t) + B(t)^T \\lambda, \\qquad
        m = I(t)\\, \\omega + k(t), \\qquad A(t)\\, \\omega = 0,

    the Euler-Poincare equations of :math:`L = \\tfrac12 (I(t)\\omega, \\omega) + (k(t), \\omega)` with the
    servo-constraint of the first kind (Beghin; nonholonomic for b = a; Kozlov's lectures on
    servo-constraints).

    Parameters
    ----------
    algebra : liegroups.LieAlgebra
    inertia : (n, n) or (n,) array of sympy expressions in ``time`` (or numbers)
        I(t), symmetric positive definite for every t (checked over a period).
    gyrostat : (n,) array, optional (keyword)
        k(t), the gyrostatic momentum (a rotor's angular momentum, a moving mass's m r'(t) terms): the
        Hamiltonian's linear term is c(t) = -I(t)^-1 k(t).
    torque : (n,) array, optional (keyword)
        f(t) in g*, an external force or control torque given as a function of time.
    a : (n,) or (k, n) array, optional (keyword)
        Constraint covectors a_i(t): (a_i, w) = 0.
    b : same shape as ``a``, optional (keyword)
        Control covectors b_i(t), the force sum lambda_i b_i; default b = a (the nonholonomic model).
    period : float, optional (keyword)
        The period T of the data (checked: every datum at t + T equals its value at t, relative 1e-9);
        passed to the problem for the phase-space tools.
    time : sympy.Symbol, optional (keyword)
        The time symbol in the expressions (default ``sympy.Symbol("t")``).

    Notes
    -----
    The state is m (..., n). ``simulate`` returns the integrator's result with the outputs "w",
    "multiplier" (also "lambda") and, with constraints, "(a, w)" evaluated at the result's times.
    """

    kind = "time-dependent"

    def __init__(self, algebra: Any, inertia: Any, *, gyrostat: Any = None, torque: Any = None, a: Any = None,
                 b: Any = None, period: float | None = None, time: sp.Symbol | None = None,
                 name: str | None = None) -> None:
        self.algebra = algebra
        n = self.n = algebra.dim
        self.time = t = sp.Symbol("t") if time is None else time
        if not isinstance(t, sp.Symbol):
            raise ServoError(f"time must be a sympy Symbol, got {time!r}")
        self.name = name or f"time-dependent system on {algebra.name}"
        self.I = _Timed(_matrix(inertia, (n, n), "inertia", t), t, "inertia")
        if not self.I.expr.equals(self.I.expr.T):
            raise InertiaError(f"inertia I(t) must be symmetric, got {self.I.expr}")
        zero = sp.zeros(n, 1)
        self.k = _Timed(zero if gyrostat is None else _matrix(gyrostat, (n, 1), "gyrostat", t), t, "gyrostat")
        self.f = _Timed(zero if torque is None else _matrix(torque, (n, 1), "torque", t), t, "torque")
        self.has_torque = torque is not None
        if a is None:
            if b is not None:
                raise CovectorError("a control b needs a constraint a: give a (and b, or b = a by default)")
            self.kc = 0
            self.A = self.B = None
        else:
            Am = _matrix_rows(a, n, "a", t)
            Bm = Am if b is None else _matrix_rows(b, n, "b", t)
            if Bm.shape != Am.shape:
                raise CovectorError(f"the number of controls must equal the number of constraints: a has "
                                    f"{Am.shape[0]} covector(s), b has {Bm.shape[0]}")
            self.kc = Am.shape[0]
            self.A, self.B = _Timed(Am, t, "a"), _Timed(Bm, t, "b")
        self.model = "free" if self.kc == 0 else ("nonholonomic" if b is None else "servo1")
        self.period = _check_period(self, period)
        self._check_data()

    # ----------------------------------------------------------------- checks of the data
    def _data(self):
        out = [self.I, self.k, self.f]
        if self.kc:
            out += [self.A, self.B]
        return out

    def _sample_times(self):
        T = self.period if self.period is not None else 1.0
        return np.linspace(0.0, T, 17)

    def _check_data(self):
        ts = self._sample_times()
        for d in self._data():
            v = d(ts)
            if not np.all(np.isfinite(v)):
                j = int(np.argwhere(~np.all(np.isfinite(v.reshape(len(ts), -1)), axis=1))[0, 0])
                raise ServoError(f"{d.what} is not finite at t = {ts[j]:.6g}: {d.expr}")
        Is = self.I(ts)
        ev = np.linalg.eigvalsh(Is)
        j = int(np.argmin(ev[:, 0]))
        if ev[j, 0] <= 1e-12 * max(1.0, float(np.max(np.abs(ev)))):
            raise InertiaError(f"inertia I(t) must be positive definite: its smallest eigenvalue is {ev[j, 0]:.3e} "
                               f"at t = {ts[j]:.6g}")
        if self.kc:
            A, B = self.A(ts), self.B(ts)
            for j, tj in enumerate(ts):
                if np.linalg.matrix_rank(A[j]) < self.kc:
                    raise CovectorError(f"the constraint covectors a must be linearly independent; at t = {tj:.6g} "
                                        f"they have rank {np.linalg.matrix_rank(A[j])} < {self.kc}")
                An = A[j] / np.linalg.norm(A[j], axis=1, keepdims=True)
                Bn = B[j] / np.linalg.norm(B[j], axis=1, keepdims=True)
                K = np.linalg.inv(Is[j])
                Rn = An @ (K / np.linalg.norm(K, 2)) @ Bn.T
                s = float(np.linalg.svd(Rn, compute_uv=False)[-1])
                if s <= REALIZABILITY_RTOL:
                    raise UnrealizableConstraintError(
                        f"the constraint is not realizable by the control at t = {tj:.6g}: (I^-1 a, b) is singular "
                        f"(relative smallest singular value {s:.3e})", value=s)

    # ----------------------------------------------------------------- numerics
    @staticmethod
    def _tb(t, m):
        """t shaped to broadcast against m[..., 0] (a float stays a float)."""
        return t if np.ndim(t) == 0 else np.asarray(t, dtype=float)

    def _Iinv(self, t):
        return np.linalg.inv(self.I(t))

    def velocity(self, t: ArrayLike, state: ArrayLike) -> NDArray[np.float64]:
        """w = I(t)^-1 (m - k(t)), batched (t a float or broadcasting against m[..., 0])."""
        m = np.asarray(state, dtype=float)
        K = self._Iinv(t)
        return np.einsum("...ij,...j->...i", K, m - self.k(t)[..., 0])

    def hamiltonian(self, t: ArrayLike, state: ArrayLike) -> NDArray[np.float64]:
        """H(t, m) = (m - k, I^-1 (m - k))/2 (not conserved: dH/dt = dH/dt|explicit + (w, f + B^T lambda))."""
        m = np.asarray(state, dtype=float)
        return 0.5 * np.einsum("...i,...i->...", m - self.k(t)[..., 0], self.velocity(t, m))

    def multiplier(self, t: ArrayLike, state: ArrayLike) -> NDArray[np.float64]:
        """lambda = -R^-1 (A I^-1 (ad*_w m + f - k' - I' w) + A' w), R = A I^-1 B^T; shape (...) for one
        constraint, (..., k) for k; zeros (...) for the free system."""
        m = np.asarray(state, dtype=float)
        if self.kc == 0:
            return np.zeros(np.broadcast_shapes(m.shape[:-1], np.shape(t)))
        K = self._Iinv(t)
        w = np.einsum("...ij,...j->...i", K, m - self.k(t)[..., 0])
        g = self.algebra._coad(w, m) + self.f(t)[..., 0] - self.k.rate(t)[..., 0] \
            - np.einsum("...ij,...j->...i", self.I.rate(t), w)
        A, B = self.A(t), self.B(t)
        KA = np.einsum("...ij,...kj->...ki", K, A)          # rows I^-1 a_i
        rhs = np.einsum("...ki,...i->...k", KA, g) + np.einsum("...ki,...i->...k", self.A.rate(t), w)
        R = np.einsum("...ki,...li->...kl", KA, B)
        lam = -np.linalg.solve(R, rhs[..., None])[..., 0]
        return lam[..., 0] if self.kc == 1 else lam

    def forcing(self, t: ArrayLike, state: ArrayLike) -> NDArray[np.float64]:
        """f(t) + B(t)^T lambda(t, m), batched."""
        m = np.asarray(state, dtype=float)
        out = np.broadcast_to(self.f(t)[..., 0], m.shape) if self.has_torque else np.zeros(m.shape)
        if self.kc:
            lam = self.multiplier(t, m)
            lam = lam[..., None] if self.kc == 1 else lam
            out = out + np.einsum("...k,...ki->...i", lam, self.B(t))
        return out

    def rhs(self, t: ArrayLike, state: ArrayLike) -> NDArray[np.float64]:
        """m' = ad*_w m + f(t) + B^T lambda, batched."""
        m = np.asarray(state, dtype=float)
        out = self.algebra._coad(self.velocity(t, m), m)
        return out + self.forcing(t, m) if (self.kc or self.has_torque) else out

    def constraint_residual(self, t: ArrayLike, state: ArrayLike) -> NDArray[np.float64]:
        """A(t) w, shape (..., k) (empty last axis for the free system)."""
        w = self.velocity(t, state)
        if self.kc == 0:
            return np.zeros(w.shape[:-1] + (0,))
        return np.einsum("...ki,...i->...k", self.A(t), w)

    def state_from(self, w: ArrayLike, t: float = 0.0) -> NDArray[np.float64]:
        """m = I(t) w + k(t) from velocities w (..., n) at time t, checked against A(t) w = 0."""
        w = np.asarray(w, dtype=float)
        if w.ndim == 0 or w.shape[-1] != self.n or not np.all(np.isfinite(w)):
            raise ServoError(f"w must be finite with last axis {self.n}, got shape {w.shape}")
        m = np.einsum("ij,...j->...i", self.I(t), w) + self.k(t)[:, 0]
        self.check_state(m, t)
        return m

    def check_state(self, state: ArrayLike, t: float = 0.0) -> NDArray[np.float64]:
        """The state m (..., n), finite, with A(t) w = 0 for the constrained models."""
        m = np.asarray(state, dtype=float)
        if m.ndim == 0 or m.shape[-1] != self.n:
            raise ServoError(f"the state m must have last axis of length {self.n}, got shape {m.shape}")
        if not np.all(np.isfinite(m)):
            raise ServoError(f"the state m must be finite, got {m}")
        if self.kc:
            w = self.velocity(t, m)
            r = np.abs(self.constraint_residual(t, m))
            bound = CONSTRAINT_RTOL * np.linalg.norm(self.A(t)) * np.maximum(np.linalg.norm(w, axis=-1), 1.0)
            if np.any(r > bound[..., None]):
                raise ConstraintViolationError(f"the initial state is off the constraint A(t) w = 0 at t = {t}: "
                                               f"|A w| = {float(np.max(r)):.3e} > {float(np.max(bound)):.3e}")
        return m

    def problem(self) -> CoadjointProblem:
        """:class:`integrators.CoadjointProblem` with ``time_dependent=True``: velocity(t, z) = I^-1 (z - k),
        forcing(t, z) = f + B^T lambda (None for the free system without torque, whose Casimirs are then
        recorded), and ``period``; its ``coefficient_source`` (:meth:`coefficient_source`) lets the
        adaptive pairs run as generated code (:mod:`integrators.codegen.timed_source`)."""
        forced = bool(self.kc or self.has_torque)
        p = CoadjointProblem(self.algebra, self.velocity, forcing=self.forcing if forced else None,
                             time_dependent=True, period=self.period, name=self.name)
        p.coefficient_source = self.coefficient_source
        return p

    def coefficient_source(self, derive: bool = True) -> str | None:
        """Python source of ``coef(t)``: the coefficients of the right-hand side as a polynomial in m,

            F_r(t, m) = e_r(t) + sum_j L_rj(t) m_j + sum_{j <= k} q_rjk(t) m_j m_k,

        as the tuple (e_r, L_r0 .. L_r(n-1), q_r00, q_r01, ..., q_r(n-1)(n-1)) for r = 0 .. n-1 (the order of
        :mod:`integrators.geometry.timed_quadratic`). F = ad*_w m + f + B^T lambda with w = I^-1 (m - k) and
        the multiplier of the module docstring is quadratic in m (lambda is affine in ad*_w m and w); the
        coefficients are its derivatives at m = 0 (e = F(0), L = dF/dm, q_jj = d2F/dm_j^2 / 2, q_jk =
        d2F/dm_j dm_k): in closed form for the free system with a constant inertia (:meth:`_free_coefficients`),
        else derived once with sympy (:meth:`_derived_coefficients`); shared subexpressions named
        (``sympy.cse``), written with ``math`` functions (numba compiles them). Cached; ``derive=False`` returns
        it only when already derived (the integrator asks so for short runs: the derivation takes 0.1-1 s). None
        (the numpy reference runs) when I(t) varies and n > 3: its symbolic inverse could take sympy minutes."""
        cached = getattr(self, "_coef_source", None)
        if cached is not None:
            return cached or None
        if not derive:
            return None
        if self.n > 3 and not self.I.constant:
            self._coef_source = ""
            return None
        coefs = self._free_coefficients() if self.kc == 0 and self.I.constant else self._derived_coefficients()
        subs, red = sp.cse(coefs, symbols=sp.numbered_symbols("_x"))
        lines = ["def coef(t):"]
        pr = lambda e: sp.pycode(e.subs(self.time, sp.Symbol("t")), fully_qualified_modules=True)
        for name, e in subs:
            lines.append(f"    {name} = {pr(e)}")
        lines.append("    return (" + ", ".join(f"float({pr(e)})" if e.is_number else pr(e) for e in red) + ",)")
        self._coef_source = "\n".join(lines) + "\n"
        return self._coef_source

    def _free_coefficients(self) -> list:
        """The coefficients of :meth:`coefficient_source` (its order) of the free system with a constant inertia,
        in closed form: with K = I^-1 and u(t) = K k(t), F_r = sum_ij C_irj w_i m_j + f_r, w = K m - u, so

            e_r = f_r(t),   L_rj = -sum_i C_irj u_i(t),   q_rjj = sum_i C_irj K_ij,
            q_rjk = sum_i (C_irj K_ik + C_irk K_ij)  (j < k),

        the quadratic part numbers (numpy), sympy only for the n expressions u(t) and their combinations (the
        derivatives of the whole field by sympy, :meth:`_derived_coefficients`, took 51 s on a 10-dimensional
        algebra in a random basis)."""
        n = self.n
        C = np.asarray(self.algebra.structure_constants, dtype=float)
        K = np.linalg.inv(self.I(0.0))
        u = [sum((sp.Float(K[i, l]) * self.k.expr[l] for l in range(n) if K[i, l] != 0 and self.k.expr[l] != 0),
                 sp.Integer(0)) for i in range(n)]
        Q = np.einsum("irj,ik->rjk", C, K)          # Q[r, j, k] = sum_i C_irj K_ik: d2 F_r / dm_j dm_k = Q_rjk + Q_rkj
        coefs = []
        for r in range(n):
            coefs.append(self.f.expr[r])
            coefs += [sum((sp.Float(-C[i, r, j]) * u[i] for i in range(n) if C[i, r, j] != 0 and u[i] != 0),
                          sp.Integer(0)) for j in range(n)]
            for j in range(n):
                for k in range(j, n):
                    coefs.append(sp.Float(Q[r, j, j]) if j == k else sp.Float(Q[r, j, k] + Q[r, k, j]))
        return coefs

    def _derived_coefficients(self) -> list:
        """The coefficients of :meth:`coefficient_source` as the derivatives of the field at m = 0, by sympy (a
        constrained system's multiplier, or a varying inertia)."""
        n, t = self.n, self.time
        ms = sp.symbols(f"_m0:{n}")
        m = sp.Matrix(ms)
        K = self.I.expr.inv()
        kv = self.k.expr
        w = K * (m - kv)
        C = np.asarray(self.algebra.structure_constants, dtype=float)
        g = sp.Matrix([sum(sp.Float(C[i, j, k]) * w[i] * m[k] for i in range(n) for k in range(n) if C[i, j, k] != 0)
                       for j in range(n)])
        F = g + self.f.expr
        if self.kc:
            A, B = self.A.expr, self.B.expr
            Id, kd, Ad = self.I.expr.diff(t), kv.diff(t), A.diff(t)
            KA = A * K
            lam = -(KA * B.T).inv() * (KA * (g + self.f.expr - kd - Id * w) + Ad * w)
            F = F + B.T * lam
        zero = {x: 0 for x in ms}
        coefs = []
        for r in range(n):
            Fr = F[r]
            coefs.append(Fr.subs(zero))
            d1 = [sp.diff(Fr, x) for x in ms]
            coefs += [d.subs(zero) for d in d1]
            for j in range(n):
                for k in range(j, n):
                    d2 = sp.diff(d1[j], ms[k]).subs(zero)
                    coefs.append(d2 / 2 if j == k else d2)
        return coefs

    def simulate(self, state0: ArrayLike, t_end: float, steps: int | None = 1000, method: str = "rk853",
                 **options: Any) -> Any:
        """Integrate from m0 = ``state0`` at t = 0 over [0, t_end] with ``integrators.integrate`` (default the
        adaptive pair rk853 at rtol 1e-12, atol 1e-14; the output grid of ``steps`` from its continuous
        extension). The result carries "w", "multiplier" ("lambda") and "(a, w)" at its times."""
        m0 = self.check_state(state0, 0.0)
        kw = dict(options)
        if method == "rk853":
            kw.setdefault("rtol", 1e-12)
            kw.setdefault("atol", 1e-14)
        if steps is not None and "h" not in kw:
            kw["steps"] = steps
        res = integrate(self.problem(), m0, (0.0, float(t_end)), method=method, **kw)
        tt = np.asarray(res.t, dtype=float).reshape((-1,) + (1,) * (np.ndim(res.y) - 2))
        lam = self.multiplier(tt, res.y)
        res.outputs["w"] = self.velocity(tt, res.y)
        res.outputs["multiplier"] = lam
        res.outputs["lambda"] = lam
        if self.kc:
            res.outputs["(a, w)"] = self.constraint_residual(tt, res.y)
        res.system = self
        return res

    def __repr__(self) -> str:
        return f"<TimeDependentSystem {self.name!r} ({self.model}, period {self.period})>"


def _matrix_rows(x, n, what, t):
    """One covector (n,) or k covectors (k, n) as a (k, n) sympy Matrix in t."""
    M = sp.Matrix(x) if not isinstance(x, sp.MatrixBase) else x
    if M.shape == (n, 1):
        M = M.T
    return _matrix(M, (M.shape[0], n), what, t) if M.shape[1] == n else _matrix(M, (1, n), what, t)


def _check_period(system, period):
    """None or the positive period T with every datum T-periodic (sampled on a grid of [0, T])."""
    if period is None:
        return None
    if isinstance(period, bool) or not isinstance(period, (int, float, np.floating, np.integer)) \
            or not 0 < float(period) < np.inf:
        raise ServoError(f"period must be a positive finite number, got {period!r}")
    T = float(period)
    ts = np.linspace(0.0, T, 13)
    for d in system._data():
        v0, v1 = d(ts), d(ts + T)
        scale = max(1.0, float(np.max(np.abs(v0))))
        err = float(np.max(np.abs(v1 - v0)))
        if err > PERIOD_RTOL * scale:
            raise ServoError(f"{d.what} is not {T:.6g}-periodic: |{d.what}(t + T) - {d.what}(t)| reaches "
                             f"{err:.3e} on [0, T] ({d.expr.T if d.shape[1] == 1 else d.expr})")
    return T
