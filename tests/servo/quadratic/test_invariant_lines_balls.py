"""Invariant lines proved in ball arithmetic where double precision does not decide (issue 25).

1. v = (1e20 x1^2 + x2^2, x1 x2). v(xi) = c xi: x1 x2 = c x2 gives x2 = 0 (then 1e20 x1^2 = c x1: the line
   (1, 0) with c = 1e20 at xi1 = 1) or c = x1 (then 1e20 x1^2 + x2^2 = x1^2: x2 = +-i sqrt(1e20 - 1) x1, two
   complex lines with c = 1 at xi1 = 1). Three simple lines, 2^2 - 1 = 3 with the count: nothing else.
   1e20 = 2^20 5^20 is a double exactly, so these are the exact answers for the float data.
2. A reduced servo system of the 1st kind on so(4) (p = 5; inertia, a, b drawn as in
   benchmarks/compare_integrators.py from seed 9), whose end points reach close roots through the end game
   (double-precision certificate: lines not at round-off).
"""
import numpy as np
import pytest

flint = pytest.importorskip("flint")

import importlib  # noqa: E402
from liegroups import named  # noqa: E402
from servo import QuadraticSystem, ServoFirstKind  # noqa: E402


def system_1e20():
    Q = np.zeros((2, 2, 2))
    Q[0, 0, 0], Q[0, 1, 1] = 1e20, 1.0
    Q[1, 0, 1] = Q[1, 1, 0] = 0.5
    return QuadraticSystem(Q)


def so4_servo(seed=9):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((6, 6))
    inertia = B @ B.T / 6 + np.eye(6)
    return ServoFirstKind(named.so4(), inertia, a=rng.standard_normal(6), b=rng.standard_normal(6)).reduced().system


def ratios(line):
    """Balls of xi2 / xi1 and c / xi1 from the line's proved box (original coordinates: xi = d y, c = s c')."""
    r, d, s = line.ball
    with_prec = flint.ctx.prec
    flint.ctx.prec = r.precision
    try:
        x1 = r.enclosure[0, 0] * flint.acb(float(d[0]))
        x2 = r.enclosure[1, 0] * flint.acb(float(d[1]))
        c = r.enclosure[2, 0] * flint.acb(float(s))
        return x2 / x1, c / x1
    finally:
        flint.ctx.prec = with_prec


def test_1e20_system_is_proved_with_one_real_line_and_two_complex_ones():
    L = system_1e20().invariant_lines()
    assert L.certificate == "krawczyk" and L.certified and L.precision >= 64
    assert L.total_multiplicity == 3 and L.real_count == 1 and len(L) == 3
    real = L.real[0]
    assert np.allclose(real.direction, [1, 0]) and real.c == pytest.approx(1e20, rel=1e-15)
    t, c = ratios(real)
    assert t.real.contains(0) and t.imag.contains(0)                   # xi2 / xi1 = 0 ...
    assert c.real.contains(flint.arb(10) ** 20) and c.imag.contains(0)  # ... and c / xi1 = 1e20 exactly inside
    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        root = (flint.arb(10) ** 20 - 1).sqrt()
        roots = (root, -root)                       # negated here: at 53 bits -root would be rounded
    finally:
        flint.ctx.prec = old
    signs = []
    for line in L:
        if line.is_real:
            continue
        t, c = ratios(line)
        assert t.real.contains(0) and c.real.contains(1) and c.imag.contains(0)
        sign = 1 if t.imag.contains(roots[0]) else -1 if t.imag.contains(roots[1]) else 0
        signs.append(sign)
        # c = 1 at xi1 = 1: |c| / |xi| = 1e-10 against |Q| |xi| = 1e20, below the relative tol: c is reported
        # as 0 (the library's convention), while the proved ball above shows c != 0
        assert not (c.real.contains(0) and c.imag.contains(0)) and line.c == 0
    assert sorted(signs) == [-1, 1]


def test_without_python_flint_the_1e20_system_says_why_it_is_not_certified(monkeypatch):
    il = importlib.import_module("servo.quadratic.invariant_lines")   # the module (the package exports the function)
    monkeypatch.setattr(il, "ball_available", lambda: False)
    L = system_1e20().invariant_lines()
    assert not L.certified and "python-flint" in L.reason


def test_so4_servo_system_p5_is_proved_complete():
    q = so4_servo()
    assert q.p == 5
    L = q.invariant_lines()
    assert L.certificate == "krawczyk" and L.total_multiplicity == 31 and len(L) == 31
    assert all(line.multiplicity == 1 and line.precision is not None for line in L)
    assert max(line.backward_error for line in L) < 1e-12
    # a second run with other random data (gamma, patch, chart; seed 3) finds the same 31 lines
    M = q.invariant_lines(seed=3)
    assert M.certified and M.real_count == L.real_count
    for line in L:
        d = line.direction / np.linalg.norm(line.direction)
        match = [m for m in M if abs(abs(np.vdot(m.direction / np.linalg.norm(m.direction), d)) - 1) < 1e-10
                 and abs(m.c - line.c) <= 1e-8 * max(1.0, abs(line.c))]
        assert len(match) == 1


