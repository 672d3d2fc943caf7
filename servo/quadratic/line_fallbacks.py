"""What ``invariant_lines`` tries when a double-precision run does not decide: the exact path (p <= EXACT_SEED_MAX_P:
exact start points, or the exact confirmation of a family; up to p = DIMENSION_MAX_P for small coefficients when
several paths reach one root), the exact dimension of the solution set for a family
no witness proves (p <= DIMENSION_MAX_P), and every path tracked again in higher precision with the end points
proved in ball arithmetic (p <= PRECISE_MAX_P). Each returns what is proved, or the result it was given with
the reason extended."""
from __future__ import annotations

import numpy as np

from ..errors import ExactCheckError
from .certify import close_pairs, equilibrate, pair_angles
from .dimension import coefficient_bits, solution_set_dimension
from .exact import exact_invariant_lines
from .homotopy import QuadraticEigenHomotopy
from .line_assembly import angle_to, ball_lines, exact_seeded, exact_singular_lines
from .line_types import InvariantLines
from .precise_tracking import track_precise

__all__ = ["EXACT_SEED_MAX_P", "PRECISE_MAX_P", "family_by_dimension", "precise_fallback", "confirm_family",
           "exact_fallback", "exact_for_multiple_roots"]

#: the attempts (bits, seed offset: another gamma and patch) of re-tracking every path when double precision
#: fails and p > EXACT_SEED_MAX_P; the end points of all attempts so far go to the ball certificate together
PRECISE_BITS = ((128, 0), (256, 1))
#: the paths of an attempt that failed or met another one (end points within MET_ANGLE) are tracked again with
#: the same gamma in twice its bits, up to RETRACK_MAX_BITS, before the next attempt
RETRACK_MAX_BITS = 256
MET_ANGLE = 1e-12
#: largest p re-tracked in higher precision (about 0.1-0.3 s per path in 128 bits)
PRECISE_MAX_P = 8
#: largest p for which an uncertified double-precision run falls back to the exact path for its start points
#: (binary cubic for p = 2, a Groebner basis over QQ for p = 3: about a second; p = 4 takes a minute)
EXACT_SEED_MAX_P = 3
#: above EXACT_SEED_MAX_P, a family the numerical local dimension test reports and no witness proves is decided by
#: the exact dimension of the solution set (servo.quadratic.dimension: a Groebner basis over QQ) up to this p and
#: for coefficients of at most DIMENSION_MAX_BITS bits (Q made integral): a second or two for the degenerate
#: small-integer systems that have families, while large generic or badly scaled ones could take hours
DIMENSION_MAX_P = 6
DIMENSION_MAX_BITS = 40


def exact_for_multiple_roots(q, best):
    """Whether the exact path (a Groebner basis over QQ, servo.quadratic.exact) is tried for the uncertified result
    ``best`` above EXACT_SEED_MAX_P: roots reached by several paths (multiple roots: no Krawczyk box can prove
    them, and their multiplicities need the exact algebra unless the roots are rational), p <= DIMENSION_MAX_P
    and coefficients of at most DIMENSION_MAX_BITS bits (Q made integral). The degenerate small-integer systems
    of the fuzz with multiple roots of irrational coordinates take 1 s at p = 4 and about a minute at p = 6;
    re-tracking in higher precision cannot prove them at all."""
    if q.p <= EXACT_SEED_MAX_P or q.p > DIMENSION_MAX_P or not any(L.multiplicity > 1 for L in best.lines):
        return False
    if not np.isrealobj(q.Q) and np.any(np.imag(q.Q)):
        return False
    return coefficient_bits(np.real(q.Q)) <= DIMENSION_MAX_BITS


