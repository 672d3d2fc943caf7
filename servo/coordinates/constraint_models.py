"""Two-sided constraints phi(q, q', t) = 0 on a Lagrangian system, with four models.

Sources: Kozlov's lectures on servo-constraints and Kozlov (2019), sections 2, 6, 7; Talamucci (2025)
for Cetaev's rule with nonlinear constraints and homogeneity.  With [.] the Lagrange
derivative and A = d^2 L/dq'^2:

- nonholonomic (Cetaev):      [L] = F + sum_nu lambda_nu dphi_nu/dq',                 phi = 0
- servo of the 1st kind (M):   [L] = F + sum_nu lambda_nu M_nu,                         phi = 0
  realizable iff det (A^-1 M_mu, dphi_nu/dq') != 0 (Kozlov 2019, (6.1));
- servo of the 2nd kind (N):   T* = T + sum lambda_nu N_nu, i.e.
                               [L] = F - sum_nu (lambda_nu' dN_nu/dq' + lambda_nu [N_nu]),  phi = 0
  realizable iff det (A^-1 dN_mu/dq', dphi_nu/dq') != 0; lambda is a state variable (needs lam0);
- vakonomic:                   [L] = F + sum_nu (lambda_nu [phi_nu] + lambda_nu' dphi_nu/dq'),  phi = 0
  which is the servo model of the 2nd kind with N = -phi (so lambda_vak = -lambda_servo2 for N = phi).

Numerically the constraint is differentiated once, (dphi/dq') q'' + (dphi/dq) q' + dphi/dt = 0, and
solved together with the equations for (q'', lambda) (1st kind) or (q'', lambda') (2nd kind).

Redundant constraints (rank dphi/dq' < k, e.g. Talamucci's Example 2 (i) and (iv), three components
of a cross product = 0 of rank 2) determine the motion but not the multipliers: the acceleration is
solved with the minimum-norm (least-squares) multiplier, which is the one reported. Along a numerical
solution the state is off phi = 0 by the integration error, so the redundant multiplier equations are
consistent only up to that error; they are required to be consistent at the initial state.
Integration: ``integrators.integrate`` on a first-order problem (see ``servo.coordinates.integration``).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray
from sympy.physics.mechanics import dynamicsymbols
from sympy.printing.numpy import NumPyPrinter

from integrators.reference.nonholonomic import LagrangeDAlembertData, VakonomicCoordinateData

from . import integration
from .lagrangian import LagrangianSystem, register_model
from .symbolic import (control_rows, exact_str, free_parameters, require_numeric, second_kind_pieces, subs_control,
                       scalar_writer, vectorize, vectorize_split)
from ..errors import InitialConstraintError, LagrangianError, RealizabilityError

MODELS = ("nonholonomic", "vakonomic", "servo1", "servo2")


def parse_equalities(system: LagrangianSystem, phi: Any) -> list[sp.Expr]:
    """Constraints as a list of sympy expressions phi_nu (Eq(a, b) becomes a - b); checks dphi/dq' != 0."""
    items = list(phi) if isinstance(phi, (list, tuple)) else [phi]
    out = []
    for i, p in enumerate(items):
        p = sp.sympify(p)
        if isinstance(p, sp.Equality):
            p = p.lhs - p.rhs
        elif isinstance(p, sp.core.relational.Relational):
            raise LagrangianError(f"constraint {i} is an inequality {p}; use model='one_sided'")
        grad = [sp.diff(system.plain(p), u) for u in system.us]
        if all(sp.simplify(g) == 0 for g in grad):
            raise LagrangianError(f"constraint {i} = {p} does not depend on the velocities: "
                                  "dphi/dq' != 0 (Kozlov 2019, (1.1)) fails; differentiate a holonomic constraint")
        out.append(p)
    if not out:
        raise LagrangianError("no constraint given")
    return out


def homogeneity_degree_of(system: LagrangianSystem, phi: Any) -> sp.Expr | None:
    """Degree sigma of positive homogeneity of phi in q' (Euler: sum q'_i dphi/dq'_i = sigma phi), or None.

    Talamucci (2025), Proposition 1: for such constraints Cetaev's virtual displacements
    contain the velocity, the reaction does no work and the energy is conserved.
    """
    p = system.plain(phi)
    euler = sum(u * sp.diff(p, u) for u in system.us)
    ratio = sp.simplify(euler / p)
    if ratio.free_symbols & (set(system.qs) | set(system.us) | {system.t}):
        return None
    s = sp.Symbol("s_scale", positive=True)
    scaled = p.xreplace({u: s * u for u in system.us})
    if sp.simplify(scaled - s ** ratio * p) != 0:
        return None
    return ratio


