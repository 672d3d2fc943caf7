"""Symbolic equations of motion of the Lie-group systems, printable for a paper.

For T = (I w, w)/2 on g with (ad*_w m)_j = sum_{i,k} w_i C[i,j,k] m_k (Kozlov's lectures
on servo-constraints, "Системы на группах Ли", "Сервосвязи второго рода", "Твердое тело с левоинвариантной
сервосвязью"):

* free:          (I w)' = ad*_w (I w)                         (or m' = ad*_{K m + c} m when only K is given)
* first kind:    (I w)' = ad*_w (I w) + lambda b,  (a, w) = 0
* second kind:   (I w + lambda b)' = ad*_w (I w + lambda b),  (a, w) = 0

The unknowns are the functions omega1(t)..omegan(t) and lambda(t) (sympy ``dynamicsymbols``), so the
derivatives print as dots in :meth:`Equations.latex`. Parameters stay as given (numbers or symbols).
"""

from __future__ import annotations

import sympy as sp
from sympy.physics.mechanics import dynamicsymbols
from sympy.physics.vector.printing import vlatex

from .symbols import coad_sym

__all__ = ["Equations", "equations_of", "omega_functions"]


def omega_functions(n):
    """(t, (omega1(t), ..., omegan(t)), lambda(t)) as sympy dynamicsymbols."""
    om = dynamicsymbols(f"omega1:{n + 1}")
    return dynamicsymbols._t, tuple(om), dynamicsymbols("lambda")


class Equations:
    """A list of sympy equations ``lhs = rhs`` with the unknown functions of time.

    Attributes
    ----------
    eqs : list of sympy.Eq        the dynamic equations, then the constraint (if any)
    exprs : list of sympy.Expr    lhs - rhs for each equation (each must vanish)
    omega : tuple                  omega1(t)..omegan(t) (or m1(t)..mn(t) for a system given by K)
    lam : sympy function, tuple of them (several constraints) or None   lambda(t)
    t : sympy.Symbol
    """

    def __init__(self, eqs, t, omega, lam, constraint=None, title=""):
        self.eqs = list(eqs)
        self.t = t
        self.omega = tuple(omega)
        self.lam = lam
        self.constraint = constraint
        self.title = title

    @property
    def exprs(self):
        """lhs - rhs of each equation, expanded (each vanishes along a motion)."""
        return [sp.expand(e.lhs - e.rhs) for e in self.eqs]

    @property
    def unknowns(self):
        """The unknown functions: omega1(t)..omegan(t) and lambda(t) when present."""
        if isinstance(self.lam, tuple):
            return self.omega + self.lam
        return self.omega + ((self.lam,) if self.lam is not None else ())

    def __iter__(self):
        return iter(self.eqs)

    def __len__(self):
        return len(self.eqs)

    def __getitem__(self, k):
        return self.eqs[k]

    def __str__(self):
        return "\n".join(f"{sp.sstr(e.lhs)} = {sp.sstr(e.rhs)}" for e in self.eqs)

    def __repr__(self):
        return f"<Equations {self.title}: {len(self.eqs)} equations>\n{self}"

    def latex(self):
        """The equations as a LaTeX ``aligned`` block (dots for time derivatives)."""
        rows = [f"{vlatex(e.lhs)} &= {vlatex(e.rhs)}" for e in self.eqs]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"

    def evalf(self):
        """The same equations with numeric coefficients as floats."""
        return Equations([sp.Eq(sp.N(e.lhs), sp.N(e.rhs)) for e in self.eqs], self.t, self.omega, self.lam,
                         self.constraint, self.title)

    def on_constraint(self):
        """Eliminate one velocity with the constraint (a, w) = 0 (solved for the omega_k with the last
        numeric non-zero a_k, or the last non-zero one); returns the dynamic equations only."""
        if self.constraint is None:
            return self
        if isinstance(self.constraint, list):
            raise NotImplementedError("on_constraint() eliminates one velocity; with several constraints "
                                      "use servo.lie reduced() for the equations on the constraint subspace")
        a = [sp.expand(self.constraint.lhs).coeff(w) for w in self.omega]
        cand = [k for k, ak in enumerate(a) if ak != 0]
        num = [k for k in cand if not getattr(a[k], "free_symbols", set())]
        k = (num or cand)[-1]
        sol = sp.solve(self.constraint.lhs, self.omega[k], dict=True)[0][self.omega[k]]
        rules = {sp.Derivative(self.omega[k], self.t): sp.diff(sol, self.t), self.omega[k]: sol}
        eqs = [sp.Eq(sp.expand(e.lhs.subs(rules)), sp.expand(e.rhs.subs(rules))) for e in self.eqs[:-1]]
        return Equations(eqs, self.t, tuple(w for i, w in enumerate(self.omega) if i != k), self.lam, None,
                         self.title + f" on the constraint ({self.omega[k]} eliminated)")


