"""Invariant lines of x' = v(x), v homogeneous quadratic: all solutions of v(xi) = c xi in CP^{p-1}.

On the line x = s xi the flow is s' = c s^2, s(t) = s0 / (1 - c s0 t) (Kozlov's lectures on
servo-constraints, slide "Общие свойства приведенных систем"). Generically there are 2^p - 1 lines
counted with multiplicity (the eigenvector count of a tensor, Cartwright & Sturmfels, "The number of
eigenvalues of a tensor", 2013, with d = 2: ((d)^p - 1)/(d - 1)).

Pipeline: (1) equilibrate Q by exact powers of 2 (servo.quadratic.certify.equilibrate: x = d * y,
c = s c', rows scaled, max |Q'| ~ 1); (2) track the 2^p paths of servo.quadratic.homotopy on the
scaled system (random patch and gamma from ``seed``); the trivial root z = [0 : ... : 0 : 1]
(multiplicity 1, since dF = [-c I | 0] there) is removed; (3) certify a posteriori: Smale's alpha
test for each simple end point (each in its own real chart), pairwise separation of the certified
balls, reality or non-reality; singular end points only if a small-integer point next to them is an
exact root with a rank-deficient Jacobian (rational arithmetic), their multiplicities proved in exact
arithmetic where the local ring allows (servo.quadratic.multiplicity; also conjugate roots in a quadratic
field on a coordinate line); what double precision leaves open goes to ball arithmetic (all end points for
p < MIXED_MIN_P, only the open paths above, servo.quadratic.certify_mixed); (4) map back (exact) and
normalise. What ``certified`` then proves is in InvariantLines.

Normalisation: for c != 0 the direction xi is the unit vector with c real and > 0 (unique: it is
eta / |eta| for the unique eta with v(eta) = eta); for c = 0 the largest component of xi is real > 0.
"""
from __future__ import annotations

import numpy as np

from ..errors import ExactCheckError, QuadraticSystemError
from .certify import (ALPHA0, alpha_test, backward_error, close_pairs, equilibrate, exact_jacobian_rank, exact_root,
                      normalise_line, pair_angles)
from .certify_lines import available as ball_available
from .certify_lines import retrack
from .completeness import ROUNDOFF, completeness_certificate
from .dimension import coefficient_bits, solution_set_dimension
from .exact import exact_invariant_lines
from .families import family_proof_near, local_family, merge_linear_families
from .homotopy import QuadraticEigenHomotopy
from .precise_tracking import track_precise
from .multiplicity import local_multiplicity, not_isolated
from .line_assembly import (angle_to, ball_lines, exact_seeded, exact_singular_lines, finish_lines, mixed_lines,
                            one_line_tol, quadratic_lines)
from .line_records import make_lines
from .line_types import FamilyWitness, InvariantLine, InvariantLines
from .protocol import QuadraticField

# the result types live in servo.quadratic.line_types and are re-exported here, where they were first public
__all__ = ["InvariantLine", "InvariantLines", "FamilyWitness", "invariant_lines"]

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
#: smallest p at which the lines the alpha test proves are kept and only the other paths go to the ball
#: certificate (servo.quadratic.certify_mixed); below it all 2^p end points are proved in balls (at most 64
#: points, well under a second), so that every line has its enclosure
MIXED_MIN_P = 7
#: above EXACT_SEED_MAX_P, a family the numerical local dimension test reports and no witness proves is decided by
#: the exact dimension of the solution set (servo.quadratic.dimension: a Groebner basis over QQ) up to this p and
#: for coefficients of at most DIMENSION_MAX_BITS bits (Q made integral): a second or two for the degenerate
#: small-integer systems that have families, while large generic or badly scaled ones could take hours
DIMENSION_MAX_P = 6
DIMENSION_MAX_BITS = 40


