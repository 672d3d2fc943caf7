"""Close simple roots reached by their own paths in the higher-precision tracker (issue 25).

Mixed-scale systems of the fuzz (entries +-{1, 3} 2^e, |e| <= 66) can have simple roots 1e-9..1e-8 apart in the
equilibrated coordinates (a near-double or near-quadruple root: Jacobians with smallest singular values ~1e-15).
The paths to such a pair come together like the branches through a double root, at a distance ~ s = 1 - t; the
128-bit tracker used to step straight onto t = 1 from s ~ 1e-9, landing both paths on one root, so that 2^p
distinct roots were never counted: a p = 6 system (``MIXED6``) stayed uncertified after tracking in 128 and 256
bits (63 of 64 roots), and p = 4 systems (``CLUSTER4``) needed the second, 256-bit attempt. The tracker now
approaches t = 1 geometrically (servo.quadratic.precise_tracking). Roots closer than 128 bits can tell apart
(``CLUSTER4_TIGHT``, about 2.6e-26) are reached by tracking only the paths that failed or met another one again,
with the same gamma, in 256 bits (servo.quadratic.line_fallbacks.precise_fallback).

The expected roots are checked by a second method: Newton's method in mpmath at 60 digits from each end point
(its own chart), converging to a root next to it with a non-singular Jacobian, the roots pairwise apart; with
the trivial root, 2^p distinct simple roots are the Bezout number of p quadrics in P^p, so nothing else exists.
"""
import importlib

import numpy as np
import pytest

flint = pytest.importorskip("flint")
mpmath = pytest.importorskip("mpmath")

from servo import QuadraticSystem  # noqa: E402
from servo.quadratic.certify import equilibrate, pairwise_angles  # noqa: E402
from servo.quadratic.certify_lines import ball_certify_end_points  # noqa: E402
from servo.quadratic.homotopy import QuadraticEigenHomotopy  # noqa: E402
from servo.quadratic.precise_tracking import track_precise  # noqa: E402

# (i, j, k, m, e): Q[i, j, k] = Q[i, k, j] = m 2^e, every other entry 0
# `benchmarks/_lines_fuzz.py` fuzz_system("mixed", 4, np.random.default_rng(137)): four simple roots within
# 4.3e-9 of e_1 in the equilibrated coordinates (two real, two complex)
CLUSTER4 = [(0, 0, 0, -1, -33), (0, 0, 1, 1, -2), (0, 0, 3, 3, 10), (0, 1, 1, -3, 17), (0, 1, 2, 1, -1),
            (0, 1, 3, 1, -61), (0, 2, 2, -3, -21), (0, 3, 3, -1, -63), (1, 0, 0, -3, -38), (1, 0, 1, 1, -21),
            (1, 0, 2, 3, -26), (1, 0, 3, 1, -16), (1, 1, 2, -3, -54), (1, 1, 3, -3, -50), (1, 2, 2, 1, 34),
            (1, 2, 3, -1, -51), (1, 3, 3, -3, 44), (2, 0, 0, 3, -8), (2, 0, 1, -1, 33), (2, 0, 3, -1, -43),
            (2, 1, 2, 3, 65), (2, 1, 3, 1, -43), (2, 2, 2, -1, -62), (2, 2, 3, 1, 44), (2, 3, 3, 1, -17),
            (3, 0, 1, -1, 44), (3, 0, 2, 3, -46), (3, 0, 3, 1, -18), (3, 1, 1, -1, -51), (3, 1, 3, -3, -66),
            (3, 2, 2, 1, 25), (3, 2, 3, 3, -19), (3, 3, 3, 3, -61)]

