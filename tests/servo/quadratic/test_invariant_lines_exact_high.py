"""Multiple roots with irrational coordinates above p = 3, proved by the exact path (issue 25).

Degenerate small-integer systems of the fuzz at p = 4..6 have double (or triple) roots whose coordinates are
algebraic numbers: no Krawczyk box can prove a multiple root, the exact check of singular roots takes only
small-integer points, and the exact path used to stop at p = 3, so these stayed uncertified. The exact path now
runs up to p = 6 for coefficients of at most 40 bits when several paths reach one root (the Groebner basis over
QQ; the products, traces and characteristic polynomials of its 2^p x 2^p multiplication matrices in python-flint).

The expected multiplicities come from a second method: the system perturbed by 1e-12 (a random symmetric Q') is
generic, its roots simple (certified), and a root of multiplicity m splits into m roots within ~(1e-12)^(1/m) of
it (continuity of the roots of polynomial systems), far from the others: the perturbed roots near each line are
counted.
"""
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("flint")

from servo import QuadraticSystem  # noqa: E402

# fuzz_system("degenerate", 4, ...) of the seed-712 run at p = 4..6: four double roots with c = 0 (two conjugate
# pairs, coordinates such as 0.309136 i), seven simple lines
DEGENERATE4 = [[[2, 0, -1, 1], [0, 0, 2, -2], [-1, 2, 2, -2], [1, -2, -2, -2]],
               [[2, 0, 1, -1], [0, 0, -2, 2], [1, -2, -2, 2], [-1, 2, 2, 2]],
               [[2, -2, -1, 0], [-2, 4, 2, 0], [-1, 2, 2, 0], [0, 0, 0, 0]],
               [[-1, 0, -1, 1], [0, 0, 2, -2], [-1, 2, 2, -2], [1, -2, -2, -2]]]
# fuzz_system("degenerate", 5, ...) of the seed-714 run: four double roots (two real with c = 0, a conjugate pair)
DEGENERATE5 = [[[-3, 0, 0, -2, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [-2, 0, 0, 0, 0], [0, 0, 0, 0, 0]],
               [[0, 0, 0, 0, 0], [0, 0, 0, 0, -2], [0, 0, 0, -3, -1], [0, 0, -3, 0, 0], [0, -2, -1, 0, -2]],
               [[0, 1, 1, 0, 0], [1, 0, -3, 2, 0], [1, -3, 0, 0, 0], [0, 2, 0, 1, 0], [0, 0, 0, 0, -3]],
               [[0, 0, 0, 0, 0], [0, 0, 0, 0, -2], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, -2, 0, 0, -2]],
               [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, -1]]]


def perturbed_multiplicities(Q, lines, eps=1e-12, radius=1e-4):
    """For each line, the number of roots of Q + eps Q' (Q' a seeded random symmetric tensor; its lines certified
    and simple) within the angle ``radius`` of it (sine of the angle between unit directions)."""
    rng = np.random.default_rng(0)
    E = rng.normal(size=Q.shape)
    P = QuadraticSystem(Q + eps * (E + E.transpose(0, 2, 1)) / 2).invariant_lines()
    p = Q.shape[0]
    assert P.certified and P.total_multiplicity == 2 ** p - 1 and all(L.multiplicity == 1 for L in P), P.reason
    D = np.array([L.direction / np.linalg.norm(L.direction) for L in P])
    out = []
    for L in lines:
        u = L.direction / np.linalg.norm(L.direction)
        sines = np.linalg.norm(u[None, :] - D * (D.conj() @ u)[:, None], axis=1)
        out.append(int((sines < radius).sum()))
    return out


@pytest.mark.parametrize("Q, doubles, real_doubles", [(DEGENERATE4, 4, 0), (DEGENERATE5, 4, 2)],
                         ids=["p4", "p5"])
def test_double_roots_of_irrational_coordinates_are_proved_exactly(Q, doubles, real_doubles):
    Q = np.array(Q, dtype=float)
    p = Q.shape[0]
    L = QuadraticSystem(Q).invariant_lines()
    assert L.certified and L.certificate == "exact", L.reason
    assert "start points from the exact path" in L.reason
    assert L.total_multiplicity == 2 ** p - 1
    mult = [ln.multiplicity for ln in L]
    assert sorted(mult)[-doubles:] == [2] * doubles and mult.count(1) == 2 ** p - 1 - 2 * doubles
    assert sum(ln.is_real for ln in L if ln.multiplicity == 2) == real_doubles
    # the multiplicities, by the second method
    assert perturbed_multiplicities(Q, list(L)) == mult
    # a double root whose coordinate ratios are not small fractions (the old exact check of singular roots
    # took small-integer points only)
    def small_fraction(x):
        return abs(x - float(Fraction(x).limit_denominator(64))) < 1e-9
    irr = [ln for ln in L if ln.multiplicity == 2
           and not all(small_fraction(r.real) and small_fraction(r.imag)
                       for r in ln.direction / ln.direction[np.argmax(np.abs(ln.direction))])]
    assert irr
