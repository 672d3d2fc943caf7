"""Gauss's principle of least compulsion and Kozlov's generalized Gauss principle.

Compulsion (Kozlov, "Gauss principle and realization of constraints", Regul. Chaotic Dyn. 13 (2008)):
    Z(x'') = 1/2 (A (x'' - x''_free), x'' - x''_free),   A x''_free = F - b   (free Lagrange equations).
Classical Gauss principle: the actual acceleration minimises Z over the accelerations allowed by the
constraints; for phi(q, q', t) = 0 these satisfy (dphi/dq') x'' + (dphi/dq) q' + dphi/dt = 0, for an
active one-sided constraint f = 0 (f >= 0) they satisfy (df/dq') x'' + (df/dq) q' + df/dt >= 0.
The result equals the Lagrange-multiplier (Cetaev) solution A x'' = F - b + sum lambda dphi/dq'.
Generalized principle (Theorem 1 of Kozlov (2008)): with an extra force Q (A x''_r = F - b + Q), the actual
acceleration minimises Z among virtual motions, (Q, x''_m - x''_r) = 0, i.e. (eq. (4))
    (Q, x''_m) = (Q, A^-1 (F - b + Q)).

The quadratic program is solved exactly by enumerating active sets (smallest first) and checking the
Karush-Kuhn-Tucker conditions; Z is strictly convex so the minimiser is unique.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from .lagrangian import LagrangianSystem
from .symbolic import vectorize
from ..errors import GaussError


def compulsion(A: ArrayLike, acc: ArrayLike, acc_free: ArrayLike) -> NDArray[np.float64]:
    """Z = 1/2 (A (acc - acc_free), acc - acc_free), batched over leading axes."""
    d = np.asarray(acc, dtype=float) - np.asarray(acc_free, dtype=float)
    return 0.5 * np.einsum("...i,...ij,...j->...", d, A, d)


def _solve_equality_qp(A, a_free, C, d):
    """min Z s.t. C a + d = 0: a = a_free + A^-1 C^T mu with (C A^-1 C^T) mu = -d - C a_free."""
    if C.shape[0] == 0:
        return a_free.copy(), np.zeros(0), True
    AiC = np.linalg.solve(A, C.T)
    G, r = C @ AiC, -d - C @ a_free
    mu = np.linalg.pinv(G, rcond=1e-12) @ r
    ok = np.linalg.norm(G @ mu - r) <= 1e-9 * (1.0 + np.linalg.norm(r))
    return a_free + AiC @ mu, mu, ok


def solve_compulsion_qp(A: ArrayLike, a_free: ArrayLike, E: ArrayLike | None = None, e: ArrayLike | None = None,
                        G: ArrayLike | None = None, g: ArrayLike | None = None, tol: float = 1e-10
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Minimise 1/2 (A (a - a_free), a - a_free) subject to E a + e = 0 and G a + g >= 0 (one state).

    Returns (a, mu, nu): the minimiser, the equality multipliers mu and the inequality multipliers
    nu >= 0, with A (a - a_free) = E^T mu + G^T nu and nu_i (G a + g)_i = 0.
    """
    A = np.asarray(A, dtype=float)
    a_free = np.asarray(a_free, dtype=float)
    n = a_free.shape[0]
    E = np.zeros((0, n)) if E is None else np.atleast_2d(np.asarray(E, dtype=float))
    e = np.zeros(0) if e is None else np.atleast_1d(np.asarray(e, dtype=float))
    G = np.zeros((0, n)) if G is None else np.atleast_2d(np.asarray(G, dtype=float))
    g = np.zeros(0) if g is None else np.atleast_1d(np.asarray(g, dtype=float))
    if E.shape != (len(e), n) or G.shape != (len(g), n):
        raise GaussError(f"constraint shapes E {E.shape}, e {e.shape}, G {G.shape}, g {g.shape} do not fit n = {n}")
    m = len(g)
    scale = 1.0 + np.abs(g).max(initial=0.0) + np.abs(G).max(initial=0.0) * np.abs(a_free).max(initial=0.0)
    any_consistent = False
    for size in range(m + 1):
        for S in combinations(range(m), size):
            S = list(S)
            a, mu, ok = _solve_equality_qp(A, a_free, np.vstack([E, G[S]]), np.concatenate([e, g[S]]))
            if not ok:
                continue
            any_consistent = True
            nu = np.zeros(m)
            nu[S] = mu[len(e):]
            if np.all(nu >= -tol * scale) and np.all(G @ a + g >= -tol * scale):
                return a, mu[:len(e)], np.maximum(nu, 0.0)
    what = "equality constraints E a + e = 0 are inconsistent" if not any_consistent else \
        "no active set satisfies the KKT conditions (inequalities G a + g >= 0 infeasible)"
    raise GaussError(f"Gauss principle: {what}; E = {E.tolist()}, e = {e.tolist()}, G = {G.tolist()}, g = {g.tolist()}")