# fuzz_system("mixed", 4, np.random.default_rng(52)): a cluster of roots about 2.5e-16 apart near e_2 (equilibrated),
# too close for 128 bits: paths meet or fail there
CLUSTER4_TIGHT = [(0, 0, 1, -1, 2), (0, 0, 2, 3, -54), (0, 0, 3, 1, -42), (0, 1, 3, -3, -60), (0, 2, 2, 3, 35),
                  (0, 3, 3, 1, -22), (1, 0, 0, 1, 62), (1, 0, 1, -1, 22), (1, 0, 3, 3, -38), (1, 1, 1, 1, -38),
                  (1, 1, 2, -1, -2), (1, 1, 3, 1, 45), (1, 2, 2, 1, -47), (1, 2, 3, -1, 18), (1, 3, 3, -3, -32),
                  (2, 0, 0, -1, -37), (2, 0, 2, -3, 35), (2, 0, 3, -1, 18), (2, 1, 3, -1, -59), (2, 2, 2, -1, 19),
                  (2, 3, 3, -1, -24), (3, 0, 0, -3, -21), (3, 0, 1, 1, 61), (3, 0, 2, 1, 1), (3, 2, 2, -3, -62),
                  (3, 2, 3, -1, 16), (3, 3, 3, -3, 27)]

# the p = 6 system of the fuzz at p = 4..6 left uncertified ("63 distinct simple roots proved ... not the Bezout
# number 2^p = 64"): two pairs of simple roots 1.2e-8 apart (equilibrated), near e_1 and e_2
MIXED6 = [(0, 0, 0, 1, -11), (0, 0, 1, -3, -49), (0, 0, 2, -1, -51), (0, 0, 3, 1, 23), (0, 0, 4, -1, -7),
          (0, 0, 5, -1, -65), (0, 1, 1, 1, -63), (0, 1, 2, -1, -39), (0, 1, 3, -1, 5), (0, 1, 4, 1, 38),
          (0, 1, 5, 1, 21), (0, 2, 3, -3, -43), (0, 2, 4, -1, -17), (0, 2, 5, 1, -48), (0, 3, 3, -1, 22),
          (0, 3, 5, -1, 66), (0, 4, 4, 1, -48), (0, 4, 5, 3, -13), (0, 5, 5, -3, -1), (1, 0, 0, -3, -41),
          (1, 0, 1, -1, 16), (1, 0, 2, 1, -35), (1, 0, 3, 1, -27), (1, 0, 4, 1, 7), (1, 1, 1, 1, -22),
          (1, 1, 2, -3, -17), (1, 1, 3, 1, -6), (1, 1, 5, -1, -9), (1, 2, 2, 1, -65), (1, 2, 4, 3, -3),
          (1, 3, 4, 3, 12), (1, 3, 5, 1, 58), (1, 5, 5, 3, -40), (2, 0, 0, -3, -27), (2, 0, 1, 1, 53),
          (2, 0, 2, 1, -47), (2, 0, 3, 3, -28), (2, 0, 4, -3, 51), (2, 0, 5, 3, 31), (2, 1, 3, 1, 55),
          (2, 1, 4, -1, -47), (2, 1, 5, -1, -9), (2, 2, 2, -1, -38), (2, 2, 4, -1, 33), (2, 3, 4, -1, 42),
          (2, 3, 5, 1, 8), (2, 4, 5, 3, 37), (2, 5, 5, -3, 29), (3, 0, 0, -1, 22), (3, 0, 1, -1, 8),
          (3, 0, 2, 3, -14), (3, 0, 3, 1, 63), (3, 1, 2, -1, -43), (3, 1, 5, -1, -39), (3, 2, 3, -3, 11),
          (3, 2, 5, -3, 46), (3, 3, 3, -3, -49), (3, 3, 4, -3, -34), (3, 4, 4, -3, 30), (3, 5, 5, -1, -61),
          (4, 0, 0, 1, -32), (4, 0, 2, -3, 24), (4, 0, 3, -3, 41), (4, 0, 4, 1, -38), (4, 0, 5, 1, -62),
          (4, 1, 1, -1, 12), (4, 1, 2, 3, 59), (4, 1, 3, 1, -15), (4, 1, 4, -3, -30), (4, 2, 2, 3, -15),
          (4, 2, 3, -3, -55), (4, 2, 4, 3, 32), (4, 3, 3, -1, -19), (4, 3, 4, 3, 52), (4, 4, 4, 3, -49),
          (4, 4, 5, -1, 43), (5, 0, 0, -3, -17), (5, 0, 1, 3, 30), (5, 0, 3, -1, 8), (5, 0, 4, 3, -18),
          (5, 0, 5, 3, -38), (5, 1, 1, -1, -47), (5, 1, 2, -1, 36), (5, 1, 3, -1, 64), (5, 1, 4, 1, 15),
          (5, 2, 2, -1, 13), (5, 2, 3, -3, 31), (5, 2, 4, -3, -32), (5, 3, 5, 1, -32), (5, 4, 5, -1, -56),
          (5, 5, 5, -1, 62)]
