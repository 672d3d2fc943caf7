"""The points of a zero-dimensional system from its multiplication matrices, by the rational univariate
representation (Rouillier 1999): for servo.quadratic.exact's Groebner path, given the irreducible factors of the
characteristic polynomial of a separating M_u and the matrices M_g of the coordinates."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

from ..errors import ExactCheckError
from .krawczyk import have_flint, require_flint, working_precision
from .polynomials import rur_numerators

__all__ = ["rur_points", "RUR_BITS", "RUR_RTOL", "RUR_NEGLIGIBLE"]


#: the precisions (bits) of the rational univariate representation tried in turn (python-flint)
RUR_BITS = (512, 1024, 2048, 4096)
#: every coordinate of a point from the RUR is within this relative radius of its value, or within
#: RUR_NEGLIGIBLE of the point's largest coordinate (then it is zero to any double)
RUR_RTOL = 2.0 ** -60
RUR_NEGLIGIBLE = 2.0 ** -300


def rur_points(factors, Mgens, Mu, dps):
    """The distinct points of the zero-dimensional system by its rational univariate representation
    (polynomials.rur_numerators: g(P) = G_g(u(P)) / G_1(u(P))), one (coordinates (p + 1,) complex, multiplicity,
    real, index of its factor) per root of each irreducible factor (fp, mult) of the characteristic polynomial of
    M_u. With python-flint the roots are isolated in ball arithmetic (arb_fmpz_poly_complex_roots: a real root
    has an imaginary part that is exactly zero, decided by the real-root count, not by its size) and G_g(u(P)) /
    G_1(u(P)) is a ball too: every coordinate is proved to the double it is rounded to (RUR_RTOL, or negligible
    against the largest: RUR_NEGLIGIBLE, and 0 when its ball holds 0), at the first of RUR_BITS that gives that; a
    real u(P) gives a real point (a real system, and u separates the points, so conjugate points have conjugate
    values). Without python-flint: mpmath's polyroots at ``dps`` digits, the number of real roots by Sturm's count
    (exact), the RUR from exact traces; not proved, checked by the residuals of servo.quadratic.exact. None if the
    roots are not told apart."""
    s = sp.Poly(sp.prod([fp.as_expr() for fp, _ in factors]), *factors[0][0].gens)
    if not have_flint():
        return _rur_points_mpmath(factors, rur_numerators(Mgens, Mu, s, 0), dps)
    for bits in RUR_BITS:
        pts = _rur_points_at(factors, rur_numerators(Mgens, Mu, s, bits), bits)
        if pts is not None:
            return pts
    return None


def _rur_points_at(factors, G, bits):
    """``rur_points`` in ball arithmetic at ``bits``: None when a G_1(u(P)) is not told from 0 or a coordinate is
    not proved to its double at these bits."""
    fl = require_flint("the rational univariate representation")
    pts = []
    with working_precision(bits):
        for k, (fp, mult) in enumerate(factors):
            _, prim = fp.clear_denoms()
            for u, m in fl.fmpz_poly([int(a) for a in reversed(prim.all_coeffs())]).complex_roots():
                if m != 1:
                    raise ExactCheckError("a factor irreducible over QQ has a multiple root")
                vals = []
                for co in G:                           # Horner in balls
                    acc = fl.acb(0)
                    for a in reversed(co):
                        acc = acc * u + a
                    vals.append(acc)
                if vals[0].contains(0):               # G_1(u(P)) = mult(P) s'(u(P)) not told from 0 at these bits
                    return None
                coords = [g / vals[0] for g in vals[1:]]
                top = max(float(abs(g).mid()) for g in coords)
                if not all(float(part.rad()) <= max(RUR_RTOL * abs(float(part.mid())), RUR_NEGLIGIBLE * top)
                           for g in coords for part in (g.real, g.imag)):
                    return None
                # a part whose ball holds 0 (then it is negligible) is 0: its midpoint is noise, not a value
                pts.append((np.array([complex(*(0.0 if part.contains(0) else float(part.mid())
                                                for part in (g.real, g.imag))) for g in coords]),
                            mult, bool(u.imag.is_zero()), k))
    return pts


def _rur_points_mpmath(factors, G, dps):
    """``rur_points`` without python-flint (see there): the exact RUR polynomials ``G`` evaluated in mpmath at
    ``dps``, twice that, ... digits (up to RUR_BITS' largest) until two in a row agree to RUR_RTOL in every
    coordinate (or in its negligible size against the largest, RUR_NEGLIGIBLE). Not proved."""
    prev = None
    digits = dps
    while digits <= RUR_BITS[-1] * math.log10(2):
        pts = _rur_values_mpmath(factors, G, digits)
        if pts is None:
            return None
        if prev is not None and len(prev) == len(pts) and all(
                np.all(np.abs(z - z0) <= np.maximum(RUR_RTOL * np.abs(z0), RUR_NEGLIGIBLE * np.abs(z0).max()))
                for (z, _, _, _), (z0, _, _, _) in zip(pts, prev)):
            return pts
        prev, digits = pts, 2 * digits
    return None


def _rur_values_mpmath(factors, G, dps):
    """The points of ``_rur_points_mpmath`` at ``dps`` digits: the roots of each factor by mpmath's polyroots, the
    number of real ones by Sturm's count (exact); a part below 10^(-dps / 2) of the largest coordinate is 0."""
    pts = []
    with mpmath.workdps(dps):
        Gm = [[mpmath.mpf(int(a.p)) / int(a.q) for a in co] for co in G]
        for k, (fp, mult) in enumerate(factors):
            coeffs = [mpmath.mpf(sp.Rational(a).p) / sp.Rational(a).q for a in fp.all_coeffs()]
            rr = list(np.atleast_1d(mpmath.polyroots(coeffs, maxsteps=400, extraprec=4 * dps)))
            # the real roots of this rational factor are the ones with the smallest imaginary parts, which must be
            # far below the others' at this precision
            nreal = int(fp.count_roots())
            order = sorted(range(len(rr)), key=lambda i: abs(mpmath.im(rr[i])))
            if nreal < len(rr) and nreal and abs(mpmath.im(rr[order[nreal - 1]])) > \
                    mpmath.mpf(10) ** (-dps // 2) * abs(mpmath.im(rr[order[nreal]])):
                return None
            for pos, i in enumerate(order):
                u = mpmath.re(rr[i]) if pos < nreal else rr[i]
                vals = [mpmath.polyval(co[::-1], u) for co in Gm]
                if vals[0] == 0:
                    return None
                z = [g / vals[0] for g in vals[1:]]
                tiny = mpmath.mpf(10) ** (-dps // 2) * max(abs(g) for g in z)
                pts.append((np.array([complex(*(0.0 if abs(part) <= tiny else float(part)
                                                for part in (mpmath.re(g), mpmath.im(g)))) for g in z]),
                            mult, pos < nreal, k))
    return pts
