"""One-sided differential constraints f_nu(q, q', t) >= 0 (or W q' + h <= 0) on a Lagrangian system.

Sources: Kozlov (2019), sections 2, 3, 6 and 7; Salnikova, Kugushev and Demidov (2023).

Motion: free ([L] = F) where every f_nu > 0; on the boundary the active constraints act with

* the Cetaev reaction sum lambda_nu df_nu/dq' (``model="one_sided"``, no control), or
* type I, Beghin's servo-constraint (Kozlov 2019, section 6): the control force sum lambda_nu M_nu
  (``control=M``), lambda_nu >= 0. Kozlov's rule (6.2): if (A^-1 M_nu, df_nu/dq') < 0 at a state,
  the sign of M_nu is changed there ("otherwise, we can change the sign of Phi"), so the control
  always pushes towards the allowed side; the result reports lambda_nu >= 0 of the sign-corrected
  control and the sign used as the output "control_sign". A zero product is unrealizable;
* type II (``model="one_sided_servo2"``, ``control=N``; Kozlov 2019, section 7): the kinetic energy
  T* = T + sum lambda_nu N_nu with lambda_nu >= 0 a state variable:
      [L] = F - sum_nu (lambda_nu' dN_nu/dq' + lambda_nu [N_nu]).
  While f_nu = 0 is held, lambda_nu' follows from f_nu' = 0 (as for the two-sided servo-constraint of
  the second kind); off the boundary the control rests at lambda_nu = 0. The realizability sign is
  (A^-1 dN_nu/dq', df_nu/dq') < 0: only then can lambda_nu' >= 0 hold f_nu >= 0 at a join.

Which constraints are active at a state with f_nu = 0 is decided by the complementarity problem at
acceleration level, w = w0 + G mu >= 0, mu >= 0, mu_nu w_nu = 0, with mu = lambda (Cetaev, type I;
G = (df/dq') A^-1 M^T) or mu = lambda' for the constraints whose state lambda_nu is 0 (type II;
G = -(df/dq') A_lambda^-1 (dN/dq')^T); for M = df/dq' this is Gauss's principle
(``servo.coordinates.gauss``). It is solved exactly by enumerating active sets, smallest first
(``one_sided_active_set``). Events (located by ``integrators.integrate`` with a scipy method: dense output
and root finding; ``one_sided_events``):

- "leave": an active multiplier changes sign from + to - (Kozlov's rule, section 2): lambda_nu for
  Cetaev and type I, the state lambda_nu reaching 0 for type II;
- "join":  an inactive f_nu reaches 0 from inside.

Velocities are continuous at every event (the motion is shockless, Salnikova et al., section 2):
only the set of active constraints changes. The motion is defined forward in time only (it is not
reversible, Kozlov section 3).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from .constraint_models import HomogeneityMixin
from .lagrangian import LagrangianSystem, register_model
from .one_sided_active_set import ActiveSetMixin
from .one_sided_events import EventDrivenMixin
from .symbolic import (control_rows, free_parameters, require_numeric, second_kind_pieces, subs_control,
                       vectorize)
from ..errors import LagrangianError


def parse_inequalities(system: LagrangianSystem, constraints: Any) -> list[sp.Expr]:
    """Relationals (f >= g, f <= g, strict too) or a pair (W, h) meaning W q' + h <= 0 -> list of f >= 0."""
    S = system
    if isinstance(constraints, tuple) and len(constraints) == 2 and not isinstance(constraints[0], sp.Basic):
        W, h = constraints
        W = sp.Matrix(W)
        h = list(sp.Matrix(h)) if not np.isscalar(h) else [h]
        if W.shape != (len(h), S.n):
            raise LagrangianError(f"W must have shape (len(h), n) = ({len(h)}, {S.n}), got {W.shape}")
        return [-(sum(W[i, j] * S.qd[j] for j in range(S.n)) + sp.sympify(h[i])) for i in range(len(h))]
    items = list(constraints) if isinstance(constraints, (list, tuple)) else [constraints]
    out = []
    for i, c in enumerate(items):
        if isinstance(c, (sp.GreaterThan, sp.StrictGreaterThan)):
            f = c.lhs - c.rhs
        elif isinstance(c, (sp.LessThan, sp.StrictLessThan)):
            f = c.rhs - c.lhs
        else:
            raise LagrangianError(f"one-sided constraint {i} must be a relation f >= 0 (or W q' + h <= 0), got {c!r}")
        if all(sp.simplify(sp.diff(S.plain(f), u)) == 0 for u in S.us):
            raise LagrangianError(f"one-sided constraint {i}: {f} >= 0 does not depend on q' (df/dq' != 0 fails)")
        out.append(f)
    if not out:
        raise LagrangianError("no one-sided constraint given")
    return out