# invariant_lines(seed=0) tracks with the homotopy of its first seed; these are the paths that met in pairs
MIXED6_SEED = 1826701615
MIXED6_ROWS = [18, 19, 32, 33]


def system(entries, p):
    Q = np.zeros((p, p, p))
    for i, j, k, m, e in entries:
        Q[i, j, k] = Q[i, k, j] = np.ldexp(float(m), e)
    return QuadraticSystem(Q)


def mp_root(Qs, w, z, dps=60):
    """Newton's method in mpmath on Qs(y, y) - w c y = 0 in the chart z_m fixed (m the largest |z_m|), from the
    end point z = (y, c): (the unit root as an mpmath column, |first Newton step| / |z|, smallest singular value
    of the Jacobian / its largest), or None if Newton does not converge. Call inside ``mpmath.workdps(dps)``."""
    p = Qs.shape[0]
    z = np.asarray(z, dtype=complex)
    m = int(np.argmax(np.abs(z)))
    cols = [a for a in range(p + 1) if a != m]
    Q = [[[mpmath.mpf(float(Qs[i, j, k])) for k in range(p)] for j in range(p)] for i in range(p)]
    W = [mpmath.mpf(float(a)) for a in w]
    x = [mpmath.mpc(complex(a)) for a in z]
    first = None
    for _ in range(60):
        F = mpmath.matrix([mpmath.fsum(Q[i][j][k] * x[j] * x[k] for j in range(p) for k in range(p))
                           - W[i] * x[p] * x[i] for i in range(p)])
        J = mpmath.matrix(p, p)
        for i in range(p):
            for b, a in enumerate(cols):
                J[i, b] = (-W[i] * x[i] if a == p else
                           2 * mpmath.fsum(Q[i][a][k] * x[k] for k in range(p)) - (W[i] * x[p] if i == a else 0))
        dx = mpmath.lu_solve(J, F)
        for b, a in enumerate(cols):
            x[a] -= dx[b]
        step = mpmath.norm(dx) / mpmath.norm(mpmath.matrix(x))
        first = step if first is None else first
        if step < mpmath.mpf(10) ** (5 - dps):
            sv = mpmath.svd_c(J, compute_uv=False)
            u = mpmath.matrix(x)
            return u / mpmath.norm(u), float(first), float(min(sv) / max(sv))
    return None


def assert_distinct_simple_roots(Qs, w, Z, apart, dps=60):
    """Each end point of Z is within 1e-12 of a simple root (Newton in ``dps`` digits), the roots pairwise at
    angles > ``apart`` in P^p (sin angle(u, v) = |v - u (u^H v)| for unit u, v, at ``dps`` digits)."""
    with mpmath.workdps(dps):
        roots = []
        for z in Z:
            r = mp_root(Qs, w, z, dps)
            assert r is not None
            root, first, cond = r
            assert first < 1e-12 and cond > 1e-40
            roots.append(root)
        for a in range(len(roots)):
            for b in range(a):
                u, v = roots[a], roots[b]
                g = sum(mpmath.conj(u[i]) * v[i] for i in range(len(u)))
                assert mpmath.norm(v - u * g) > apart


