"""Polynomial Casimir functions of a Lie-Poisson structure.

F(m) is a Casimir iff {m_i, F} = sum_{j,k} C[i,j,k] m_k dF/dm_j = 0 for every i. The condition is
linear in the coefficients of F and maps homogeneous polynomials of degree d to degree d, so each
degree is a null-space problem on the monomials of that degree. It is solved exactly over the
rationals (sympy DomainMatrix) when every C[i,j,k] is a small rational, otherwise in floating point
(SVD). Candidates are kept only when they raise the rank of the Jacobian of the set found so far, so
products and other functions of earlier Casimirs are dropped. (Casimirs of the Lie-Poisson bracket
{F, G}(m) = sum_k m_k C[i,j,k] dF/dm_i dG/dm_j: Marsden and Ratiu (1999), *Introduction to Mechanics
and Symmetry*, 2nd ed., sections 10.7 and 14.7; Kozlov, lecture slides on servo-constraints, "Systems
on Lie groups".)
"""

from __future__ import annotations

from fractions import Fraction
from collections.abc import Sequence
from itertools import combinations_with_replacement
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._lazy import lazy_module

if TYPE_CHECKING:
    import sympy

sp = lazy_module("sympy")  # imported when Casimirs are derived, not when an algebra is built


#: a Casimir with more terms than this is evaluated by :func:`monomial_sum` (a fixed ~n D + 3 array
#: operations) instead of its lambdified expression (~3-4 array operations a term). Measured (timeit): the
#: quadratic Casimirs of so(3), se(3), so(4) (3-6 terms) take 3-9 us lambdified against 10-25 us by
#: monomials; the quartic of so(5) in a random basis (~700 terms) 18-25 ms against 1.5 ms.
MONOMIAL_TERMS = 40


class Casimir:
    """A polynomial Casimir F(m): ``expr`` is sympy in m1..mn; call it or its ``grad`` on (..., n) arrays."""

    def __init__(self, expr: sympy.Expr, symbols: Sequence[sympy.Symbol], degree: int) -> None:
        self.expr = sp.expand(expr)
        self.symbols = tuple(symbols)
        self.degree = int(degree)
        self._f = sp.lambdify([self.symbols], self.expr, "numpy")
        self._tables = None
        try:  # polynomial differentiation is much faster than sympy.diff on float coefficients
            poly = sp.Poly(self.expr, *self.symbols)
            self.grad_exprs = tuple(poly.diff(s).as_expr() for s in self.symbols)
            if len(poly.terms()) > MONOMIAL_TERMS and all(c.is_number for c in poly.coeffs()):
                self._tables = monomial_tables([(tuple(int(e) for e in ex), float(c)) for ex, c in poly.terms()],
                                                len(self.symbols))
        except sp.PolynomialError:
            self.grad_exprs = tuple(sp.diff(self.expr, s) for s in self.symbols)
        self._g = sp.lambdify([self.symbols], list(self.grad_exprs), "numpy")  # one call for all partials

    def __call__(self, m: ArrayLike) -> NDArray[np.float64]:
        """F(m) for m of shape (..., n); returns shape (...)."""
        m = np.asarray(m, dtype=float)
        cols = np.moveaxis(m, -1, 0)
        if self._tables is not None:
            return monomial_sum(self._tables, cols, False).reshape(m.shape[:-1])
        return np.broadcast_to(np.asarray(self._f(cols), dtype=float), m.shape[:-1]).copy()

    def grad(self, m: ArrayLike) -> NDArray[np.float64]:
        """Gradient dF/dm, shape (..., n)."""
        m = np.asarray(m, dtype=float)
        cols = np.moveaxis(m, -1, 0)
        if self._tables is not None:
            return np.moveaxis(monomial_sum(self._tables, cols, True).reshape((m.shape[-1],) + m.shape[:-1]), 0, -1)
        return np.stack([np.broadcast_to(np.asarray(g, dtype=float), m.shape[:-1]) for g in self._g(cols)], -1)

    def __repr__(self):
        return f"Casimir({self.expr})"

    def __str__(self):
        return str(self.expr)