def _rank(s, scale, rel=1e-8):
    return np.sum(s > rel * np.asarray(scale)[..., None], axis=-1)


def solve_multipliers(G: NDArray[np.float64], r: NDArray[np.float64], J: NDArray[np.float64],
                      Ainv: NDArray[np.float64], what: str, B: NDArray[np.float64], tol: float = 1e-8,
                      strict: bool = False) -> NDArray[np.float64]:
    """Solve G x = r (batched, k x k) for the multipliers; raise RealizabilityError where G is degenerate.

    G = J B with J = dphi/dq' (k x n) and B = A^-1 M^T (n x k). Redundant constraints (rank J < k, e.g.
    the three components of P1' x P2' = 0) are accepted: x = G^+ r is the minimum-norm least-squares
    multiplier (singular values below 1e-8 of the largest are cut). rank G < rank (J A^-1 J^T) means the
    realizability condition det (A^-1 M, dphi/dq') != 0 fails. With ``strict`` (the initial state, which
    lies on phi = 0 to the given tolerance) the redundant equations must also be consistent, else the
    constraints are incompatible; along the motion the least-squares solution is used, because off
    phi = 0 by the integration error the redundant equations are consistent only up to that error.
    """
    U, s, Vh = np.linalg.svd(G)
    scale = _scale(J, B)
    cut = 1e-8 * scale[..., None]
    AiJ = np.einsum("...ij,...kj->...ik", Ainv, J)
    rank_G = _rank(s, scale)
    rank_J = _rank(np.linalg.svd(J @ AiJ, compute_uv=False), _scale(J, AiJ))
    if np.any(rank_G < rank_J):
        idx = np.unravel_index(np.argmax(rank_J - rank_G), np.shape(rank_G))
        raise RealizabilityError(f"{what}: the realizability condition det (A^-1 M, dphi/dq') != 0 fails: "
                                 f"singular values of (A^-1 M, dphi/dq') = {s[idx].tolist()} (scale {scale[idx]:.3e})",
                                 value=np.linalg.det(G))
    sinv = np.where(s > cut, 1.0 / np.where(s > cut, s, 1.0), 0.0)
    x = np.einsum("...ji,...j,...kj,...k->...i", Vh, sinv, U, r)
    if strict:
        res = np.einsum("...ij,...j->...i", G, x) - r
        bad = np.linalg.norm(res, axis=-1) > tol * (1.0 + np.linalg.norm(r, axis=-1))
        if np.any(bad):
            raise RealizabilityError(f"{what}: redundant constraints with inconsistent multiplier equations "
                                     f"(residual {np.max(np.linalg.norm(res, axis=-1)):.3e}): the constraints "
                                     "are incompatible")
    return x


def _scale(J, B):
    return np.linalg.norm(J, axis=(-2, -1)) * np.linalg.norm(B, axis=(-2, -1)) + 1e-300


class HomogeneityMixin:
    """Homogeneity of the constraint expressions ``self._exprs`` in q' (Euler's theorem; Talamucci 2025,
    Proposition 1: for homogeneous constraints the Cetaev reaction does no work)."""

    system: LagrangianSystem
    k: int
    _exprs: list[sp.Expr]

    def homogeneity_degree(self) -> sp.Expr | None | list[sp.Expr | None]:
        """Degree(s) of positive homogeneity in q' (None where not homogeneous); a list if k > 1."""
        d = [homogeneity_degree_of(self.system, p) for p in self._exprs]
        return d[0] if self.k == 1 else d

    def is_homogeneous(self) -> bool:
        """True iff every constraint is positively homogeneous in q'."""
        d = self.homogeneity_degree()
        return all(x is not None for x in (d if isinstance(d, list) else [d]))


