"""Polynomial Casimir functions of a Lie-Poisson structure.

F(m) is a Casimir iff {m_i, F} = sum_{j,k} C[i,j,k] m_k dF/dm_j = 0 for every i. The condition is
linear in the coefficients of F and maps homogeneous polynomials of degree d to degree d, so each
degree is a null-space problem on the monomials of that degree. It is solved exactly over the
rationals when every C[i,j,k] is a small rational (sympy's sparse DomainMatrix: the degree-4 system
of a 10-dimensional algebra is 7150 x 715 with ~1 % non-zero entries; every kept Casimir is checked
again in exact arithmetic, {m_i, F} = 0), otherwise in floating point (SVD) on the rows of a few
elements u that generate g as a Lie algebra only: {m_u, F} = {m_v, F} = 0 imply {m_[u,v], F} = 0 by
the Jacobi identity, so two random elements (a semisimple algebra) give the whole system's null space
at 2/n of its rows (the full system's residual is checked). Measured on 2 cores (CPU time, one BLAS
thread): so(5) and sp(4) 0.5 s (was 4-12 s with a dense rational matrix), in a random basis 0.3 s
with the problem built (benchmarks/build_time.py; was 20-30 s, then 1.0-1.1 s); the search runs on one BLAS thread when threadpoolctl is installed (:func:`_one_blas_thread`).
Candidates are kept only when they raise the rank of the Jacobian of the set found so far, so
products and other functions of earlier Casimirs are dropped. (Casimirs of the Lie-Poisson bracket
{F, G}(m) = sum_k m_k C[i,j,k] dF/dm_i dG/dm_j: Marsden and Ratiu (1999), *Introduction to Mechanics
and Symmetry*, 2nd ed., sections 10.7 and 14.7; Kozlov, lecture slides on servo-constraints, "Systems
on Lie groups".)
"""

from __future__ import annotations

import contextlib
import math
from fractions import Fraction
from collections.abc import Sequence
from itertools import combinations_with_replacement
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._lazy import lazy_module
from .errors import LieGroupsError
from .monomials import monomial_sum, monomial_tables
from .polynomial_text import polynomial_text

if TYPE_CHECKING:
    import sympy

sp = lazy_module("sympy")  # imported when Casimirs are derived, not when an algebra is built


class Casimir:
    """A polynomial Casimir F(m) = sum_t coeff_t m^alpha_t: ``expr`` is sympy in m1..mn (built on first
    access); call it or its ``grad`` on (..., n) arrays (numpy from the monomials, no sympy);
    ``terms`` is ((coefficient, exponents), ...) as floats."""

    def __init__(self, expr: sympy.Expr | None, symbols: Sequence[sympy.Symbol], degree: int,
                 terms: dict | None = None) -> None:
        self.symbols = tuple(symbols)
        self.degree = int(degree)
        n = len(self.symbols)
        if terms is None:   # from an expression: its monomials
            poly = sp.Poly(sp.expand(expr), *self.symbols)
            terms = dict(poly.terms())
            self._expr = poly.as_expr()
        else:               # {exponents: exact or float coefficient}; the expression is built when asked
            self._expr = None
        self._text = None
        self._exact = {tuple(int(e) for e in ex): c for ex, c in terms.items() if c != 0}
        ex = sorted(self._exact)
        self.terms = tuple((float(self._exact[e]), e) for e in ex)
        # the values and gradients from the monomials degree by degree (:func:`monomial_tables`)
        self._tables = monomial_tables([(e, c) for c, e in self.terms], n)
        self._values = monomial_tables([(e, c) for c, e in self.terms], n, grad=False)   # fewer monomials
        #: d when F(r m) = r^d F(m) (every monomial of degree d), else None
        degs = {sum(e) for _, e in self.terms}
        self.homogeneous_degree = degs.pop() if len(degs) == 1 else None

    @property
    def expr(self) -> sympy.Expr:
        """F as a sympy polynomial expression in the symbols (exact coefficients where found exactly)."""
        if self._expr is None:
            self._expr = sp.Poly.from_dict({e: sp.sympify(c) for e, c in self._exact.items()},
                                           *self.symbols).as_expr()
        return self._expr

    @property
    def text(self) -> str:
        """``str(self.expr)``, written from the terms without building the expression when the coefficients
        are Integers or Floats (:func:`liegroups.polynomial_text.polynomial_text`); kept once computed."""
        if self._text is None:
            names = [getattr(s, "name", None) or str(s) for s in self.symbols]   # .name: no printer
            t = None if self._expr is not None else polynomial_text(self._exact, names)
            self._text = t if t is not None else str(self.expr)
        return self._text

    @property
    def grad_exprs(self) -> tuple:
        """dF/dm_j as sympy expressions."""
        return tuple(sp.diff(self.expr, s) for s in self.symbols)

    def __call__(self, m: ArrayLike) -> NDArray[np.float64]:
        """F(m) for m of shape (..., n); returns shape (...) (:func:`monomial_sum`)."""
        m = np.asarray(m, dtype=float)
        cols = np.moveaxis(m, -1, 0)
        return monomial_sum(self._values, cols, False).reshape(m.shape[:-1])

    def grad(self, m: ArrayLike) -> NDArray[np.float64]:
        """Gradient dF/dm, shape (..., n) (:func:`monomial_sum`)."""
        m = np.asarray(m, dtype=float)
        cols = np.moveaxis(m, -1, 0)
        return np.moveaxis(monomial_sum(self._tables, cols, True).reshape((m.shape[-1],) + m.shape[:-1]), 0, -1)

    def __repr__(self):
        return f"Casimir({self.expr})"

    def __str__(self):
        return self.text


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


