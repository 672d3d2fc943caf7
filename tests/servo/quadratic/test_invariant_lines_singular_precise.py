"""A mixed-scale p = 4 system of the fuzz (`benchmarks/invariant_lines.py --fuzz 120 --high --seed 1`, entries
+-{1, 2, 3} 2^e, |e| <= 66) that double precision cannot solve and that the higher-precision fallback left
uncertified at 13-14 of 16 roots: it has an exact double root next to simple roots 1e-25 away. The fallback now
takes exact singular roots with their proved multiplicities into the count."""
import numpy as np
import pytest

from servo import QuadraticSystem
from servo.quadratic.krawczyk import have_flint

# (i, j, k, m, e): Q[i, j, k] = Q[i, k, j] = m 2^e, every other entry 0
ENTRIES = [(0, 0, 0, -1, -45), (0, 0, 1, -1, -42), (0, 0, 2, 1, 37), (0, 1, 1, -1, 43), (0, 1, 3, -1, 46),
           (0, 2, 3, 1, -54), (0, 3, 3, 1, -3), (1, 0, 0, -1, -25), (1, 0, 1, 3, -54), (1, 0, 3, 1, 23),
           (1, 1, 3, 1, 31), (1, 2, 3, -3, -58), (1, 3, 3, 1, 54), (2, 0, 2, -3, -42), (2, 1, 1, 1, -10),
           (2, 1, 3, 3, 36), (2, 2, 3, 1, 37), (2, 3, 3, -1, 54), (3, 0, 1, -3, -28), (3, 0, 2, -1, 39),
           (3, 0, 3, 1, 21), (3, 1, 1, -3, -55), (3, 1, 3, 1, 15), (3, 2, 3, -3, 1)]


def fuzz_system():
    Q = np.zeros((4, 4, 4))
    for i, j, k, m, e in ENTRIES:
        Q[i, j, k] = Q[i, k, j] = np.ldexp(float(m), e)
    return QuadraticSystem(Q)


@pytest.mark.skipif(not have_flint(), reason="the higher-precision fallback needs python-flint")
def test_mixed_scale_system_with_an_exact_double_root_is_certified():
    q = fuzz_system()
    # derivation: no entry (i, 2, 2), so v(e_3) = Q[:, 2, 2] = 0 and e_3 is a root with c = 0; there
    # dF = [2 Q[:, :, 2] | -e_3] has non-zero columns only at 0, 3 (the entries (i, 0, 2), (i, 2, 3)) and c: rank
    # <= 3 < p = 4, so e_3 is singular, multiplicity >= 2
    assert not np.any(q.Q[:, 2, 2])
    J = np.concatenate([2 * q.Q[:, :, 2], -np.eye(4)[:, 2:3]], axis=1)
    assert not np.any(J[:, 1:3])
    L = q.invariant_lines()
    assert L.certified, L.reason
    assert L.certificate == "krawczyk+multiplicity"
    assert L.total_multiplicity == 15                               # 2^4 - 1 (Bezout, the trivial root removed)
    double = [ln for ln in L if ln.multiplicity > 1]
    assert len(double) == 1
    e3 = double[0]
    assert e3.multiplicity == 2 and e3.c == 0 and e3.is_real
    assert np.array_equal(np.abs(e3.direction), [0.0, 0.0, 1.0, 0.0])
    simple = [ln for ln in L if ln.multiplicity == 1]
    assert len(simple) == 13 and all(ln.ball is not None for ln in simple)       # each in its Krawczyk box
    # each simple line solves the equilibrated system to round-off (backward error |F(y, c')| / (|Q'| |y|^2 +
    # |w c'| |y|), evaluated here again at 50 digits from the line itself), and the boxes are pairwise disjoint
    import mpmath
    from servo.quadratic.certify import equilibrate
    Qs, w, d, s = equilibrate(q.Q)
    with mpmath.workdps(50):
        for ln in simple:
            y = [mpmath.mpc(complex(a)) / mpmath.mpf(float(b)) for a, b in zip(ln.direction, d)]
            c = mpmath.mpc(complex(ln.c)) / mpmath.mpf(s)
            F = [mpmath.fsum(mpmath.mpf(float(Qs[i, j, k])) * y[j] * y[k] for j in range(4) for k in range(4))
                 - mpmath.mpf(float(w[i])) * c * y[i] for i in range(4)]
            ny = max(abs(a) for a in y)
            scale = float(np.abs(Qs).max()) * ny ** 2 + float(np.abs(w).max()) * abs(c) * ny
            assert max(abs(f) for f in F) / scale < 1e-12
    mids = [np.asarray(ln.ball[0].mid, dtype=complex) for ln in simple]
    assert all(not np.allclose(a, b, rtol=0, atol=0) for n, a in enumerate(mids) for b in mids[:n])
