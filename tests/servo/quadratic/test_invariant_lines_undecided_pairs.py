"""Two ball proofs of one ill-conditioned root that the grouping could not tell equal or apart (issue 25).

A mixed-scale p = 4 system of the p = 4..6 fuzz (``U709``: dyadic entries from 2^-62 to 2^57) has a real root
near e_1 in the equilibrated coordinates whose Jacobian has a condition number ~1e17 there: its 64-bit Krawczyk box
(radius 2.7e-18) is as wide as the Newton basin allows (contraction ratio 0.96). Two end points of that root,
refined to centres an ulp apart, gave boxes that overlap with neither enclosure inside the other's box: a pair
"neither proved equal nor distinct", and the system stayed uncertified after tracking in 128 and 256 bits. Such a
pair is now proved again in twice the bits (servo.quadratic.certify_lines.ball_certify_end_points), where the
boxes nest.

The expected answer comes from a second method: Newton's method in mpmath at 200 digits on the original Q (exact
dyadic entries) in a random real chart, from each reported line (c counts as 0 there below the relative line
tolerance: the roots near e_3 have |c| ~ 4096 against entries up to 1.4e17), converging to a simple root next to the reported direction; the 15 roots are pairwise apart, and with the
trivial root they are 16 = 2^4, the Bezout number of 4 quadrics in P^4: nothing else exists. A root is real when
its chart coordinates are real to 1e-150 (a real chart: a real root has a real representative, a non-real one
none).
"""
import numpy as np
import pytest

flint = pytest.importorskip("flint")
mpmath = pytest.importorskip("mpmath")

from servo import QuadraticSystem  # noqa: E402

# (i, j, k, m, e): Q[i, j, k] = Q[i, k, j] = m 2^e (the fuzz system as the lead filed it, /work/lead/u709.json)
U709 = [(0, 0, 2, 3, 16), (0, 0, 3, 1, -62), (0, 1, 1, -1, -26), (0, 1, 2, -1, -12), (0, 2, 3, -1, -43),
        (1, 0, 1, -1, -22), (1, 0, 3, 1, -26), (1, 1, 1, -3, 43), (1, 2, 3, -1, -35), (2, 0, 0, 1, 12),
        (2, 0, 2, 1, -39), (2, 0, 3, 1, 6), (2, 3, 3, -1, 31), (3, 0, 2, 3, 10), (3, 1, 2, -1, 57),
        (3, 2, 2, -1, -54)]


def _q():
    Q = np.zeros((4, 4, 4))
    for i, j, k, m, e in U709:
        Q[i, j, k] = Q[i, k, j] = m * 2.0 ** e
    return Q


def _newton_root(Q, l, xi, c0):
    """The root of (v(x) - c x, l . x - 1) Newton's method in mpmath reaches from the line (xi, c0): (x, c) and
    the residual."""
    p = len(xi)
    Qm = [[[mpmath.mpf(float(Q[i, j, k])) for k in range(p)] for j in range(p)] for i in range(p)]
    lm = [mpmath.mpf(float(a)) for a in l]

    def F(z):
        x, c = z[:p], z[p]
        return [sum(Qm[i][j][k] * x[j] * x[k] for j in range(p) for k in range(p)) - c * x[i] for i in range(p)] + \
            [sum(lm[j] * x[j] for j in range(p)) - 1]

    def J(z):
        x, c = z[:p], z[p]
        M = mpmath.matrix(p + 1, p + 1)
        for i in range(p):
            for j in range(p):
                M[i, j] = 2 * sum(Qm[i][j][k] * x[k] for k in range(p)) - (c if i == j else 0)
            M[i, p] = -x[i]
        for j in range(p):
            M[p, j] = lm[j]
        return M
    x = [mpmath.mpc(complex(a)) for a in xi]
    t = 1 / sum(lm[j] * x[j] for j in range(p))
    z = [a * t for a in x] + [mpmath.mpc(complex(c0)) * t]
    for _ in range(60):
        dz = mpmath.lu_solve(J(z), mpmath.matrix(F(z)))
        z = [z[i] - dz[i] for i in range(p + 1)]
        if mpmath.norm(dz) < mpmath.mpf(10) ** -190:
            break
    return z, max(abs(v) for v in F(z))


def test_undecided_pair_of_one_root_proved_in_more_bits():
    Q = _q()
    res = QuadraticSystem(Q).invariant_lines()
    assert res.certified and res.certificate == "krawczyk"
    assert "neither proved equal nor distinct" not in res.reason
    assert len(res.lines) == 15 and all(L.multiplicity == 1 for L in res.lines)
    l = np.random.default_rng(709).normal(size=4)
    with mpmath.workdps(200):
        roots = []
        for L in res.lines:
            z, resid = _newton_root(Q, l, L.direction, L.c)
            assert resid < mpmath.mpf(10) ** -180
            x = np.array([complex(a) for a in z[:4]])
            # the root Newton reached is the reported line (same direction, up to a complex factor)
            u = x / np.linalg.norm(x)
            assert abs(abs(np.vdot(u, L.direction)) - 1) < 1e-12
            roots.append(z)
        gaps = [max(abs(roots[a][i] - roots[b][i]) for i in range(5)) for a in range(15) for b in range(a)]
        assert min(gaps) > mpmath.mpf(10) ** -15         # 15 distinct roots (+ the trivial one: 16 = 2^4)
        real = [max(abs(mpmath.im(v)) for v in z) < mpmath.mpf(10) ** -150 for z in roots]
    assert [L.is_real for L in res.lines] == real
    assert sum(real) == 9
