"""Exact cross-check of the invariant lines for rational Q (sympy, no floating point until the roots).

- p = 2: the directions are the roots of the binary cubic  xi_1 v_2(xi) - xi_2 v_1(xi)  (the 2x2 minor
  of [xi, v(xi)]); multiplicities are its root multiplicities; v_2 xi_1 - v_1 xi_2 == 0 means every
  line is invariant. For a cubic in one variable this is the classical resultant condition
  Res(v_1 - c xi_1, v_2 - c xi_2) in c.
- p = 3: Res_{y2}(g1, g2) of the two cubics g_i = v_i - v_3 y_i in the chart y_3 = 1 after a
  random rational change of coordinates (degree 7; roots with multiplicities give the lines).
- p <= EXACT_MAX_P (6): the ideal I = < v_i(xi) - c xi_i, l.(xi, c) - 1 > in Q[xi, c] (random chart l, Cox, Little &
  O'Shea, "Using Algebraic Geometry", ch. 2): groebner(order="grevlex"), dimension test
  (is_zero_dimensional), standard monomials (their number is dim Q[x]/I = the number of solutions
  with multiplicity, 2^p when finite), the multiplication matrix M_u of u = r.(xi, c) whose
  characteristic polynomial is prod_P (u - u(P))^mult(P) (Stickelberger), the Hermite form (u separates the
  points: its rank is their number, its signature the number of real ones), and the coordinates by the rational
  univariate representation x_g(P) = G_g(u(P)) / G_1(u(P)) (Rouillier 1999; servo.quadratic.rur) at the
  roots u(P), isolated and evaluated in ball arithmetic with python-flint (each coordinate proved to the double
  it is rounded to); for p <= 4 also `.fglm("lex")`, whose last element (univariate in c) must vanish at every
  c(P).
Not sympy.solve / solve_poly_system: for p = 3 they return only the trivial solution.
"""
from __future__ import annotations

from dataclasses import dataclass

from typing import Any

import mpmath
import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

from ..errors import ExactCheckError
from .certify import equilibrate, normalise_line, pairwise_angles
from .krawczyk import have_flint, require_flint, working_precision
from .line_types import InvariantLines
from .polynomials import charpoly, hermite_counts, multiplication_matrix, quadratic_fields, rational_tensor, standard_monomials
from .protocol import QuadraticField
from .rur import rur_points

# rational_tensor lives in servo.quadratic.polynomials and is re-exported here, where it was first public
__all__ = ["ExactLines", "exact_invariant_lines", "rational_tensor", "compare_with_exact"]


@dataclass
class ExactLines:
    """Result of the exact computation: points (direction, c, multiplicity), zero-dimensionality."""

    p: int
    zero_dimensional: bool
    points: list[tuple[Any, complex, int]]   # [(direction complex (p,), c complex, multiplicity int)]
    quotient_dimension: int | None = None
    method: str = ""
    #: reality of each point decided exactly (binary cubic: CRootOf.is_real; Groebner: Sturm counts of the
    #: eigenvalues u(P) and the Hermite form), parallel to ``points``; None: not decided exactly (then
    #: ``is_real`` falls back to imaginary parts below 1e-12, which is not a proof)
    reality: list[bool] | None = None

    def is_real(self, k: int) -> bool:
        """Whether point k is a real line: the exact decision when there is one (``reality``)."""
        if self.reality is not None:
            return bool(self.reality[k])
        d, c, _ = self.points[k]
        d = np.asarray(d, dtype=complex)
        return bool(np.all(np.abs(d.imag) < 1e-12) and abs(np.imag(c)) < 1e-12 * max(1.0, abs(c)))

    @property
    def total_multiplicity(self) -> int:
        """Sum of the multiplicities of the lines (the trivial point excluded)."""
        return int(sum(m for _, _, m in self.points))

    @property
    def real_count(self) -> int:
        """Number of real lines counted with multiplicity (decided exactly where ``reality`` is set)."""
        return int(sum(m for k, (_, _, m) in enumerate(self.points) if self.is_real(k)))


#: bits of the certified roots of an irreducible factor (python-flint); the roots are used at 40 digits
ROOT_BITS = 256


