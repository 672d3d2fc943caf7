"""Exact cross-check of the invariant lines for rational Q (sympy, no floating point until the roots).

- p = 2: the directions are the roots of the binary cubic  xi_1 v_2(xi) - xi_2 v_1(xi)  (the 2x2 minor
  of [xi, v(xi)]); multiplicities are its root multiplicities; v_2 xi_1 - v_1 xi_2 == 0 means every
  line is invariant. For a cubic in one variable this is the classical resultant condition
  Res(v_1 - c xi_1, v_2 - c xi_2) in c.
- p <= 4: the ideal I = < v_i(xi) - c xi_i, l.(xi, c) - 1 > in Q[xi, c] (random chart l, Cox, Little &
  O'Shea, "Using Algebraic Geometry", ch. 2): groebner(order="grevlex"), dimension test
  (is_zero_dimensional), standard monomials (their number is dim Q[x]/I = the number of solutions
  with multiplicity, 2^p when finite), the multiplication matrix M_u of u = r.(xi, c) whose
  characteristic polynomial is prod_P (u - u(P))^mult(P) (Stickelberger), coordinates from the
  traces tr(M_{x_i} M_u^k) = sum_P mult(P) x_i(P) u(P)^k (Vandermonde system, mpmath at 60 digits),
  and `.fglm("lex")` whose last element (univariate in c) must vanish at every c(P).
Not sympy.solve / solve_poly_system: for p = 3 they return only the trivial solution.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp

__all__ = ["ExactLines", "exact_invariant_lines", "rational_tensor"]


class ExactCheckError(ValueError):
    """The exact computation could not be carried out (non-rational input, p too large)."""


@dataclass
class ExactLines:
    """Result of the exact computation: points (direction, c, multiplicity), zero-dimensionality."""

    p: int
    zero_dimensional: bool
    points: list            # [(direction complex (p,), c complex, multiplicity int)]
    quotient_dimension: int | None = None
    method: str = ""

    @property
    def total_multiplicity(self) -> int:
        return int(sum(m for _, _, m in self.points))

    @property
    def real_count(self) -> int:
        return int(sum(m for d, c, m in self.points
                       if np.all(np.abs(d.imag) < 1e-12) and abs(np.imag(c)) < 1e-12))


def rational_tensor(q):
    """Q as a nested list of sympy Rationals (exact for floats that are dyadic, e.g. halves of ints)."""
    Q = q.Q if hasattr(q, "Q") else np.asarray(q)
    if np.iscomplexobj(Q):
        raise ExactCheckError("exact check needs a real rational Q; got complex entries")
    p = Q.shape[0]
    R = [[[sp.Rational(float(Q[i, j, k])) for k in range(p)] for j in range(p)] for i in range(p)]
    for i, j, k in itertools.product(range(p), repeat=3):
        if R[i][j][k].q > 2 ** 20:
            raise ExactCheckError(f"Q[{i},{j},{k}] = {Q[i, j, k]!r} is not a short rational "
                                  f"(denominator {R[i][j][k].q}); pass integers or simple fractions")
    return R


def _fields(R, xs):
    p = len(xs)
    return [sp.expand(sum(R[i][j][k] * xs[j] * xs[k] for j in range(p) for k in range(p)))
            for i in range(p)]


def _normalise(xi, c):
    xi = np.asarray(xi, dtype=complex)
    n = np.linalg.norm(xi)
    xi, c = xi / n, c / n
    if abs(c) > 1e-12:
        ph = np.exp(-1j * np.angle(c))
    else:
        ph = np.exp(-1j * np.angle(xi[np.argmax(np.abs(xi))]))
        c = 0.0
    return xi * ph, complex(c * ph)


def _binary_cubic(R):
    """p = 2: roots of the binary cubic xi_1 v_2 - xi_2 v_1 with multiplicities."""
    x, y = sp.symbols("x y")
    v1, v2 = _fields(R, [x, y])
    cubic = sp.expand(x * v2 - y * v1)
    if cubic == 0:
        return ExactLines(2, False, [], None, "binary cubic (identically zero)")
    pts = []
    f = sp.Poly(cubic.subs(y, 1), x)           # directions (x, 1)
    for fac, mult in sp.sqf_list(f)[1]:
        for r in sp.Poly(fac, x).nroots(n=40):
            pts.append(((complex(r), 1.0), mult))
    deg_inf = 3 - f.degree()                   # roots at y = 0: direction (1, 0)
    if deg_inf > 0:
        pts.append(((1.0, 0.0), deg_inf))
    out = []
    for d, m in pts:
        d = np.array(d, dtype=complex)
        vv = np.array([complex(sp.N(e.subs({x: d[0], y: d[1]}), 30)) for e in (v1, v2)])
        k = np.argmax(np.abs(d))
        out.append((*_normalise(d, vv[k] / d[k]), int(m)))
    return ExactLines(2, True, out, 3, "binary cubic")


def _standard_monomials(G, gens):
    lms = [sp.Poly(g, *gens).monoms(order="grevlex")[0] for g in G.exprs]
    std, frontier = [], [tuple([0] * len(gens))]
    seen = set(frontier)
    while frontier:
        m = frontier.pop()
        if any(all(a >= b for a, b in zip(m, lm)) for lm in lms):
            continue
        std.append(m)
        for i in range(len(gens)):
            n = tuple(a + (j == i) for j, a in enumerate(m))
            if n not in seen:
                seen.add(n)
                frontier.append(n)
    return sorted(std)


def _mult_matrix(G, gens, std, f):
    """Matrix of multiplication by f on Q[x]/I in the basis of standard monomials."""
    idx = {m: i for i, m in enumerate(std)}
    M = sp.zeros(len(std), len(std))
    for j, m in enumerate(std):
        mono = sp.Mul(*[g ** e for g, e in zip(gens, m)])
        rem = G.reduce(sp.expand(f * mono))[1]
        for mon, coeff in sp.Poly(rem, *gens).terms():
            M[idx[mon], j] = coeff
    return M


def _groebner(R, chart, sep, dps=60):
    p = len(R)
    xs = sp.symbols(f"xi1:{p + 1}")
    c = sp.Symbol("c")
    gens = list(xs) + [c]
    v = _fields(R, xs)
    eqs = [sp.expand(v[i] - c * xs[i]) for i in range(p)]
    eqs.append(sum(l * g for l, g in zip(chart, gens)) - 1)
    G = sp.groebner(eqs, *gens, order="grevlex")
    if not G.is_zero_dimensional:
        return ExactLines(p, False, [], None, "groebner grevlex (positive-dimensional)")
    std = _standard_monomials(G, gens)
    if len(std) != 2 ** p:
        return None                                # a solution sits on the chart's infinity
    u = sum(r * g for r, g in zip(sep, gens))
    Mu = _mult_matrix(G, gens, std, u)
    lam = sp.Symbol("lam")
    cp = Mu.charpoly(lam)
    roots = []
    with mpmath.workdps(dps):
        for fac, mult in sp.sqf_list(cp.as_expr(), lam)[1]:
            coeffs = [mpmath.mpf(sp.Rational(a).p) / sp.Rational(a).q for a in sp.Poly(fac, lam).all_coeffs()]
            rr = mpmath.polyroots(coeffs, maxsteps=400, extraprec=4 * dps) if len(coeffs) > 1 else []
            roots += [(r, int(mult)) for r in np.atleast_1d(rr)]
        nr = len(roots)
        V = mpmath.matrix(nr, nr)
        for k in range(nr):
            for j, (r, _) in enumerate(roots):
                V[k, j] = r ** k
        coords = []
        powers = [sp.eye(len(std))]
        for _ in range(nr - 1):
            powers.append(Mu * powers[-1])
        for g in gens:
            Mg = _mult_matrix(G, gens, std, g)
            tr = mpmath.matrix([mpmath.mpf(sp.Rational((Mg * P).trace()).p) / sp.Rational((Mg * P).trace()).q
                                for P in powers])
            y = mpmath.lu_solve(V, tr)
            coords.append([complex(y[j] / roots[j][1]) for j in range(nr)])
    coords = np.array(coords).T                    # (nr, p + 1)
    # fglm to lex: the last basis element is univariate in c and must vanish at every c(P)
    lex = G.fglm("lex")
    elim = sp.Poly(lex.exprs[-1], c)
    scale = max(abs(complex(a)) for a in elim.all_coeffs())
    for z in coords:
        val = abs(complex(elim.eval(sp.Float(z[-1].real, 30) + sp.I * sp.Float(z[-1].imag, 30))))
        if val > 1e-8 * scale * max(1, abs(z[-1])) ** elim.degree():
            return None                            # u did not separate the points
    pts = []
    Qn = np.array(R, dtype=float)
    for z, (_, m) in zip(coords, roots):
        F = np.einsum("ijk,j,k->i", Qn, z[:-1], z[:-1]) - z[-1] * z[:-1]
        if np.linalg.norm(F) > 1e-9 * (1 + np.linalg.norm(z)) ** 2:
            return None                            # u did not separate the points
        if np.linalg.norm(z[:-1]) < 1e-10 * abs(z[-1]):
            continue                               # the trivial point [0 : ... : 0 : 1]
        pts.append((*_normalise(z[:-1], z[-1]), m))
    return ExactLines(p, True, pts, len(std), "groebner grevlex + fglm lex + multiplication matrix")


def exact_invariant_lines(q, seed=0, method="auto"):
    """Exact (symbolic) invariant lines of a rational QuadraticSystem, for p <= 4.

    method: "auto" (binary cubic for p = 2, Groebner otherwise), "cubic" or "groebner".
    The chart l and separating form r are small random integers; if the quotient dimension is
    not 2^p (a point at the chart's infinity) new ones are drawn.
    """
    R = rational_tensor(q)
    p = len(R)
    if p > 4:
        raise ExactCheckError(f"exact check supports p <= 4, got p = {p} (Groebner bases blow up)")
    if method == "cubic" or (method == "auto" and p == 2):
        if p != 2:
            raise ExactCheckError("the binary cubic method is for p = 2 only")
        return _binary_cubic(R)
    rng = np.random.default_rng(seed)
    res = None
    for _ in range(6):
        chart = [int(a) for a in rng.integers(-7, 8, size=p + 1)]
        chart[-1] = int(rng.integers(1, 8))
        sep = [int(a) for a in rng.integers(-99, 100, size=p + 1)]
        res = _groebner(R, chart, sep)
        if res is not None:
            return res
    raise ExactCheckError("no chart / separating form found in 6 random draws")