# a mixed-scale p = 3 system of the fuzz (entries +-{1, 2, 3} 2^e, |e| <= 66): double precision loses two
# paths and sees spurious families; the exact path (Groebner over QQ) is the independent reference
MIXED3 = np.array([[[2.0 ** -53, -2.0 ** 65, 0], [-2.0 ** 65, 2.0 ** -59, 0], [0, 0, -2.0 ** 10]],
                   [[2.0 ** -43, -2.0 ** -37, 2.0 ** -63], [-2.0 ** -37, 3 * 2.0 ** -14, 0], [2.0 ** -63, 0, 2.0 ** -64]],
                   [[-8.0, 2.0 ** -25, 0], [2.0 ** -25, 2.0 ** 16, -3 * 2.0 ** -19], [0, -3 * 2.0 ** -19, 0]]])


def test_mixed_scale_p3_is_proved_from_exact_start_points():
    from servo.quadratic.exact import compare_with_exact, exact_invariant_lines
    q = QuadraticSystem(MIXED3)
    L = q.invariant_lines()
    assert L.certificate == "krawczyk" and "exact path" in L.reason
    assert compare_with_exact(L, exact_invariant_lines(q, dyadic=True, seed=5)) == []


def test_tracking_in_128_bits_reaches_every_root_of_the_mixed_system():
    """The fallback of p >= 4 (every path tracked in 128 bits), run on the p = 3 system where double precision
    fails: its end points, proved in balls, must be the exact path's lines."""
    fb = importlib.import_module("servo.quadratic.line_fallbacks")
    from servo.quadratic.exact import compare_with_exact, exact_invariant_lines
    from servo.quadratic.line_types import InvariantLines
    q = QuadraticSystem(MIXED3)
    L = fb.precise_fallback(q, InvariantLines([], [], 3, 2, reason="test"), seed=3, tol=1e-8)
    assert L.certificate == "krawczyk" and "128-bit" in L.reason
    assert compare_with_exact(L, exact_invariant_lines(q, dyadic=True)) == []


def test_exact_fallback_off_says_why(monkeypatch):
    il = importlib.import_module("servo.quadratic.invariant_lines")
    fb = importlib.import_module("servo.quadratic.line_fallbacks")
    monkeypatch.setattr(il, "EXACT_SEED_MAX_P", 0)
    monkeypatch.setattr(fb, "PRECISE_BITS", ())   # no re-tracking either
    L = QuadraticSystem(MIXED3).invariant_lines()
    # the best of the three double-precision runs: lost paths, or a family nothing proves (the 130-bit
    # coefficients of this mixed-scale system are beyond the exact dimension's bound)
    assert not L.certified
    assert "paths failed" in L.reason or ("not proved" in L.reason and "130 bits" in L.reason)


# a mixed-scale p = 3 system of the fuzz (seed 0) that the numerical local dimension test took for a family
FALSE_FAMILY = [[[9.223372036854776e+18, 3072.0, 262144.0], [3072.0, 7.205759403792794e+16, 0.0], [262144.0, 0.0, 0.0]],
                [[0.0, 1.4210854715202004e-14, 1.3322676295501878e-15], [1.4210854715202004e-14, 0.0, 1.52587890625e-05],
                 [1.3322676295501878e-15, 1.52587890625e-05, 2.2351741790771484e-08]],
                [[-32768.0, 0.125, -6755399441055744.0], [0.125, 3221225472.0, -33554432.0],
                 [-6755399441055744.0, -33554432.0, 0.0]]]


def test_a_false_family_is_refuted_by_the_exact_path_and_the_lines_proved():
    from servo.quadratic.exact import compare_with_exact, exact_invariant_lines
    q = QuadraticSystem(np.array(FALSE_FAMILY))
    L = q.invariant_lines()
    assert L.certificate == "krawczyk" and not L.positive_dimensional and "finitely many" in L.reason
    assert compare_with_exact(L, exact_invariant_lines(q, dyadic=True, seed=4)) == []


def test_a_true_family_is_confirmed_by_the_exact_path():
    """v = (x^2, x y): x v2 - y v1 = 0, every line (a, b) with a != 0 is invariant (v = x (x, y))."""
    q = QuadraticSystem(np.array([[[1.0, 0], [0, 0]], [[0, 0.5], [0.5, 0]]]))
    L = q.invariant_lines()
    assert L.certificate == "family" and "confirmed by the exact path" in L.reason


