"""The generated whole-run loop of ``dvak_mid`` (the discrete vakonomic / second-kind scheme in coordinates,
Benito and Martin de Diego 2005 with the midpoint discrete Lagrangian) in straight-line scalar code, from the
expression source a problem carries (``VakonomicCoordinateData(source=...)``: the controlled Lagrangian L* and
the constraints phi as text in q0.., v0.., l0..; servo.coordinates prints them from its symbolic equations).

The map is that of :class:`integrators.reference.nonholonomic.vakonomic_schemes.VakonomicStepper` (the
equations there), whose numpy step and compiled loop (``kernels.make_dvak_run``, complex-step Jacobians) stay
as the references of the tests. Per step two solves:

* the interval: u = (q_1, mu) with, at q_{1/2} = (q_0 + q_1)/2 and w = (q_1 - q_0)/h,

      R(u) = (L*_v(q_{1/2}, w; mu) - h/2 L*_q(q_{1/2}, w; mu) - p_0,  phi(q_{1/2}, w)) = 0,

  then p_1 = L*_v + h/2 L*_q = p_0 + h L*_q at the root;
* the node: (v_1, lambda_1) with L*_v(q_1, v_1; lambda_1) = p_1, phi(q_1, v_1) = 0 (the saved state).

p_1 is carried to the next step as its p_0 (the numpy stepper recomputes p_0 = L*_v(q_1, v_1; lambda_1), which is
p_1 to the node's Newton tolerance), so the node enters no later step: it is solved only where the state is
saved (every step by default), predicted there from the interval's (3 w_k - w_(k-1))/2, (3 mu_k - mu_(k-1))/2
(second order) or, when the node was solved in the three steps before, by the quadratic extrapolation of
those solutions.

Both residuals and their Jacobians are derived by sympy once, when the text is written (dR/dq_1 =
dR/dq_{1/2}/2 + dR/dw/h by the chain rule; cse), every component a local variable; the node's terms that
depend on q_1 alone (sin, cos of the angles ...) are written once before its iteration. p_1 comes from the
last residual evaluation of the interval linearised to the accepted root (L*_q at the last iterate plus its
directional derivative along the last increment, derived by sympy beside the residual; the neglected term is
quadratic in an increment already at the tolerance), so the root needs no further evaluation.

**Simplified Newton** (Hairer and Wanner 1996, IV.8, as :mod:`integrators.codegen.nonholonomic_source`): per
solve the inverse of its (n + k) x (n + k) Jacobian is kept across iterations and steps and refreshed (at the
predictor, the residual there computed with it, their common terms once) when the contraction
theta_j = |de_j| / |de_(j-1)| measured in a step exceeds the threshold (for the next step), or at once when the
iteration does not contract (theta >= 1/2: the step restarts from its predictor with a fresh Jacobian); a failure
with a fresh Jacobian ends the run there (the caller's ConvergenceError). The inverse is a Gauss-Jordan
elimination in straight-line code with the structural zeros and constants of the Jacobian folded when the text
is written, no pivoting (the systems are of saddle-point form, the leading block L*_vv / h); a pivot below 1e-13
of the largest entry at run time takes the pivoting ``inverse`` instead. The stop: the increment at round-off
(|de| <= TOL max(1, |u|), the numpy stepper's), or the next correction predicted from the contraction,
theta/(1 - theta) |de| (theta measured in this step, or 10x the last step's for the first increment), below
TOL max(1, |u|); an increment on the round-off floor (not decreasing, below 1e3 TOL) ends it too. theta is the
largest of the max norm's ratio and those of the two blocks of unknowns ((q_1, mu), (v_1, lambda_1)) above
round-off: the blocks converge at different rates, and the max norm's ratio alone followed mu while q_1's
error was left 40x the tolerance (a drawn system, tested). The interval's predictor is the extrapolation of
degree ``PREDICTOR_DEGREE`` of its last solutions (fewer in the first steps; the numpy stepper's
(q_0 + h v_0, lambda_0) in the first). Where the node's equations are affine in (v_1, lambda_1) (L* quadratic in
v with phi linear in v, the usual vakonomic and second-kind models; decided from the derived Jacobian) the node is
one Newton step with its exact Jacobian by straight-line elimination (no inverse formed), exact to round-off from
any start.

Measured on the vakonomic skate (h = 1e-3, 20000 steps; benchmarks/nonholonomic.py): 2.19 residual evaluations a
step (1.19 of the interval, 1 of the node), 0.05 interval Jacobians a step; the loop 0.067 us a step (the node
0.014 of it), 1.4x rk4 with numba on the continuous equations written by hand; the loop of ``make_dvak_run``
(two full Newton solves, complex-step Jacobians) 3.9 us.
"""