def _factor_roots(fac):
    """The roots of the irreducible rational polynomial ``fac`` (sympy Poly), each as (value at 40 digits,
    real or not), the reality decided exactly. With python-flint: ``fmpz_poly.complex_roots`` (FLINT's
    arb_fmpz_poly_complex_roots: certified isolation in ball arithmetic; real roots come with an imaginary part
    that is exactly zero, which the real-root count of the polynomial decides, not the size of a number),
    refined to ROOT_BITS bits; every ball must be tighter than 1e-45 of its root. Without it (or if a ball is
    wider): sympy's CRootOf (isolating intervals over QQ), exact too but slow for coefficients of 2^+-66
    (seconds per cubic: most of the fuzz's time before)."""
    if have_flint():
        fl = require_flint("root isolation")
        _, prim = fac.clear_denoms()
        with working_precision(ROOT_BITS):
            roots = fl.fmpz_poly([int(a) for a in reversed(prim.all_coeffs())]).complex_roots()
            out = []
            for z, m in roots:
                if m != 1:                          # cannot happen for an irreducible factor: take the slow path
                    break
                tight = all(float(part.rad()) <= 1e-45 * max(abs(float(part.mid())), 1e-300) or part.is_zero()
                            for part in (z.real, z.imag))
                if not tight:
                    break
                re = sp.Float(z.real.mid().str(50, radius=False), 45)
                if z.imag.is_zero():
                    out.append((re, True))
                else:
                    out.append((re + sp.I * sp.Float(z.imag.mid().str(50, radius=False), 45), False))
            else:
                if len(out) == fac.degree():
                    return out
    # exact roots (CRootOf: isolating intervals over QQ): is_real is decided exactly, not by the size of
    # an imaginary part; the value is taken at 40 digits
    out = []
    for root in fac.all_roots():
        r = sp.N(root, 40)
        out.append((sp.re(r) if root.is_real else r, bool(root.is_real)))
    return out


def _binary_cubic(R):
    """p = 2: roots of the binary cubic xi_1 v_2 - xi_2 v_1 with multiplicities."""
    x, y = sp.symbols("x y")
    v1, v2 = quadratic_fields(R, [x, y])
    cubic = sp.expand(x * v2 - y * v1)
    if cubic == 0:
        return ExactLines(2, False, [], None, "binary cubic (identically zero)")
    pts, reality, czero = [], [], []
    f = sp.Poly(cubic.subs(y, 1), x)           # directions (x, 1)
    # c = 0 on a line (x, 1) exactly when v(x, 1) = 0: x is a root of g = gcd(v1(x, 1), v2(x, 1)); an
    # irreducible factor of the cubic has all its roots there or none
    g = sp.gcd(sp.Poly(v1.subs(y, 1), x), sp.Poly(v2.subs(y, 1), x))
    for fac, mult in sp.factor_list(f)[1]:
        fac = sp.Poly(fac, x)
        zero_c = g.degree() > 0 and sp.rem(g, fac).is_zero
        for r, is_real in _factor_roots(fac):
            pts.append(((r, sp.Integer(1)) if abs(r) <= 1 else (sp.Integer(1), 1 / r), mult))
            reality.append(is_real)
            czero.append(bool(zero_c))
    deg_inf = 3 - f.degree()                   # roots at y = 0: direction (1, 0)
    if deg_inf > 0:
        pts.append(((sp.Integer(1), sp.Integer(0)), deg_inf))
        reality.append(True)
        czero.append(R[0][0][0] == 0 and R[1][0][0] == 0)
    out = []
    for (d, m), zero_c in zip(pts, czero):     # c = v_k(d) / d_k at 40 digits, d_k the unit entry
        k = 0 if d[0] == 1 else 1
        vk = sp.N((v1, v2)[k].subs({x: d[0], y: d[1]}), 40)
        c = 0.0 if zero_c else complex(vk)     # an equilibrium line: c = 0 exactly (decided over QQ above)
        dd = np.array([complex(sp.N(a, 40)) for a in d])
        dn, cn = normalise_line(dd, c, 0.0 if c != 0 else np.inf)
        if reality[len(out)]:                  # a real root of a real cubic: a real line with real c
            dn, cn = dn.real.astype(complex), complex(cn.real)
        out.append((dn, cn, int(m)))
    return ExactLines(2, True, out, 3, "binary cubic", reality)