def _casimir_tensor(C, n, d):
    """The floating-point Casimir system of degree d as a dense array A3 (n, N, N) over the N monomials
    of degree d (in the order of :func:`_monomials`): A3[i] maps the coefficients of F to those of
    {m_i, F} = sum_{j,k} C[i,j,k] m_k dF/dm_j (vectorised :func:`_casimir_system`)."""
    monos = _monomials(n, d)
    N = len(monos)
    E = np.zeros((N, n), dtype=np.int64)
    for r, mono in enumerate(monos):
        for j in mono:
            E[r, j] += 1
    base = (d + 1) ** np.arange(n)
    keys = E @ base
    order = np.argsort(keys)
    col, j = np.nonzero(E)                                    # d m^alpha / d m_j = alpha_j m^(alpha - e_j)
    tgt = (keys[col] - base[j])[:, None] + base[None, :]       # (pairs, k): alpha - e_j + e_k
    tgt = order[np.searchsorted(keys[order], tgt)]
    A3 = np.zeros((n, N, N))
    w = C[:, j, :] * E[col, j][None, :, None]                  # (i, pairs, k)
    np.add.at(A3, (np.arange(n)[:, None, None], tgt[None, :, :], col[None, :, None]), w)
    return monos, A3


def _nullspace(monos, rows, exact, gens=None):
    """A basis of the null space of the system ``rows`` ({(i, row monomial): {column: value}}), as lists
    of coefficients over ``monos``: exactly (sympy's sparse reduced row echelon form over QQ, its
    canonical basis) when ``exact``, else from the thin SVD (singular values below 1e-9 s_max),
    brought to reduced row echelon form and rounded to 12 digits; ``gens`` (k, n): elements generating g
    (:func:`_generators`), whose rows are enough in floating point."""
    from sympy.polys.domains import QQ
    from sympy.polys.matrices import DomainMatrix
    from sympy.polys.matrices.sdm import SDM

    ncol = len(monos)
    if exact:
        keys = sorted(rows)   # sparse: the degree-4 system of a 10-dimensional algebra has 7150 x 715 entries, ~1% non-zero
        data = {}
        for r, key in enumerate(keys):
            row = {col: QQ(v.numerator, v.denominator) for col, v in rows[key].items() if v != 0}
            if row:
                data[r] = row
        M = DomainMatrix.from_rep(SDM(data, (max(len(keys), 1), ncol), QQ))
        ns = M.nullspace().to_list()
        return [[Fraction(int(v.numerator), int(v.denominator)) for v in row] for row in ns]
    # floating point: {m_u, F} = 0 for u in a set that generates g as a Lie algebra implies it for all of g
    # ({m_[u,v], F} = {m_u, {m_v, F}} - {m_v, {m_u, F}}, Jacobi), so the null space of the rows of a few
    # combinations sum_i u_i {m_i, .} is the Casimir system's: 2 rows-blocks for a semisimple algebra, not n
    A3 = rows
    n = A3.shape[0]
    full = A3.reshape(n * ncol, ncol)
    A = np.einsum("gi,irc->grc", gens, A3).reshape(len(gens) * ncol, ncol)
    _, s, vt = np.linalg.svd(A, full_matrices=A.shape[0] < ncol)
    tol = 1e-9 * max(1.0, s[0] if s.size else 1.0)
    rank = int(np.sum(s > tol))
    basis = vt[rank:]
    if basis.shape[0] and np.max(np.abs(full @ basis.T)) > 1e-8 * max(1.0, float(np.max(np.abs(full)))):
        _, s, vt = np.linalg.svd(full, full_matrices=full.shape[0] < ncol)   # (not expected: the whole system)
        rank = int(np.sum(s > 1e-9 * max(1.0, s[0] if s.size else 1.0)))
        basis = vt[rank:]
    # reduced row echelon form for readable expressions
    if basis.shape[0]:
        Q, R, P = _rref_float(basis)
        basis = R
    return [[round(float(v), 12) if abs(v) > 1e-12 else 0 for v in row] for row in basis]