def _cluster(z, tol):
    """Greedy clustering of projective points: in row order, each unlabelled row takes every unlabelled row
    whose angle to it has sine < tol; returns a label per row. Only the pairs ``close_pairs`` finds are
    compared (no n x n matrix: 2^14 end points would need 4 GB)."""
    n = len(z)
    labels = -np.ones(n, dtype=int)
    if n == 0:
        return labels
    pr = close_pairs(z, float(np.arcsin(min(tol, 1.0))) * 1.01)
    nbrs = [[] for _ in range(n)]
    if len(pr):
        a, b = pr[:, 0], pr[:, 1]
        near = np.sin(pair_angles(z, a, b) + 2e-14) < tol
        for i, j in zip(a[near].tolist(), b[near].tolist()):
            nbrs[i].append(j)
            nbrs[j].append(i)
    k = 0
    for i in range(n):
        if labels[i] >= 0:
            continue
        labels[i] = k
        for j in nbrs[i]:
            if labels[j] < 0:
                labels[j] = k
        k += 1
    return labels


def _check_args(q, seed, tol, cluster_tol, retries):
    """Every argument of invariant_lines, or a QuadraticSystemError naming the bad one."""
    Q = getattr(q, "Q", None)
    if not (isinstance(Q, np.ndarray) and Q.ndim == 3 and hasattr(q, "v") and hasattr(q, "is_real")):
        raise QuadraticSystemError(f"invariant_lines needs a QuadraticSystem, got {type(q).__name__}")
    for name, val in (("seed", seed), ("retries", retries)):
        if isinstance(val, (bool, np.bool_)) or not isinstance(val, (int, np.integer)):
            raise QuadraticSystemError(f"{name} must be an int, got {val!r}")
    if seed < 0:
        raise QuadraticSystemError(f"seed must be >= 0, got {seed}")
    if retries < 0:
        raise QuadraticSystemError(f"retries must be >= 0, got {retries}")
    for name, val, hi in (("tol", tol, 1e-2), ("cluster_tol", cluster_tol, 1e-2)):
        if isinstance(val, (bool, np.bool_)) or not isinstance(val, (int, float, np.floating, np.integer)):
            raise QuadraticSystemError(f"{name} must be a number, got {val!r}")
        if not (np.isfinite(val) and 0 < val <= hi):
            raise QuadraticSystemError(f"{name} must be in (0, {hi}], got {val!r}")


def invariant_lines(q: QuadraticField, seed: int = 0, tol: float = 1e-8, cluster_tol: float = 1e-6,
                    retries: int = 2) -> InvariantLines:
    """All invariant lines of the QuadraticSystem q: solutions [xi] of v(xi) = c xi in CP^{p-1}.

    Returns InvariantLines (iterable of InvariantLine) with total_multiplicity, real_count,
    positive_dimensional (list of FamilyWitness), ``certificate`` / ``certified`` and ``reason``
    (see InvariantLines.certificate for what is proved). If a run is not certified it is repeated
    with new random gamma and patch, up to ``retries`` times; the random numbers come from ``seed``
    only, so the result is the same in every run and process. ``tol``: relative size below which
    c counts as 0 (an equilibrium line); ``cluster_tol``: angle under which path end points of the
    (equilibrated) system are one root. Bad arguments raise QuadraticSystemError (a ValueError).
    """
    _check_args(q, seed, tol, cluster_tol, retries)
    best = best_key = None
    dims: dict[str, int] = {}                # the exact dimension of the solution set, once computed
    seeds = np.random.default_rng(int(seed)).integers(0, 2 ** 31, size=int(retries) + 1)
    for s in seeds:
        res = _solve_once(q, int(s), float(tol), float(cluster_tol))
        if res.certificate == "family" and q.p <= EXACT_SEED_MAX_P and ball_available():
            return _confirm_family(q, res, int(seeds[0]), float(tol))
        if res.certificate == "family" and not all(f.proved for f in res.positive_dimensional):
            # above EXACT_SEED_MAX_P the exact path is too slow to confirm a family: a linear family or an infinite
            # local ring proved exactly at every witness, or the exact dimension of the solution set, counts;
            # otherwise nothing is claimed and the fallbacks below try to prove a finite set
            _family_by_dimension(q, res, dims)
        elif res.certificate == "family":
            res.reason = res.reason.replace("numerical local dimension test",
                                            "each proved in exact arithmetic: a linear space of lines "
                                            "through it, or an infinite local ring at it")
        if res.certified:
            return res
        key = (res.failed_paths, sum(not np.isfinite(L.alpha) or L.alpha >= ALPHA0 for L in res.lines))
        if best is None or key < best_key:
            best, best_key = res, key
    if not np.any(q.Q) or best.certificate is not None:
        return best
    if not ball_available():
        best.reason += "; the fallbacks (exact start points, tracking in higher precision) need python-flint " \
                       "(the 'certify' extra)"
        return best
    if q.p <= EXACT_SEED_MAX_P:
        return _exact_fallback(q, best, int(seeds[0]), float(tol))
    if q.p > PRECISE_MAX_P:
        best.reason += (f"; no re-tracking in higher precision above p = {PRECISE_MAX_P} (2^p paths in Python ball "
                        f"arithmetic would take hours)")
        return best
    return _precise_fallback(q, best, int(seeds[0]), float(tol))


