"""Straight-line code generated from the data of a problem and the tableau of a method.

The generic steppers (:mod:`integrators.stepping` over :mod:`integrators.spaces`) spend nearly all
their time in numpy call overhead on arrays of 3..10 numbers. Here the structure of a problem is
recognised from its data, not from names:

* the velocity map is probed at 0, at the unit vectors and at random points; when w(z) = W z + c
  (affine: every Euler-Poincare system, servo-constraints of the second kind, the heavy top with its
  linear term c) the matrix W and the vector c are read off and checked;
* a forcing is accepted when it is the multiplier force of linear invariants L (p, n) and a fixed
  span B: f(z) = -B (L B)^-1 L ad*_{w(z)} z = -P ad*_{w(z)} z (servo-constraints of the first kind,
  Suslov's problem), found by probing f and checked at random points;
* the exponential is the closed form of so(3) (Rodrigues) or se(3) (Ad^T of exp(omega, v)) when the
  structure constants are those of so(3) / se(3) in the documented basis (compared entrywise, so
  any algebra built with the same constants gets it, whatever its name), otherwise a Taylor series of the action
  exp(A) z = sum_k A^k z / k!, A = ad(x)^T, on A / s with ||A / s||_1 <= 1/2 (s substeps), with as
  many terms as the bound of ||A|| from x and the norms of ad(e_i) needs for a truncation below
  2^-54 |z| (Al-Mohy and Higham 2011, "Computing the action of the matrix exponential").

From this and an explicit tableau (A, b, c, optional error vectors) the source of one step is written
out component by component: only the non-zero entries of C, W and the tableau appear, every
component is a separate variable, and the same source runs on Python floats (one trajectory: no
numpy call at all), on numpy arrays of shape (B,) (an ensemble: one ufunc call per term) and, jitted
by numba, as compiled code. Functions are cached per (structure, method, mode).

Lie-group (RKMK) steps: K_i = h dexpinv_{theta_i}(w(exp(theta_i) . z)), theta_i = sum_j a_ij K_j,
theta = sum_i b_i K_i, z1 = exp(ad theta)^T z (Munthe-Kaas 1999), dexp^-1 as the Bernoulli series
with the matching bracket -[x, y] (x -> ad*_x is an anti-homomorphism), truncated after the
method's number of terms.

Both series are polynomials in one operator (A = -ad_x for dexp^-1, B = ad(x)^T for the Taylor
action), and ad_x obeys a relation A^d = sum_{j<d} c_j(x) A^j whose coefficients are ad-invariant
polynomials of x (Cayley-Hamilton: the characteristic polynomial of ad_x is invariant), found from
C by :func:`ad_relation` as polynomials in the invariant linear and quadratic forms (d = 3 on the
3-dimensional simple algebras and se(2), 5 on so(4) and se(3), 2 on the Heisenberg algebra). The
generated code then folds every power A^k, k >= d, into A^0..A^(d-1): the series costs d - 1
brackets and a few scalars whatever its number of terms (9 terms of dexp^-1 for rkmk853: 4
brackets on so(4), se(3) instead of 8), and the Taylor action of an algebra without a closed form
costs d - 1 coadjoint products per substep with its m terms summed by a scalar recurrence. These
are the same polynomials in A and B as the plain series, so the generated code still agrees with
the generic reference to round-off. Ambient Runge-Kutta steps: K_i = h F(z + sum_j a_ij K_j). The increment z1 - z is computed
without cancellation and added with Kahan's compensated summation (Hairer, McLachlan and
Razakarivony 2008), so the round-off of the Casimirs walks like eps h sqrt(N), not eps sqrt(N).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from liegroups.casimirs import _rref_float
from liegroups.closed_forms import bernoulli_coefficients, closed_form_kind

from . import genhelpers, numba_kernels

#: a Taylor term below this fraction of |z|_1 ends the series of the generic exponential
TAYLOR_STOP = 2.0 ** -54
#: the generic exponential takes s substeps with ||ad(x)^T / s||_1 <= TAYLOR_RADIUS
TAYLOR_RADIUS = 0.5

_CACHE = {}
#: NaN in generated code (inf * 0, folded by the compiler)
_NAN = "(1e308*1e308*0.0)"


# ----------------------------------------------------------------------------- recognition
class Structure:
    """The data the generated code is written from.

    kind "coadjoint": z' = (I - P) ad*_{W z + c} z on g* with structure constants C (P = None: no
    forcing). ``closed`` is "so3", "se3" or None (generic Taylor exponential).
    """

    def __init__(self, C, W, c, P=None, closed=None):
        self.C = np.asarray(C, dtype=float)
        self.n = self.C.shape[0]
        self.W = np.asarray(W, dtype=float)
        self.c = np.asarray(c, dtype=float)
        self.P = None if P is None else np.asarray(P, dtype=float)
        self.closed = closed
        parts = [self.C, self.W, self.c] + ([] if P is None else [self.P])
        self.key = (closed, self.n) + tuple(p.tobytes() for p in parts)
        # ||ad(e_i)^T||_1 (largest column sum): ||ad(x)^T||_1 <= sum_i |x_i| norms[i]
        self.norms = np.array([np.max(np.sum(np.abs(self.C[i]), axis=1)) if self.n else 0.0
                               for i in range(self.n)])


def closed_form(C):
    """"so3" or "se3" when C equals the structure constants of so(3) / se(3) in the documented basis
    (:func:`liegroups.closed_forms.closed_form_kind`), else None (se(2) takes the Taylor series)."""
    kind = closed_form_kind(C)
    return kind if kind in ("so3", "se3") else None


def _probes(y0, n, k=3, seed=12345):
    rng = np.random.default_rng(seed)
    y = np.asarray(y0, dtype=float).reshape(-1, n)[:4]
    scale = max(1.0, float(np.max(np.abs(y)))) if y.size else 1.0
    return np.concatenate([y, scale * rng.standard_normal((k, n))], axis=0)


def affine_velocity(velocity, n, y0):
    """(W, c) with velocity(z) = W z + c, read off at 0 and the unit vectors and checked at y0 and
    random points (relative 1e-12); None when the velocity is not affine (or not batched)."""
    basis = np.concatenate([np.zeros((1, n)), np.eye(n)], axis=0)
    try:
        with np.errstate(all="ignore"):
            v = np.asarray(velocity(basis), dtype=float)
            Z = _probes(y0, n)
            vz = np.asarray(velocity(Z), dtype=float)
    except Exception:  # noqa: BLE001 - a velocity that does not take a batch has no fast path
        return None
    if v.shape != (n + 1, n) or vz.shape != Z.shape or not np.all(np.isfinite(v)):
        return None
    c = v[0]
    W = (v[1:] - c).T
    pred = Z @ W.T + c
    if not np.all(np.abs(vz - pred) <= 1e-12 * (1.0 + np.abs(pred) + np.max(np.abs(W)) * np.abs(Z).max())):
        return None
    return W, c


def multiplier_projector(problem, W, c, y0):
    """P with forcing(z) = -P ad*_{W z + c} z for every z (multiplier force of the linear invariants
    L: P = B (L B)^-1 L with B spanning the forcing), or None when the forcing is not of this form."""
    L = getattr(problem, "linear_invariants", None)
    if L is None:
        return None
    n = problem.dim
    Z = _probes(y0, n, k=n + 3, seed=777)
    try:
        with np.errstate(all="ignore"):
            F = np.asarray(problem.forcing(Z), dtype=float)
            G = problem.algebra.coad(Z @ W.T + c, Z)
    except Exception:  # noqa: BLE001
        return None
    if F.shape != Z.shape or not np.all(np.isfinite(F)):
        return None
    p = L.shape[0]
    U, s, _ = np.linalg.svd(F.T)
    if s.size < p or s[0] == 0.0 or (s.size > p and s[p] > 1e-10 * s[0]):
        return None
    B = U[:, :p]
    LB = L @ B
    if abs(np.linalg.det(LB)) < 1e-12 * np.linalg.norm(L) ** p:
        return None
    P = B @ np.linalg.solve(LB, L)
    pred = -G @ P.T
    if not np.all(np.abs(F - pred) <= 1e-10 * (1.0 + np.abs(G).max())):
        return None
    return P


def recognise(problem, y0):
    """The :class:`Structure` of a coadjoint problem, or None when it has none the generator knows."""
    if getattr(problem, "kind", None) != "coadjoint":
        return None
    n = problem.dim
    if n > 12:
        return None
    Wc = affine_velocity(problem.velocity, n, y0)
    if Wc is None:
        return None
    W, c = Wc
    P = None
    if problem.forcing is not None:
        P = multiplier_projector(problem, W, c, y0)
        if P is None:
            return None
    C = problem.algebra.structure_constants
    return Structure(C, W, c, P, closed_form(C))


# ----------------------------------------------------------------------------- relation of ad
_RELATIONS = {}


def invariant_forms(C, tol=1e-10):
    """(linear, quadratic): the linear forms f with f([x, y]) = 0 (rows) and the symmetric forms Q with
    Q([z, x], y) + Q(x, [z, y]) = 0 (ad-invariant), bases of the null spaces in reduced row echelon
    form (sparse in a sparse basis)."""
    C = np.asarray(C, dtype=float)
    n = C.shape[0]
    scale = max(1.0, float(np.max(np.abs(C)))) if C.size else 1.0
    lin_forms = _null_rows(C.reshape(n * n, n), tol * scale)
    iu = [(a, b) for a in range(n) for b in range(a, n)]
    cols = []
    for a, b in iu:  # Q = E_ab + E_ba: T[i, j, k] = sum_l C[i, j, l] Q[l, k] + C[i, k, l] Q[j, l]
        Q = np.zeros((n, n))
        Q[a, b] = Q[b, a] = 1.0
        cols.append((np.einsum("ijl,lk->ijk", C, Q) + np.einsum("ikl,jl->ijk", C, Q)).ravel())
    # quadratic forms not in the span of products of linear ones (those are monomials already)
    span = [np.array([0.5 * (f[a] * g[b] + f[b] * g[a]) for a, b in iu]) for f in lin_forms for g in lin_forms]
    quad = []
    for row in _null_rows(np.array(cols).T, tol * scale):
        if span:
            S = np.array(span)
            coef, *_ = np.linalg.lstsq(S.T, row, rcond=None)
            if np.max(np.abs(S.T @ coef - row)) <= 1e-10 * np.max(np.abs(row)):
                continue
        span.append(row)
        Q = np.zeros((n, n))
        for (a, b), v in zip(iu, row):
            Q[a, b] = Q[b, a] = v
        quad.append(Q)
    return lin_forms, quad


def _null_rows(M, tol):
    """A basis of {x: M x = 0} as rows in reduced row echelon form, entries below 1e-13 set to 0."""
    if M.shape[1] == 0:
        return np.zeros((0, 0))
    _, s, Vt = np.linalg.svd(M, full_matrices=True)
    rank = int(np.sum(s > tol))
    _, N, _ = _rref_float(Vt[rank:])  # Gauss-Jordan with partial pivoting
    N[np.abs(N) < 1e-13] = 0.0
    return np.vectorize(_snap)(N) if N.size else N


def _snap(a):
    """a, or the rational p/q (q <= 1000) within 1e-13 |a| of it (a fitted coefficient such as
    -1.0000000000000004 becomes -1)."""
    if a == 0.0:
        return 0.0
    f = Fraction(a).limit_denominator(1000)
    return float(f) if abs(float(f) - a) <= 1e-13 * abs(a) else a


def _pmul(p, q):
    """Product of polynomials {sorted tuple of generator indices: coefficient}."""
    out = {}
    for m1, a in p.items():
        for m2, b in q.items():
            m = tuple(sorted(m1 + m2))
            out[m] = out.get(m, 0.0) + a * b
    return out


def _padd(p, q):
    out = dict(p)
    for m, b in q.items():
        out[m] = out.get(m, 0.0) + b
    return out


def _monomials(degs, e, start=0):
    """Tuples of generator indices (non-decreasing) whose degrees sum to e."""
    if e == 0:
        return [()]
    out = []
    for i in range(start, len(degs)):
        if degs[i] <= e:
            out += [(i,) + m for m in _monomials(degs, e - degs[i], i)]
    return out


def ad_relation(C, dmax, samples=40, seed=2024):
    """(d, gens, poly) with A^d = sum_{j<d} c_j(x) A^j for A = -ad_x and every x (d <= dmax, the
    smallest such d), c_j a polynomial in the invariant linear and quadratic forms of the algebra
    (:func:`invariant_forms`): gens = [(1, f) or (2, Q)], poly = {j: [(generators, coefficient)]};
    None when there is none. The coefficients of the characteristic polynomial of ad_x are
    ad-invariant polynomials of x (Cayley-Hamilton), e.g. ad_x^3 = -|x|^2 ad_x on so(3),
    ad^5 = -(|a|^2 + |b|^2) ad^3 - |a|^2 |b|^2 ad on so(4) = so(3) + so(3) and
    ad^5 = -2|w|^2 ad^3 - |w|^4 ad on se(3); found by least squares at random x and accepted when it
    holds to 1e-10 at other random x (relative to |A^d|)."""
    C = np.asarray(C, dtype=float)
    key = (C.tobytes(), C.shape)
    if key not in _RELATIONS:  # the smallest d <= n (Cayley-Hamilton gives d = n when any)
        _RELATIONS[key] = _find_relation(C, C.shape[0], samples, seed)
    out = _RELATIONS[key]
    return out if out is not None and out[0] <= dmax else None


def _find_relation(C, dmax, samples, seed):
    n = C.shape[0]
    L, Qs = invariant_forms(C)
    gens = [(1, f) for f in L] + [(2, Q) for Q in Qs]
    degs = [k for k, _ in gens]
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((2 * samples, n))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    A = -np.einsum("si,ijk->skj", X, C)
    G = np.array([[x @ f if k == 1 else x @ f @ x for k, f in gens] for x in X]).reshape(2 * samples, len(gens))
    powers = [np.broadcast_to(np.eye(n), A.shape)]
    for d in range(1, dmax + 1):
        powers.append(powers[-1] @ A)
        cols, labels = [], []
        for j in range(d):
            for mono in _monomials(degs, d - j):
                cols.append(np.prod(G[:, list(mono)], axis=1)[:, None, None] * powers[j])
                labels.append((j, mono))
            if len(cols) > 200:
                return None
        target = powers[d]
        if not cols:
            if np.max(np.abs(target)) <= 1e-12:
                return d, [], {}
            continue
        M = np.stack([c[:samples].ravel() for c in cols], axis=1)
        coef, *_ = np.linalg.lstsq(M, target[:samples].ravel(), rcond=1e-12)
        coef[np.abs(coef) < 1e-12 * max(1.0, np.max(np.abs(coef)))] = 0.0
        check = sum((a * c[samples:] for a, c in zip(coef, cols) if a != 0.0), np.zeros_like(target[samples:]))
        if np.max(np.abs(check - target[samples:])) <= 1e-10 * max(1.0, float(np.max(np.abs(target)))):
            used = sorted({i for (j, mono), a in zip(labels, coef) if a != 0.0 for i in mono})
            ren = {i: k for k, i in enumerate(used)}
            poly = {}
            for (j, mono), a in zip(labels, coef):
                if a != 0.0:
                    poly.setdefault(j, []).append((tuple(ren[i] for i in mono), _snap(float(a))))
            return d, [gens[i] for i in used], poly
    return None


# ----------------------------------------------------------------------------- source writing
def _num(c):
    return repr(float(c))


def lin(terms):
    """Source of sum c * v over (c, v) with c != 0 (1 and -1 written without a product); "0.0" if empty."""
    out = ""
    for c, v in terms:
        c = float(c)
        if c == 0.0:
            continue
        mag = abs(c)
        t = v if mag == 1.0 else f"{_num(mag)}*{v}"
        if not out:
            out = t if c > 0 else f"-{t}"
        else:
            out += f" + {t}" if c > 0 else f" - {t}"
    return out or "0.0"


class Source:
    """Accumulates the lines of one generated function; vectors are lists of variable names."""

    def __init__(self, st):
        self.st = st
        self.n = st.n
        self.lines = []
        self.count = 0
        self.indent = 1

    def emit(self, line):
        self.lines.append("    " * self.indent + line)

    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}_"

    def assign(self, prefix, exprs):
        base = self.fresh(prefix)
        names = [f"{base}{i}" for i in range(len(exprs))]
        for nm, e in zip(names, exprs):
            self.emit(f"{nm} = {e}")
        return names

    # ---------------------------------------------------------------- algebra
    def combo(self, prefix, pairs, scale=None):
        """scale * sum_j c_j V_j for pairs (c_j, V_j); None when every c_j vanishes."""
        pairs = [(float(c), V) for c, V in pairs if float(c) != 0.0]
        if not pairs:
            return None
        exprs = []
        for i in range(len(pairs[0][1])):
            e = lin([(c, V[i]) for c, V in pairs])
            exprs.append(e if scale is None else f"{scale}*({e})")
        return self.assign(prefix, exprs)

    def velocity(self, z, scale=None):
        """w = W z + c, or scale*(W z + c) (the same rounding as w, then scale*w)."""
        W, c = self.st.W, self.st.c
        exprs = [lin([(W[i, j], z[j]) for j in range(self.n)] + [(c[i], "1.0")]) for i in range(self.n)]
        return self.assign("w", exprs if scale is None else [f"{scale}*({e})" for e in exprs])

    def coad(self, x, m, prefix="g"):
        """(ad*_x m)_j = sum_{i,k} x_i C[i, j, k] m_k, from the non-zero entries of C."""
        C = self.st.C
        out = []
        for j in range(self.n):
            terms = [(C[i, j, k], f"{x[i]}*{m[k]}") for i in range(self.n) for k in range(self.n)
                     if C[i, j, k] != 0.0]
            out.append(lin(terms))
        return self.assign(prefix, out)

    def dense(self):
        """True when C has more non-zero entries than n^2 (a generic basis): then repeated products
        with the same x go through the matrix of ad(x)."""
        return int(np.count_nonzero(self.st.C)) > self.n * self.n

    def matrix(self, x, bracket=False):
        """Names of the entries of ad(x)^T, (A y)_j = (ad*_x y)_j = sum_{i,k} x_i C[i, j, k] y_k, or
        with ``bracket`` of -ad(x), (A y)_j = -[x, y]_j = -sum_{i,k} x_i y_k C[i, k, j]."""
        C, n = self.st.C, self.n
        rows = []
        for j in range(n):
            if bracket:  # (-[x, y])_j = -sum_{i,k} x_i y_k C[i, k, j]
                exprs = [lin([(-C[i, k, j], x[i]) for i in range(n)]) for k in range(n)]
            else:        # (ad*_x m)_j = sum_{i,k} x_i C[i, j, k] m_k
                exprs = [lin([(C[i, j, k], x[i]) for i in range(n)]) for k in range(n)]
            rows.append(self.assign("A", exprs))
        return rows

    def matvec(self, A, v, prefix):
        return self.assign(prefix, [lin([(1.0, f"{A[j][k]}*{v[k]}") for k in range(self.n) if A[j][k]])
                                    for j in range(self.n)])

    def neg_bracket(self, x, y):
        """-[x, y]_k = -sum_{i,j} x_i y_j C[i, j, k] (the bracket matching the coadjoint action)."""
        C = self.st.C
        out = []
        for k in range(self.n):
            out.append(lin([(-C[i, j, k], f"{x[i]}*{y[j]}") for i in range(self.n) for j in range(self.n)
                            if C[i, j, k] != 0.0]))
        return self.assign("q", out)

    def field(self, z):
        """Ambient right-hand side (I - P) ad*_{W z + c} z."""
        g = self.coad(self.velocity(z), z)
        P = self.st.P
        if P is None:
            return g
        return self.assign("f", [lin([((1.0 if i == j else 0.0) - P[i, j], g[j]) for j in range(self.n)])
                                 for i in range(self.n)])

    def dexpinv(self, theta, v, terms):
        """v + sum_{k=1}^{terms-1} B_k/k! A^k v, A = -ad_theta (Bernoulli series), with the powers
        A^k, k >= d, folded into A^0..A^(d-1) by the relation of :func:`ad_relation` when C has one
        with d below the number of brackets (the same polynomial in A: fewer brackets, a few scalars)."""
        coeffs = list(bernoulli_coefficients(int(terms)))
        while len(coeffs) > 1 and coeffs[-1] == 0.0:  # B_3 = B_5 = 0: no bracket for a zero last term
            coeffs.pop()
        rel = ad_relation(self.st.C, len(coeffs) - 2) if len(coeffs) > 2 else None
        if rel is not None:
            coeffs = self._fold(theta, coeffs, rel)
        pairs = [(coeffs[0], v)]
        term = v
        last = max((k for k, c in enumerate(coeffs) if c != 0.0), default=0)
        dense = self.dense() and last > 1
        if dense:  # one matrix -ad(theta), then matrix-vector products
            A = self.matrix(theta, bracket=True)
        for c in coeffs[1:last + 1]:
            term = self.matvec(A, term, "q") if dense else self.neg_bracket(theta, term)
            if c != 0.0:
                pairs.append((c, term))
        if pairs == [(1.0, v)]:
            return v
        if all(not isinstance(c, str) for c, _ in pairs):
            return self.combo("k", pairs)
        named_c = [(c, V) for c, V in pairs if isinstance(c, str)]
        plain = [(c, V) for c, V in pairs if not isinstance(c, str)]
        return self.assign("k", [" + ".join([lin([(c, V[i]) for c, V in plain])] * bool(plain)
                                            + [f"{c}*{V[i]}" for c, V in named_c]) for i in range(self.n)])

    def _fold(self, x, coeffs, rel):
        """Coefficients a_0..a_(d-1) (floats or names of scalars) with sum_k coeffs[k] A^k =
        sum_{j<d} a_j A^j, from A^d = sum_{j<d} c_j(x) A^j: A^k = sum_j r_kj A^j with r_d = c and
        r_(k+1),j = r_k,(j-1) + r_k,(d-1) c_j, reduced here as polynomials in the invariants; the
        generated code evaluates the invariants and one polynomial per a_j."""
        d, gens, poly = rel
        g = self._invariants(x, gens)
        c = [{mono: a for mono, a in poly.get(j, [])} for j in range(d)]
        a = [{(): float(coeffs[j])} if j < len(coeffs) else {} for j in range(d)]
        r = c
        for k in range(d, len(coeffs)):
            if k > d:
                r = [_padd(r[j - 1] if j > 0 else {}, _pmul(r[d - 1], c[j])) for j in range(d)]
            for j in range(d):
                a[j] = _padd(a[j], {m: coeffs[k] * v for m, v in r[j].items()})
        out = []
        for j in range(d):
            terms = [(v, "*".join(g[i] for i in m) or "1.0") for m, v in sorted(a[j].items(), key=lambda t: len(t[0]))]
            terms = [(v, t) for v, t in terms if v != 0.0]
            if not terms:
                out.append(0.0)
            elif len(terms) == 1 and terms[0][1] == "1.0":
                out.append(terms[0][0])
            else:
                out.append(self.assign("aa", [lin(terms).replace("*1.0", "")])[0])
        return out

    def stage_act(self, x, z):
        """exp(ad x)^T z for a stage value Y_i (the update of the step keeps :meth:`act`).

        With no closed form, B = ad(x)^T obeys B^d = sum_j (-1)^(d-j) c_j(x) B^j (the relation of
        -ad_x from :func:`ad_relation`, transposed), so the Taylor sum of the action over s substeps
        of exp(B/s), with the same (s, m) as :meth:`_act_taylor` (``tplan``), folds into
        exp(B/s) u = sum_{j<d} f_j B^j u, f_j = sum_{k<=m} r_kj / k! (r_k: B^k = sum_j r_kj B^j, a
        scalar recurrence): d - 1 products with B per substep instead of m. The same truncated
        series, so the stages agree with :meth:`act` to round-off."""
        return self.fold_act(x, z, delta=False) if self.foldable() else self.act(x, z, delta=False)

    def foldable(self):
        """True when the exponential has no closed form and C has a relation of degree <= n."""
        if self.st.closed is not None:
            return False
        rel = ad_relation(self.st.C, self.n)
        return rel is not None and 0 < rel[0] <= self.n

    def fold_act(self, x, z, delta):
        """:meth:`stage_act`'s folded Taylor action; with ``delta`` the increment exp(B) z - z,
        accumulated over the substeps from the terms j >= 1 (no cancellation), as in
        :meth:`_act_taylor`."""
        d, gens, poly = ad_relation(self.st.C, self.n)
        n = self.n
        bound = lin([(nr, f"abs({x[i]})") for i, nr in enumerate(self.st.norms)])
        s, bd, inv, bad, rb = (self.fresh(p) for p in ("s", "bd", "r", "nan", "rb"))
        # the plan of tplan without its call: s substeps with r = bound / s < TAYLOR_RADIUS, the
        # terms counted in the loop of _taylor_fold; NaN (carried by f_1) beyond 1e5 or for NaN
        self.emit(f"{bd} = bmax({bound})")
        self.emit(f"{bad} = 0.0 if {bd} <= 1e5 else {_NAN}")
        self.emit(f"{s} = int({_num(1.0 / TAYLOR_RADIUS)}*{bd}) + 1 if {bd} <= 1e5 else 1")
        self.emit(f"{inv} = 1.0/{s}")
        self.emit(f"{rb} = {bd}*{inv} if {bd} <= 1e5 else 0.0")
        g = self._invariants(x, gens)
        # c'_j of B = ad(x/s)^T: (-1)^(d-j) c_j(x) s^-(d-j) (c_j is homogeneous of degree d - j)
        c = [None] * d
        for j, terms in poly.items():
            sign = -1.0 if (d - j) % 2 else 1.0
            c[j] = self.assign("cb", ["*".join([f"({lin([(sign * a, '*'.join(g[i] for i in mono)) for mono, a in terms])})"]
                                               + [inv] * (d - j))])[0]
        f = self._taylor_fold(c, rb, 0.0 if delta else 1.0)
        # B(x/s)^j = s^-j B(x)^j: the scaling goes into f_j, the products below are with B(x)
        # bad (0.0 or NaN from tplan) rides on f_1: a NaN f_1 makes every component NaN
        if d > 1:
            self.emit(", ".join(f[1:]) + " = " + ", ".join(f"{f[j]}*{'*'.join([inv] * j)}" + (f" + {bad}" if j == 1 else "")
                                                       for j in range(1, d)))
        def substep(u, prefix):  # f_0 u + sum_{j>=1} f_j B^j u ((f_0 - 1) u + ... with delta)
            acc = [[f"{f[0]}*{u[i]}"] if c[0] is not None else ([] if delta else [u[i]]) for i in range(n)]
            for j in range(1, d):
                u = self.coad(x, u, prefix="t")
                for i in range(n):
                    acc[i].append(f"{f[j]}*{u[i]}")
            return self.assign(prefix, [" + ".join(a) or "0.0" for a in acc])

        # the first substep from z, the other s - 1 in a loop (no copies when s = 1)
        out = substep(list(z), "d" if delta else "y")
        self.emit(f"for _ in range({s} - 1):")
        self.indent += 1
        if delta:  # the state of the substep z + (increment so far); the increments are summed
            u = self.assign("u", [f"{z[i]} + {out[i]}" for i in range(n)])
            inc = substep(u, "v")
            for i in range(n):
                self.emit(f"{out[i]} = {out[i]} + {inc[i]}")
        else:
            nxt = substep(out, "v")
            for i in range(n):
                self.emit(f"{out[i]} = {nxt[i]}")
        self.indent -= 1
        return out if d > 1 else self.assign("y", [f"{out[i]} + {bad}" for i in range(n)])

    def _taylor_fold(self, c, rb, f0):
        """Names f_0..f_(d-1) with sum_{k<=m} B^k / k! = sum_j f_j B^j (f_0 offset by f0 - 1: 0.0 for
        an increment), given B^d = sum_j c_j B^j (names, None for 0): f_j = sum_k r_kj / k! with
        r_d = c, r_(k+1),j = r_k,(j-1) + r_k,(d-1) c_j, in a runtime loop over k that adds the term
        k while e^r r^k / k! > 2^-54 (e^r <= 1.65 for r <= 1/2; ``rb`` names the bound r of the
        substep: the m of ``tplan``, at most 30; Al-Mohy and Higham 2011). The supports of r_k (which
        j can be non-zero) are followed at generation time: when they alternate (a relation with only
        even or only odd gaps d - j, as on so(4), se(3), sl(2)) the loop takes two k per pass and
        writes only the live entries (it may add the term m + 1, below the truncation)."""
        d = len(c)
        f = [self.fresh("f") for _ in range(d)]
        for j in range(d):  # k < d: B^k itself
            self.emit(f"{f[j]} = {_num(f0 if j == 0 else 1.0 / math.factorial(j))}")
        S0 = {j for j in range(d) if c[j] is not None}
        if not S0:
            return f

        def step(S):
            return {j for j in range(d) if j - 1 in S or (d - 1 in S and c[j] is not None)}

        S1 = step(S0)
        if S1 <= S0:
            period = [S0]
        elif step(S1) <= S0:
            period = [S0, S1]
        else:
            U = set(S0)
            while not step(U) <= U:
                U |= step(U)
            period = [U]
        r = [self.fresh("rk") for _ in range(d)]
        fac, tail, kk = self.fresh("fac"), self.fresh("tail"), self.fresh("kf")
        for j in sorted(period[0]):
            self.emit(f"{r[j]} = {c[j] if c[j] is not None else '0.0'}")
        self.emit(f"{fac} = {_num(1.0 / math.factorial(d))}")
        self.emit(f"{tail} = {_num(1.65 / math.factorial(d))}*{'*'.join([rb] * d)}")  # 1.65 r^d / d!
        self.emit(f"{kk} = {float(d)!r}")
        self.emit(f"while {tail} > {TAYLOR_STOP!r} and {kk} <= 30.0:")
        self.indent += 1
        for t, S in enumerate(period):
            nxt = sorted(period[(t + 1) % len(period)])
            live = sorted(S)
            self.emit(", ".join(f[j] for j in live) + " = " + ", ".join(f"{f[j]} + {fac}*{r[j]}" for j in live))
            self.emit(f"{fac} = {fac}/({kk} + {float(t + 1)!r})")
            rhs = []
            for j in nxt:
                parts = ([r[j - 1]] if j - 1 in S else []) + \
                        ([f"{r[d - 1]}*{c[j]}"] if d - 1 in S and c[j] is not None else [])
                rhs.append(" + ".join(parts) or "0.0")
            self.emit(", ".join(r[j] for j in nxt) + " = " + ", ".join(rhs))
        p = len(period)
        self.emit(f"{tail} = {tail}*{'*'.join([rb] * p)}/({' * '.join(f'({kk} + {float(t + 1)!r})' for t in range(p))})")
        self.emit(f"{kk} = {kk} + {float(p)!r}")
        self.indent -= 1
        return f

    def _invariants(self, x, gens):
        """Names of the invariant forms (1, f): f.x and (2, Q): x^T Q x at x (written once per x: the
        stage exponential and dexp^-1 of a stage share them)."""
        cache = self.__dict__.setdefault("_inv_cache", {})
        key = (tuple(x), id(gens))
        if key in cache:
            return cache[key]
        n = self.n
        g = []
        for kind, F in gens:
            if kind == 1:
                g.append(self.assign("gi", [lin([(F[i], x[i]) for i in range(n)])])[0])
            else:
                g.append(self.assign("gi", [lin([(F[i, i], f"{x[i]}*{x[i]}") for i in range(n)]
                                                 + [(2.0 * F[i, j], f"{x[i]}*{x[j]}")
                                                    for i in range(n) for j in range(i + 1, n)])])[0])
        cache[key] = g
        return g

    # ---------------------------------------------------------------- exponential
    def act(self, x, z, delta):
        """exp(ad x)^T z (delta False) or exp(ad x)^T z - z (delta True), without cancellation."""
        kind = self.st.closed
        if kind == "so3":
            return self._act_so3(x, z, delta)
        if kind == "se3":
            return self._act_se3(x, z, delta)
        return self._act_taylor(x, z, delta)

    def _cross(self, a, b, prefix="c"):
        return self.assign(prefix, [f"{a[1]}*{b[2]} - {a[2]}*{b[1]}", f"{a[2]}*{b[0]} - {a[0]}*{b[2]}",
                                    f"{a[0]}*{b[1]} - {a[1]}*{b[0]}"])

    def _act_so3(self, x, z, delta):
        # exp(ad x)^T z = R(-x) z = z - a x cross z + b x cross (x cross z) (Rodrigues)
        ca, cb = self.fresh("a"), self.fresh("b")
        self.emit(f"{ca}, {cb} = co2({x[0]}*{x[0]} + {x[1]}*{x[1]} + {x[2]}*{x[2]})")
        return self._rodrigues(ca, cb, x, z, delta)

    def _rodrigues(self, ca, cb, x, z, delta):
        """z - a x cross z + b x cross (x cross z) (or only the increment, with ``delta``), given the
        names of Rodrigues' coefficients a = sin t / t, b = (1 - cos t)/t^2."""
        c1 = self._cross(x, z)
        c2 = self._cross(x, c1)
        base = "" if delta else "{z} "
        return self.assign("y", [(base.format(z=z[i]) + f"- {ca}*{c1[i]} + {cb}*{c2[i]}").lstrip()
                                 for i in range(3)])

    def _act_se3(self, x, z, delta):
        # Ad_g^T z = (R^T (M - p x P), R^T P), g = exp(x) = (R, p), R = exp(hat w), p = V(w) v,
        # V = I + b W + c W^2 (W = hat w); R^T y = y - a w x y + b w x (w x y)
        w, v, M, Pm = x[:3], x[3:], z[:3], z[3:]
        ca, cb, cc = self.fresh("a"), self.fresh("b"), self.fresh("c")
        self.emit(f"{ca}, {cb}, {cc} = co3({w[0]}*{w[0]} + {w[1]}*{w[1]} + {w[2]}*{w[2]})")
        wv = self._cross(w, v)
        wwv = self._cross(w, wv)
        p = self.assign("p", [f"{v[i]} + {cb}*{wv[i]} + {cc}*{wwv[i]}" for i in range(3)])
        pP = self._cross(p, Pm)
        if delta:  # dM = rho(M - p x P) - p x P, dP = rho(P), rho(y) = R^T y - y
            u = self.assign("u", [f"{M[i]} - {pP[i]}" for i in range(3)])
            c1 = self._cross(w, u)
            c2 = self._cross(w, c1)
            d1 = self.assign("y", [f"{cb}*{c2[i]} - {ca}*{c1[i]} - {pP[i]}" for i in range(3)])
            e1 = self._cross(w, Pm)
            e2 = self._cross(w, e1)
            d2 = self.assign("y", [f"{cb}*{e2[i]} - {ca}*{e1[i]}" for i in range(3)])
            return d1 + d2
        u = self.assign("u", [f"{M[i]} - {pP[i]}" for i in range(3)])
        c1 = self._cross(w, u)
        c2 = self._cross(w, c1)
        d1 = self.assign("y", [f"{u[i]} - {ca}*{c1[i]} + {cb}*{c2[i]}" for i in range(3)])
        e1 = self._cross(w, Pm)
        e2 = self._cross(w, e1)
        d2 = self.assign("y", [f"{Pm[i]} - {ca}*{e1[i]} + {cb}*{e2[i]}" for i in range(3)])
        return d1 + d2

    def _act_taylor(self, x, z, delta):
        """Scaled Taylor series of the action: s substeps of exp(A/s), A = ad(x)^T, each summed to m
        terms, (s, m) from the bound r = ||A||_1 / s <= TAYLOR_RADIUS with e^r r^(m+1)/(m+1)! <=
        TAYLOR_STOP; the increment is accumulated from the terms k >= 1 (no cancellation)."""
        n = self.n
        bound = lin([(nr, f"abs({x[i]})") for i, nr in enumerate(self.st.norms)])
        s, m, inv, bad = self.fresh("s"), self.fresh("m"), self.fresh("r"), self.fresh("nan")
        self.emit(f"{s}, {m}, {bad} = tplan({bound})")
        self.emit(f"{inv} = 1.0/{s}")
        xs = self.assign("x", [f"{inv}*{x[i]}" for i in range(n)])
        Ax = self.matrix(xs) if self.dense() else None
        cur = self.assign("z", list(z))            # state at the start of the substep
        tot = self.assign("d", ["0.0"] * n)        # increment over all substeps
        self.emit(f"for _ in range({s}):")
        self.indent += 1
        u = self.fresh("u")
        acc = self.fresh("v")
        kk = self.fresh("k")
        for i in range(n):
            self.emit(f"{u}{i} = {cur[i]}")
            self.emit(f"{acc}{i} = 0.0")
        self.emit(f"{kk} = 0.0")
        self.emit(f"for _k in range({m}):")
        self.indent += 1
        self.emit(f"{kk} = {kk} + 1.0")
        us = [f"{u}{i}" for i in range(n)]
        g = self.matvec(Ax, us, "t") if Ax is not None else self.coad(xs, us, prefix="t")
        for i in range(n):
            self.emit(f"{u}{i} = {g[i]}/{kk}")
            self.emit(f"{acc}{i} = {acc}{i} + {u}{i}")
        self.indent -= 1
        for i in range(n):
            self.emit(f"{tot[i]} = {tot[i]} + {acc}{i}")
            self.emit(f"{cur[i]} = {cur[i]} + {acc}{i}")
        self.indent -= 1
        for i in range(n):
            self.emit(f"{tot[i]} = {tot[i]} + {bad}")
        if delta:
            return tot
        return self.assign("y", [f"{z[i]} + {tot[i]}" for i in range(n)])