def _generators(C, rng):
    """Random elements (k, n) that generate the Lie algebra of structure constants C (the span of them
    and of their iterated brackets is g; k = 2 for a semisimple algebra, up to n for an abelian one)."""
    n = C.shape[0]
    scale = max(1.0, float(np.max(np.abs(C))))
    gens = []
    while True:
        gens.append(rng.standard_normal(n))
        span = np.array(gens)
        while True:
            br = np.einsum("ai,bj,ijk->abk", span, span, C).reshape(-1, n)
            M = np.vstack([span, br])
            u, sv, vt = np.linalg.svd(M, full_matrices=False)
            r = int(np.sum(sv > 1e-10 * scale * max(1.0, sv[0])))
            if r == len(span):
                break
            span = vt[:r]
        if len(span) == n:
            return np.array(gens)


def _residual_zero(vec, rows):
    """True when the coefficients ``vec`` (Fractions) solve the system ``rows`` exactly: {m_i, F} = 0."""
    return all(sum((v * vec[col] for col, v in row.items()), Fraction(0)) == 0 for row in rows.values())


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


def _one_blas_thread():
    """A context in which BLAS runs on one thread (threadpoolctl, the optional extra ``threads``), else a
    no-op. The SVDs of the search are a few hundred columns wide: threads gain little on an idle machine,
    and on a loaded one OpenBLAS's spinning threads oversubscribe the cores (so(5) in a random basis, load
    ~3 on 2 cores: 20 s of CPU for the search against 0.6 s with one thread)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def find_casimirs(algebra, max_degree=4):
    """Independent polynomial Casimirs of ``algebra`` of degree 1..max_degree (see module docstring); BLAS on
    one thread meanwhile when threadpoolctl is installed (:func:`_one_blas_thread`)."""
    with _one_blas_thread():
        return _find_casimirs(algebra, max_degree)


def _find_casimirs(algebra, max_degree):
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
    gens = None if exact else _generators(np.asarray(C, dtype=float), rng)
    for d in range(1, max_degree + 1):
        if len(found) >= found.expected:
            break
        monos, rows = _casimir_system(Cuse, n, d, exact) if exact else _casimir_tensor(C, n, d)
        exps = [tuple(int(c) for c in np.bincount(np.array(mono, dtype=int), minlength=n)) if d else (0,) * n
                for mono in monos]
        for vec in _nullspace(monos, rows, exact, gens):
            if all(c == 0 for c in vec):
                continue
            grad = (lambda p, vec=vec, monos=monos: _poly_grad(vec, monos, p))
            if _jac_rank(grads + [grad], points) > len(grads):
                if exact:   # integer coefficients with gcd 1, checked exactly: {m_i, F} = 0 for every i
                    if not _residual_zero(vec, rows):
                        raise LieGroupsError(f"{algebra.name}: a degree-{d} null vector of the Casimir system "
                                             f"does not solve it exactly (internal error)")
                    den = math.lcm(1, *[c.denominator for c in vec if c != 0])
                    num = math.gcd(0, *[int(c * den) for c in vec if c != 0])
                    terms = {e: sp.Integer(int(c * den) // num) for c, e in zip(vec, exps) if c != 0}
                else:
                    terms = {e: sp.Float(c) for c, e in zip(vec, exps) if c != 0}
                if terms[max(terms)] < 0:   # the leading coefficient (lex order, m1 > m2 > ...) positive
                    terms = {e: -c for e, c in terms.items()}
                grads.append(grad)
                found.append(Casimir(None, syms, d, terms=terms))
                if len(found) >= found.expected:
                    break
    if len(found) < found.expected:
        found.warning = (
            f"{algebra.name}: found {len(found)} polynomial Casimir(s) up to degree {max_degree}, "
            f"but n - generic rank of the Poisson tensor is {found.expected}; the others are not "
            f"polynomial of degree <= {max_degree} (they may be rational or transcendental)"
        )
    return found
