"""Kovalevskaya exponents at the Darboux points of x' = v(x), and the obstructions to polynomial integrals.

Darboux points. Every invariant line x = s xi, v(xi) = c xi with c != 0, carries one Darboux point
d = -xi / c: v(d) = v(xi) / c^2 = xi / c = -d, so x(t) = d / t is a solution. The Kovalevskaya matrix is
K = Dv(d) + Id. Euler's identity Dv(x) x = 2 v(x) gives K d = -d; the other p - 1 eigenvalues of K
(those of the map K induces on C^p / C d, with algebraic multiplicity) are the Kovalevskaya exponents
rho_1..rho_{p-1}. Since Dv is linear, Dv(d) = -J / c with J = Dv(xi), so K = Id - J / c and
rho_k = 1 - lambda_k / c, lambda_k the eigenvalues of J other than 2 c; for a real line this is
rho_k = -s_k / c with s_k = lambda_k - c the eigenvalues of the flow on the sphere of directions
(``InvariantLine.sphere_eigenvalues``). The line has multiplicity > 1 exactly when K is singular
(D(v - Id)(-d) = -K), i.e. when 0 is an exponent.

Theorem (the gradient case is Yoshida's (1983) condition, the resonance form Furta's (1996), cf. Goriely
(2001), here for weight 1; proved below in exactly the form implemented). Let d be a Darboux point at
which -1 is a SIMPLE eigenvalue of K (no exponent equals -1), with exponents rho_1..rho_{p-1}. If x' = v(x) has a non-zero homogeneous polynomial first
integral F of degree m >= 1 (complex coefficients allowed, products of integrals included), then

    m = k_1 rho_1 + ... + k_{p-1} rho_{p-1}   for some integers k_i >= 0 with 1 <= k_1 + ... + k_{p-1} <= m.

If moreover grad F(d) != 0, then K^T grad F(d) = m grad F(d): m itself is an exponent (|k| = 1).

Proof. (i) Gradient case: differentiate grad F(x) . v(x) = 0: Hess F(x) v(x) + Dv(x)^T grad F(x) = 0.
At d, v(d) = -d and Euler's identity for the degree m - 1 field grad F give Hess F(d) d = (m - 1) grad F(d),
so Dv(d)^T grad F(d) = (m - 1) grad F(d), i.e. K^T grad F(d) = m grad F(d).
(ii) General case: put x = y / t, tau = ln t. Then x' = v(x) becomes dy/dtau = W(y) = v(y) + y with
W(d) = 0, DW(d) = K, and F(x) = t^-m F(y) constant gives W . grad F = m F (also directly: grad F . v = 0
and grad F . y = m F). At y = d this reads 0 = m F(d), so F(d) = 0. Let V be the sum of the generalised
eigenspaces of K for the eigenvalues != -1 (K-invariant, C^p = C d + V because -1 is simple) and write
y = (1 + a) d + w, w in V. Homogeneity gives F((1 + a) d + w) = sum_j (1 + a)^(m - j) f_j(w), where
f(w) = F(d + w) = f_j0(w) + ... + f_m(w) (f_j homogeneous of degree j, f_j0 != 0, 1 <= j0 <= m since
f(0) = F(d) = 0). So the lowest-order part of F at d is f_j0(w), which does not depend on a, and the
lowest-order part of W . grad F = m F reads grad f_j0(w) . K_V w = m f_j0(w), K_V = K restricted to V.
The derivation P -> grad P . K_V w on homogeneous polynomials of degree j0 on V has the eigenvalues
sum k_i rho_i with |k| = j0 (triangularise K_V and order the monomials), and f_j0 is an eigenvector
for m. QED.

So a Darboux point with -1 simple and NO such resonance for m proves that no homogeneous polynomial
first integral of degree m exists; one Darboux point suffices (the set of lines need not be complete).
Nothing is claimed at Darboux points where an exponent equals -1, nor for non-polynomial integrals.

The numeric test (``integrability_obstructions``) declares "no resonance" for m only when
min over 1 <= |k| <= m of |sum k_i rho_i - m| exceeds rtol (1 + m)(1 + max |rho|) (exponents from the
homotopy are accurate to ~1e-13 relative), and it uses only lines of multiplicity 1 (a multiple root
gives exponents accurate to ~sqrt(eps) only). The exact path (``exact_kovalevskaya_exponents``, rational
Q) gives the exponents as sympy algebraic numbers and decides the resonances exactly
(``sympy.minimal_polynomial`` of sum k_i rho_i - m).

``polynomial_first_integrals`` is the exact search the test is checked against: the coefficients of a
homogeneous F of degree m with grad F . v = 0 form the null space of a rational matrix (DomainMatrix over QQ).

References (full entries in ``catalog.bibliography``): Yoshida (1983), Furta (1996), Goriely (2001),
Kovacs, Silver and Williams (1999).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from math import comb

import mpmath
import numpy as np
import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

from ..errors import ExactCheckError, QuadraticSystemError
from .exact import _mult_matrix, _standard_monomials, rational_tensor

__all__ = ["kovalevskaya_exponents", "attach_exponents", "darboux_point", "resonances",
           "ObstructionCertificate", "IntegrabilityObstructions", "integrability_obstructions",
           "polynomial_first_integrals", "ExactDarbouxPoint", "AlgebraicExponent", "exact_kovalevskaya_exponents"]

_MAX_MULTI_INDICES = 2_000_000


# ----------------------------------------------------------------------------- numeric exponents
def kovalevskaya_exponents(Q, directions, c):
    """Kovalevskaya exponents at the Darboux points d = -xi / c, batched: shape (B, p - 1) complex.

    K = Id - J(xi) / c with J(xi)_ij = 2 sum_k Q[i,j,k] xi_k (= Dv(d) + Id, see the module docstring).
    K d = -d, so with a Householder reflector H (H xi ~ e_1) H K H = [[-1, *], [0, K']] and the exponents are
    eig(K'), all in one batched ``np.linalg.eigvals`` call. Each row is sorted by real part (to 9 decimals),
    then imaginary part.
    """
    Q = np.asarray(Q)
    X = np.atleast_2d(np.asarray(directions, dtype=complex))
    C = np.atleast_1d(np.asarray(c, dtype=complex))
    B, p = X.shape
    if B == 0 or p == 1:
        return np.zeros((B, max(p - 1, 0)), dtype=complex)
    if np.any(C == 0):
        raise QuadraticSystemError(f"c = 0 at row {int(np.argmax(C == 0))}: an equilibrium line has no Darboux point")
    K = np.eye(p) - 2.0 * np.einsum("ijk,bk->bij", Q, X) / C[:, None, None]
    xh = X / np.linalg.norm(X, axis=1, keepdims=True)
    a = np.abs(xh[:, 0])
    ph = np.where(a > 0, xh[:, 0] / np.where(a > 0, a, 1.0), 1.0)
    u = xh.copy()
    u[:, 0] += ph                                   # u = xh + e^{i theta} e_1, |u|^2 = 2 + 2 |xh_0| >= 2
    H = np.eye(p) - 2.0 * u[:, :, None] * u[:, None, :].conj() / np.einsum("bi,bi->b", u.conj(), u).real[:, None, None]
    Kp = (H @ K @ H)[:, 1:, 1:]
    rho = np.linalg.eigvals(Kp)
    key = np.round(rho.real, 9) + 0.0                 # ties in the real part (conjugate pairs): imaginary part
    order = np.lexsort((rho.imag, key), axis=1)
    return np.take_along_axis(rho, order, axis=1)


def attach_exponents(q, lines):
    """Set ``kovalevskaya_exponents`` on every InvariantLine of ``lines`` (None where c = 0), in one batch."""
    lines = list(lines)
    live = [L for L in lines if not L.is_equilibrium_line]
    for L in lines:
        L.kovalevskaya_exponents = None
    if not live:
        return
    rho = kovalevskaya_exponents(q.Q, np.array([L.direction for L in live]), np.array([L.c for L in live]))
    for L, r in zip(live, rho):
        L.kovalevskaya_exponents = r


def darboux_point(line):
    """d = -xi / c with v(d) = -d for an invariant line with c != 0 (x(t) = d / t solves x' = v(x))."""
    if line.is_equilibrium_line:
        raise QuadraticSystemError(f"the line {line!r} has c = 0 (a line of equilibria): no Darboux point")
    return -np.asarray(line.direction) / line.c


# ----------------------------------------------------------------------------- resonances
@lru_cache(maxsize=64)
def _multi_indices(n, max_degree):
    """All k in N^n with 1 <= |k| <= max_degree, as an int array (rows) and their |k| (read-only, cached)."""
    count = comb(n + max_degree, n) - 1
    if count > _MAX_MULTI_INDICES:
        raise QuadraticSystemError(f"resonance search over {count} multi-indices (p - 1 = {n}, max_degree = "
                                   f"{max_degree}) exceeds {_MAX_MULTI_INDICES}; lower max_degree")
    rows = [np.bincount(np.array(c, dtype=int), minlength=n)
            for s in range(1, max_degree + 1) for c in itertools.combinations_with_replacement(range(n), s)]
    ks = np.array(rows, dtype=int).reshape(-1, n)
    lev = ks.sum(axis=1)
    ks.setflags(write=False)
    lev.setflags(write=False)
    return ks, lev


def resonances(exponents, max_degree, rtol=1e-8):
    """Numeric resonance margins: array (B, max_degree) with entry [b, m - 1] = min over k in N^{p-1},
    1 <= |k| <= m, of |sum_i k_i rho_i - m| for the exponent rows rho = exponents[b], and the tolerance array
    of the same shape, rtol (1 + m)(1 + max |rho|). margin > tol means "no resonance at degree m"."""
    R = np.atleast_2d(np.asarray(exponents, dtype=complex))
    B, n = R.shape
    ms = np.arange(1, max_degree + 1)
    tol = rtol * (1 + ms)[None, :] * (1 + np.abs(R).max(axis=1, initial=0.0))[:, None]
    if n == 0:                                   # p = 1: no k with |k| >= 1, no resonance at all
        return np.full((B, max_degree), np.inf), tol
    ks, lev = _multi_indices(n, max_degree)
    S = R @ ks.T                                  # (B, Nk) all sums at once
    D = np.abs(S[:, None, :] - ms[None, :, None])  # (B, M, Nk)
    D = np.where(lev[None, None, :] <= ms[None, :, None], D, np.inf)
    return D.min(axis=2), tol


def _mp(e):
    """40-digit mpmath value of an exact exponent (sympy number or AlgebraicExponent)."""
    if isinstance(e, AlgebraicExponent):
        return e.value
    if e.is_Rational:
        return mpmath.mpf(e.p) / e.q
    re, im = sp.N(e, 45).as_real_imag()
    return mpmath.mpc(mpmath.mpf(str(re)), mpmath.mpf(str(im)))


def _exact_resonant(exps, m):
    """Exact: is m = sum k_i rho_i for some k in N^n, 1 <= |k| <= m? exps: exact exponents.

    Returns (resonant, closest |sum k rho - m| as a float). 40-digit values screen the k (a sum farther than
    1e-25 from m is not m); a closer candidate is decided exactly: by rational arithmetic when the exponents
    involved are rational, else by sympy.minimal_polynomial of sum k_i rho_i - m (the polynomial x iff it is 0)."""
    n = len(exps)
    if n == 0:
        return False, float("inf")
    x = sp.Symbol("x")
    ks, _ = _multi_indices(n, m)
    best = float("inf")
    with mpmath.workdps(40):
        vals = [_mp(e) for e in exps]
        for k in ks:
            diff = float(abs(mpmath.fsum(int(a) * v for a, v in zip(k, vals) if a) - m))
            if diff < 1e-25:
                used = [e for a, e in zip(k, exps) if a]
                expr = sum(int(a) * (e.sympy() if isinstance(e, AlgebraicExponent) else e)
                           for a, e in zip(k, exps) if a) - m
                if all(getattr(e, "is_Rational", False) for e in used):
                    if expr == 0:
                        return True, 0.0
                elif sp.minimal_polynomial(expr, x) == x:
                    return True, 0.0
            best = min(best, diff)
    return False, best


# ----------------------------------------------------------------------------- result objects
def _fmt_vec(z, digits=4):
    z = np.real_if_close(np.asarray(z), tol=1e6)
    def one(a):
        a = complex(a) + 0.0          # no "-0"
        a = complex(a.real + 0.0, a.imag + 0.0)
        if abs(a.imag) <= 1e-12 * max(1.0, abs(a)):
            return f"{a.real:.{digits}g}"
        return f"{a.real:.{digits}g}{a.imag:+.{digits}g}i"
    return "(" + ", ".join(one(a) for a in np.ravel(z)) + ")"


@dataclass(frozen=True)
class ObstructionCertificate:
    """Why no homogeneous polynomial first integral of ``degree`` exists: at the Darboux point
    ``darboux_point`` (v(d) = -d, -1 a simple eigenvalue of K) the Kovalevskaya ``exponents`` admit no
    degree = sum k_i rho_i with k_i >= 0, 1 <= |k| <= degree; ``margin`` is the closest miss
    (min |sum k rho - degree|), ``tolerance`` what it was compared with (0 on the exact path)."""

    degree: int
    darboux_point: np.ndarray
    exponents: tuple
    margin: float
    tolerance: float
    line_index: int
    exact: bool = False

    def __str__(self):
        ex = ", ".join(sp.sstr(e) for e in self.exponents) if self.exact else _fmt_vec(self.exponents)[1:-1]
        return (f"degree {self.degree}: no homogeneous polynomial first integral; at the Darboux point "
                f"d = {_fmt_vec(self.darboux_point)} the exponents ({ex}) have no resonance "
                f"{self.degree} = sum k_i rho_i (closest miss {self.margin:.3g})")


@dataclass
class IntegrabilityObstructions:
    """Degrees m <= max_degree for which the Kovalevskaya exponents rule out a homogeneous polynomial first
    integral (see the theorem in the module docstring), with one certificate per ruled-out degree.

    ``certificates``: {degree: ObstructionCertificate}; ``darboux_points``: how many Darboux points were
    tested; ``skipped``: [(line index, reason)] for lines with c != 0 not used."""

    max_degree: int
    certificates: dict
    darboux_points: int
    skipped: list = field(default_factory=list)
    exact: bool = False

    @property
    def ruled_out(self) -> tuple:
        """The degrees with no homogeneous polynomial first integral (proved)."""
        return tuple(sorted(self.certificates))

    @property
    def open_degrees(self) -> tuple:
        """The degrees the test does not decide (a resonance at every tested Darboux point)."""
        return tuple(m for m in range(1, self.max_degree + 1) if m not in self.certificates)

    def rules_out(self, m) -> bool:
        """True if a homogeneous polynomial first integral of degree m is proved not to exist."""
        return int(m) in self.certificates

    def __str__(self):
        head = (f"Kovalevskaya-exponent test ({'exact' if self.exact else 'numeric'}), degrees 1..{self.max_degree}, "
                f"{self.darboux_points} Darboux point(s) tested"
                + (f", {len(self.skipped)} skipped" if self.skipped else "") + ":")
        rows = []
        for m in range(1, self.max_degree + 1):
            if m in self.certificates:
                rows.append("  " + str(self.certificates[m]))
            else:
                rows.append(f"  degree {m}: not ruled out (a resonance at every tested Darboux point)")
        rows += [f"  skipped line {i}: {why}" for i, why in self.skipped]
        return "\n".join([head] + rows)

    def __repr__(self):
        return (f"IntegrabilityObstructions(max_degree={self.max_degree}, ruled_out={self.ruled_out}, "
                f"open={self.open_degrees}, darboux_points={self.darboux_points}, exact={self.exact})")


def _check_degree(max_degree):
    if isinstance(max_degree, bool) or not isinstance(max_degree, (int, np.integer)) or max_degree < 1:
        raise QuadraticSystemError(f"max_degree must be an integer >= 1, got {max_degree!r}")
    return int(max_degree)


def integrability_obstructions(q, max_degree=4, lines=None, rtol=1e-8, exact=False):
    """Degrees m <= max_degree with no homogeneous polynomial first integral, by the resonance theorem of the
    module docstring applied at every Darboux point d = -xi / c of the invariant lines.

    lines: the InvariantLines of q (computed if None). Numeric (default): lines of multiplicity 1 with
    relative residual < 1e-10 and no exponent within tolerance of -1; a degree is ruled out when some such
    point has margin > rtol (1 + m)(1 + max |rho|); the certificate is the point with the largest margin.
    exact=True (rational Q, p <= 4): the exponents of ``exact_kovalevskaya_exponents`` and exact resonances.
    """
    max_degree = _check_degree(max_degree)
    certs, skipped = {}, []
    if exact:
        pts = exact_kovalevskaya_exponents(q, lines=lines)
        used = 0
        for i, P in enumerate(pts):
            if any(e == -1 for e in P.exponents):
                skipped.append((i, "an exponent equals -1 (-1 is not a simple eigenvalue of K)"))
                continue
            used += 1
            for m in range(1, max_degree + 1):
                res, miss = _exact_resonant(P.exponents, m)
                if not res and (m not in certs or miss > certs[m].margin):
                    certs[m] = ObstructionCertificate(m, P.darboux_point, tuple(P.exponents), miss, 0.0, i, True)
        return IntegrabilityObstructions(max_degree, certs, used, skipped, True)
    if lines is None:
        lines = q.invariant_lines()
    lines = list(lines)
    cand = [i for i, L in enumerate(lines) if not L.is_equilibrium_line]
    if not cand:
        return IntegrabilityObstructions(max_degree, certs, 0, skipped, False)
    R = [lines[i].kovalevskaya_exponents for i in cand]
    if any(r is None for r in R):                 # lines built elsewhere: compute all exponents in one batch
        R = kovalevskaya_exponents(q.Q, np.array([lines[i].direction for i in cand]),
                                   np.array([lines[i].c for i in cand]))
    R = np.array(R, dtype=complex).reshape(len(cand), q.p - 1)
    mult = np.array([lines[i].multiplicity for i in cand])
    res = np.array([lines[i].residual for i in cand])
    minus1 = np.any(np.abs(R + 1) <= rtol * (1 + np.abs(R).max(axis=1, initial=0.0))[:, None], axis=1)
    scale = max(float(np.abs(q.Q).max()), 1e-300)
    use = (mult == 1) & (res <= 1e-10 * scale) & ~minus1
    for j in np.nonzero(~use)[0]:
        i = cand[j]
        skipped.append((i, f"multiplicity {mult[j]} (exponents not accurate enough to decide)" if mult[j] != 1 else
                        f"residual {res[j]:.2g} of v(xi) = c xi too large" if res[j] > 1e-10 * scale else
                        "an exponent equals -1 (-1 is not a simple eigenvalue of K)"))
    idx = [cand[j] for j in np.nonzero(use)[0]]
    R = R[use]
    if len(idx):
        margin, tol = resonances(R, max_degree, rtol)
        score = np.where(margin > tol, margin, -np.inf)       # (B, M): the best certificate per degree
        best = np.argmax(score, axis=0)
        for m in np.nonzero(score[best, np.arange(max_degree)] > -np.inf)[0] + 1:
            b = int(best[m - 1])
            certs[int(m)] = ObstructionCertificate(int(m), darboux_point(lines[idx[b]]), tuple(R[b]),
                                                   float(margin[b, m - 1]), float(tol[b, m - 1]), idx[b])
    return IntegrabilityObstructions(max_degree, certs, len(idx), skipped, False)


# ----------------------------------------------------------------------------- exact integral search
def _rational_tensor(q):
    """Q as nested sympy Rationals: exact for dyadic floats (``exact.rational_tensor``), otherwise each entry is
    the fraction with denominator <= 10^6 nearest to it, accepted only if it rounds back to within 2 ulp
    (e.g. 1/12 from an inertia (1, 2, 3)); ExactCheckError names the first entry that is not such a fraction."""
    try:
        return rational_tensor(q)
    except ExactCheckError:
        Q = np.asarray(q.Q)
        if np.iscomplexobj(Q):
            raise
    p = Q.shape[0]
    R = [[[None] * p for _ in range(p)] for _ in range(p)]
    for i, j, k in itertools.product(range(p), repeat=3):
        x = float(Q[i, j, k])
        f = Fraction(x).limit_denominator(10 ** 6)
        if abs(float(f) - x) > 2 * np.spacing(abs(x)):
            raise ExactCheckError(f"Q[{i},{j},{k}] = {x!r} is not a fraction with denominator <= 10^6 "
                                  f"(nearest {f}, off by {abs(float(f) - x):.3g}); the exact path needs rational Q")
        R[i][j][k] = sp.Rational(f.numerator, f.denominator)
    return R


def _qq_tensor(q):
    R = _rational_tensor(q)
    return [[[QQ(int(x.p), int(x.q)) for x in row] for row in mat] for mat in R]


def _monomials(p, m):
    return [tuple(np.bincount(np.array(c, dtype=int), minlength=p))
            for c in itertools.combinations_with_replacement(range(p), m)]


def polynomial_first_integrals(q, degree):
    """Exact basis of the homogeneous polynomial first integrals of degree ``degree`` (rational Q).

    F = sum_a f_a x^a over the monomials of degree m; grad F . v = sum_a f_a sum_j a_j x^(a - e_j)
    sum_{k,l} Q[j,k,l] x_k x_l = 0 is a linear system over QQ in the f_a (one row per monomial of degree
    m + 1); its null space (sympy DomainMatrix, exact) is returned as sympy polynomials in q's variables.
    Products of lower-degree integrals are included (they are integrals of degree m too).
    """
    m = _check_degree(degree)
    Qq = _qq_tensor(q)
    p = len(Qq)
    cols = _monomials(p, m)
    rows = {mon: i for i, mon in enumerate(_monomials(p, m + 1))}
    nz = [(j, k, l, Qq[j][k][l]) for j in range(p) for k in range(p) for l in range(p) if Qq[j][k][l]]
    data = {}
    for ci, a in enumerate(cols):
        for j, k, l, c in nz:
            if a[j] == 0:
                continue
            t = list(a)
            t[j] -= 1
            t[k] += 1
            t[l] += 1
            ri = rows[tuple(t)]
            r = data.setdefault(ri, {})
            r[ci] = r.get(ci, QQ(0)) + a[j] * c
    data = {i: {j: x for j, x in r.items() if x} for i, r in data.items()}
    data = {i: r for i, r in data.items() if r}
    M = DomainMatrix(data, (len(rows), len(cols)), QQ)
    null = M.nullspace().to_Matrix() if len(cols) else sp.zeros(0, 0)
    xs = [sp.Symbol(str(v)) for v in getattr(q, "variables", [f"x{i + 1}" for i in range(p)])]
    monos = [sp.Mul(*[x ** e for x, e in zip(xs, a)]) for a in cols]
    return [sp.expand(sum(null[r, j] * monos[j] for j in range(len(cols)) if null[r, j]))
            for r in range(null.rows)]


# ----------------------------------------------------------------------------- exact exponents
@dataclass
class ExactDarbouxPoint:
    """A Darboux point (numeric, for identification) with its exact Kovalevskaya exponents (sympy algebraic
    numbers, Rational or CRootOf, with multiplicity) and the multiplicity of its line."""

    darboux_point: np.ndarray
    exponents: tuple
    multiplicity: int
    line_index: int

    def __repr__(self):
        return (f"ExactDarbouxPoint(d={_fmt_vec(self.darboux_point)}, exponents=({', '.join(map(sp.sstr, self.exponents))}), "
                f"multiplicity={self.multiplicity})")


@dataclass(frozen=True, eq=False)
class AlgebraicExponent:
    """An algebraic number of degree >= 3: the root of the irreducible ``poly`` (over Q) nearest to ``value``
    (an mpmath number correct to ~40 digits; the other roots of ``poly`` are farther than 1e-20). ``sympy()``
    gives the sympy CRootOf (slow for non-real roots: sympy isolates all complex roots)."""

    poly: sp.Poly
    value: object
    is_Rational = False

    def sympy(self):
        roots = self.poly.all_roots()
        with mpmath.workdps(40):
            return min(roots, key=lambda r: abs(mpmath.mpmathify(complex(sp.N(r, 45))) - self.value))

    def __complex__(self):
        return complex(self.value)

    def __repr__(self):
        return f"AlgebraicExponent(degree {self.poly.degree()}, {complex(self.value):.12g})"

    __str__ = __repr__


def _exact_roots(f):
    """The roots of the irreducible rational polynomial f: Rationals (degree 1), sympy surds (degree 2),
    AlgebraicExponent with 40-digit values from mpmath.polyroots (degree >= 3; root separation checked)."""
    if f.degree() <= 2:
        return list(sp.roots(f, multiple=True))
    with mpmath.workdps(60):
        coeffs = [mpmath.mpf(int(sp.Rational(a).p)) / int(sp.Rational(a).q) for a in f.all_coeffs()]
        rr, err = mpmath.polyroots(coeffs, maxsteps=500, extraprec=300, error=True)
        sep = min(abs(a - b) for a, b in itertools.combinations(rr, 2))
    if not err < 1e-40 or not sep > 1e-20:
        raise ExactCheckError(f"roots of the degree-{f.degree()} exponent factor not resolved (error {float(err):.2g}, "
                              f"separation {float(sep):.2g})")
    return [AlgebraicExponent(f, r) for r in rr]


def _exponent_polynomial(R, p):
    """prod_d det(rho Id - K(d))^mult(d) over the Darboux points (trivial point divided out), in Q[rho], and
    the total multiplicity of the Darboux points.

    eta = -d solves v(eta) = eta. In A = Q[eta] / <v(eta) - eta> (zero-dimensional, dim A = 2^p counted with
    multiplicity, eta = 0 simple since D(v - Id)(0) = -Id) the multiplication matrices M_k of eta_k commute;
    K(eta) = Id - 2 sum_k Q[:,:,k] eta_k becomes the rational matrix Kb = Id - 2 sum_k Q[:,:,k] (x) M_k, and the
    determinant of a block matrix with commuting blocks is the determinant of its formal determinant
    (Kovacs, Silver and Williams 1999), so det(rho - Kb) = prod_P det(rho Id - K(P))^mult(P) (Stickelberger).
    The point eta = 0 (K = Id) gives (rho - 1)^p.
    """
    xs = sp.symbols(f"eta1:{p + 1}")
    eqs = [sp.expand(sum(R[i][j][k] * xs[j] * xs[k] for j in range(p) for k in range(p)) - xs[i]) for i in range(p)]
    G = sp.groebner(eqs, *xs, order="grevlex")
    if not G.is_zero_dimensional:
        raise ExactCheckError("v(eta) = eta has a positive-dimensional solution set (a curve of Darboux points); "
                              "exact exponents need finitely many")
    std = _standard_monomials(G, xs)
    N = len(std)
    Ms = [np.array(_mult_matrix(G, xs, std, x).tolist(), dtype=object) for x in xs]
    Kb = np.zeros((p * N, p * N), dtype=object)
    for k in range(p):
        Kb = Kb + np.kron(np.array([[-2 * R[i][j][k] for j in range(p)] for i in range(p)], dtype=object), Ms[k])
    Kb = Kb + np.eye(p * N, dtype=int).astype(object)
    rho = sp.Symbol("rho")
    dm = DomainMatrix([[QQ(int(sp.Rational(x).p), int(sp.Rational(x).q)) for x in row] for row in Kb], Kb.shape, QQ)
    chi = sp.Poly(dm.charpoly(), rho)
    quo, rem = sp.div(chi, sp.Poly((rho - 1) ** p, rho))
    if not rem.is_zero:
        raise ExactCheckError("the trivial Darboux point eta = 0 did not divide out: (rho - 1)^p does not divide "
                              "the exponent polynomial")
    return quo, N - 1


def exact_kovalevskaya_exponents(q, lines=None):
    """Exact Kovalevskaya exponents of a rational QuadraticSystem (p <= 4): a list of ExactDarbouxPoint, one per
    invariant line with c != 0, in the order of ``lines`` (q.invariant_lines() if None).

    The exponents are the roots of the exact polynomial of ``_exponent_polynomial`` (factored over Q, roots as
    sympy Rational / CRootOf), after removing one root -1 per Darboux point; each numeric exponent of a line is
    matched to the nearest exact root (40 digits), counted with the line's multiplicity, and the match must use
    up the roots exactly (else ExactCheckError): a check of the numeric exponents as well.
    """
    R = _rational_tensor(q)
    p = len(R)
    if p > 4:
        raise ExactCheckError(f"exact exponents support p <= 4, got p = {p} (the Groebner basis blows up)")
    if lines is None:
        lines = q.invariant_lines()
    live = [(i, L) for i, L in enumerate(lines) if not L.is_equilibrium_line]
    chi, npts = _exponent_polynomial(R, p)
    if sum(L.multiplicity for _, L in live) != npts:
        raise ExactCheckError(f"the numeric lines carry {sum(L.multiplicity for _, L in live)} Darboux points "
                              f"(with multiplicity), the exact quotient {npts}")
    roots, counts = [], []
    for fac, e in sp.factor_list(chi.as_expr(), chi.gens[0])[1]:
        for r in _exact_roots(sp.Poly(fac, chi.gens[0])):
            roots.append(r)
            counts.append(e)
    ones = [i for i, r in enumerate(roots) if r == -1]
    if not ones or counts[ones[0]] < npts:
        raise ExactCheckError(f"the factor (rho + 1) should appear at least {npts} times (once per Darboux point)")
    counts[ones[0]] -= npts
    with mpmath.workdps(40):
        vals = np.array([complex(_mp(r)) for r in roots])
    out = []
    for i, L in live:
        rho = L.kovalevskaya_exponents if getattr(L, "kovalevskaya_exponents", None) is not None else \
            kovalevskaya_exponents(q.Q, L.direction[None], np.array([L.c]))[0]
        ex = []
        for r in rho:
            dist = np.abs(vals - r)
            order = np.argsort(dist)
            j = next((j for j in order if counts[j] >= L.multiplicity), None)
            tol = 1e-6 * (1 + abs(r)) if L.multiplicity == 1 else 1e-3 * (1 + abs(r))
            if j is None or dist[j] > tol:
                raise ExactCheckError(f"numeric exponent {r:.12g} of line {i} has no exact root within {tol:.1g} "
                                      f"(nearest {dist[order[0]]:.3g})")
            others = dist[[k for k in order if abs(vals[k] - vals[j]) > 0]]
            if others.size and others.min() < 10 * dist[j]:
                raise ExactCheckError(f"numeric exponent {r:.12g} of line {i} does not separate the exact roots "
                                      f"{sp.sstr(roots[j])} and a neighbour at distance {others.min():.3g}")
            counts[j] -= L.multiplicity
            ex.append(roots[j])
        out.append(ExactDarbouxPoint(darboux_point(L), tuple(ex), int(L.multiplicity), i))
    if any(c != 0 for c in counts):
        left = [(sp.sstr(r), c) for r, c in zip(roots, counts) if c]
        raise ExactCheckError(f"exact exponents left unmatched by the numeric lines: {left}")
    return out