def _family_by_dimension(q, res, dims):
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


def _met_or_failed(Z, ok, tol=MET_ANGLE):
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


def _precise_fallback(q, best, seed, tol):
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
        rows = _met_or_failed(Z, ok)
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


def _confirm_family(q, res, seed, tol):
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
    return _exact_fallback(q, res, seed, tol)


def _exact_fallback(q, best, seed, tol):
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


def _isolation_exactly(Qs, wsc, z):
    """(isolated, not isolated), each proved in exact arithmetic at an exact rational root next to the end point
    z (both False when there is none, or the local ring does not decide; servo.quadratic.multiplicity): its
    Hilbert function becomes constant (a finite local ring: isolated), or exceeds 2^p - 1 (more than any
    isolated root's multiplicity: a positive-dimensional component passes through it). The numerical local
    dimension test tells roots of multiplicity <= 6 from families (servo.quadratic.families.local_dimension);
    above that it can call an isolated root a family (a degenerate p = 5 system of the fuzz: a root of
    multiplicity 11 at e_3, "family" in one set of coordinates)."""
    if not ball_available():
        return False, False
    for eps in (1e-6, 1e-4):
        r = exact_root(Qs, wsc, z, eps=eps)
        if r is not None:
            if exact_jacobian_rank(Qs, wsc, r) == Qs.shape[0]:
                return False, False
            if local_multiplicity(Qs, wsc, r) is not None:
                return True, False
            return False, not_isolated(Qs, wsc, r)
    return False, False