# ----------------------------------------------------------------------------- one step
def _stages(src, tab, z, h, lie, terms, w0=None):
    """Emit the stages; return the list of K_i (vectors, already multiplied by h) and the last
    stage's velocity (for FSAL). ``w0`` is the first stage's generator when given (FSAL)."""
    A, cvec = tab["A"], tab["c"]
    Ks = []
    for i, row in enumerate(A):
        pairs = [(a, K) for a, K in zip(row, Ks) if a != 0.0]
        if not pairs:
            if lie:
                w = src.velocity(z) if w0 is None else w0
            else:
                w = src.field(z) if w0 is None else w0
            Ks.append(src.assign("K", [f"{h}*{w[j]}" for j in range(src.n)]))
            continue
        if lie:
            theta = src.combo("th", pairs)
            Y = src.stage_act(theta, z)
            xh = src.velocity(Y, scale=h)
            Ks.append(src.dexpinv(theta, xh, terms) if terms > 1 else xh)
        else:
            dz = src.combo("dz", pairs)
            Y = src.assign("Y", [f"{z[j]} + {dz[j]}" for j in range(src.n)])
            w = src.field(Y)
            Ks.append(src.assign("K", [f"{h}*{w[j]}" for j in range(src.n)]))
    return Ks


def _increment(src, Ks, b, z, lie):
    theta = src.combo("tb", list(zip(b, Ks)))
    if lie:
        return theta, (src.fold_act(theta, z, delta=True) if src.foldable() else src.act(theta, z, delta=True))
    return theta, theta