def _resultant_p3(R, rng):
    """p = 3: lines via Res_{xi2}(g1, g2) after a random rational change of coordinates x = T y.

    In the chart y3 = 1, with c = v3: g1 = v1 - v3 y1, g2 = v2 - v3 y2 (cubics). The leading
    coefficient of g2 in y2 is a non-zero constant for generic T, so the roots of the resultant
    r(y1) = Res_{y2}(g1, g2) (degree 7 = 2^3 - 1) are exactly the y1 of the lines, with their
    multiplicities. Returns None if T is not generic (degree or leading coefficient check fails).
    """
    T = sp.Matrix(3, 3, [int(a) for a in rng.integers(-3, 4, size=9)])
    if T.det() == 0:
        return None
    ys = sp.symbols("y1:4")
    y1, y2, _ = ys
    xs = T * sp.Matrix(ys)
    v = quadratic_fields(R, list(xs))
    w = T.inv() * sp.Matrix(v)                    # v in y coordinates: T^-1 v(T y)
    w = [sp.expand(e.subs(ys[2], 1)) for e in w]
    g1 = sp.expand(w[0] - w[2] * y1)
    g2 = sp.expand(w[1] - w[2] * y2)
    if g1 == 0 or g2 == 0:                        # a whole curve of solutions in the chart
        return ExactLines(3, False, [], None, "resultant (g1 or g2 identically zero)")
    if sp.Poly(g2, y2).degree() != 3 or sp.Poly(g2, y2).LC().free_symbols:
        return None
    res = sp.Poly(sp.resultant(g1, g2, y2), y1)
    if res.is_zero:
        return ExactLines(3, False, [], None, "resultant (identically zero)")
    if res.degree() != 7:
        return None
    pts = []
    Tn = np.array(T.tolist(), dtype=float)
    Qn = np.array(R, dtype=float)
    for fac, mult in sp.sqf_list(res)[1]:
        for r in sp.Poly(fac, y1).nroots(n=40, maxsteps=200):
            coeffs = [complex(a) for a in sp.Poly(g2.subs(y1, r), y2).all_coeffs()]
            f1 = sp.lambdify(y2, g1.subs(y1, r), "numpy")
            r2s = np.roots(coeffs)
            g1v = np.abs([f1(s) for s in r2s]) / (1 + np.abs(r2s)) ** 3
            common = r2s[g1v < 1e-8 * max(1.0, float(np.max(np.abs(coeffs))))]
            if len(common) == 0 or np.ptp(np.abs(common)) > 1e-6 or np.ptp(common.real) > 1e-6:
                return None                        # y1 does not separate the lines: redraw T
            r2 = common[0]
            x = Tn @ np.array([complex(r), complex(r2), 1.0])
            vx = np.einsum("ijk,j,k->i", Qn, x, x)
            k = int(np.argmax(np.abs(x)))
            pts.append((*normalise_line(x, vx[k] / x[k]), int(mult)))
    return ExactLines(3, True, pts, None, "resultant Res_y2(g1, g2)")