class ConstrainedSystem(HomogeneityMixin):
    """A Lagrangian system with two-sided constraints phi = 0 and a model (see the module docstring)."""

    def __init__(self, system: LagrangianSystem, phi: Any, model: str = "nonholonomic", control: Any = None
                 ) -> None:
        if model not in MODELS:
            raise LagrangianError(f"unknown model {model!r}; expected one of {MODELS} or 'one_sided'")
        self.system, self.model, self.control = system, model, control
        S = system
        self.phi = self._exprs = parse_equalities(S, phi)
        self.k = len(self.phi)
        self.lam = list(dynamicsymbols(f"lambda1:{self.k + 1}"))
        P = sp.Matrix([S.plain(p) for p in self.phi])
        self.J_sym = P.jacobian(S.us)
        self.c_sym = P.jacobian(S.qs) * sp.Matrix(S.us) + P.diff(S.t)
        self.P_sym = P
        self.kind = 2 if model in ("servo2", "vakonomic") else 1
        if model == "nonholonomic":
            if control is not None:
                raise LagrangianError("model 'nonholonomic' takes no control; use 'servo1' with control=M")
            self.M_dyn = [[S.dynamic(x) for x in self.J_sym.row(i)] for i in range(self.k)]
        elif model == "servo1":
            self.M_dyn = self._covectors(control)
        elif model == "vakonomic":
            if control is not None:
                raise LagrangianError("model 'vakonomic' takes no control (it is servo2 with N = -phi)")
            self.N_dyn = [-p for p in self.phi]
        else:
            if control is None:
                raise LagrangianError("model 'servo2' needs control = N (function(s) of q, q', t)")
            N = list(control) if isinstance(control, (list, tuple)) else [control]
            if len(N) != self.k or any(isinstance(x, (list, tuple, sp.MatrixBase)) for x in N):
                raise LagrangianError(f"servo2 needs one scalar function N per constraint (a list of {self.k}), "
                                      f"got {control!r}")
            self.N_dyn = [sp.sympify(x) for x in N]
        if self.kind == 1:
            self.M_sym = sp.Matrix([[S.plain(x) for x in row] for row in self.M_dyn])
        else:
            Np = [S.plain(x) for x in self.N_dyn]
            self.NJ_sym, self.H_sym, self.dN_sym = second_kind_pieces(S, Np)
        allowed = set(S.qs) | set(S.us) | {S.t}
        pieces = list(P) + (list(self.M_sym) if self.kind == 1 else [S.plain(x) for x in self.N_dyn])
        #: parameter symbols of the system, the constraints and the control (numbers needed to simulate)
        self.symbols = tuple(sorted(set(S.symbols) | set(free_parameters(pieces, allowed)), key=str))

    def _covectors(self, control):
        if control is None:
            raise LagrangianError("model 'servo1' needs control = M (a covector, or one per constraint)")
        return control_rows(control, self.k, self.system.n, "servo1 control M")

    @property
    def is_numeric(self) -> bool:
        """True when no parameter symbols remain (required to simulate)."""
        return not self.symbols

    def subs(self, mapping: dict[Any, Any]) -> ConstrainedSystem:
        """The same constrained system with parameters replaced by values: ``c.subs({k: 2.0})``."""
        ctrl = None if self.model == "vakonomic" else subs_control(self.control, mapping)
        return ConstrainedSystem(self.system.subs(mapping), [sp.sympify(p).subs(mapping) for p in self.phi],
                                 model=self.model, control=ctrl)

    # ----------------------------------------------------------------- symbolic output
    def equations(self) -> list[sp.Eq]:
        """The equations of motion as ``sympy.Eq`` (n dynamic ones, then the k constraints phi = 0)."""
        S = self.system
        lhs = S.lagrange_derivative(S.L)
        rhs = sp.Matrix(S.forces)
        if self.kind == 1:
            for lam, M in zip(self.lam, self.M_dyn):
                rhs += lam * sp.Matrix(M)
        else:
            for lam, N in zip(self.lam, self.N_dyn):
                dN = sp.Matrix([sp.diff(N, qd) for qd in S.qd])
                rhs -= lam.diff(S.t) * dN + lam * S.lagrange_derivative(N)
        eqs = [sp.Eq(lhs[i], sp.expand(rhs[i])) for i in range(S.n)]
        return eqs + [sp.Eq(p, 0) for p in self.phi]

    def realizability(self) -> sp.Expr:
        """det of (A^-1 M_mu, dphi_nu/dq') (1st kind) or (A^-1 dN_mu/dq', dphi_nu/dq') (2nd kind).

        For one constraint this is the scalar of Kozlov 2019, (6.1) and section 7; the model is
        realizable where it is non-zero.
        """
        S = self.system
        Ainv = S.A_sym.inv()
        B = self.M_sym if self.kind == 1 else self.NJ_sym
        G = self.J_sym * Ainv * B.T
        return sp.simplify(S.dynamic(G.det()))

    # ----------------------------------------------------------------- numerics
    @cached_property
    def _num(self):
        require_numeric(self.symbols, "a numeric evaluation", repr(self))
        S = self.system
        args = (S.t, *S.qs, *S.us)
        out = {"J": vectorize(list(self.J_sym), args), "c": vectorize(list(self.c_sym), args),
               "phi": vectorize(list(self.P_sym), args)}
        if self.kind == 1:
            out["M"] = vectorize(list(self.M_sym), args)
        else:
            out["NJ"] = vectorize(list(self.NJ_sym), args)
            out["H"] = vectorize([x for H in self.H_sym for x in H], args)
            out["dN"] = vectorize([x for d in self.dN_sym for x in d], args)
        return out

    def _mat(self, key, args, shape):
        v = self._num[key](*args)
        return v.reshape(v.shape[:-1] + shape)

    def constraint_values(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
        """phi_nu(q, q', t), shape (..., k)."""
        return self._num["phi"](*self.system._args(t, q, qd))

    def acceleration(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike, lam: ArrayLike | None = None,
                     strict: bool = False) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(q'', lambda) for the 1st kind, (q'', lambda') for the 2nd kind (lam = state multipliers).

        Redundant constraints: the minimum-norm multiplier (see :func:`solve_multipliers`; ``strict``
        also checks that the redundant equations are consistent)."""
        S, n, k = self.system, self.system.n, self.k
        args = S._args(t, q, qd)
        A, rhs = S.inertia_and_rhs(t, q, qd)
        J, c = self._mat("J", args, (k, n)), self._num["c"](*args)
        if self.kind == 1:
            M = self._mat("M", args, (k, n))
            a0 = np.linalg.solve(A, rhs[..., None])[..., 0]
            AiM = np.linalg.solve(A, np.swapaxes(M, -1, -2))
            lam = solve_multipliers(J @ AiM, -c - np.einsum("...ij,...j->...i", J, a0), J, np.linalg.inv(A),
                                   f"{self.model} at t = {t}", AiM, strict=strict)
            return a0 + np.einsum("...ij,...j->...i", AiM, lam), lam
        lam = np.asarray(lam, dtype=float)
        H = self._mat("H", args, (k, n, n))
        dN = self._mat("dN", args, (k, n))
        Al = A + np.einsum("...k,...kij->...ij", lam, H)
        a0 = np.linalg.solve(Al, (rhs - np.einsum("...k,...ki->...i", lam, dN))[..., None])[..., 0]
        P = np.linalg.solve(Al, np.swapaxes(self._mat("NJ", args, (k, n)), -1, -2))
        lamd = solve_multipliers(J @ P, np.einsum("...ij,...j->...i", J, a0) + c, J, np.linalg.inv(Al),
                                 f"{self.model} at t = {t}", P, strict=strict)
        return a0 - np.einsum("...ij,...j->...i", P, lamd), lamd

    def nonholonomic_problem(self) -> LagrangeDAlembertData:
        """The data of the discrete Lagrange-d'Alembert schemes of :mod:`integrators.reference.nonholonomic`
        ("mp_lda", "nh_rattle"): L = q'^T M q'/2 - V(q) with a constant mass matrix M, no other forces and
        constraints phi = A(q) q' (linear, homogeneous in q', time-independent), the nonholonomic model.
        A, grad V and dA/dq are differentiated and lambdified once. LagrangianError naming what fails."""
        S = self.system
        require_numeric(self.symbols, "nonholonomic_problem", repr(self))
        why = None
        if self.model != "nonholonomic":
            why = f"the model is {self.model!r}, not 'nonholonomic'"
        elif any(sp.simplify(S.plain(f)) != 0 for f in S.forces):
            why = "the system has generalized forces besides the potential"
        elif (S.A_sym.free_symbols & (set(S.qs) | set(S.us) | {S.t})) or sp.simplify(
                S.plain(S.T) - (sp.Matrix(S.us).T * S.A_sym * sp.Matrix(S.us))[0] / 2) != 0:
            why = "the kinetic energy is not q'^T M q'/2 with a constant mass matrix M"
        elif S.plain(S.V).free_symbols & (set(S.us) | {S.t}):
            why = "the potential depends on q' or t"
        elif (self.J_sym.free_symbols & (set(S.us) | {S.t})) or \
                any(sp.simplify(e) != 0 for e in (self.P_sym - self.J_sym * sp.Matrix(S.us))):
            why = "the constraints are not of the form A(q) q' = 0"
        if why is not None:
            raise LagrangianError(f"the discrete Lagrange-d'Alembert schemes do not apply to {self!r}: {why}")
        n, k = S.n, self.k
        Vp = S.plain(S.V)
        gradV = vectorize([sp.diff(Vp, x) for x in S.qs], S.qs)
        A = vectorize(list(self.J_sym), S.qs)
        dA = vectorize([sp.diff(self.J_sym[i, j], x) for i in range(k) for j in range(n) for x in S.qs], S.qs)

        def split(q):
            q = np.asarray(q, dtype=float)
            return [q[..., i] for i in range(n)]

        M = np.array(S.A_sym.tolist(), dtype=float)
        # the same expressions as source text in q0 .. q(n-1): the engine writes them into the straight-line
        # loops of integrators.codegen.coordinate_source (numba)
        pr = NumPyPrinter({"fully_qualified_modules": True})
        names = {x: sp.Symbol(f"q{i}") for i, x in enumerate(S.qs)}

        def text(e):
            return pr.doprint(sp.sympify(e).xreplace(names))
        source = {"grad_V": [text(sp.diff(Vp, x)) for x in S.qs],
                  "A": [[text(self.J_sym[i, j]) for j in range(n)] for i in range(k)],
                  "dA": [[[text(sp.diff(self.J_sym[i, j], x)) for x in S.qs] for j in range(n)] for i in range(k)]}
        return LagrangeDAlembertData(M, lambda q: gradV(*split(q)),
                                     lambda q: A(*split(q)).reshape(np.shape(q)[:-1] + (k, n)),
                                     lambda q: dA(*split(q)).reshape(np.shape(q)[:-1] + (k, n, n)), source=source)

    def vakonomic_problem(self) -> VakonomicCoordinateData:
        """The data of the discrete vakonomic scheme ``dvak_mid`` (:mod:`integrators.reference.nonholonomic.
        vakonomic_schemes`, Benito and Martin de Diego 2005): dL*/dq', dL*/dq of L* = L + lambda . N (N = -phi for
        the vakonomic model, the control N for servo2) and phi, lambdified once. Needs a model of the second
        kind, no generalized forces besides the potential and no explicit t; LagrangianError naming what fails."""
        S = self.system
        require_numeric(self.symbols, "vakonomic_problem", repr(self))
        why = None
        if self.kind != 2:
            why = f"the model is {self.model!r}, not 'vakonomic' or 'servo2'"
        elif any(sp.simplify(S.plain(f)) != 0 for f in S.forces):
            why = "the system has generalized forces besides the potential"
        elif S.t in (S.plain(S.L).free_symbols | set().union(*(S.plain(sp.sympify(x)).free_symbols
                                                              for x in list(self.phi) + list(self.N_dyn)))):
            why = "the Lagrangian, the constraints or the control depend on t explicitly"
        if why is not None:
            raise LagrangianError(f"the discrete vakonomic scheme does not apply to {self!r}: {why}")
        lam = list(sp.symbols(f"mu_0:{self.k}", real=True))
        Ls = S.plain(S.L) + sum(m * S.plain(N) for m, N in zip(lam, self.N_dyn))
        groups = (S.qs, S.us, lam)
        Lv = vectorize_split([sp.diff(Ls, u) for u in S.us], groups)
        Lq = vectorize_split([sp.diff(Ls, x) for x in S.qs], groups)
        phi = vectorize_split(list(self.P_sym), (S.qs, S.us))
        scalar = (scalar_writer([sp.diff(Ls, u) for u in S.us], groups, "Lv1"),
                  scalar_writer([sp.diff(Ls, x) for x in S.qs], groups, "Lq1"),
                  scalar_writer(list(self.P_sym), (S.qs, S.us), "phi1"))
        # the same L*, phi as text in q0.., v0.., l0.. (floats by repr: exact): the engine derives from it the
        # straight-line dvak_mid loop with analytic Jacobians (integrators.codegen.vakonomic_source)
        names = {**{x: sp.Symbol(f"q{i}") for i, x in enumerate(S.qs)},
                 **{u: sp.Symbol(f"v{i}") for i, u in enumerate(S.us)},
                 **{m: sp.Symbol(f"l{c}") for c, m in enumerate(lam)}}
        source = {"L": exact_str(Ls.xreplace(names)), "phi": [exact_str(sp.sympify(e).xreplace(names))
                                                               for e in self.P_sym]}
        return VakonomicCoordinateData(S.n, self.k, Lv, Lq, phi, scalar=scalar, source=source)

    def simulate(self, q0: ArrayLike, qd0: ArrayLike, t_end: float, steps: int = 200, lam0: ArrayLike | None = None,
                 t0: float = 0.0, method: str = integration.DEFAULT_METHOD, rtol: float = 1e-12,
                 atol: float = 1e-12, tol: float = 1e-9) -> integration.IntegrationResult:
        """Integrate the constrained equations with ``integrators.integrate`` from a state with phi = 0.

        lam0: initial multipliers (2nd kind and vakonomic only; default 0). Raises InitialConstraintError
        if |phi_nu(q0, qd0, t0)| > tol and RealizabilityError if the multipliers cannot be determined.
        Returns an IntegrationResult on linspace(t0, t_end, steps + 1) with outputs "q", "qd" and
        "lambda" (alias res.lam: 1st kind the algebraic multiplier, minimum-norm for redundant
        constraints; 2nd kind the state lambda) and the constraint residual "phi" in res.constraints.
        """
        require_numeric(self.symbols, "simulate", repr(self))
        S, n, k = self.system, self.system.n, self.k
        q0, qd0 = integration.check_state(q0, qd0, n)
        res0 = self.constraint_values(t0, q0, qd0)
        i = int(np.argmax(np.abs(res0)))
        if abs(res0[i]) > tol:
            raise InitialConstraintError(f"initial state violates constraint {i}: phi_{i} = {res0[i]:.3e} "
                                         f"(tolerance {tol:g}); phi_{i} = {self.phi[i]}", index=i, residual=res0[i])
        if self.kind == 1:
            if lam0 is not None:
                raise LagrangianError(f"lam0 is only for servo2 / vakonomic; model {self.model!r} determines lambda")
            extra = np.zeros(0)
            self.acceleration(t0, q0, qd0, strict=True)

            def acc(t, q, qd, _e):
                return self.acceleration(t, q, qd)[0]
        else:
            extra = np.zeros(k) if lam0 is None else np.atleast_1d(np.asarray(lam0, dtype=float))
            if extra.shape != (k,):
                raise LagrangianError(f"lam0 must have {k} entries, got shape {extra.shape}")
            self.acceleration(t0, q0, qd0, extra, strict=True)

            def acc(t, q, qd, lam):
                return np.concatenate(self.acceleration(t, q, qd, lam), axis=-1)

        problem = integration.first_order_problem(n, acc, extra=len(extra), name=repr(self), period=S.period)
        grid = integration.time_grid(t0, t_end, steps)
        problem.constraints["phi"] = lambda Y: self.constraint_values(grid[:len(Y)], Y[:, :n], Y[:, n:2 * n])
        name = integration.canonical_name(method)
        if self.model == "nonholonomic" and name in integration.DISCRETE_METHODS:
            problem.discrete = self.nonholonomic_problem()   # mp_lda, nh_rattle by name
        elif self.kind == 2 and name in integration.VAKONOMIC_METHODS:
            problem.discrete = self.vakonomic_problem()      # dvak_mid by name
        res = integration.run(problem, np.concatenate([q0, qd0, extra]), t0, t_end, method, rtol, atol,
                              t_eval=grid, steps=steps)
        Y = res.y
        lam = Y[:, 2 * n:] if self.kind == 2 else self.acceleration(res.t, Y[:, :n], Y[:, n:2 * n])[1]
        labels = S.labels + tuple(f"lambda{i + 1}" for i in range(len(extra)))
        return integration.finish(res, self, lam, labels)

    def __repr__(self) -> str:
        return f"ConstrainedSystem(model={self.model!r}, phi={self.phi})"


register_model(MODELS, lambda system, phi, model, control: ConstrainedSystem(system, phi, model=model, control=control))