def _kahan(src, z, e, d):
    for j in range(src.n):
        src.emit(f"_y = {d[j]} + {e[j]}; _s = {z[j]} + _y; {e[j]} = ({z[j]} - _s) + _y; {z[j]} = _s")


def fixed_source(st, tab, lie, terms):
    """Source of run(h, n, save_every, ts, ys, t0, z..., e...): n Kahan-compensated steps, the state
    z + e stored in ys[j] (j-th save); returns (steps done, saves, z..., e...). A step whose state is
    not finite stops the loop (scalar modes); ensembles are checked by the caller."""
    src = Source(st)
    n = st.n
    z = [f"z{i}" for i in range(n)]
    e = [f"e{i}" for i in range(n)]
    head = f"def run(h, nsteps, save_every, ts, ys, t0, {', '.join(z + e)}):"
    src.emit("j = 1")
    src.emit("done = 0")
    src.emit("for k in range(1, nsteps + 1):")
    src.indent += 1
    Ks = _stages(src, tab, z, "h", lie, terms)
    _, d = _increment(src, Ks, tab["b"], z, lie)
    src.emit("_chk = " + " + ".join(d))
    src.emit("if not fin(_chk):")
    src.emit("    break")
    _kahan(src, z, e, d)
    src.emit("done = k")
    src.emit("if k % save_every == 0 or k == nsteps:")
    src.indent += 1
    src.emit("ts[j] = t0 + k*h")
    for i in range(n):
        src.emit(f"ys[j, {i}] = z{i} + e{i}")
    src.emit("j += 1")
    src.indent -= 2
    src.emit(f"return done, j, {', '.join(z + e)}")
    return head + "\n" + "\n".join(src.lines) + "\n"