def family_by_dimension(q, res, dims):
    """A family answer with witnesses not proved one by one: certified when the exact dimension of the solution
    set is positive (servo.quadratic.dimension, within DIMENSION_MAX_P and DIMENSION_MAX_BITS), as the exact
    path does for p <= EXACT_SEED_MAX_P; otherwise (a finite set, or not decided) not certified, with the
    reason. Changes ``res`` in place; ``dims`` keeps the dimension across the retries."""
    bad = next(f for f in res.positive_dimensional if not f.proved)
    nproved = sum(f.proved for f in res.positive_dimensional)
    why = (f"a family in double precision (numerical local dimension test) at direction {np.round(bad.direction, 6)}, "
           f"not proved there: the points found near it do not span a linear family with rational coordinates "
           f"(servo.quadratic.families.linear_family_proof), no exact rational root there has an infinite local ring "
           f"(servo.quadratic.multiplicity)")
    res.certificate = None
    if not np.isrealobj(q.Q) and np.any(np.imag(q.Q)):
        res.reason = f"{why}, and the exact dimension needs a real Q"
        return
    bits = coefficient_bits(np.real(q.Q))
    if q.p > DIMENSION_MAX_P or bits > DIMENSION_MAX_BITS:
        res.reason = (f"{why}, and the exact dimension of the solution set is not computed above p = "
                      f"{DIMENSION_MAX_P} or {DIMENSION_MAX_BITS}-bit coefficients (p = {q.p}, {bits} bits)")
        return
    dim = dims["dim"] = dims["dim"] if "dim" in dims else solution_set_dimension(np.real(q.Q))
    if dim >= 1:
        res.certificate = "family"
        res.reason = (f"positive-dimensional solution set, proved in exact arithmetic: its projective dimension is "
                      f"{dim} (Groebner basis over QQ, servo.quadratic.dimension); {nproved} of "
                      f"{len(res.positive_dimensional)} witness(es) proved on a family one by one (the others are "
                      f"numerical); {res.total_multiplicity} isolated line(s) with multiplicity, not proved complete")
    else:
        res.reason = f"{why}; the solution set is finite (its exact dimension is 0): the numerical family is none"
        res.positive_dimensional = []


def met_or_failed(Z, ok, tol=MET_ANGLE):
    """The rows of the end points Z that failed (not ``ok``) or lie within the angle ``tol`` of another end point
    (two paths on one root, or on roots too close to tell apart at the precision they were tracked in)."""
    rows = np.nonzero(ok)[0]
    bad = ~np.asarray(ok, dtype=bool)
    pr = close_pairs(Z[rows], tol) if rows.size > 1 else np.zeros((0, 2), dtype=int)
    if len(pr):
        near = pair_angles(Z[rows], pr[:, 0], pr[:, 1]) < tol
        bad[rows[pr[near, 0]]] = True
        bad[rows[pr[near, 1]]] = True
    return np.nonzero(bad)[0]