def monomial_tables(terms, n):
    """For a polynomial sum c_e m^e (``terms``: (exponents, c); or a list of such lists, several
    polynomials on the same monomials) of degree D: every monomial of degree <= D,
    degree by degree, each degree's ordered by its last variable j, so that the monomials of degree d with
    last variable j are those of degree d - 1 with last variable <= j (a prefix of that degree's rows)
    times m_j; as (rows, parent prefix) slices per (d, j); the monomials below degree D are what the
    values and gradients read (their number ``low``): the gradients' coefficient rows G (p n, low; row
    k n + j: d/dm_j of polynomial k), and the values as P_k(m) = c_k + sum_j m_j H_kj(m), each term
    c m^e written as m_j (c m^(e - e_j)) with j its last variable (rows H (p n, low), constants c (p, 1)):
    the top degree's monomials are never formed."""
    polys = [terms] if not terms or isinstance(terms[0][0][0], (int, np.integer)) else list(terms)
    D = max((sum(ex) for poly in polys for ex, _ in poly), default=0)
    order, blocks = [(0,) * n], []
    prev, prev_last = [(0,) * n], [-1]
    low = 1
    for _ in range(D):
        low = len(order)          # the monomials below the top degree: the rows the gradients read
        cur, cur_last = [], []
        start = len(order)
        for j in range(n):
            stop = sum(1 for lv in prev_last if lv <= j)      # parents with last variable <= j: a prefix
            rows = [ex[:j] + (ex[j] + 1,) + ex[j + 1:] for ex in prev[:stop]]
            blocks.append((len(order) + len(cur), len(order) + len(cur) + len(rows), start - len(prev),
                           start - len(prev) + stop, j))
            cur += rows
            cur_last += [j] * len(rows)
        order += cur
        prev, prev_last = cur, cur_last
    index = {e: i for i, e in enumerate(order)}
    p = len(polys)
    H, G, const = np.zeros((p * n, low)), np.zeros((p * n, low)), np.zeros((p, 1))
    for k, poly in enumerate(polys):
        for ex, c in poly:
            if not any(ex):
                const[k, 0] += c
                continue
            last = max(i for i, e in enumerate(ex) if e)      # c m^e = m_last (c m^(e - e_last))
            H[k * n + last, index[ex[:last] + (ex[last] - 1,) + ex[last + 1:]]] += c
            for j in range(n):
                if ex[j]:
                    G[k * n + j, index[ex[:j] + (ex[j] - 1,) + ex[j + 1:]]] += c * ex[j]
    return blocks, H, G, const, low