@lru_cache(maxsize=128)
def _rows(system, constraints):
    """Lambdified (kind, f, df/dq', (df/dq) q' + df/dt) for each constraint; cached per system."""
    S = system
    args = (S.t, *S.qs, *S.us)
    out = []
    for i, c in enumerate(constraints):
        kind = "eq"
        if isinstance(c, sp.Equality):
            expr = c.lhs - c.rhs
        elif isinstance(c, (sp.GreaterThan, sp.StrictGreaterThan)):
            kind, expr = "ge", c.lhs - c.rhs
        elif isinstance(c, (sp.LessThan, sp.StrictLessThan)):
            kind, expr = "ge", c.rhs - c.lhs
        elif isinstance(c, sp.core.relational.Relational):
            raise GaussError(f"constraint {i}: unsupported relation {c}")
        else:
            expr = c
        p = S.plain(expr)
        J = [sp.diff(p, u) for u in S.us]
        cc = sum(sp.diff(p, qj) * uj for qj, uj in zip(S.qs, S.us)) + sp.diff(p, S.t)
        out.append((kind, expr, vectorize([p], args), vectorize(J, args), vectorize([cc], args)))
    return tuple(out)


def gauss_acceleration(system: LagrangianSystem, state: Sequence[Any], constraints: Any = (),
                       force: Sequence[Any] | None = None, tol: float = 1e-9, full_output: bool = False
                       ) -> NDArray[np.float64] | tuple[NDArray[np.float64], NDArray[np.float64],
                                                        NDArray[np.float64], float]:
    """The acceleration minimising the compulsion over the accelerations the constraints allow.

    system : LagrangianSystem; state : (q, qd) or (t, q, qd) (one state, arrays of length n);
    constraints : sympy expressions / Eq (equalities phi = 0) and relationals f >= 0 (inequalities:
    they restrict the acceleration only where active, |f| <= tol; a state with f < -tol raises);
    force : an extra force Q (length-n numbers or sympy expressions) for Kozlov's generalized principle
    (virtual motions (Q, x''_m) = (Q, A^-1 (F - b + Q)); the compulsion is still measured from the free
    acceleration A^-1 (F - b)). Returns x'' (and with full_output the multipliers and the compulsion).
    """
    if len(state) == 2:
        t, (q, qd) = 0.0, state
    elif len(state) == 3:
        t, q, qd = state
    else:
        raise GaussError(f"state must be (q, qd) or (t, q, qd), got {len(state)} items")
    S = system
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    A = S.mass_matrix(t, q, qd)
    a_free = S.free_acceleration(t, q, qd)
    args = S._args(t, q, qd)
    cons = tuple(sp.sympify(c) for c in (constraints if isinstance(constraints, (list, tuple)) else [constraints]))
    E, e, G, g = [], [], [], []
    for i, (kind, expr, fval, J, cc) in enumerate(_rows(S, cons)):
        val = float(fval(*args)[0])
        if kind == "eq":
            E.append(J(*args)), e.append(float(cc(*args)[0]))
        elif val < -tol:
            raise GaussError(f"state violates the one-sided constraint {i}: {expr} = {val:.3e} < 0")
        elif val <= tol:
            G.append(J(*args)), g.append(float(cc(*args)[0]))
    if force is not None:
        Q = np.asarray([float(S.plain(x).subs(dict(zip([S.t, *S.qs, *S.us], [t, *q, *qd]))))
                        if isinstance(x, sp.Basic) else float(x) for x in force])
        if Q.shape != (S.n,):
            raise GaussError(f"force Q must have {S.n} entries, got {Q.shape}")
        E.append(Q), e.append(-Q @ np.linalg.solve(A, S.force(t, q, qd) - S.bias(t, q, qd) + Q))
    n = S.n
    acc, mu, nu = solve_compulsion_qp(A, a_free, np.reshape(E, (-1, n)), np.asarray(e), np.reshape(G, (-1, n)),
                                      np.asarray(g), tol=tol)
    if full_output:
        return acc, mu, nu, float(compulsion(A, acc, a_free))
    return acc