def test_the_paths_that_met_on_the_p6_system_end_at_their_own_roots():
    q = system(MIXED6, 6)
    Qs, w, d, s = equilibrate(q.Q)
    hom = QuadraticEigenHomotopy(Qs, rng=MIXED6_SEED, w=w)
    Z, ok = track_precise(hom, rows=np.array(MIXED6_ROWS), prec=128)
    assert ok.all()
    # four different roots, two pairs about 1.2e-8 apart (before: 18 = 19 and 32 = 33 to 2e-16)
    assert_distinct_simple_roots(Qs, w, Z, apart=1e-8)
    A = pairwise_angles(Z)
    assert A[0, 1] < 1e-7 and A[2, 3] < 1e-7              # the close pairs, each reached once
    B = ball_certify_end_points(Qs, w, Z, seed=0, dscale=d)
    assert len(B.roots) == 4 and not B.undecided and B.failed == 0


def test_every_path_of_the_clustered_p4_system_reaches_its_own_root_in_128_bits():
    q = system(CLUSTER4, 4)
    Qs, w, d, s = equilibrate(q.Q)
    hom = QuadraticEigenHomotopy(Qs, rng=0, w=w)
    Z, ok = track_precise(hom, prec=128)
    assert ok.all()
    # the cluster: four end points within an angle 1e-8 of [1 : 0 : 0 : 0 : 0] in P^4 (equilibrated, z = (y, c'))
    near = np.nonzero(np.linalg.norm(Z[:, 1:], axis=1) < 1e-8 * np.abs(Z[:, 0]))[0]
    assert near.size == 4
    assert_distinct_simple_roots(Qs, w, Z, apart=1e-9)
    # and in ball arithmetic: 16 distinct simple roots, the Bezout number 2^4 (before: 14)
    B = ball_certify_end_points(Qs, w, Z, seed=0, dscale=d)
    assert len(B.roots) == 16 and not B.undecided and B.trivial is not None


def test_the_clustered_p4_system_is_proved_at_128_bits():
    """invariant_lines: double precision fails, the first (128-bit) attempt of the fallback proves all 15 lines
    (the old tracker needed the second one, 256 bits with another gamma)."""
    q = system(CLUSTER4, 4)
    L = q.invariant_lines()
    assert L.certified and L.certificate == "krawczyk", L.reason
    assert "128-bit arithmetic (attempt 1)" in L.reason
    assert L.total_multiplicity == 15 and all(ln.multiplicity == 1 for ln in L)
    Qs, w, d, s = equilibrate(q.Q)
    # the proved boxes' centres, checked by the second method: 15 distinct simple roots and the trivial one
    mids = np.array([np.asarray(ln.ball[0].mid, dtype=complex) for ln in L])
    assert_distinct_simple_roots(Qs, w, mids, apart=1e-9)
    assert pairwise_angles(np.vstack([mids, np.eye(5)[4]]))[-1, :-1].min() > 1e-9



def test_paths_that_meet_in_128_bits_are_tracked_again_in_256_bits_with_the_same_gamma():
    """The fallback alone (no double-precision end points): the paths of the first attempt that failed or met
    another one are tracked again in 256 bits with the same gamma, which proves all 15 lines before the second
    attempt (another gamma, every path in 256 bits) is needed."""
    fb = importlib.import_module("servo.quadratic.line_fallbacks")
    from servo.quadratic.line_types import InvariantLines
    q = system(CLUSTER4_TIGHT, 4)
    L = fb.precise_fallback(q, InvariantLines([], [], 4, 2, reason="test"), seed=0, tol=1e-8)
    assert L.certified and L.certificate == "krawczyk", L.reason
    assert "tracked again in 256 bits" in L.reason and "attempt 2" not in L.reason
    assert L.total_multiplicity == 15 and all(ln.multiplicity == 1 for ln in L)
    Qs, w, d, s = equilibrate(q.Q)
    mids = np.array([np.asarray(ln.ball[0].mid, dtype=complex) for ln in L])
    assert_distinct_simple_roots(Qs, w, mids, apart=1e-27)
    assert pairwise_angles(np.vstack([mids, np.eye(5)[4]]))[-1, :-1].min() > 1e-9
    # the cluster: proved roots closer than 1e-20 (about 2.6e-26 apart), which 128 bits cannot separate
    A = pairwise_angles(mids)
    np.fill_diagonal(A, np.inf)
    assert A.min() < 1e-20


