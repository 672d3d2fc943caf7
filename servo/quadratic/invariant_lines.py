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
normalise; (5) if no run of (2)-(4) is certified, the fallbacks of servo.quadratic.line_fallbacks. What
``certified`` then proves is in InvariantLines.

Normalisation: for c != 0 the direction xi is the unit vector with c real and > 0 (unique: it is
eta / |eta| for the unique eta with v(eta) = eta); for c = 0 the largest component of xi is real > 0.
"""
from __future__ import annotations

import numpy as np

from ..errors import QuadraticSystemError
from .certify import (ALPHA0, alpha_test, backward_error, close_pairs, equilibrate, exact_jacobian_rank, exact_root,
                      normalise_line, pair_angles)
from .certify_lines import available as ball_available
from .certify_lines import retrack
from .completeness import ROUNDOFF, completeness_certificate
from .families import family_proof_near, isolation_exactly, local_family, merge_linear_families
from .homotopy import QuadraticEigenHomotopy
from .line_assembly import ball_lines, finish_lines, mixed_lines, one_line_tol, quadratic_lines
from .line_fallbacks import (EXACT_SEED_MAX_P, PRECISE_MAX_P, confirm_family, exact_fallback, exact_for_multiple_roots,
                             family_by_dimension, precise_fallback)
from .line_records import make_lines
from .line_types import FamilyWitness, InvariantLine, InvariantLines
from .multiplicity import local_multiplicity
from .protocol import QuadraticField

# the result types live in servo.quadratic.line_types and are re-exported here, where they were first public
__all__ = ["InvariantLine", "InvariantLines", "FamilyWitness", "invariant_lines"]

#: smallest p at which the lines the alpha test proves are kept and only the other paths go to the ball
#: certificate (servo.quadratic.certify_mixed); below it all 2^p end points are proved in balls (at most 64
#: points, well under a second), so that every line has its enclosure
MIXED_MIN_P = 7
#: an alpha-certified line whose ball the scaling magnifies in the original coordinates xi = d y, by
#: M = max d |z| / max |d y| > WIDE_MAGNIFY, counts only when it stays tight there: radius * M <= TIGHT_IN_XI
#: (the bound the ball certificate uses); without such a magnification the alpha ball is as tight in xi as in y
TIGHT_IN_XI = 1e-12
WIDE_MAGNIFY = 2.0 ** 10
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
            return confirm_family(q, res, int(seeds[0]), float(tol))
        if res.certificate == "family" and not all(f.proved for f in res.positive_dimensional):
            # above EXACT_SEED_MAX_P the exact path is too slow to confirm a family: a linear family or an infinite
            # local ring proved exactly at every witness, or the exact dimension of the solution set, counts;
            # otherwise nothing is claimed and the fallbacks below try to prove a finite set
            family_by_dimension(q, res, dims)
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
        return exact_fallback(q, best, int(seeds[0]), float(tol))
    if exact_for_multiple_roots(q, best):
        best = exact_fallback(q, best, int(seeds[0]), float(tol))
        if best.certified:
            return best
    if q.p > PRECISE_MAX_P:
        best.reason += (f"; no re-tracking in higher precision above p = {PRECISE_MAX_P} (2^p paths in Python ball "
                        f"arithmetic would take hours)")
        return best
    return precise_fallback(q, best, int(seeds[0]), float(tol))


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
                # the witness is a point the local test found on it at round-off (dim > 0: there is one)
                z = near[0] / np.linalg.norm(near[0])
                dim, near = local_family(hom, z)
            proved = dim > 0 and family_proof_near(hom, Qs, wsc, z, near) is not None
            if dim > 0 and not proved:
                isolated, proved = isolation_exactly(Qs, wsc, z)
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
    # a ball tight in y can be wide in xi = d y: with d over many powers of 2 (a mixed-scale system) the angle
    # radius in y leaves a small component of xi unproved (a p = 2 fuzz system: y = (-9e-13, 8.4e6) proved to
    # ~1e-9, d = (8.4e6, 1.2e-7), so xi = (-7.5e-6, 1) known to ~7e-3 only). Such a line goes to ball arithmetic,
    # which proves it again in more bits until tight in xi (servo.quadratic.certify_lines), as for the Krawczyk boxes
    # (a family answer lists its isolated lines as found, at round-off and not proved complete: no ball needed)
    magnify = float(dsc.max()) * np.linalg.norm(Zc, axis=1) / np.abs(Zc[:, :p] * dsc).max(axis=1)
    wide = np.isfinite(radius) & (magnify > WIDE_MAGNIFY) & (radius * magnify > TIGHT_IN_XI) & (not fams)
    radius[wide] = np.inf
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
    # next to a family, paths can stop short of it (a non-reduced component: the end game converges slowly), at
    # points that solve nothing to round-off (a degenerate p = 6 fuzz system with a line of equilibria through e_1
    # and e_4: about six end points near e_1 with backward errors 1e-5..1e-3, others at different places for other
    # gammas). A family answer does not claim its isolated lines complete, and lists only lines at round-off: these
    # end points are left out (and counted in the reason), instead of making the whole answer uncertified. So is a
    # simple end point the alpha test does not prove: it may lie on the family (e_4 of that system, in other
    # coordinates, reached by one path), as the singular end points whose isolation is not proved (below)
    short = np.array([bool(fams) and (L.backward_error > ROUNDOFF or (m == 1 and not np.isfinite(radius[k])))
                      for k, (L, (_, m, _)) in enumerate(zip(lines, cand))], dtype=bool)
    if short.any():
        keep = np.nonzero(~short)[0]
        lines, cand = [lines[k] for k in keep], [cand[k] for k in keep]
        Z, Zc, radius, real, nonreal, exact, wide, simple = (a[keep] for a in (Z, Zc, radius, real, nonreal, exact,
                                                                                wide, simple))
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
                                            q.is_real, wide=wide, dscale=dsc)
    if short.any():
        reason += (f"; {int(short.sum())} end point(s) next to the family not listed: not at round-off (paths that "
                   f"stopped short of the family) or simple but not proved by the alpha test (they may lie on it)")
    if cert == "alpha+count" and mult_proved:
        cert = "alpha+multiplicity"
        reason = (f"{int(simple.sum())} simple roots certified by the alpha test; {len(mu)} singular root(s) with "
                  f"rational coordinates verified exactly, their multiplicities {sorted(mu.values())} proved in exact "
                  f"arithmetic (the dimension of the local ring, servo.quadratic.multiplicity); total 2^p - 1 = "
                  f"{2 ** p - 1} with multiplicity, so nothing else exists")
    elif cert == "alpha+count":
        # multiplicities from the path count are no proof: close simple roots next to an exact singular root are
        # counted in its cluster (a mixed-scale p = 3 fuzz system: e_1 of multiplicity 2 and three simple lines
        # within 1e-12 of it reported as e_1 twice, multiplicities 2 and 3, with the wrong real count)
        cert = None
        reason += "; multiplicities from the path count are no proof: not certified"
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