def _solve_once(q, seed, tol, cluster_tol):
    p = q.p
    npaths = 2 ** p
    if not np.any(q.Q):
        w = FamilyWitness(np.eye(p)[0].astype(complex), 0.0, p - 1, True, npaths - 1, proved=True)
        return InvariantLines([], [w], p, 0, None, "family", "v = 0: every line is a line of equilibria")
    Qs, wsc, dsc, ssc = equilibrate(q.Q)
    hom = QuadraticEigenHomotopy(Qs, rng=seed, w=wsc)
    pr = hom.solve()
    zs = pr.z
    ok = pr.converged & np.all(np.isfinite(zs), axis=1)
    failed = int((~ok).sum())
    idx = np.nonzero(ok)[0]
    labels = _cluster(zs[idx], cluster_tol)
    fams, cand = [], []                              # cand: (members, multiplicity, scaled z)
    trivial_seen = 0
    trivial_members = []
    for lab in range(labels.max() + 1 if labels.size else 0):
        members = idx[labels == lab]
        z = zs[members].mean(axis=0)
        if np.linalg.norm(z[:-1]) < 1e-6 * abs(z[-1]):
            trivial_seen += len(members)
            trivial_members += list(members)
            continue
        mult = len(members)
        if mult > 1 and np.all(pr.regular[members]):
            failed += mult                  # two paths on one regular root: a path jumped
            continue
        if not np.all(pr.regular[members]):
            dim, near = local_family(hom, z)
            if dim > 0 and backward_error(Qs, z[None, :-1], z[-1:], wsc)[0] > ROUNDOFF:
                # the paths stopped short of a family (a non-reduced component: the end game converges slowly):
                # the witness is the point the local test found on it at round-off, if any
                if not near:
                    failed += mult          # a "family" through a point that is no root
                    continue
                z = near[0] / np.linalg.norm(near[0])
                dim, near = local_family(hom, z)
            proved = dim > 0 and family_proof_near(hom, Qs, wsc, z, near) is not None
            if dim > 0 and not proved:
                isolated, proved = _isolation_exactly(Qs, wsc, z)
                if isolated:
                    dim = 0                 # the local test mistook a root of high multiplicity for a family
            if dim > 0:
                xi, c = z[:-1] * dsc, z[-1] * ssc
                d, cc = normalise_line(xi, c, one_line_tol(Qs, wsc, dsc, ssc, xi / np.linalg.norm(xi), tol))
                fams.append(FamilyWitness(d, complex(cc), dim, bool(cc == 0), mult, proved=proved))
                continue
        cand.append((members, mult, z))
    if trivial_seen != 1:
        failed += abs(trivial_seen - 1)
    # alpha test of the simple roots in the scaled system (each in a real chart); rows that look
    # real are tested as real points first, and as complex ones if that fails
    Z = np.array([z for *_, z in cand], dtype=complex).reshape(len(cand), p + 1)
    simple = np.array([m == 1 for _, m, _ in cand], dtype=bool)
    nc = len(cand)
    alpha = np.full(nc, np.inf)
    radius = np.full(nc, np.inf)
    real = np.zeros(nc, dtype=bool)
    nonreal = np.zeros(nc, dtype=bool)
    Zc = Z.copy()
    if simple.any():
        looks_real = np.zeros(nc, dtype=bool)
        if q.is_real:
            ph = Z / Z[:, :p][np.arange(nc), np.argmax(np.abs(Z[:, :p]), axis=1)][:, None]
            looks_real = np.linalg.norm(ph.imag, axis=1) < 1e-6 * np.linalg.norm(ph, axis=1)
        for force in (True, False):
            rows = np.nonzero(simple & ~(alpha < ALPHA0) & (looks_real | (not force)))[0]
            if not rows.size:
                continue
            at = alpha_test(Qs, wsc, Z[rows], np.full(rows.size, force) & looks_real[rows])
            better = at["ok"] | ~np.isfinite(alpha[rows])
            r = rows[better]
            for key, arr in (("alpha", alpha), ("radius", radius), ("real", real), ("nonreal", nonreal)):
                arr[r] = at[key][better]
            Zc[r] = at["z"][better]
    exact = np.zeros(nc, dtype=bool)     # singular roots verified in exact arithmetic
    for k in np.nonzero(~simple)[0]:
        r = exact_root(Qs, wsc, Z[k])
        if r is None and ball_available():       # a cluster centre off by more than 1e-6 (high multiplicity):
            r = exact_root(Qs, wsc, Z[k], eps=1e-4)      # the test of the rational point is exact either way
        if r is not None:
            Zc[k], exact[k] = r, True
            if exact_jacobian_rank(Qs, wsc, r) == p:     # a simple root reached by several paths:
                exact[k] = False                         # other roots nearby, not resolved
    # lines in the original coordinates: xi = d * y, c = s c' (exact powers of 2)
    lines = make_lines(q, Qs, wsc, dsc, ssc, Zc, [m for _, m, _ in cand],
                       [bool(real[k]) if alpha[k] < ALPHA0 else None for k in range(nc)],
                       [tuple(int(m) for m in pr.cycle[members]) for members, _, _ in cand], alpha.tolist(), tol)
    finish_lines(q, Qs, wsc, lines, Zc)
    # multiplicities of the exact singular roots, proved in exact arithmetic where the local ring is small enough
    mu = {}
    keys = [tuple(np.round(Zc[k] / Zc[k][np.argmax(np.abs(Zc[k]))], 12)) for k in np.nonzero(exact)[0]]
    if ball_available() and len(set(keys)) == len(keys):   # one exact point per cluster
        for k in np.nonzero(exact)[0]:
            m = local_multiplicity(Qs, wsc, Zc[k])
            if m is not None:
                mu[int(k)] = m
                lines[k].multiplicity = m
    mult_proved = bool(mu) and len(mu) == int(exact.sum())
    cert, reason = completeness_certificate(p, lines, cand, Zc, radius, real, nonreal, exact, failed, fams,
                                q.is_real)
    if cert == "alpha+count" and mult_proved:
        cert = "alpha+multiplicity"
        reason = (f"{int(simple.sum())} simple roots certified by the alpha test; {len(mu)} singular root(s) with "
                  f"rational coordinates verified exactly, their multiplicities {sorted(mu.values())} proved in exact "
                  f"arithmetic (the dimension of the local ring, servo.quadratic.multiplicity); total 2^p - 1 = "
                  f"{2 ** p - 1} with multiplicity, so nothing else exists")
    if cert == "family":
        # a family answer lists a singular line as isolated only when its local ring is proved finite (its
        # multiplicity proved); the others may lie on the family (a degenerate p = 6 system of the fuzz: the
        # rational point e_0 on a line of equilibria through e_0 and e_1, reached by 31 paths, was listed as an
        # isolated line of multiplicity 31)
        drop = [k for k in np.nonzero(~simple)[0] if int(k) not in mu]
        if drop:
            before = sum(L.multiplicity for L in lines)
            reason += (f"; {len(drop)} singular end point(s) not listed (their isolation is not proved: they may lie "
                       f"on the family), e.g. {np.round(lines[drop[0]].direction, 6)}")
            lines = [L for k, L in enumerate(lines) if k not in set(drop)]
            reason = reason.replace(f"{before} isolated line(s)", f"{sum(L.multiplicity for L in lines)} isolated line(s)")
    precision = 53 if cert in ("alpha", "alpha+count", "alpha+multiplicity") else None
    if cert is None and not fams:
        if ball_available():
            sing = [k for k in np.nonzero(~simple)[0] if exact[k]]
            res = (None, "")
            if not sing and p >= MIXED_MIN_P:
                res = mixed_lines(q, Qs, wsc, dsc, ssc, hom, zs, lines, cand, Zc, radius, real, nonreal,
                                   trivial_members if trivial_seen == 1 else [], seed, tol)
            quad, quad_k = quadratic_lines(q, Qs, wsc, dsc, ssc, cand, Z, simple, exact, tol)
            if res[0] is None and (sing or quad or p <= PRECISE_MAX_P):
                mixed_why = res[1]
                skip = set(int(m) for k in list(sing) + quad_k for m in cand[k][0])
                pts = [zs[i] for i in range(len(zs)) if i not in skip and np.all(np.isfinite(zs[i]))]
                pts += list(retrack(hom, [i for i in np.nonzero(~pr.regular)[0] if i not in skip]))
                res = ball_lines(q, Qs, wsc, dsc, ssc, pts, [lines[k] for k in sing] + quad, seed, tol,
                                  mult_proved=(mult_proved or not sing) and len(sing) == len(mu))
                if res[0] is None and mixed_why:
                    res = (None, f"{mixed_why}; all end points in balls: {res[1]}")
            if res[0] is not None:
                lines, cert, reason, precision = res
            else:
                reason += f"; in higher precision: {res[1]}"
        else:
            reason += "; the higher-precision (ball arithmetic) certificate needs python-flint (the 'certify' extra)"
    fams = merge_linear_families(hom, fams, dsc, ssc)
    order = sorted(range(len(lines)), key=lambda i: (not lines[i].is_real, -abs(lines[i].c),
                                                   tuple(np.real(lines[i].direction))))
    lines = [lines[i] for i in order]
    return InvariantLines(lines, fams, p, failed, pr, cert, reason, precision)