class OneSidedSystem(ActiveSetMixin, EventDrivenMixin, HomogeneityMixin):
    """A Lagrangian system with one-sided constraints f_nu >= 0 (see the module docstring).

    kind = 1: Cetaev (control None) or type I servo-constraint (control = covector(s) M);
    kind = 2: type II servo-constraint (control = function(s) N, T* = T + lambda N, lambda >= 0).

    The complementarity problem (``acceleration``, ``select_active``) is in ``one_sided_active_set``, the
    event-driven ``simulate`` in ``one_sided_events``.
    """

    def __init__(self, system: LagrangianSystem, constraints: Any, control: Any = None,
                 model: str = "one_sided") -> None:
        S = self.system = system
        self.model = model
        self.kind = 2 if model == "one_sided_servo2" else 1
        self.f = self._exprs = parse_inequalities(S, constraints)
        self.k = len(self.f)
        self.control = control
        P = sp.Matrix([S.plain(f) for f in self.f])
        self.J_sym = P.jacobian(S.us)
        self.c_sym = P.jacobian(S.qs) * sp.Matrix(S.us) + P.diff(S.t)
        self.P_sym = P
        extra = []
        if self.kind == 2:
            if control is None:
                raise LagrangianError("model 'one_sided_servo2' needs control = N (function(s) of q, q', t), "
                                      "T* = T + lambda N with lambda >= 0")
            N = list(control) if isinstance(control, (list, tuple)) else [control]
            if len(N) != self.k or any(isinstance(x, (list, tuple, sp.MatrixBase)) for x in N):
                raise LagrangianError(f"one_sided_servo2 needs one scalar function N per constraint "
                                      f"(a list of {self.k}), got {control!r}")
            self.N_dyn = [sp.sympify(x) for x in N]
            Np = [S.plain(x) for x in self.N_dyn]
            self.NJ_sym, self.H_sym, self.dN_sym = second_kind_pieces(S, Np)
            self.M_sym = None
            extra = Np
        elif control is None:
            self.M_sym = self.J_sym
        else:
            rows = control_rows(control, self.k, S.n, "one-sided control")
            self.M_sym = sp.Matrix([[S.plain(x) for x in r] for r in rows])
            extra = list(self.M_sym)
        allowed = set(S.qs) | set(S.us) | {S.t}
        self.symbols = tuple(sorted(set(S.symbols) | set(free_parameters(list(P) + extra, allowed)), key=str))

    @property
    def is_numeric(self) -> bool:
        """True when no parameter symbols remain (required to simulate)."""
        return not self.symbols

    def subs(self, mapping: dict[Any, Any]) -> OneSidedSystem:
        """The same constrained system with parameters replaced by values."""
        S = self.system.subs(mapping)
        to_new = dict(zip(self.system.qd, S.qd))
        cons = [sp.Ge(sp.sympify(f).subs(mapping).xreplace(to_new), 0) for f in self.f]
        ctrl = subs_control(self.control, mapping)
        return OneSidedSystem(S, cons, control=ctrl, model=self.model)

    def equations(self) -> list[sp.Basic]:
        """The equations of motion with the complementarity conditions (sympy).

        Cetaev / type I: [L] = F + sum lambda_nu M_nu, f_nu >= 0, lambda_nu >= 0, lambda_nu f_nu = 0;
        type II: [L] = F - sum (lambda_nu' dN_nu/dq' + lambda_nu [N_nu]), f_nu >= 0, lambda_nu >= 0,
        lambda_nu f_nu = 0 (Kozlov 2019, section 7).
        """
        S = self.system
        lhs = S.lagrange_derivative(S.L)
        rhs = sp.Matrix(S.forces)
        if self.kind == 1:
            lam = sp.symbols(f"lambda1:{self.k + 1}")
            for i in range(self.k):
                rhs += lam[i] * sp.Matrix([S.dynamic(x) for x in self.M_sym.row(i)])
        else:
            from sympy.physics.mechanics import dynamicsymbols

            lam = dynamicsymbols(f"lambda1:{self.k + 1}") if self.k > 1 else [dynamicsymbols("lambda1")]
            for li, N in zip(lam, self.N_dyn):
                dN = sp.Matrix([sp.diff(N, qd) for qd in S.qd])
                rhs -= li.diff(S.t) * dN + li * S.lagrange_derivative(N)
        return ([sp.Eq(lhs[i], sp.expand(rhs[i])) for i in range(S.n)] + [sp.Ge(f, 0) for f in self.f]
                + [sp.Ge(x, 0) for x in lam] + [sp.Eq(x * f, 0) for x, f in zip(lam, self.f)])

    def realizability(self) -> sp.Expr:
        """det (A^-1 M_mu, df_nu/dq') (type I: must be > 0 for one constraint, Kozlov 2019, (6.2)) or
        det (A^-1 dN_mu/dq', df_nu/dq') (type II: must be < 0 for one constraint, see the module docstring)."""
        S = self.system
        B = self.M_sym if self.kind == 1 else self.NJ_sym
        return sp.simplify(S.dynamic((self.J_sym * S.A_sym.inv() * B.T).det()))

    # ----------------------------------------------------------------- numerics
    @cached_property
    def _num(self) -> dict[str, Any]:
        require_numeric(self.symbols, "a numeric evaluation", repr(self))
        S = self.system
        args = (S.t, *S.qs, *S.us)
        out = {"f": vectorize(list(self.P_sym), args)}
        pieces = list(self.J_sym) + list(self.c_sym)
        if self.kind == 1:
            pieces += list(self.M_sym)
        else:
            pieces += list(self.NJ_sym) + [x for H in self.H_sym for x in H] + [x for d in self.dN_sym for x in d]
        out["pieces"] = vectorize(pieces, args)  # J, c, then M (type I) or dN/dq', d2N/dq'2, [N] + ... (type II)
        return out

    def constraint_values(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
        """f_nu(q, q', t), shape (..., k)."""
        return self._num["f"](*self.system._args(t, q, qd))

    def __repr__(self) -> str:
        return f"OneSidedSystem(f={self.f} >= 0, model={self.model!r})"


register_model(("one_sided", "one_sided_servo2"),
               lambda system, phi, model, control: OneSidedSystem(system, phi, control=control, model=model))
