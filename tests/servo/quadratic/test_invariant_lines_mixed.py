"""The mixed certificate (servo.quadratic.certify_mixed): alpha-certified lines kept, only the rest proved in
ball arithmetic, and the sparse pair search (certify.close_pairs) it and the clustering rest on.

Known answer: v_i = x_i^2 (Q[i, i, i] = 1). v(xi) = c xi gives xi_i^2 = c xi_i, so xi_i in {0, c}: the lines
are the 2^p - 1 non-zero 0/1 vectors, all with c = 1 at that scale, all real. Each is simple: at y in {0, c}^p
the Jacobian of (y_i^2 - c y_i)_i is [diag(2 y_i - c) | -y] with 2 y_i - c = +-c != 0, rank p.
"""
import itertools

import numpy as np
import pytest

pytest.importorskip("flint")

from servo import QuadraticSystem  # noqa: E402
from servo.quadratic.certify import alpha_test, close_pairs, pair_angles, pairwise_angles  # noqa: E402
from servo.quadratic.certify_mixed import disjoint_alpha, mixed_certificate  # noqa: E402

il = __import__("importlib").import_module("servo.quadratic.invariant_lines")


def diagonal(p):
    Q = np.zeros((p, p, p))
    Q[np.arange(p), np.arange(p), np.arange(p)] = 1.0
    return Q


def known_roots(p):
    """The roots (y, c) = (e, 1), e a non-zero 0/1 vector, of the diagonal system (module docstring)."""
    return np.array([list(e) + [1.0] for e in itertools.product([0, 1], repeat=p) if any(e)], dtype=complex)


def alpha_points(Q, Z):
    at = alpha_test(Q, np.ones(Q.shape[0]), Z, np.ones(len(Z), dtype=bool))
    assert at["ok"].all()
    return at["z"], at["radius"]


def test_close_pairs_finds_every_pair_a_full_matrix_finds():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(60, 5)) + 1j * rng.normal(size=(60, 5))
    # near copies: a tiny perturbation times a phase and a scale (the same point of P^4, up to 1e-7), and conjugates
    Z = np.vstack([Z, (Z[:20] + 1e-7 * rng.normal(size=(20, 5))) * 3.0 * np.exp(1j * rng.uniform(0, 6, (20, 1))),
                   Z[20:30].conj()])
    A = pairwise_angles(Z)
    for r in (1e-6, 0.05, 0.5):
        want = {(a, b) for a, b in zip(*np.nonzero(A <= r)) if a < b}
        got = {tuple(x) for x in close_pairs(Z, r).tolist()}
        assert want <= got
    pr = close_pairs(Z, 1e-6)
    near = pair_angles(Z, pr[:, 0], pr[:, 1]) < 1e-6
    assert {tuple(x) for x in pr[near].tolist()} == {(k, 60 + k) for k in range(20)}
    # the cross version: rows of Z against rows of a second array
    W = Z[::7] * 2j
    got = {tuple(x) for x in close_pairs(Z, 1e-9, W).tolist()}
    assert {(7 * k, k) for k in range(len(W))} <= got


def test_alpha_balls_that_meet_or_hold_the_trivial_root_are_not_kept():
    Q = diagonal(3)
    Z, rad = alpha_points(Q, known_roots(3))
    assert disjoint_alpha(Z, rad).all()
    # the same root twice: neither copy is kept (they cannot count as two roots)
    keep = disjoint_alpha(np.vstack([Z, Z[2:3] * 1.5]), np.append(rad, rad[2]))
    assert not keep[2] and not keep[-1] and keep.sum() == len(Z) - 1
    # a ball wide enough to hold [0 : 0 : 0 : 1]: the angle from (1, 0, 0, 1) to it is pi / 4
    keep = disjoint_alpha(Z[:1], np.array([np.pi / 4 + 1e-9]))
    assert not keep[0]


def test_the_diagonal_system_is_proved_from_alpha_points_and_balls():
    p = 3
    Q = diagonal(p)
    R = known_roots(p)
    Z, rad = alpha_points(Q, R[:4])
    M = mixed_certificate(Q, np.ones(p), Z, rad, R[4:] + 1e-9, seed=1)
    assert M.ok, M.reason
    assert len(M.roots) == 3 and all(r.real for r in M.roots)
    got = sorted(tuple(np.round(r.mid[:p] / r.mid[p]).real.astype(int)) for r in M.roots)
    assert got == sorted(tuple(e.real.astype(int)) for e in R[4:, :p])


def test_a_box_on_an_alpha_root_is_not_counted_twice():
    p = 3
    Q = diagonal(p)
    R = known_roots(p)
    Z, rad = alpha_points(Q, R[:4])
    # the end points hold one root already in the alpha set and miss R[6]: 4 + 2 + 1 = 7 < 8
    M = mixed_certificate(Q, np.ones(p), Z, rad, np.vstack([R[4:6], R[0:1] * 2]), seed=1)
    assert not M.ok and "not counted" in M.reason and "not the Bezout number 2^p = 8" in M.reason
    # and a missing root is never made up
    M = mixed_certificate(Q, np.ones(p), Z, rad, R[4:6], seed=1)
    assert not M.ok and "7, not the Bezout number" in M.reason