from __future__ import annotations

from math import comb

import numpy as np

from liegroups._lazy import lazy_module

from ..reference.nonholonomic.kernels import MAX_ITER, TOL
from ..reference.nonholonomic.problems import vakonomic_expressions, vakonomic_names
from .nonholonomic_source import INVERSE_SOURCE
from .source_text import Lines, num

sp = lazy_module("sympy")

#: the interval's predictor: the polynomial of this degree through the last solutions (its error h^(d+1)
#: u^(d+1); on the vakonomic skate at h = 1e-3 the angle's frequency grows to ~20: median error of q 2.6e-7 at
#: degree 2, 5.6e-11 at 4, 1.9e-12 at 5; the loop's cost 0.106 / 0.088 / 0.072 / 0.080 / 0.088 us a step at
#: degrees 3 / 4 / 5 / 6 / 7, CPU time, interleaved: beyond 5 the extrapolation's round-off, 2^(d+1) ulps, and
#: the longer history cost more than the nearer start gains)
PREDICTOR_DEGREE = 5
#: the contraction above which a kept Jacobian is refreshed for the next step (interval, node): on the skate
#: 1e-3, 3e-3 and 1e-2 cost the same (0.072-0.077 us), 3e-2 more (0.081: 2.45 residuals a step against 2.19)
THETA_REFRESH = (3e-3, 3e-3)
#: the contraction assumed for the first increment after a refresh
FRESH_THETA = 1e-6


def extrapolation(d):
    """Coefficients c_j of u_k = sum_j c_j u_(k-1-j): the polynomial of degree d through the last d + 1 values
    (c_j = (-1)^j binom(d + 1, j + 1), the (d + 1)-th difference set to zero)."""
    return tuple(float((-1) ** j * comb(d + 1, j + 1)) for j in range(d + 1))


def _names(n, k):
    return vakonomic_names(n, k)


def _hoist(e, fixed, table, tag):
    """e with every subexpression that depends on the ``fixed`` symbols alone (and is not a symbol or a number)
    replaced by a name of ``table`` (expression -> symbol, filled here): those are written once per solve."""
    if e.is_Atom:
        return e
    if e.free_symbols <= fixed:
        if e not in table:
            table[e] = sp.Symbol(f"{tag}{len(table)}")
        return table[e]
    if isinstance(e, (sp.Add, sp.Mul)):
        inv = [a for a in e.args if a.free_symbols <= fixed]
        rest = [_hoist(a, fixed, table, tag) for a in e.args if not a.free_symbols <= fixed]
        if len(inv) > 1 or (inv and not inv[0].is_Atom):
            inv = [_hoist(e.func(*inv), fixed, table, tag)]
        return e.func(*inv, *rest)
    return e.func(*[_hoist(a, fixed, table, tag) for a in e.args])


class _Fold:
    """Straight-line elimination with the values known when the text is written folded: an entry is a float
    (a constant; 0.0 a structural zero) or the name of a local; each new non-constant value is written to a fresh
    local ``gj<i>``."""

    def __init__(self, L):
        self.L, self.count = L, 0

    @staticmethod
    def const(t):
        """The float value of an entry text without names, else None."""
        if any(ch.isalpha() for ch in t):
            return None
        try:
            return float(sp.sympify(t))
        except (TypeError, ValueError, sp.SympifyError):
            return None

    def store(self, expr):
        if isinstance(expr, float):
            return expr
        self.count += 1
        nm = f"gj{self.count}"
        self.L.emit(f"{nm} = {expr}")
        return nm

    @staticmethod
    def txt(v):
        return num(v) if isinstance(v, float) else v

    @staticmethod
    def mul(a, b):
        if (isinstance(a, float) and a == 0.0) or (isinstance(b, float) and b == 0.0):
            return 0.0
        if isinstance(a, float) and isinstance(b, float):
            return a * b
        if isinstance(a, float):
            a, b = b, a
        if isinstance(b, float):
            return a if b == 1.0 else (f"-{a}" if b == -1.0 else f"{a}*{num(b)}")
        return f"{a}*{b}"

    def sub(self, a, p):
        if isinstance(p, float) and p == 0.0:
            return a
        if isinstance(a, float) and isinstance(p, float):
            return a - p
        if isinstance(a, float) and a == 0.0:
            return f"-({self.txt(p)})"
        return f"{self.txt(a)} - ({self.txt(p)})"

    def matrix(self, JJ):
        """The entries of ``JJ`` (texts) as constants or locals; writes ``big`` (the largest |entry|) and
        ``sing = False``."""
        A = [[self.const(e) if self.const(e) is not None else self.store(e) for e in row] for row in JJ]
        names = [v for row in A for v in row if not isinstance(v, float)]
        big = max([abs(v) for row in A for v in row if isinstance(v, float)] + [0.0])
        self.L.emit("big = max(" + ", ".join([f"abs({v})" for v in names] + [num(big), "0.0"]) + ")")
        self.L.emit("sing = False")
        return A

    def pivot(self, piv):
        """1/pivot (a constant or a local; a pivot below 1e-13 big sets sing at run time), None for a structural
        zero."""
        if isinstance(piv, float):
            return None if piv == 0.0 else 1.0 / piv
        self.L.emit(f"if not abs({piv}) > 1e-13 * big:")
        self.L.emit("    sing = True")
        return self.store(f"1.0 / {piv}")