def test_a_tiny_proved_component_of_a_ball_line_is_kept():
    # a mixed-scale p = 2 system of the fuzz (seed 901), certified "krawczyk" with the line (1.5e-5, -1) reported
    # as (0, -1): its first component, 2^-60 of the second in the equilibrated coordinates, was zeroed as round-off.
    # v0 = -2^-14 x0^2 + 2^46 x0 x1 + 2^43 x1^2, v1 = -2^-29 x0 x1 - 2^59 x1^2. On the line (t, -1):
    # v1 = -c gives c = 2^59 - 2^-29 t, and v0 = c t gives (2^-29 - 2^-14) t^2 - (2^46 + 2^59) t + 2^43 = 0,
    # whose small root is t ~ 2^-16
    Q = np.array([[[-2.0 ** -14, 2.0 ** 45], [2.0 ** 45, 2.0 ** 43]], [[0, -2.0 ** -30], [-2.0 ** -30, -2.0 ** 59]]])
    L = QuadraticSystem(Q).invariant_lines()
    assert L.certified
    a, b, c = 2.0 ** -29 - 2.0 ** -14, -(2.0 ** 46 + 2.0 ** 59), 2.0 ** 43
    t = 2 * c / (-b + np.sqrt(b * b - 4 * a * c))          # the small root, without cancellation
    big = [line for line in L if abs(line.c) > 1e17]
    assert len(big) == 1
    d = big[0].direction / big[0].direction[1] * -1
    assert abs(d[0] - t) <= 1e-9 * t
    assert abs(big[0].c - (2.0 ** 59 - 2.0 ** -29 * t) / np.hypot(t, 1)) <= 1e-9 * 2.0 ** 59


# mixed-scale p = 2 systems of the fuzz (seeds 920, 921) certified "alpha" with a small component of xi set to 0
# (e.g. (-7.5e-6, 1) reported as (0, 1)): their alpha balls were tight in the equilibrated y and wide in
# xi = d y (d over 2^46 and more); the exact path (sympy, servo.quadratic.exact) is the independent answer
WIDE_IN_XI = [
    [[[32768.0, -4503599627370496.0], [-4503599627370496.0, -68719476736.0]], [[0.0, 1.0408340855860843e-17], [1.0408340855860843e-17, 140737488355328.0]]],
    [[[-8.731149137020111e-11, 67108864.0], [67108864.0, -192.0]], [[0.0, 8.131516293641283e-20], [8.131516293641283e-20, 0.0]]],
    [[[1536.0, 8.940696716308594e-08], [8.940696716308594e-08, -5.684341886080802e-14]], [[562949953421312.0, 1.7293822569102705e+18], [1.7293822569102705e+18, 0.0]]],
]


@pytest.mark.parametrize("Q", WIDE_IN_XI)
def test_an_alpha_ball_wide_in_xi_is_proved_again_until_tight(Q):
    from servo.quadratic.exact import compare_with_exact, exact_invariant_lines
    q = QuadraticSystem(np.array(Q))
    L = q.invariant_lines()
    assert L.certified
    assert compare_with_exact(L, exact_invariant_lines(q, dyadic=True)) == []


def test_multiplicities_from_the_path_count_are_not_certified():
    # a mixed-scale p = 3 system of the fuzz (seed 950): e_1 is a double root (c = 0) with three simple lines within
    # 1e-12 of it; the paths to all five gave two clusters, both verified as the exact root e_1, and the answer
    # "krawczyk+count" (multiplicities 2 and 3 from the path count) had the wrong real count. Without a proof of the
    # multiplicities nothing is certified; the exact path (independent, sympy) then proves the answer
    from servo.quadratic.exact import compare_with_exact, exact_invariant_lines
    Q = [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 4.656612873077393e-10]],
         [[1.4411518807585587e+17, 0.0, 3.469446951953614e-18], [0.0, 0.0, -5.4569682106375694e-12],
          [3.469446951953614e-18, -5.4569682106375694e-12, 0.0]],
         [[134217728.0, 1.3877787807814457e-17, -4.336808689942018e-19], [1.3877787807814457e-17, 0.0,
                                                                           1.8189894035458565e-12],
          [-4.336808689942018e-19, 1.8189894035458565e-12, 3.637978807091713e-12]]]
    q = QuadraticSystem(np.array(Q))
    L = q.invariant_lines()
    assert L.certified and L.certificate not in ("alpha+count", "krawczyk+count")
    E = exact_invariant_lines(q, dyadic=True)
    assert E.real_count == 5 and compare_with_exact(L, E) == []
    il = importlib.import_module("servo.quadratic.invariant_lines")
    res = il._solve_once(q, 0, 1e-8, 1e-6)                  # one double-precision run alone: not certified
    assert not res.certified