def _alpha_fails_on_three_rows(monkeypatch):
    """invariant_lines' alpha test made to fail on the first three rows of every call (they go to the balls)."""
    real_alpha = il.alpha_test

    def failing(Q, w, Z, real_rows, *a, **k):
        out = real_alpha(Q, w, Z, real_rows, *a, **k)
        for key, bad in (("ok", False), ("real", False), ("nonreal", False), ("alpha", np.inf), ("radius", np.inf)):
            out[key] = out[key].copy()
            out[key][:3] = bad
        return out
    monkeypatch.setattr(il, "alpha_test", failing)


def test_invariant_lines_keeps_alpha_lines_and_proves_the_rest_in_balls(monkeypatch):
    """p = 7 (2^7 paths): the alpha test made to fail on three rows; the answer must still be the 127 known
    lines, now with certificate alpha+krawczyk."""
    p = il.MIXED_MIN_P
    _alpha_fails_on_three_rows(monkeypatch)
    L = QuadraticSystem(diagonal(p)).invariant_lines(retries=0)
    assert L.certificate == "alpha+krawczyk", L.reason
    assert L.certified and L.precision >= 64 and "3 path(s) not accounted for" in L.reason
    assert L.total_multiplicity == 2 ** p - 1 and L.real_count == 2 ** p - 1
    want = {tuple(e.real.astype(int)) for e in known_roots(p)[:, :p]}
    got = set()
    for line in L:
        d = line.direction / line.direction[np.argmax(np.abs(line.direction))]
        assert np.allclose(d, np.round(d), atol=1e-12)
        # xi = e / sqrt(k) (k ones): v(xi) = e / k = c xi, c = 1 / sqrt(k) = max |xi|
        assert line.c == pytest.approx(np.abs(line.direction).max(), rel=1e-12)
        got.add(tuple(np.round(d).real.astype(int)))
    assert got == want
    assert sum(line.ball is not None for line in L) == 3


def test_an_alpha_ball_holding_the_trivial_root_does_not_certify():
    """The lines of v = (x0^2, x1^2) are (1, 0), (0, 1), (1, 1) with c = 1 at these scales; a certified ball of
    angle 1.6 > pi / 2 around (1, 0, 1) holds [0 : 0 : 1]: the alpha certificate must refuse, while the true
    radii (about 1e-16) pass."""
    from servo.quadratic.completeness import completeness_certificate
    p = 2
    L = QuadraticSystem(diagonal(p)).invariant_lines()
    assert L.certificate == "alpha"
    lines = list(L.lines)
    Zc = np.array([list(ln.direction) + [ln.c] for ln in lines], dtype=complex)
    cand = [([k], 1, Zc[k]) for k in range(len(lines))]
    ones = np.ones(len(lines), dtype=bool)
    args = (cand, Zc)
    flags = (ones, ~ones, ~ones)
    ok, _ = completeness_certificate(p, lines, *args, np.full(3, 1e-12), *flags, 0, [], True)
    assert ok == "alpha"
    cert, why = completeness_certificate(p, lines, *args, np.array([1.6, 1e-12, 1e-12]), *flags, 0, [], True)
    assert cert is None and "trivial root" in why


def test_mixed_scale_lines_proved_in_balls_are_tight_in_the_original_coordinates(monkeypatch):
    """v_i = s_i x_i^2 with s_i = 2^(+-60, ...): the lines are eta / |eta| with eta_i = 1 / s_i on a non-empty
    set S and 0 elsewhere (s_i eta_i^2 = eta_i), c = 1 / |eta|; the equilibrated system is the diagonal one, so a
    box of 64 bits is tight there and wide here unless the ball proof is given the variable scaling (the rule
    of the all-ball path, passed to the mixed certificate too). Three rows forced to the balls, as above."""
    p = il.MIXED_MIN_P
    e = np.array([60, -60, 40, -40, 0, 20, -20])
    Q = np.zeros((p, p, p))
    Q[np.arange(p), np.arange(p), np.arange(p)] = np.ldexp(1.0, e)
    _alpha_fails_on_three_rows(monkeypatch)
    L = QuadraticSystem(Q).invariant_lines(retries=0)
    assert L.certificate == "alpha+krawczyk", L.reason
    assert L.total_multiplicity == 2 ** p - 1 and L.real_count == 2 ** p - 1
    want = {}
    for S in itertools.product([0, 1], repeat=p):
        if any(S):
            eta = np.array(S) * np.ldexp(1.0, -e)
            want[S] = eta
    for line in L:
        S = tuple(int(abs(x) > 0) for x in line.direction)
        eta = want.pop(S)
        d = eta / np.linalg.norm(eta)
        # every component, the smallest (2^-120 of the largest) included, to 1e-12 of itself
        assert np.all(np.abs(line.direction - d) <= 1e-12 * np.abs(d)), (S, line.direction, d)
        assert line.c == pytest.approx(1 / np.linalg.norm(eta), rel=1e-12)
        if line.ball is not None:
            # the Krawczyk box (scaled coordinates y, x = d y) mapped back: its radius times the largest d within
            # 1e-12 of the line's size in x, not only in y (64 bits would leave it 1e2 wide here)
            box, d, _ = line.ball
            assert box.radius * d.max() <= 1e-12 * np.abs(d * box.mid[:p]).max()
    assert not want
    # the three rows forced to the balls, and the alpha-certified lines whose balls the scaling (d over 2^120)
    # magnifies beyond 1e-12 in x: proved in balls as well (an alpha ball tight in y is not a proof in x here)
    assert sum(line.ball is not None for line in L) >= 3
    assert all(line.ball is not None or line.alpha < 0.15 for line in L)