def _groebner(R, chart, sep, dps=120):
    p = len(R)
    xs = sp.symbols(f"xi1:{p + 1}")
    c = sp.Symbol("c")
    gens = list(xs) + [c]
    v = quadratic_fields(R, xs)
    eqs = [sp.expand(v[i] - c * xs[i]) for i in range(p)]
    eqs.append(sum(l * g for l, g in zip(chart, gens)) - 1)
    G = sp.groebner(eqs, *gens, order="grevlex")
    if not G.is_zero_dimensional:
        return ExactLines(p, False, [], None, "groebner grevlex (positive-dimensional)")
    std = standard_monomials(G, gens)
    if len(std) != 2 ** p:
        return None                                # a solution sits on the chart's infinity
    Mgens = [multiplication_matrix(G, gens, std, g) for g in gens]
    Mu = sp.zeros(len(std), len(std))              # u = sep . (xi, c) is linear: M_u = sum_i sep_i M_{x_i}
    for r, Mg in zip(sep, Mgens):
        Mu += r * Mg
    lam = sp.Symbol("lam")
    cp = charpoly(Mu, lam)
    cpJ = _charpoly_c_zero(v, gens, chart, sep, lam)
    factors = [(sp.Poly(fac, lam), int(mult)) for fac, mult in sp.factor_list(cp.as_expr(), lam)[1]]
    czero_of = [cpJ is not None and sp.rem(cpJ, fp).is_zero for fp, _ in factors]
    rank, signature = hermite_counts(Mgens, std)
    pts = rur_points(factors, Mgens, Mu, dps)
    if pts is None:
        return None                                # the roots not told apart at RUR_MAX_BITS
    if rank != len(pts) or signature != sum(isreal for _, _, isreal, _ in pts):
        return None                                # u does not separate the points (proved by the Hermite form)
    if p <= 4:
        # fglm to lex: the last basis element is univariate in c and must vanish at every c(P) (a check of the
        # coordinates beside the residuals below; above p = 4 it takes longer than the rest, 20 s at p = 6, and
        # the Hermite rank has already proved that u separates the points)
        lex = G.fglm("lex")
        elim = sp.Poly(lex.exprs[-1], c)
        scale = max(abs(complex(a)) for a in elim.all_coeffs())
        for z, _, _, _ in pts:
            val = abs(complex(elim.eval(sp.Float(z[-1].real, 30) + sp.I * sp.Float(z[-1].imag, 30))))
            if val > 1e-8 * scale * max(1, abs(z[-1])) ** elim.degree():
                return None                        # u did not separate the points
    out, reality = [], []
    Qn = np.array(R, dtype=float)
    for z, m, isreal, k in pts:
        zero_c = bool(czero_of[k])
        F = np.einsum("ijk,j,k->i", Qn, z[:-1], z[:-1]) - z[-1] * z[:-1]
        if np.linalg.norm(F) > 1e-9 * (1 + np.linalg.norm(z)) ** 2:
            return None                            # u did not separate the points
        if np.linalg.norm(z[:-1]) < 1e-10 * abs(z[-1]):
            continue                               # the trivial point [0 : ... : 0 : 1]
        if isreal:                                 # the real chart and u: z is real up to rounding
            z = z.real.astype(complex)
        d, cc = normalise_line(z[:-1], 0.0 if zero_c else z[-1], np.inf if zero_c else 0.0)
        if isreal:
            d, cc = d.real.astype(complex), complex(cc.real)
        out.append((d, cc, m))
        reality.append(bool(isreal))
    return ExactLines(p, True, out, len(std), "groebner grevlex + rational univariate representation", reality)


def _charpoly_c_zero(v, gens, chart, sep, lam):
    """The characteristic polynomial (in ``lam``) of multiplication by u = sep . (xi, c) on Q[x] / J,
    J = < v(xi), c, chart . (xi, c) - 1 >: its roots are the values u(P) at the solutions with c = 0 (the
    equilibrium lines), or None if there is none. An irreducible factor over QQ of the characteristic
    polynomial of the whole system has either all its roots among these or none (its roots are the values at
    Galois-conjugate points, and c(P) = 0 is preserved by conjugation), so c = 0 is decided exactly."""
    c = gens[-1]
    eqs = [sp.expand(e.subs(c, 0)) for e in v] + [c, sum(l * g for l, g in zip(chart, gens)) - 1]
    G = sp.groebner(eqs, *gens, order="grevlex")
    if G.exprs == [1]:
        return None
    if not G.is_zero_dimensional:            # cannot happen inside a zero-dimensional system
        raise ExactCheckError("the equilibrium lines (c = 0) of a zero-dimensional system form a family")
    std = standard_monomials(G, gens)
    u = sum(r * g for r, g in zip(sep, gens))
    return charpoly(multiplication_matrix(G, gens, std, u), lam)


METHODS = ("auto", "cubic", "resultant", "groebner")
#: largest p of the exact path (the Groebner basis over QQ, 2^p solutions)
EXACT_MAX_P = 6
#: largest componentwise backward error (at 40 digits) accepted for a returned point
CHECK_TOL = 1e-9
#: the componentwise residual of ``_verify`` is taken against the sizes of a component's terms plus this fraction of
#: the normwise scale (below it, 40 digits do not resolve a residual)
COMPONENT_FLOOR = 1e-35