# fuzz_system("mixed", 6, ...) of the seed-712 run at p = 4..6, left uncertified ("62 distinct simple roots proved
# ... not the Bezout number 2^p = 64" after 128 and 256 bits): near e_1 (equilibrated) a real simple root and a
# conjugate pair whose 4th coordinates are +-4.5e-17 i (the real root's is ~1e-43), Jacobians of smallest singular
# value ~1e-29. The ball certificate tried the real projection of each end point first, and the pair's projection
# converged to the real root within the absolute slack (2^-40) allowed between an end point and its root
MIXED6_CLUSTER = [(0, 0, 0, 3, -31), (0, 0, 1, 1, -51), (0, 0, 3, -1, 42), (0, 0, 4, -3, 24), (0, 1, 2, -3, -10),
                  (0, 1, 3, -1, -25), (0, 1, 4, 1, -42), (0, 1, 5, -1, -52), (0, 2, 2, -1, 17), (0, 2, 3, 1, -26),
                  (0, 2, 4, -3, 51), (0, 2, 5, 3, 26), (0, 3, 3, 1, -56), (0, 3, 4, -1, -53), (0, 4, 4, -3, 30),
                  (0, 4, 5, -1, 59), (1, 0, 1, 3, -61), (1, 0, 4, -3, 26), (1, 0, 5, -1, -58), (1, 1, 1, 1, 3),
                  (1, 1, 2, -1, -61), (1, 1, 3, -1, -57), (1, 1, 4, -1, -13), (1, 1, 5, -1, -60), (1, 2, 3, -1, -14),
                  (1, 2, 4, -1, 66), (1, 2, 5, 3, 64), (1, 3, 3, -3, -44), (1, 3, 5, -1, 32), (1, 4, 4, 3, -19),
                  (1, 4, 5, 1, 40), (1, 5, 5, -1, 2), (2, 0, 1, -3, 63), (2, 0, 2, 1, 60), (2, 0, 4, 1, 28),
                  (2, 0, 5, -1, 65), (2, 1, 1, -1, 58), (2, 1, 4, -1, -62), (2, 1, 5, 1, -14), (2, 2, 2, -3, -55),
                  (2, 2, 3, 1, 63), (2, 2, 5, -1, 52), (2, 3, 3, -3, -13), (2, 3, 5, 1, -45), (2, 4, 5, -1, 40),
                  (2, 5, 5, 3, 6), (3, 0, 0, -3, -43), (3, 0, 1, -3, 3), (3, 0, 2, 1, 51), (3, 0, 4, -1, -16),
                  (3, 0, 5, 1, 67), (3, 1, 1, 1, 32), (3, 1, 3, 3, -25), (3, 1, 4, 3, 47), (3, 1, 5, 1, -60),
                  (3, 2, 2, -1, -45), (3, 2, 3, 3, -29), (3, 2, 4, 3, -38), (3, 2, 5, 3, 20), (3, 3, 3, 3, 38),
                  (3, 3, 4, -1, -36), (3, 3, 5, 3, -27), (3, 4, 5, 1, -60), (3, 5, 5, -3, 3), (4, 0, 1, 1, -66),
                  (4, 0, 3, -1, -15), (4, 0, 4, -3, 8), (4, 0, 5, 3, -42), (4, 1, 2, -3, -2), (4, 1, 3, 3, 62),
                  (4, 1, 5, 1, -50), (4, 2, 2, 1, 19), (4, 2, 3, 1, 24), (4, 2, 4, -1, -23), (4, 2, 5, -3, -51),
                  (4, 3, 3, 1, -58), (4, 3, 5, -1, 20), (4, 4, 4, 1, 17), (4, 4, 5, 1, -56), (4, 5, 5, -1, -8),
                  (5, 0, 1, 1, 48), (5, 0, 4, -1, 13), (5, 0, 5, -1, 25), (5, 1, 1, -1, -1), (5, 1, 3, 3, -61),
                  (5, 2, 2, 3, -49), (5, 2, 3, 3, 25), (5, 2, 4, -3, 7), (5, 2, 5, 3, -6), (5, 3, 3, 1, 65),
                  (5, 3, 4, 3, 44), (5, 4, 4, -1, -57), (5, 4, 5, -1, 33)]