def adaptive_source(st, tab, lie, terms, batch=False, source_class=None):
    """Source of the whole adaptive loop (solve_ivp's controller: Hairer-Norsett-Wanner I, II.4;
    error norm as in scipy's RK45 / DOP853, max over an ensemble)::

        run(t0, t1, h, rtol, atol, max_step, save_every, ts, ys, z..., e...) ->
            (status, t, h, nsteps, nrej, nsave, ts, ys, z..., e...)

    status 0: reached t1; -1: the step size fell below 10 eps |t| (overflow or stiffness). With
    ``batch`` (the compiled ensemble) the state is Z, E of shape (B, n), ys (cap, B, n), and the
    stages run in a loop over the trajectories: run(..., ts, ys, Z, E) -> (status, t, h, nsteps,
    nrej, nsave, ts, ys). ``source_class``: a subclass of :class:`Source` to write the stages with.
    """
    src = (source_class or Source)(st)
    n = st.n
    z = [f"z{i}" for i in range(n)]
    e = [f"e{i}" for i in range(n)]
    W0 = [f"W0_{i}" for i in range(n)]
    E = tab["E"]
    order = tab["err_order"]
    fsal = tab["fsal"]
    if batch:
        head = "def run(t0, t1, h, rtol, atol, max_step, save_every, ts, ys, Z, E):"
        src.emit(f"B = Z.shape[0]; D = np.empty((B, {n})); WL = np.empty((B, {n})); WF = np.empty((B, {n}))")
        src.emit("for b in range(B):")
        src.indent += 1
        for i in range(n):
            src.emit(f"z{i} = Z[b, {i}]")
        w0 = src.velocity(z) if lie else src.field(z)
        for i in range(n):
            src.emit(f"WF[b, {i}] = {w0[i]}")
        src.indent -= 1
    else:
        head = f"def run(t0, t1, h, rtol, atol, max_step, save_every, ts, ys, {', '.join(z + e)}):"
        # first stage generator at z (FSAL: the last stage of an accepted step is the next first one)
        w0 = src.velocity(z) if lie else src.field(z)
        for i in range(n):
            src.emit(f"{W0[i]} = {w0[i]}")
    src.emit("t = t0; direction = 1.0 if t1 > t0 else -1.0")
    src.emit("nsteps = 0; nrej = 0; j = 1; status = 0; since = 0")
    src.emit("while direction*(t1 - t) > 0.0:")
    src.indent += 1
    src.emit("if h > max_step: h = max_step")
    src.emit("last = False")
    src.emit("if direction*(t + direction*h - t1) >= 0.0:")
    src.emit("    h = abs(t1 - t); last = True")
    src.emit("hs = direction*h")
    if batch:
        src.emit("err = 0.0")
        src.emit("for b in range(B):")
        src.indent += 1
        for i in range(n):
            src.emit(f"z{i} = Z[b, {i}]; {W0[i]} = WF[b, {i}]")
    Ks = _stages(src, tab, z, "hs", lie, terms, w0=W0)
    theta, d = _increment(src, Ks, tab["b"], z, lie)
    # FSAL stage at z1 = z + d (its generator is reused by the next step when accepted)
    z1 = src.assign("z1_", [f"{z[i]} + {d[i]}" for i in range(n)])
    wl = src.velocity(z1) if lie else src.field(z1)
    if lie:
        xl = src.assign("xl", [f"hs*{wl[j]}" for j in range(n)])
        Klast = src.dexpinv(theta, xl, terms) if terms > 1 else xl
    else:
        Klast = src.assign("Kl", [f"hs*{wl[j]}" for j in range(n)])
    Kall = Ks + ([Klast] if fsal else [])
    sc = src.assign("sc", [f"atol + rtol*mx(abs({z[i]}), abs({z1[i]}))" for i in range(n)])
    errs = []
    for Ev in E:
        et = src.combo("et", list(zip(Ev, Kall)))
        if et is None:
            et = ["0.0"] * n
        if lie:  # state error to leading order: ad*_{err theta} z
            et = src.coad(et, z, prefix="ez")
        errs.append(src.assign("es", [f"({et[i]})/{sc[i]}" for i in range(n)]))
    if len(errs) == 1:
        expr = "sqrt((" + " + ".join(f"{v}*{v}" for v in errs[0]) + f")/{float(n)!r})"
    else:  # DOP853: err5^2 / sqrt(n (err5^2 + 0.01 err3^2)) (Hairer-Norsett-Wanner, scipy)
        src.emit("_e5 = " + " + ".join(f"{v}*{v}" for v in errs[0]))
        src.emit("_e3 = " + " + ".join(f"{v}*{v}" for v in errs[1]))
        expr = f"_e5/sqrt({float(n)!r}*(_e5 + 0.01*_e3) + 1e-300)"
    if batch:
        src.emit(f"errb = {expr}")
        src.emit("if not errb <= err: err = errb")
        for i in range(n):
            src.emit(f"D[b, {i}] = {d[i]}; WL[b, {i}] = {wl[i]}")
        src.indent -= 1
        src.emit("if not err == err: err = 1e308")
    else:
        src.emit(f"err = bmax({expr})")
    src.emit("if err <= 1.0:")
    src.indent += 1
    if batch:
        src.emit("chk = 0.0")
        src.emit("for b in range(B):")
        src.emit(f"    for i in range({n}):")
        src.emit("        _y = D[b, i] + E[b, i]; _s = Z[b, i] + _y; E[b, i] = (Z[b, i] - _s) + _y; Z[b, i] = _s")
        src.emit("        chk += _y; WF[b, i] = WL[b, i]")
        src.emit("if not fin(chk):")
        src.emit("    status = -1; break")
    else:
        src.emit("chk = " + " + ".join(d))
        src.emit("if not fin(chk):")
        src.emit("    status = -1; break")
        _kahan(src, z, e, d)
        for i in range(n):
            src.emit(f"{W0[i]} = {wl[i]}")
    src.emit("t = t1 if last else t + hs")
    src.emit("nsteps += 1; since += 1")
    src.emit("if since == save_every or last:")
    src.indent += 1
    src.emit("since = 0")
    src.emit("if j >= ts.shape[0]:")
    src.emit("    ts, ys = grow(ts, ys)")
    src.emit("ts[j] = t")
    if batch:
        src.emit("ys[j] = Z + E")
    else:
        for i in range(n):
            src.emit(f"ys[j, {i}] = z{i} + e{i}")
    src.emit("j += 1")
    src.indent -= 1
    src.emit(f"fac = 10.0 if err == 0.0 else min(10.0, 0.9*err**({-1.0 / (order + 1)!r}))")
    src.emit("h = h*fac")
    src.indent -= 1
    src.emit("else:")
    src.indent += 1
    src.emit("nrej += 1")
    src.emit(f"fac = 0.2 if not (err < 1e300) else max(0.2, 0.9*err**({-1.0 / (order + 1)!r}))")
    src.emit("h = h*fac")
    src.emit("if h < 10.0*2.2e-16*abs(t) or h < 1e-300:")
    src.emit("    status = -1; break")
    src.indent -= 2
    if batch:
        src.emit("return status, t, h, nsteps, nrej, j, ts, ys")
    else:
        src.emit(f"return status, t, h, nsteps, nrej, j, ts, ys, {', '.join(z + e)}")
    return head + "\n" + "\n".join(src.lines) + "\n"