def _verify(R, res):
    """The returned points must solve v(xi) = c xi: the residual of each, in the equilibrated system
    (certify.equilibrate: y = xi / d, c' = c / s) and evaluated at 40 digits from the
    double-precision values, must be below CHECK_TOL relative to that system
    (max_i |F_i| / (max |Q'| |y|^2 + max |w| |c'| |y|), as certify.backward_error), and componentwise
    (max_i |F_i| / (sum_jk |Q'_ijk y_j y_k| + |w_i c' y_i| + COMPONENT_FLOOR times the normwise scale)); a
    zero-dimensional answer must have 2^p - 1 lines with multiplicity (Bezout, the trivial root
    removed) and pairwise distinct points. ExactCheckError otherwise, naming the point and the
    size of the failure."""
    p = len(R)
    if not res.zero_dimensional:
        return res
    if res.total_multiplicity != 2 ** p - 1:
        raise ExactCheckError(f"{res.method}: multiplicities add to {res.total_multiplicity}, not "
                              f"2^p - 1 = {2 ** p - 1}")
    Qs, w, dsc, ssc = equilibrate(np.array([[[float(r) for r in row] for row in plane] for plane in R]))
    with mpmath.workdps(40):
        Qm = [[[mpmath.mpf(float(Qs[i, j, k])) for k in range(p)] for j in range(p)] for i in range(p)]
        qmax = max(abs(a) for plane in Qm for row in plane for a in row)
        wmax = mpmath.mpf(float(np.abs(w).max()))
        for n, (d, c, m) in enumerate(res.points):
            y = [mpmath.mpc(complex(a)) / mpmath.mpf(float(di)) for a, di in zip(d, dsc)]
            cm = mpmath.mpc(complex(c)) / mpmath.mpf(ssc)
            F = [mpmath.fsum(Qm[i][j][k] * y[j] * y[k] for j in range(p) for k in range(p))
                 - cm * mpmath.mpf(float(w[i])) * y[i] for i in range(p)]
            ny = max(abs(a) for a in y)
            worst = max(abs(f) for f in F) / (qmax * ny ** 2 + wmax * abs(cm) * ny)
            # componentwise: F_i against the sizes of its own terms (a coordinate wrong in the digits that matter
            # for a small component can pass the normwise test on a system whose entries span many scales)
            terms = [mpmath.fsum(abs(Qm[i][j][k] * y[j] * y[k]) for j in range(p) for k in range(p))
                     + abs(cm * mpmath.mpf(float(w[i])) * y[i]) for i in range(p)]
            floor = COMPONENT_FLOOR * (qmax * ny ** 2 + wmax * abs(cm) * ny)
            comp = max(abs(f) / (t + floor) for f, t in zip(F, terms))
            for name, val in (("relative", worst), ("componentwise", comp)):
                if val > CHECK_TOL:
                    raise ExactCheckError(f"{res.method}: point {n} (direction {np.round(d, 8)}, c = {c:.6g}) "
                                          f"does not solve v(xi) = c xi: {name} residual {float(val):.2e} > "
                                          f"{CHECK_TOL:.0e}")
    if res.reality is not None:
        # binary cubic: distinct roots of square-free factors; Groebner: u separates the points (Hermite
        # rank); the points are distinct by exact algebra, even where doubles cannot tell them apart
        return res
    A = pairwise_angles(np.array([d for d, _, _ in res.points], dtype=complex))
    for a in range(len(A)):
        for b in range(a):
            if A[a, b] < 1e-15 and abs(res.points[a][1] - res.points[b][1]) <= 1e-12 * max(1.0, abs(res.points[a][1])):
                raise ExactCheckError(f"{res.method}: points {b} and {a} coincide (direction "
                                      f"{np.round(res.points[a][0], 8)}): the multiplicities are not trustworthy")
    return res


def _rescaled(res, f):
    """The points of the system Q / f as points of Q (c times f, f a power of 2)."""
    res.points = [(d, complex(c * f) if c != 0 else c, m) for d, c, m in res.points]
    return res