class VakonomicSource:
    """The text of ``run(Y0, h, nsteps, save_every, K, cst)`` (the saved states (K, B, 2n + k), the steps done,
    the residual evaluations, the Jacobians) for the expression ``source`` of a problem with n coordinates and k
    constraints (module docstring); ``cst`` = (interval threshold, node threshold)."""

    def __init__(self, source, n, k, theta_refresh=None, degree=PREDICTOR_DEGREE):
        self.n, self.k, self.m = int(n), int(k), int(n) + int(k)
        self.theta = tuple(THETA_REFRESH if theta_refresh is None else theta_refresh)
        self.degree = int(degree)
        self.L, self.phi = vakonomic_expressions(source, self.n, self.k)
        q, v, lam = _names(self.n, self.k)
        self.Lv = [sp.diff(self.L, x) for x in v]
        self.Lq = [sp.diff(self.L, x) for x in q]

    @property
    def cst(self):
        return np.array(self.theta, dtype=float)

    # ------------------------------------------------------------ sympy pieces
    def _interval_exprs(self):
        """(residual R(u) entries, their Jacobian dR/du (m x m), the post-root p_1 - p_0 = h (L*_q + dL*_q[du]))
        in the loop's names: a_i = q_{1/2}, b_i = w, u_j (the unknowns q_1, mu), p_i, h, du_j."""
        n, k = self.n, self.k
        q, v, lam = _names(n, k)
        a = sp.symbols(f"a0:{n}", real=True)
        b = sp.symbols(f"b0:{n}", real=True)
        mu = sp.symbols(f"u{n}:{n + k}", real=True)
        h = sp.Symbol("h", positive=True)
        sub = {**dict(zip(q, a)), **dict(zip(v, b)), **dict(zip(lam, mu))}
        Lv = [e.xreplace(sub) for e in self.Lv]
        Lq = [e.xreplace(sub) for e in self.Lq]
        ph = [e.xreplace(sub) for e in self.phi]
        F = [Lv[i] - h / 2 * Lq[i] for i in range(n)] + ph
        R = [F[i] - sp.Symbol(f"p{i}") for i in range(n)] + ph
        J = [[sp.diff(F[r], a[j]) / 2 + sp.diff(F[r], b[j]) / h for j in range(n)]
             + [sp.diff(F[r], mu[c]) for c in range(k)] for r in range(n + k)]
        du = sp.symbols(f"de0:{n + k}", real=True)
        dirs = [du[j] / 2 for j in range(n)], [du[j] / h for j in range(n)], du[n:]
        post = [h * (Lq[i] + sum(sp.diff(Lq[i], a[j]) * dirs[0][j] + sp.diff(Lq[i], b[j]) * dirs[1][j]
                                 for j in range(n)) + sum(sp.diff(Lq[i], mu[c]) * dirs[2][c] for c in range(k)))
                for i in range(n)]
        return R, J, post

    def _node_exprs(self):
        """(hoisted q_1-only terms, residual entries, Jacobian) of the node in the names x_i (q_1), V_i, M_c
        (the unknowns v_1, lambda_1) and p_i (p_1)."""
        n, k = self.n, self.k
        q, v, lam = _names(n, k)
        x = sp.symbols(f"x0:{n}", real=True)
        U = sp.symbols(f"y0:{n + k}", real=True)
        sub = {**dict(zip(q, x)), **dict(zip(v, U[:n])), **dict(zip(lam, U[n:]))}
        Lv = [e.xreplace(sub) for e in self.Lv]
        ph = [e.xreplace(sub) for e in self.phi]
        R = [Lv[i] - sp.Symbol(f"p{i}") for i in range(n)] + ph
        J = [[sp.diff((Lv + ph)[r], U[j]) for j in range(n + k)] for r in range(n + k)]
        table = {}
        fixed = set(x)
        R = [_hoist(e, fixed, table, "nz") for e in R]
        J = [[_hoist(e, fixed, table, "nz") for e in row] for row in J]
        return table, R, J

    @staticmethod
    def _emit_table(L, table):
        """Lines of the hoisted terms (symbol <- expression of q_1 alone), after cse."""
        subs, red = sp.cse(list(table), symbols=sp.numbered_symbols("nh"), optimizations="basic")
        for s, e in subs:
            L.emit(f"{s} = {sp.pycode(e)}")
        for sym, e in zip(table.values(), red):
            L.emit(f"{sym} = {sp.pycode(e)}")

    @staticmethod
    def _emit_cse(L, exprs, tag):
        """Lines of the expressions after cse; returns their source texts."""
        subs, red = sp.cse(exprs, symbols=sp.numbered_symbols(tag), optimizations="basic")
        for s, e in subs:
            L.emit(f"{s} = {sp.pycode(e)}")
        return [sp.pycode(e) for e in red]

    def _interval_pieces(self, R, J, post):
        """The interval's cse (residual, Jacobian and p_1's linearisation together) and, per part, the
        replacements it needs: (subs, needR, needJ, needP, residual texts, Jacobian texts, p_1 - p_0 texts)."""
        m = self.m
        subs, red = sp.cse(list(R) + [e for row in J for e in row] + list(post),
                           symbols=sp.numbered_symbols("rc"), optimizations="basic")

        def closure(exprs):
            need = set()
            for e in exprs:
                need |= e.free_symbols
            for s_, e in reversed(subs):
                if s_ in need:
                    need |= e.free_symbols
            return need

        return (subs, closure(red[:m]), closure(red[m:m + m * m]), closure(red[m + m * m:]),
                [sp.pycode(e) for e in red[:m]], [[sp.pycode(red[m + r * m + c]) for c in range(m)] for r in range(m)],
                [sp.pycode(e) for e in red[m + m * m:]])

    def _interval_lines(self, L, subs, need):
        """Lines of the midpoint a = q_(1/2), b = w at the unknowns u and of the cse replacements in ``need``."""
        for i in range(self.n):
            L.emit(f"a{i} = 0.5 * (x{i} + u{i})")
            L.emit(f"b{i} = (u{i} - x{i}) * ih")
        for s_, e in subs:
            if s_ in need:
                L.emit(f"{s_} = {sp.pycode(e)}")

    def pieces_text(self):
        """Plain-Python source of ``interval(x, u, p, h)`` -> (R, dR/du) and ``node(x, y, p)`` -> (R, dR/dy): the
        same generated lines the loop runs (for tests against the reference step's residual)."""
        m, n = self.m, self.n
        R, J, post = self._interval_exprs()
        subs, needR, needJ, _, rt, jt, _ = self._interval_pieces(R, J, post)
        L = Lines(indent=0)
        L.emit("import math")
        L.emit("def interval(x, u, p, h):")
        L.indent = 1
        L.emit("ih = 1.0 / h")
        for i in range(n):
            L.emit(f"x{i} = x[{i}]; p{i} = p[{i}]")
        for j in range(m):
            L.emit(f"u{j} = u[{j}]")
        self._interval_lines(L, subs, needR | needJ)
        L.emit("return [" + ", ".join(rt) + "], [[" + "], [".join(", ".join(row) for row in jt) + "]]")
        table, NR, NJ = self._node_exprs()
        L.indent = 0
        L.emit("def node(x, y, p):")
        L.indent = 1
        for i in range(n):
            L.emit(f"x{i} = x[{i}]; p{i} = p[{i}]")
        for j in range(m):
            L.emit(f"y{j} = y[{j}]")
        self._emit_table(L, table)
        nt = self._emit_cse(L, list(NR) + [e for row in NJ for e in row], "nr")
        L.emit("return [" + ", ".join(nt[:m]) + "], [[" + "], [".join(", ".join(nt[m + r * m:m + (r + 1) * m])
                                                                     for r in range(m)) + "]]")
        return L.text()

    # ------------------------------------------------------------ the Newton block
    def _inverse(self, L, JJ, out):
        """Lines of the inverse of the m x m matrix of entry texts ``JJ`` into the names ``out`` by Gauss-Jordan
        elimination in straight-line code, without pivoting: structural zeros and constant entries folded when the
        text is written; a pivot below 1e-13 of the largest entry at run time sets ``sing`` (the caller then takes
        the pivoting ``inverse``). Returns False when a pivot is a structural zero (no straight-line form)."""
        m = len(JJ)
        f = _Fold(L)
        A = f.matrix(JJ)
        Inv = [[1.0 if r == c else 0.0 for c in range(m)] for r in range(m)]
        for c in range(m):
            ip = f.pivot(A[c][c])
            if ip is None:
                return False
            for jj in range(c + 1, m):
                A[c][jj] = f.store(f.mul(A[c][jj], ip))
            for jj in range(m):
                Inv[c][jj] = f.store(f.mul(Inv[c][jj], ip))
            A[c][c] = 1.0
            for r in range(m):
                g = A[r][c]
                if r == c or g == 0.0:
                    continue
                for jj in range(c + 1, m):
                    A[r][jj] = f.store(f.sub(A[r][jj], f.mul(g, A[c][jj])))
                for jj in range(m):
                    Inv[r][jj] = f.store(f.sub(Inv[r][jj], f.mul(g, Inv[c][jj])))
                A[r][c] = 0.0
        for r in range(m):
            L.emit("; ".join(f"{out[r][c]} = {f.txt(Inv[r][c])}" for c in range(m)))
        return True

    def _solve(self, L, JJ, rhs, out):
        """Lines of out = J^-1 rhs (``JJ`` the entry texts, ``rhs`` names) by Gaussian elimination and back
        substitution in straight-line code (the folding and the run-time pivot test of :meth:`_inverse`: ``sing``);
        False when a pivot is a structural zero."""
        m = len(JJ)
        f = _Fold(L)
        A = f.matrix(JJ)
        b = list(rhs)
        ips = []
        for c in range(m):
            ip = f.pivot(A[c][c])
            if ip is None:
                return False
            ips.append(ip)
            for r in range(c + 1, m):
                g = f.store(f.mul(A[r][c], ip))
                if g == 0.0:
                    continue
                for jj in range(c + 1, m):
                    A[r][jj] = f.store(f.sub(A[r][jj], f.mul(g, A[c][jj])))
                b[r] = f.store(f.sub(b[r], f.mul(g, b[c])))
        xs = [None] * m
        for c in range(m - 1, -1, -1):
            acc = b[c]
            for jj in range(c + 1, m):
                acc = f.store(f.sub(acc, f.mul(A[c][jj], xs[jj])))
            xs[c] = f.store(f.mul(acc, ips[c]))
        for c in range(m):
            L.emit(f"{out[c]} = {f.txt(xs[c])}")
        return True

    def _refresh(self, L, JJ, ji, fresh_needed, th_old):
        """Lines of a fresh inverse Jacobian into the names ``ji`` from the entry texts ``JJ`` (straight-line,
        the pivoting ``inverse`` where a pivot is small or structurally zero); breaks out of the attempt loop
        when singular."""
        m = len(JJ)
        straight = self._inverse(L, JJ, ji)
        if straight:
            L.emit("if sing:")
            L.indent += 1
        for r in range(m):
            L.emit("; ".join(f"Jm[{r}, {c}] = {JJ[r][c]}" for c in range(m)))
        L.emit("if not inverse(Jm, Jim):")
        L.emit("    break")
        for r in range(m):
            L.emit("; ".join(f"{ji[r][c]} = Jim[{r}, {c}]" for c in range(m)))
        if straight:
            L.indent -= 1
        L.emit("njac += 1")
        L.emit("fresh = True")
        L.emit(f"{fresh_needed} = False")
        L.emit(f"{th_old} = {num(FRESH_THETA)}")

    def _newton(self, L, u, pred, residual, refresh, ji, th_old, fresh_needed, threshold):
        """Lines of the simplified Newton solve of one system in the unknown names ``u`` from the predictor names
        ``pred``: ``residual(L)`` emits the residual at u and returns its texts, ``refresh(L)`` emits the
        Jacobian and the residual at u together (their common terms once) and returns (Jacobian texts, residual
        texts); the kept inverse in the names ``ji``; sets ok and leaves the last increment in de0.."""
        m = len(u)
        L.emit("ok = False")
        L.emit("theta = 0.0")
        L.emit("for attempt in range(2):")
        L.indent += 1
        L.emit("fresh = False")
        L.emit("have = False")
        for j in range(m):
            L.emit(f"{u[j]} = {pred[j]}")
        L.emit(f"if {fresh_needed} or attempt == 1:")
        L.indent += 1
        JJ, rr = refresh(L)
        for j in range(m):
            L.emit(f"r{j} = {rr[j]}")
        L.emit("have = True")
        self._refresh(L, JJ, ji, fresh_needed, th_old)
        L.indent -= 1
        L.emit("prev = prev0 = prev1 = np.inf")
        L.emit("conv = False")
        L.emit(f"for it in range({MAX_ITER}):")
        L.indent += 1
        L.emit("if not have:")
        L.indent += 1
        for j, rj in enumerate(residual(L)):
            L.emit(f"r{j} = {rj}")
        L.indent -= 1
        L.emit("have = False")
        for j in range(m):
            L.emit(f"de{j} = -(" + " + ".join(f"{ji[j][c]}*r{c}" for c in range(m)) + ")")
        for j in range(m):
            L.emit(f"{u[j]} += de{j}")
        blocks = [(0, self.n), (self.n, m)]
        for bi, (lo, hi) in enumerate(blocks):
            L.emit(f"dn{bi} = max(" + ", ".join([f"abs(de{j})" for j in range(lo, hi)] + ["0.0"]) + ")")
        L.emit("dn = max(" + ", ".join(f"dn{bi}" for bi in range(len(blocks))) + ")")
        L.emit("sc = max(" + ", ".join([f"abs({u[j]})" for j in range(m)] + ["1.0"]) + ")")
        L.emit("iters += 1")
        L.emit("if not math.isfinite(dn):")
        L.emit("    break")
        L.emit("if dn <= TOL * sc:")
        L.emit("    conv = True")
        L.emit("    break")
        L.emit("if it == 0:")
        L.emit(f"    if 10.0 * {th_old} * dn <= (1.0 - 10.0 * {th_old}) * TOL * sc:")
        L.emit("        conv = True")
        L.emit("        break")
        L.emit("else:")
        L.emit("    th = dn / prev")
        L.emit("    if th >= 0.5:")
        L.emit("        if dn <= 1e3 * TOL * sc:")
        L.emit("            conv = True")
        L.emit("        break")
        # the contraction of each block (q_1 and mu, or v_1 and lambda_1) above round-off: the two converge at
        # different rates (the q columns of the interval's Jacobian are O(1/h), the mu columns O(1)), and the max
        # norm's ratio can follow the faster one while the slower one dominates the error left
        for bi in range(len(blocks)):
            L.emit(f"    if prev{bi} > 1e3 * TOL * sc:")
            L.emit(f"        th = max(th, dn{bi} / prev{bi})")
        L.emit("    if dn > 1e3 * TOL * sc:")
        L.emit("        theta = max(theta, th)")
        L.emit("    if th < 0.5 and th * dn <= (1.0 - th) * TOL * sc:")
        L.emit("        conv = True")
        L.emit("        break")
        L.emit("prev = dn")
        for bi in range(len(blocks)):
            L.emit(f"prev{bi} = dn{bi}")
        L.indent -= 1
        L.emit("if conv:")
        L.emit("    ok = True")
        L.emit("    break")
        L.emit("if fresh:")
        L.emit("    break")
        L.indent -= 1
        L.emit("if ok:")
        L.emit("    if theta > 0.0:")
        L.emit(f"        {th_old} = theta")
        L.emit(f"    if {th_old} > {threshold}:")
        L.emit(f"        {fresh_needed} = True")

    # ------------------------------------------------------------ the program
    def text(self):
        n, k, m = self.n, self.k, self.m
        R, J, post = self._interval_exprs()
        table, NR, NJ = self._node_exprs()
        u = [f"u{j}" for j in range(m)]                       # interval unknowns (q_1, mu)
        y = [f"y{j}" for j in range(m)]                       # node unknowns (v_1, lambda_1)
        coef = extrapolation(self.degree)
        nh = len(coef)
        hist = [[f"hu{j}_{c}" for c in range(m)] for j in range(nh)]     # hist[j]: the solution j + 1 steps back
        nhist = [[f"hy{j}_{c}" for c in range(m)] for j in range(3)]
        ji = [[f"ji{r}_{c}" for c in range(m)] for r in range(m)]
        jn = [[f"jn{r}_{c}" for c in range(m)] for r in range(m)]
        ydeps = set(sp.symbols(f"y0:{m}", real=True))
        affine = all(not (e.free_symbols & ydeps) for row in NJ for e in row)
        subs, needR, needJ, needP, rtexts, jtexts, ptexts = self._interval_pieces(R, J, post)

        def interval_residual(Lr):
            self._interval_lines(Lr, subs, needR)
            return rtexts

        def interval_refresh(Lr):
            self._interval_lines(Lr, subs, needR | needJ)
            return jtexts, rtexts

        L = Lines(indent=0)
        L.lines.extend(INVERSE_SOURCE.splitlines())
        L.emit("@numba.njit(**JIT)")
        L.emit("def run(Y0, h, nsteps, save_every, K, cst):")
        L.indent = 1
        L.emit("TH_INTERVAL = cst[0]")
        L.emit("TH_NODE = cst[1]")
        L.emit("B = Y0.shape[0]")
        L.emit(f"ys = np.empty((K, B, {2 * n + k}))")
        L.emit("ys[0] = Y0")
        L.emit(f"Jm = np.empty(({m}, {m}))")
        L.emit(f"Jim = np.empty(({m}, {m}))")
        L.emit("done = nsteps")
        L.emit("iters = 0")
        L.emit("njac = 0")
        L.emit(f"TOL = {num(TOL)}")
        L.emit("ih = 1.0 / h")
        L.emit("for b in range(B):")
        L.indent = 2
        for i in range(n):
            L.emit(f"x{i} = Y0[b, {i}]")
        for j in range(m):
            L.emit(f"y{j} = Y0[b, {n + j}]")
        # p_0 = L*_v(q_0, v_0; lambda_0): the node's expressions at the initial state
        self._emit_table(L, table)
        p0 = self._emit_cse(L, [NR[i] + sp.Symbol(f"p{i}") for i in range(n)], "ip")
        for i in range(n):
            L.emit(f"p{i} = {p0[i]}")
        for row in hist + nhist[1:] + ji + jn:
            L.emit(" = ".join(row) + " = 0.0")
        for j in range(m):                                    # the node's history: the initial state
            L.emit(f"hy0_{j} = y{j}")
        L.emit("fresh_i = True")
        L.emit("fresh_n = True")
        L.emit("th_i = 1.0")
        L.emit("th_n = 1.0")
        L.emit("nsolved = 1")                                 # consecutive node solutions kept (the initial state)
        L.emit("jsave = 1")
        L.emit("tosave = save_every")
        for i in range(n):
            L.emit(f"wp{i} = y{i}")                           # the last step's w (for the node's guess)
        for c in range(k):
            L.emit(f"mp{c} = y{n + c}")
        L.emit("for kstep in range(1, nsteps + 1):")
        L.indent = 3
        L.emit("if kstep > done:")
        L.emit("    break")
        # ---- the interval's predictor
        L.emit(f"if kstep > {nh}:")
        for j in range(m):
            L.emit(f"    pu{j} = " + " + ".join(f"({num(c)})*{hist[i][j]}" for i, c in enumerate(coef)))
        for dd in range(nh - 2, 0, -1):                       # the first steps: the degree the kept solutions allow
            L.emit(f"elif kstep > {dd + 1}:")
            for j in range(m):
                L.emit(f"    pu{j} = " + " + ".join(f"({num(c)})*{hist[i][j]}"
                                                     for i, c in enumerate(extrapolation(dd))))
        L.emit("elif kstep > 1:")                             # q_2 from q_1 and the first interval's w
        for i in range(n):
            L.emit(f"    pu{i} = x{i} + h * wp{i}")
        for c in range(k):
            L.emit(f"    pu{n + c} = {hist[0][n + c]}")
        L.emit("else:")
        for i in range(n):
            L.emit(f"    pu{i} = x{i} + h * y{i}")
        for c in range(k):
            L.emit(f"    pu{n + c} = y{n + c}")
        self._newton(L, u, [f"pu{j}" for j in range(m)], interval_residual, interval_refresh, ji, "th_i",
                     "fresh_i", "TH_INTERVAL")
        L.emit("if not ok:")
        L.emit("    done = kstep - 1")
        L.emit("    break")
        # p_1 = p_0 + h (L*_q + dL*_q[de]) from the last residual's values (module docstring)
        for s_, e in subs:
            if s_ in needP and s_ not in needR:
                L.emit(f"{s_} = {sp.pycode(e)}")
        for i in range(n):
            L.emit(f"p{i} = p{i} + {ptexts[i]}")
        for i in range(n):
            L.emit(f"wk{i} = (u{i} - x{i}) * ih")
        for i in range(n):
            L.emit(f"x{i} = u{i}")
        for j in range(nh - 1, 0, -1):
            L.emit("; ".join(f"{hist[j][c]} = {hist[j - 1][c]}" for c in range(m)))
        L.emit("; ".join(f"{hist[0][c]} = u{c}" for c in range(m)))
        # ---- the node, where the state is saved
        L.emit("tosave -= 1")
        L.emit("if tosave == 0 or kstep == nsteps:")
        L.indent = 4
        self._emit_table(L, table)
        nsubs, nred = sp.cse(list(NR) + [e for row in NJ for e in row], symbols=sp.numbered_symbols("nr"),
                             optimizations="basic")
        nr_texts = [sp.pycode(e) for e in nred[:m]]
        nj_texts = [[sp.pycode(nred[m + r * m + c]) for c in range(m)] for r in range(m)]
        if affine:
            # the residual is affine in (v_1, lambda_1): one Newton step with its exact Jacobian (at q_1) lands on
            # the root from any start (round-off only); started from the interval's second-order guess
            for i in range(n):
                L.emit(f"y{i} = 1.5 * wk{i} - 0.5 * wp{i}")
            for c in range(k):
                L.emit(f"y{n + c} = 1.5 * u{n + c} - 0.5 * mp{c}")
            for s_, e in nsubs:
                L.emit(f"{s_} = {sp.pycode(e)}")
            for j in range(m):
                L.emit(f"r{j} = -({nr_texts[j]})")
            # the increment by straight-line elimination (no inverse: it is not kept); the pivoting inverse where a
            # pivot is small or a structural zero
            straight = self._solve(L, nj_texts, [f"r{j}" for j in range(m)], [f"de{j}" for j in range(m)])
            L.emit("ok = True")
            if straight:
                L.emit("if sing:")
                L.indent += 1
            for r in range(m):
                L.emit("; ".join(f"Jm[{r}, {c}] = {nj_texts[r][c]}" for c in range(m)))
            L.emit("ok = inverse(Jm, Jim)")
            for j in range(m):
                L.emit(f"de{j} = " + " + ".join(f"Jim[{j}, {c}]*r{c}" for c in range(m)))
            if straight:
                L.indent -= 1
            for j in range(m):
                L.emit(f"y{j} += de{j}")
            L.emit("iters += 1")
            L.emit("njac += 1")
            L.emit("ok = ok and math.isfinite(" + " + ".join(f"de{j}" for j in range(m)) + ")")
        else:
            L.emit("if nsolved >= 3:")
            for j in range(m):
                L.emit(f"    py{j} = 3.0 * {nhist[0][j]} - 3.0 * {nhist[1][j]} + {nhist[2][j]}")
            L.emit("else:")
            for i in range(n):
                L.emit(f"    py{i} = 1.5 * wk{i} - 0.5 * wp{i}")
            for c in range(k):
                L.emit(f"    py{n + c} = 1.5 * u{n + c} - 0.5 * mp{c}")
            nneedR = set()
            for e in nred[:m]:
                nneedR |= e.free_symbols
            for s_, e in reversed(nsubs):
                if s_ in nneedR:
                    nneedR |= e.free_symbols

            def node_residual(Lr):
                for s_, e in nsubs:
                    if s_ in nneedR:
                        Lr.emit(f"{s_} = {sp.pycode(e)}")
                return nr_texts

            def node_refresh(Lr):
                for s_, e in nsubs:
                    Lr.emit(f"{s_} = {sp.pycode(e)}")
                return nj_texts, nr_texts

            self._newton(L, y, [f"py{j}" for j in range(m)], node_residual, node_refresh, jn, "th_n", "fresh_n",
                         "TH_NODE")
        L.emit("if not ok:")
        L.emit("    done = kstep - 1")
        L.emit("    break")
        if not affine:
            for j in range(2, 0, -1):
                L.emit("; ".join(f"{nhist[j][c]} = {nhist[j - 1][c]}" for c in range(m)))
            L.emit("; ".join(f"{nhist[0][c]} = y{c}" for c in range(m)))
            L.emit("nsolved += 1")
        for i in range(n):
            L.emit(f"ys[jsave, b, {i}] = x{i}")
        for j in range(m):
            L.emit(f"ys[jsave, b, {n + j}] = y{j}")
        L.emit("jsave += 1")
        L.emit("tosave = save_every")
        L.indent = 3
        L.emit("else:")
        L.emit("    nsolved = 0")
        for i in range(n):
            L.emit(f"wp{i} = wk{i}")
        for c in range(k):
            L.emit(f"mp{c} = u{n + c}")
        L.indent = 1
        L.emit("return ys, done, iters, njac")
        return L.text()


def vakonomic_text(source, n, k, theta_refresh=None, degree=PREDICTOR_DEGREE):
    """(text, cst) of the generated dvak_mid loop for the expression ``source`` (module docstring)."""
    src = VakonomicSource(source, n, k, theta_refresh, degree)
    return src.text(), src.cst