def equations_of(system):
    """The :class:`Equations` of a servo system (see the module docstring for the three forms)."""
    n = system.n
    t, om, lam = omega_functions(n)
    w = sp.Matrix(om)
    alg = system.algebra
    kind = system.kind
    if kind == "free" and system.I_sym is None:
        m = sp.Matrix(dynamicsymbols(f"m1:{n + 1}"))
        vel = system.Iinv_sym * m + system.c_sym
        rhs = coad_sym(alg, vel, m)
        eqs = [sp.Eq(sp.diff(m[j], t), sp.expand(rhs[j])) for j in range(n)]
        return Equations(eqs, t, tuple(m), None, None, f"{system.name}: m' = ad*_w m, w = K m + c")
    I = system.I_sym
    if kind == "free":
        mom = I * (w - system.c_sym)
        rhs = coad_sym(alg, w, mom)
        eqs = [sp.Eq(sp.expand(sp.diff(mom[j], t)), sp.expand(rhs[j])) for j in range(n)]
        return Equations(eqs, t, om, None, None, f"{system.name}: (I w)' = ad*_w (I w)")
    if system.k > 1:
        return _several_constraints(system, t, om, w)
    a, b = system.a_sym, system.b_sym
    constraint = sp.Eq(sp.expand((a.T * w)[0, 0]), 0)
    mom = I * w
    if kind in ("servo1", "nonholonomic"):
        rhs = coad_sym(alg, w, mom) + lam * b
        eqs = [sp.Eq(sp.expand(sp.diff(mom[j], t)), sp.expand(rhs[j])) for j in range(n)]
        title = f"{system.name}: (I w)' = ad*_w (I w) + lambda b, (a, w) = 0"
    else:
        z = mom + lam * b
        rhs = coad_sym(alg, w, z)
        eqs = [sp.Eq(sp.expand(sp.diff(z[j], t)), sp.expand(rhs[j])) for j in range(n)]
        title = f"{system.name}: (I w + lambda b)' = ad*_w (I w + lambda b), (a, w) = 0"
    return Equations(eqs + [constraint], t, om, lam, constraint, title)


def _several_constraints(system, t, om, w):
    """k constraints A w = 0 with controls B: the first kind (I w)' = ad*_w (I w) + B^T lambda, the second
    kind (I w + B^T lambda)' = ad*_w (I w + B^T lambda), lambda = (lambda1(t), ..., lambdak(t))."""
    n, k, alg = system.n, system.k, system.algebra
    lams = tuple(dynamicsymbols(f"lambda1:{k + 1}"))
    L = sp.Matrix(lams)
    constraints = [sp.Eq(sp.expand((system.A_sym[:, i].T * w)[0, 0]), 0) for i in range(k)]
    mom = system.I_sym * w
    if system.kind in ("servo1", "nonholonomic"):
        lhs, rhs = mom, coad_sym(alg, w, mom) + system.B_sym * L
        title = f"{system.name}: (I w)' = ad*_w (I w) + sum_i lambda_i b_i, (a_i, w) = 0"
    else:
        lhs = mom + system.B_sym * L
        rhs = coad_sym(alg, w, lhs)
        title = f"{system.name}: (I w + sum_i lambda_i b_i)' = ad*_w (I w + sum_i lambda_i b_i), (a_i, w) = 0"
    eqs = [sp.Eq(sp.expand(sp.diff(lhs[j], t)), sp.expand(rhs[j])) for j in range(n)]
    return Equations(eqs + constraints, t, om, lams, constraints, title)