def monomial_sum(tables, cols, grad):
    """The values (p, N) or gradients (p n, N) of the polynomials of ``tables`` (:func:`monomial_tables`) at the
    points whose coordinates are ``cols`` (n, ...): the monomials below the top degree, those of degree d
    with last variable j as one product of a block of rows of degree d - 1 and the row of m_j (n array
    operations a degree), then one matrix product with the coefficients (:func:`monomial_tables`), in
    chunks of points. The quartic Casimir of so(5) in a random basis (~700 terms) at 1001 points: value
    1.5 ms, gradient 1.2 ms, against 20-25 and 28-39 ms for the lambdified expanded expression (~4 array
    operations a term; timeit, load ~10 on 2 cores)."""
    blocks, H, G, const, low = tables
    flat = np.asarray(cols, dtype=float).reshape(len(cols), -1)
    n, p = flat.shape[0], const.shape[0]
    out = np.empty((p * n if grad else p, flat.shape[1]))
    width = max(16, _MONOMIAL_FLOATS // low)
    mon = np.empty((low, min(width, flat.shape[1])))
    for a in range(0, flat.shape[1], width):
        f = flat[:, a:a + width]
        m = mon[:, :f.shape[1]]
        m[0] = 1.0
        for c0, c1, p0, p1, j in blocks:
            if c0 < c1 <= low:
                np.multiply(m[p0:p1], f[j], out=m[c0:c1])
        if grad:
            out[:, a:a + width] = G @ m
        else:
            out[:, a:a + width] = const + np.einsum("kjw,jw->kw", (H @ m).reshape(p, n, -1), f)
    return out


#: the monomials of one chunk of points in :func:`monomial_sum` (floats; 2 MB)
_MONOMIAL_FLOATS = 1 << 18


class CasimirList(list["Casimir"]):
    """A list of :class:`Casimir` with ``expected`` (n - generic rank of Pi) and ``warning`` (or None)."""

    expected: int = 0
    warning: str | None = None
    max_degree: int = 0


def _rational(C, max_den=1000):
    out = np.empty(C.shape, dtype=object)
    for idx, v in np.ndenumerate(C):
        f = Fraction(v).limit_denominator(max_den)
        if abs(float(f) - v) > 1e-12 * max(1.0, abs(v)):
            return None
        out[idx] = f
    return out


def m_symbols(n: int) -> tuple[sympy.Symbol, ...]:
    """The sympy symbols m1..mn used for momenta in g*."""
    return sp.symbols(f"m1:{n + 1}", real=True)


def _monomials(n, d):
    return list(combinations_with_replacement(range(n), d))


def _casimir_system(C, n, d, exact):
    """Matrix of the linear map coefficients(F) -> coefficients of {m_i, F}, over monomials of degree d."""
    monos = _monomials(n, d)
    index = {mono: r for r, mono in enumerate(monos)}
    rows = {}
    # {m_i, m^alpha} = sum_{j,k} C[i,j,k] m_k d(m^alpha)/dm_j
    for col, mono in enumerate(monos):
        counts = np.bincount(np.array(mono, dtype=int), minlength=n) if d else np.zeros(n, dtype=int)
        for j in range(n):
            if counts[j] == 0:
                continue
            rest = list(mono)
            rest.remove(j)
            for i in range(n):
                for k in range(n):
                    c = C[i, j, k]
                    if c == 0:
                        continue
                    target = tuple(sorted(rest + [k]))
                    key = (i, index[target])
                    rows.setdefault(key, {})
                    rows[key][col] = rows[key].get(col, 0) + c * int(counts[j])
    return monos, rows


def _nullspace(monos, rows, exact):
    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix

    ncol = len(monos)
    keys = sorted(rows)
    if exact:
        data = [[QQ(0)] * ncol for _ in keys] or [[QQ(0)] * ncol]
        for r, key in enumerate(keys):
            for col, v in rows[key].items():
                data[r][col] = QQ(v.numerator, v.denominator)
        M = DomainMatrix(data, (len(data), ncol), QQ)
        ns = M.nullspace().to_Matrix()
        return [list(ns.row(i)) for i in range(ns.rows)]
    A = np.zeros((max(len(keys), 1), ncol))
    for r, key in enumerate(keys):
        for col, v in rows[key].items():
            A[r, col] = v
    u, s, vt = np.linalg.svd(A)
    tol = 1e-9 * max(1.0, s[0] if s.size else 1.0)
    rank = int(np.sum(s > tol))
    basis = vt[rank:]
    # reduced row echelon form for readable expressions
    if basis.shape[0]:
        Q, R, P = _rref_float(basis)
        basis = R
    return [[sp.Float(round(v, 12)) if abs(v) > 1e-12 else 0 for v in row] for row in basis]


def _rref_float(B):
    B = B.copy()
    r = 0
    pivots = []
    for c in range(B.shape[1]):
        if r >= B.shape[0]:
            break
        p = r + int(np.argmax(np.abs(B[r:, c])))
        if abs(B[p, c]) < 1e-9:
            continue
        B[[r, p]] = B[[p, r]]
        B[r] /= B[r, c]
        for q in range(B.shape[0]):
            if q != r:
                B[q] -= B[q, c] * B[r]
        pivots.append(c)
        r += 1
    return None, B[:r], pivots


def _poly_grad(coeffs, monos, p):
    """Gradient at the point p of sum_a coeffs[a] m^monos[a] (monomials as index tuples), numerically."""
    g = np.zeros(len(p))
    for c, mono in zip(coeffs, monos):
        if c == 0:
            continue
        for pos, j in enumerate(mono):  # d m^alpha / dm_j = alpha_j m^(alpha - e_j): one term per factor
            g[j] += float(c) * float(np.prod(p[list(mono[:pos] + mono[pos + 1:])]))
    return g


def _jac_rank(grads, points):
    """Generic rank of the Jacobian of the polynomials whose gradients (callables of p) are given."""
    if not grads:
        return 0
    ranks = []
    for p in points:
        J = np.array([gr(p) for gr in grads])
        s = np.linalg.svd(J, compute_uv=False)
        ranks.append(int(np.sum(s > 1e-8 * max(s[0], 1e-300))))
    return max(ranks)


def find_casimirs(algebra, max_degree=4):
    """Independent polynomial Casimirs of ``algebra`` of degree 1..max_degree (see module docstring)."""
    C = algebra.structure_constants
    n = algebra.dim
    Cq = _rational(C)
    exact = Cq is not None
    Cuse = Cq if exact else C
    syms = m_symbols(n)
    rng = np.random.default_rng(12345)
    points = [rng.standard_normal(n) for _ in range(3)]
    found = CasimirList()
    found.expected = algebra.expected_casimir_count()
    found.max_degree = max_degree
    grads = []
    for d in range(1, max_degree + 1):
        if len(found) >= found.expected:
            break
        monos, rows = _casimir_system(Cuse, n, d, exact)
        for vec in _nullspace(monos, rows, exact):
            if all(c == 0 for c in vec):
                continue
            grad = (lambda p, vec=vec, monos=monos: _poly_grad(vec, monos, p))
            if _jac_rank(grads + [grad], points) > len(grads):
                expr = sum(c * sp.Mul(*[syms[i] for i in mono]) for c, mono in zip(vec, monos) if c != 0)
                # normalise: make the leading coefficient positive and integer where exact
                expr = sp.expand(expr)
                if exact:
                    coeffs = [sp.Rational(c) for c in vec if c != 0]
                    den = sp.ilcm(1, *[c.q for c in coeffs])
                    num = sp.igcd(0, *[(c * den).p for c in coeffs])
                    expr = sp.expand(expr * den / num)
                lead = sp.Poly(expr, *syms).coeffs()[0]
                if lead < 0:
                    expr = -expr
                grads.append(grad)
                found.append(Casimir(expr, syms, d))
                if len(found) >= found.expected:
                    break
    if len(found) < found.expected:
        found.warning = (
            f"{algebra.name}: found {len(found)} polynomial Casimir(s) up to degree {max_degree}, "
            f"but n - generic rank of the Poisson tensor is {found.expected}; the others are not "
            f"polynomial of degree <= {max_degree} (they may be rational or transcendental)"
        )
    return found
