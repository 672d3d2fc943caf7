"""Lines of invariant_lines assembled from proved roots: records built from end points proved by the alpha test,
in ball arithmetic (Krawczyk boxes, servo.quadratic.certify_lines; the mixed certificate above MIXED_MIN_P,
servo.quadratic.certify_mixed) or in exact arithmetic (singular rational roots with their multiplicities,
servo.quadratic.multiplicity; conjugate roots in a quadratic field; the exact path's start points), each mapped
back from the equilibrated coordinates (x = d * y, c = s c') with its backward error and Kovalevskaya exponents.
The pipeline that decides which of them runs is servo.quadratic.invariant_lines."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import ExactCheckError
from .certify import backward_error, exact_jacobian_rank, exact_root, pairwise_angles
from .certify_lines import ball_certify_end_points, retrack
from .completeness import ROUNDOFF
from .certify_mixed import disjoint_alpha, mixed_certificate
from .exact import exact_invariant_lines
from .kovalevskaya.exponents import attach_exponents
from .line_records import line_tol, make_lines
from .multiplicity import local_multiplicity, quadratic_roots

def exact_singular_lines(q, Qs, wsc, dsc, ssc, points, tol):
    """The exact singular roots near the end points ``points`` (certify.exact_root: a small-integer point that is
    a root in exact arithmetic; rank of dF < p in exact arithmetic), each once, as lines whose multiplicity is
    proved in exact arithmetic (servo.quadratic.multiplicity.local_multiplicity); roots whose multiplicity
    cannot be proved are left out (then the count of proved roots stays short of 2^p and nothing is claimed)."""
    p = q.p
    out, seen = [], []
    for z in points:
        z = np.asarray(z, dtype=complex)
        if not np.all(np.isfinite(z)) or np.linalg.norm(z[:p]) < 1e-6 * abs(z[p]):     # the trivial root
            continue
        r = exact_root(Qs, wsc, z)
        if r is None or any(same_point(r, u) for u in seen):
            continue
        seen.append(r)
        if exact_jacobian_rank(Qs, wsc, r) == p:
            continue                                   # simple: the ball certificate proves it
        m = local_multiplicity(Qs, wsc, r)
        if m is None or m < 2:
            continue
        real = bool(q.is_real and not np.any(np.imag(r)))
        out.append(make_line(q, Qs, wsc, dsc, ssc, r, int(m), real, (int(m),), float("inf"), tol,
                              c_nonzero=bool(r[p] != 0)))
    if out:
        finish_lines(q, Qs, wsc, out, scaled_points(out, dsc, ssc))
    return out


def same_point(a, b):
    """Whether the points a and b (Gaussian rationals stored exactly in doubles) are one point of P^p: every
    2 x 2 minor a_i b_j - a_j b_i vanishes, in exact rational arithmetic (two estimates of one root can be
    normalised on different coordinates; counting it twice would count its multiplicity twice)."""
    def g(x):
        x = complex(x)
        return Fraction(x.real), Fraction(x.imag)

    def mul(x, y):
        return x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0]
    A, B = [g(x) for x in a], [g(x) for x in b]
    n = len(A)
    return all(mul(A[i], B[j]) == mul(A[j], B[i]) for i in range(n) for j in range(i + 1, n))


def scaled_points(lines, dsc, ssc):
    """The scaled points (y, c') = (xi / d, c / s) of lines."""
    return [np.append(L.direction / dsc, L.c / ssc) for L in lines]


def angle_to(z, dirs):
    """Smallest sine of the angle between the direction part of the scaled point z and the scaled directions
    ``dirs`` (inf if there are none)."""
    p = len(z) - 1
    y = np.asarray(z[:p], dtype=complex)
    y = y / np.linalg.norm(y)
    best = np.inf
    for d in dirs:
        d = np.asarray(d, dtype=complex) / np.linalg.norm(d)
        best = min(best, float(np.sqrt(max(0.0, 1 - abs(np.vdot(d, y)) ** 2))))
    return best


def one_line_tol(Qs, w, d, s, xi, tol):
    """c counts as 0 on the unit line xi (servo.quadratic.line_records.line_tol, one line)."""
    return float(line_tol(Qs, w, d, s, xi, tol))


def quadratic_lines(q, Qs, wsc, dsc, ssc, cand, Z, simple, exact, tol):
    """Multiple roots with irrational coordinates on a coordinate line (servo.quadratic.multiplicity.
    quadratic_roots): both conjugates as lines of their proved multiplicity (>= 2, so that no Krawczyk box can
    hold them: a box proves its root simple), and the candidates they account for. ([lines], [k])."""
    out, ks, seen = [], [], set()
    if np.iscomplexobj(q.Q) and np.any(np.imag(q.Q)):
        return out, ks
    for k in np.nonzero(~simple & ~exact)[0]:
        r = quadratic_roots(Qs, wsc, Z[k])
        if r is None or r[1] < 2:
            continue
        pts, m, is_real = r
        ks.append(int(k))
        key = tuple(sorted(tuple(np.round(z / z[np.argmax(np.abs(z))], 9)) for z in pts))
        if key in seen:
            continue
        seen.add(key)
        new = [make_line(q, Qs, wsc, dsc, ssc, z, m, is_real and q.is_real, (m,), float("inf"), tol,
                          c_nonzero=bool(z[-1] != 0)) for z in pts]
        finish_lines(q, Qs, wsc, new, pts)
        out += new
    return out, ks


def mixed_lines(q, Qs, wsc, dsc, ssc, hom, zs, lines, cand, Zc, radius, real, nonreal, trivial_members, seed,
                 tol):
    """The alpha-certified lines kept, and only the paths they do not account for proved in ball arithmetic
    (servo.quadratic.certify_mixed: the end points, and the same paths tracked again tightly, ``retrack``):
    (lines, "alpha+krawczyk", reason, precision) or (None, reason). The alpha lines must be simple, at
    round-off, of decided reality and in pairwise disjoint balls without the trivial root."""
    p = q.p
    nc = len(cand)
    good = np.array([m == 1 and np.isfinite(radius[k]) and lines[k].backward_error <= ROUNDOFF
                     and (not q.is_real or bool(real[k] or nonreal[k])) for k, (_, m, _) in enumerate(cand)],
                    dtype=bool).reshape(nc)
    rows = np.nonzero(good)[0]
    good[rows] = disjoint_alpha(Zc[rows], radius[rows])
    rows = np.nonzero(good)[0]
    covered = np.zeros(len(zs), dtype=bool)
    for k in rows:
        covered[cand[k][0]] = True
    covered[np.asarray(trivial_members, dtype=int)] = True
    open_paths = np.nonzero(~covered)[0]
    pts = [zs[i] for i in open_paths if np.all(np.isfinite(zs[i]))] + list(retrack(hom, open_paths))
    M = mixed_certificate(Qs, wsc, Zc[rows], radius[rows], np.array(pts, dtype=complex).reshape(-1, p + 1), seed,
                          dscale=dsc)
    if not M.ok:
        return None, f"alpha test and ball arithmetic together ({open_paths.size} open path(s)): {M.reason}"
    undecided = [r for r in M.roots if q.is_real and r.real is None]
    if undecided:
        return None, f"reality of {len(undecided)} root(s) proved in ball arithmetic not decided"
    R = M.roots
    new = make_lines(q, Qs, wsc, dsc, ssc, [r.mid for r in R], [1] * len(R),
                     [bool(r.real) if q.is_real else False for r in R], [(1,)] * len(R), [float("inf")] * len(R), tol,
                     precision=[r.precision for r in R], ball=[(r, dsc, ssc) for r in R])
    finish_lines(q, Qs, wsc, new, [r.mid for r in M.roots])
    return ([lines[k] for k in rows] + new, "alpha+krawczyk",
            f"{open_paths.size} path(s) not accounted for by the alpha test; " + M.reason, max(53, M.precision))


def make_line(q, Qs, wsc, dsc, ssc, z, mult, is_real, cycles, alpha, tol, precision=None, ball=None,
               c_nonzero=None):
    """One InvariantLine of the scaled root z (servo.quadratic.line_records.make_lines, which builds many at once;
    its docstring says what ``is_real`` None, ``tol`` and ``c_nonzero`` mean)."""
    return make_lines(q, Qs, wsc, dsc, ssc, [z], [mult], [is_real], [cycles], [alpha], tol, precision=[precision],
                      ball=[ball], c_nonzero=[c_nonzero])[0]


def finish_lines(q, Qs, wsc, lines, Z):
    """Residuals, backward errors (in the scaled system, at the scaled points Z) and Kovalevskaya exponents of
    all lines at once."""
    if not lines:
        return
    p = q.p
    Z = np.asarray(Z, dtype=complex).reshape(len(lines), p + 1)
    D = np.array([L.direction for L in lines], dtype=complex)
    C = np.array([L.c for L in lines], dtype=complex)
    R = np.linalg.norm(q.v(D) - C[:, None] * D, axis=1) / np.linalg.norm(D, axis=1) ** 2
    BE = backward_error(Qs, Z[:, :p], Z[:, p], wsc)
    for L, r, be in zip(lines, R, BE):
        L.residual, L.backward_error = float(r), float(be)
    attach_exponents(q, lines)                  # Kovalevskaya exponents, all lines in one batch


def exact_seeded(q, Qs, wsc, dsc, ssc, seed, tol):
    """Where double precision fails (p <= EXACT_SEED_MAX_P): the solutions from the exact path
    (servo.quadratic.exact: binary cubic or Groebner basis over QQ; every double is a rational) as start points
    of the ball certificate. Simple points: Newton in 64 .. 1024 bits and the Krawczyk test, pairwise disjoint,
    counted against 2^p (certificate "krawczyk", independent of the exact algebra, which only supplied the
    points). If there are multiple points, their multiplicities (Stickelberger), reality (Sturm counts and the
    Hermite form) and c = 0 come from the exact algebra, and the simple ones are still proved in balls
    (certificate "exact"). (lines, certificate, reason, precision) or (None, reason)."""
    p = q.p
    try:
        E = exact_invariant_lines(q, seed=int(seed) % 1000, dyadic=True)
    except ExactCheckError as exc:
        return None, f"not decided ({exc})"
    if not E.zero_dimensional:
        return None, f"the solution set is positive-dimensional ({E.method})"
    simple = [k for k, (_, _, m) in enumerate(E.points) if m == 1]
    pts = [np.append(np.asarray(E.points[k][0], dtype=complex) / dsc, E.points[k][1] / ssc) for k in simple]
    pts.append(np.append(np.zeros(p), 1.0).astype(complex))           # the trivial root
    singular = []
    for k, (d, c, m) in enumerate(E.points):
        if m > 1:
            z = np.append(np.asarray(d, dtype=complex) / dsc, c / ssc)
            singular.append(make_line(q, Qs, wsc, dsc, ssc, z, int(m), E.is_real(k), (m,), float("inf"), tol,
                                       c_nonzero=bool(c != 0)))
    if singular:
        finish_lines(q, Qs, wsc, singular, [np.append(L.direction / dsc, L.c / ssc) for L in singular])
    res = ball_lines(q, Qs, wsc, dsc, ssc, pts, singular, seed, tol, exact_singular=True)
    if res[0] is None:
        return None, res[1]
    lines, cert, reason, prec = res
    seeds = np.array(pts[:-1]).reshape(len(simple), p + 1)
    for L in lines[:len(lines) - len(singular)]:       # the proved reality must be the exact one
        k = int(np.argmin(pairwise_angles(np.vstack([L.ball[0].mid[None], seeds]))[0, 1:]))
        if E.is_real(simple[k]) != L.is_real:
            return None, "the ball certificate and the exact path disagree on the reality of a line"
    return lines, cert, "start points from the exact path; " + reason, prec


def ball_lines(q, Qs, wsc, dsc, ssc, points, singular_lines, seed, tol, exact_singular=False, mult_proved=False):
    """The ball-arithmetic certificate (servo.quadratic.certify_lines) from the end points ``points``:
    (lines, certificate, reason, precision) or (None, reason)."""
    p = q.p
    B = ball_certify_end_points(Qs, wsc, np.array(points, dtype=complex).reshape(-1, p + 1), seed=seed, dscale=dsc)
    if B.undecided:
        return None, f"{len(B.undecided)} pair(s) of end points neither proved equal nor distinct"
    if B.trivial is None:
        return None, "the trivial root [0 : ... : 0 : 1] was not among the proved roots"
    nsing = sum(L.multiplicity for L in singular_lines)
    total = len(B.roots) + nsing
    if total != 2 ** p:
        return None, (f"{len(B.roots)} distinct simple roots proved (trivial root included)"
                      + (f" and {nsing} on exact singular roots" if nsing else "")
                      + f", not the Bezout number 2^p = {2 ** p}")
    undecided = [r for r in B.lines if q.is_real and r.real is None]
    if undecided:
        return None, f"reality of {len(undecided)} proved root(s) not decided"
    R = B.lines
    lines = make_lines(q, Qs, wsc, dsc, ssc, [r.mid for r in R], [1] * len(R),
                       [bool(r.real) if q.is_real else False for r in R], [(1,)] * len(R), [float("inf")] * len(R), tol,
                       precision=[r.precision for r in R], ball=[(r, dsc, ssc) for r in R])
    finish_lines(q, Qs, wsc, lines, [r.mid for r in B.lines])
    lines += list(singular_lines)
    if nsing and exact_singular:
        return (lines, "exact",
                f"{len(B.lines)} simple roots proved in ball arithmetic (Krawczyk, up to {B.precision} bits), "
                f"{len(singular_lines)} multiple root(s) with multiplicities, reality and c = 0 decided exactly "
                f"over QQ (Groebner basis, Stickelberger, root isolation and Hermite counts; their coordinates from "
                f"the rational univariate representation in ball arithmetic, proved to the doubles given); total "
                f"{total - 1} = 2^p - 1", B.precision)
    if nsing and mult_proved:
        return (lines, "krawczyk+multiplicity",
                f"{len(B.lines)} simple roots proved in ball arithmetic (Krawczyk, up to {B.precision} bits), "
                f"{len(singular_lines)} singular root(s) verified exactly (rational coordinates, or on a coordinate "
                f"line in a quadratic field with their conjugates), their "
                f"multiplicities {sorted(L.multiplicity for L in singular_lines)} proved in exact arithmetic (the "
                f"dimension of the local ring, servo.quadratic.multiplicity); total {total - 1} = 2^p - 1, so "
                f"nothing else exists", B.precision)
    if nsing:      # multiplicities from the path count are no proof (see invariant_lines: "alpha+count")
        return None, (f"{len(B.lines)} simple roots proved in ball arithmetic (Krawczyk, up to {B.precision} bits), "
                      f"{len(singular_lines)} singular root(s) verified exactly, but their multiplicities only from "
                      f"the path count (not proved)")
    return (lines, "krawczyk",
            f"{len(B.lines)} = 2^p - 1 distinct simple roots, each proved by the Krawczyk test in ball arithmetic "
            f"({B.precision} bits needed; double precision did not decide), pairwise disjoint boxes, reality "
            f"proved; with the trivial root that is the Bezout number 2^p, so there is nothing else",
            B.precision)