def trial_source(st, tab, lie, terms):
    """Source of one step (no error estimate) from z with step h: step(h, z...) -> z1 (a tuple), for
    event location by the method's own continuous extension."""
    src = Source(st)
    n = st.n
    z = [f"z{i}" for i in range(n)]
    head = f"def step(h, {', '.join(z)}):"
    Ks = _stages(src, tab, z, "h", lie, terms)
    _, d = _increment(src, Ks, tab["b"], z, lie)
    src.emit("return (" + ", ".join(f"{z[i]} + {d[i]}" for i in range(n)) + ",)")
    return head + "\n" + "\n".join(src.lines) + "\n"


def _env(mode):
    return dict(genhelpers.ARRAY if mode == "array" else genhelpers.SCALAR, np=np)


def compile_function(kind, st, tab, lie, terms, mode):
    """The generated function ``kind`` ("fixed", "adaptive", "adaptive_batch", "step") for structure
    ``st`` and tableau ``tab`` in ``mode`` ("scalar": Python floats, "array": numpy (B,) columns, "numba": jitted),
    cached per (structure, tableau, mode)."""
    key = (kind, st.key, tab["name"], lie, terms, mode)
    fn = _CACHE.get(key)
    if fn is None:
        text = source(kind, st, tab, lie, terms)
        name = "run" if kind != "step" else "step"
        if mode == "numba":
            fn = numba_kernels.compile_cached(text, name, batch=kind == "adaptive_batch")
        else:
            env = _env(mode)
            exec(compile(text, f"<liedyn {kind} {tab['name']} {mode}>", "exec"), env)
            fn = env[name]
        _CACHE[key] = fn
    return fn


def source(kind, st, tab, lie, terms):
    """The generated source text of ``kind`` ("fixed", "adaptive", "adaptive_batch", "step")."""
    if kind == "adaptive_batch":
        return adaptive_source(st, tab, lie, terms, batch=True)
    writer = {"fixed": fixed_source, "adaptive": adaptive_source, "step": trial_source}[kind]
    return writer(st, tab, lie, terms)