def exact_invariant_lines(q: QuadraticField | ArrayLike, seed: int = 0, method: str = "auto",
                          dyadic: bool = False) -> ExactLines:
    """Exact (symbolic) invariant lines of a rational QuadraticSystem, for p <= EXACT_MAX_P (6; above p = 4 only
    for small coefficients in practice: seconds to a minute for the small-integer systems of the fuzz at p = 6,
    hours for large generic ones).

    method: "auto" (binary cubic for p = 2, Groebner otherwise), "cubic", "resultant" (p = 3) or
    "groebner".
    The chart l and separating form r are small random integers; if the quotient dimension is
    not 2^p (a point at the chart's infinity) new ones are drawn. Q is first divided by the power
    of 2 f with max |Q / f| in [1/2, 1) (exact; c scales by f). Every answer is verified
    (``_verify``: each point solves the system to CHECK_TOL at 40 digits, the count is 2^p - 1 and
    the points are distinct); ExactCheckError instead of an unverified answer. ``dyadic=True``: every float
    entry of Q is its exact dyadic value (``polynomials.rational_tensor``), however small or large.
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ExactCheckError(f"seed must be an int >= 0, got {seed!r}")
    if method not in METHODS:
        raise ExactCheckError(f"method must be one of {METHODS}, got {method!r}")
    R0 = rational_tensor(q, dyadic=bool(dyadic))
    p = len(R0)
    top = max(abs(r) for plane in R0 for row in plane for r in row)
    f = sp.Integer(2) ** (int(np.frexp(float(top))[1]) if top != 0 else 0)
    R = [[[r / f for r in row] for row in plane] for plane in R0]
    try:
        res = _exact(R, p, seed, method)
    except mpmath.libmp.libhyper.NoConvergence as exc:
        raise ExactCheckError(f"root finding did not converge: {exc}") from None
    return _verify(R0, _rescaled(res, float(f)))


def _exact(R, p, seed, method):
    if p > EXACT_MAX_P:
        raise ExactCheckError(f"exact check supports p <= {EXACT_MAX_P}, got p = {p} (Groebner bases blow up)")
    if method == "cubic" or (method == "auto" and p == 2):
        if p != 2:
            raise ExactCheckError("the binary cubic method is for p = 2 only")
        return _binary_cubic(R)
    rng = np.random.default_rng(seed)
    if method == "resultant":
        if p != 3:
            raise ExactCheckError("the resultant method is for p = 3 only")
        for _ in range(6):
            res = _resultant_p3(R, rng)
            if res is not None:
                return res
        raise ExactCheckError("resultant method: no generic coordinate change in 6 random draws (the "
                              "resultant had degree < 7 or y1 did not separate the lines, e.g. for "
                              "special systems with multiple lines); use method='groebner'")
    res = None
    for _ in range(6):
        chart = [int(a) for a in rng.integers(-7, 8, size=p + 1)]
        chart[-1] = int(rng.integers(1, 8))
        sep = [int(a) for a in rng.integers(-99, 100, size=p + 1)]
        res = _groebner(R, chart, sep)
        if res is not None:
            return res
    raise ExactCheckError("no chart / separating form found in 6 random draws")


def compare_with_exact(lines: InvariantLines, exact: ExactLines, rtol: float = 1e-6) -> list[str]:
    """Disagreements (a list of strings, empty if none) between an InvariantLines result and an
    ExactLines one: family or not, total multiplicity, real count, and for every exact point
    (direction, c, multiplicity) a line with the same multiplicity and reality, direction within
    angle rtol (up to a phase) and |c - c_exact| <= rtol |c_exact| + 2 * line.tol (the line's
    threshold for c = 0)."""
    out = []
    if not exact.zero_dimensional:
        if not lines.positive_dimensional:
            out.append("exact: positive-dimensional; homotopy: no family")
        return out
    if lines.positive_dimensional:
        out.append("exact: finite; homotopy: a family")
    if lines.total_multiplicity != exact.total_multiplicity:
        out.append(f"total multiplicity {lines.total_multiplicity} != exact {exact.total_multiplicity}")
    if lines.real_count != exact.real_count:
        out.append(f"real count {lines.real_count} != exact {exact.real_count}")
    for k, (d, c, m) in enumerate(exact.points):
        d = np.asarray(d, dtype=complex) / np.linalg.norm(d)
        real = exact.is_real(k)
        hit = [L for L in lines
               if np.sqrt(max(0.0, 1 - abs(np.vdot(L.direction / np.linalg.norm(L.direction), d)) ** 2)) < rtol
               and abs(L.c - c) <= rtol * abs(c) + 2 * L.tol and L.multiplicity == m and L.is_real == real]
        if not hit:
            out.append(f"exact line {np.round(d, 6)} (c = {complex(c):.6g}, multiplicity {m}, real {real}) "
                       f"not found")
    return out