def mixed6_cluster_roots():
    """The three roots near e_1 of MIXED6_CLUSTER (equilibrated), found by the second method alone: Newton in mpmath
    at 200 digits (mp_root) from e_1 with c' = Qs[0, 0, 0] and the 4th coordinate 0 or +-4.5e-17 i; returned as
    complex doubles (y, c') with the distances between them at 200 digits."""
    q = system(MIXED6_CLUSTER, 6)
    Qs, w, d, s = equilibrate(q.Q)
    out, roots = [], []
    with mpmath.workdps(200):
        for y3 in (0.0, 4.5e-17j, -4.5e-17j):
            z = np.zeros(7, dtype=complex)
            z[0], z[3], z[6] = 1.0, y3, Qs[0, 0, 0]
            r = mp_root(Qs, w, z, dps=200)
            assert r is not None
            root, first, cond = r
            assert 1e-35 < cond < 1e-20              # simple, but badly conditioned
            roots.append(root)
            out.append(np.array([complex(a) for a in root]))
        gaps = [float(mpmath.norm(roots[a] - roots[b])) for a in range(3) for b in range(a)]
    return q, Qs, w, d, np.array(out), gaps


def test_a_conjugate_pair_next_to_a_real_root_is_not_taken_for_it():
    """The ball certificate from the three roots' doubles proves three distinct roots, one real and two not (before:
    the real projection of each pair point reached the real root, one root for three points)."""
    q, Qs, w, d, Z, gaps = mixed6_cluster_roots()
    assert 1e-17 < min(gaps) < 1e-15 and abs(Z[0, 3]) < 1e-40 and abs(abs(Z[1, 3].imag) - 4.5e-17) < 1e-18
    B = ball_certify_end_points(Qs, w, Z, seed=0, dscale=d)
    assert len(B.roots) == 3 and not B.undecided and B.failed == 0
    assert sorted(bool(r.real) for r in B.roots) == [False, False, True]


def test_the_p6_system_with_a_real_root_and_a_close_conjugate_pair_is_certified():
    q, Qs, w, d, Z, gaps = mixed6_cluster_roots()
    L = q.invariant_lines()
    assert L.certified and L.certificate == "krawczyk", L.reason
    assert L.total_multiplicity == 63 and all(ln.multiplicity == 1 for ln in L)
    mids = np.array([np.asarray(ln.ball[0].mid, dtype=complex) for ln in L])
    assert_distinct_simple_roots(Qs, w, mids, apart=1e-17)
    # the three roots of the second method are lines of the answer, with their reality
    # (sine of the angle |u - v (v^H u)|, the coordinates of size 1e-15 told apart by their own doubles)
    dirs = np.array([ln.direction / np.linalg.norm(ln.direction) for ln in L])
    found = []
    for z, real in zip(Z, (True, False, False)):
        u = z[:6] * d / np.linalg.norm(z[:6] * d)
        sines = np.linalg.norm(u[None, :] - dirs * (dirs.conj() @ u)[:, None], axis=1)
        k = int(np.argmin(sines))
        assert sines[k] < 1e-20 and L[k].is_real == real
        found.append(k)
    assert len(set(found)) == 3