def precise_fallback(q, best, seed, tol):
    """Every path tracked again in PRECISE_BITS-bit arithmetic (servo.quadratic.precise_tracking) and the end
    points proved in ball arithmetic (certificate "krawczyk"); otherwise ``best`` with the reason extended.
    Before another gamma is tried, the paths that failed or met another path are tracked again with the same
    gamma in twice the bits (up to RETRACK_MAX_BITS): two close roots need more bits to be told apart, and the
    other paths need not be tracked again."""
    Qs, wsc, dsc, ssc = equilibrate(q.Q)
    why = ""
    pts = []            # end points of every attempt: the proof does not care which path found a root
    dbl = [] if best.path_result is None else list(best.path_result.z)

    def prove():
        # exact singular roots (rational points with a rank-deficient Jacobian) among the end points, with their
        # multiplicities proved exactly: no Krawczyk box can hold them (a box proves its root simple), so without
        # them the count of proved roots can never reach 2^p (a mixed-scale p = 4 system of the fuzz has the double
        # root e_3 with c = 0 next to simple roots 1e-25 away: 14 simple roots + 2 = 16)
        sing = exact_singular_lines(q, Qs, wsc, dsc, ssc, dbl + pts, tol)
        cands = pts + [z for z in dbl if np.all(np.isfinite(z))]
        res = ball_lines(q, Qs, wsc, dsc, ssc, cands, sing, seed, tol, mult_proved=bool(sing))
        if res[0] is None and sing:          # end points on a singular root may leave pairs undecided: drop them
            far = [z for z in cands if angle_to(z, [L.direction / dsc for L in sing]) > 1e-8]
            res2 = ball_lines(q, Qs, wsc, dsc, ssc, far, sing, seed, tol, mult_proved=True)
            res = res2 if res2[0] is not None else res
        return res

    def done(res, how):
        lines, cert, reason, precision = res
        order = sorted(range(len(lines)), key=lambda i: (not lines[i].is_real, -abs(lines[i].c),
                                                       tuple(np.real(lines[i].direction))))
        return InvariantLines([lines[i] for i in order], [], q.p, best.failed_paths, best.path_result, cert,
                              f"double precision did not decide ({best.reason}); {how}; {reason}", precision)

    for n, (bits, s) in enumerate(PRECISE_BITS):
        hom = QuadraticEigenHomotopy(Qs, rng=seed + s, w=wsc)
        Z, ok = track_precise(hom, prec=bits)
        pts += list(Z[ok])
        res = prove()
        if res[0] is not None:
            return done(res, f"paths tracked in {bits}-bit arithmetic (attempt {n + 1})")
        why += f"; tracked in {bits} bits ({int((~ok).sum())} of {len(ok)} paths failed): {res[1]}"
        rows = met_or_failed(Z, ok)
        # more than half the paths failed or met: a degenerate system (roots of multiplicity > 1, where more bits
        # do not separate anything), left to the next attempt
        if 0 < rows.size <= len(ok) // 2 and 2 * bits <= RETRACK_MAX_BITS:
            Z2, ok2 = track_precise(hom, rows=rows, prec=2 * bits)
            pts += list(Z2[ok2])
            res = prove()
            how = (f"the {rows.size} path(s) that failed or met another one in {bits}-bit arithmetic (attempt "
                   f"{n + 1}) tracked again in {2 * bits} bits")
            if res[0] is not None:
                return done(res, f"paths tracked in {bits}-bit arithmetic; {how}")
            why += f"; {how} ({int((~ok2).sum())} failed): {res[1]}"
    best.reason += why
    return best


def confirm_family(q, res, seed, tol):
    """A "family" verdict of the numerical local dimension test (p <= EXACT_SEED_MAX_P), confirmed by the exact
    path (positive-dimensional over QQ) or replaced by what the exact path and the ball certificate prove (a
    badly scaled finite system can look like a family in double precision); not certified if the exact path
    cannot decide."""
    try:
        E = exact_invariant_lines(q, seed=seed % 1000, dyadic=True)
    except ExactCheckError as exc:
        res.certificate = None
        res.reason = f"a family in double precision, not confirmed: the exact path cannot decide ({exc})"
        return res
    if not E.zero_dimensional:
        res.reason += f"; positive dimension confirmed by the exact path ({E.method})"
        return res
    res.certificate = None
    res.reason = "a family in double precision, but the exact path finds finitely many lines"
    res.positive_dimensional = []
    return exact_fallback(q, res, seed, tol)


def exact_fallback(q, best, seed, tol):
    """The uncertified result ``best`` replaced by what the exact path and the ball certificate prove
    (``exact_seeded``), or kept with the reason extended. A positive-dimensional answer of the exact path
    confirms the family witnesses of the tracker (certificate "family")."""
    if not np.isrealobj(q.Q) and np.any(np.imag(q.Q)):
        best.reason += "; no exact fallback for complex Q"
        return best
    Qs, wsc, dsc, ssc = equilibrate(q.Q)
    res = exact_seeded(q, Qs, wsc, dsc, ssc, seed, tol)
    if res[0] is not None:
        lines, cert, reason, precision = res
        order = sorted(range(len(lines)), key=lambda i: (not lines[i].is_real, -abs(lines[i].c),
                                                       tuple(np.real(lines[i].direction))))
        return InvariantLines([lines[i] for i in order], [], q.p, best.failed_paths, best.path_result, cert,
                              f"double precision did not decide ({best.reason}); {reason}", precision)
    if res[1].startswith("the solution set is positive-dimensional") and best.positive_dimensional:
        best.certificate = "family"
        best.reason = (f"positive-dimensional solution set, proved by the exact path ({res[1]}), with "
                       f"{len(best.positive_dimensional)} numerical witness(es); the isolated lines are not proved "
                       f"complete (double precision: {best.reason})")
        return best
    best.reason += f"; from the exact path: {res[1]}"
    return best
