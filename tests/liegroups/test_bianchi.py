"""Bianchi classification of real 3-dimensional Lie algebras against its invariants.

Reference table: Ellis & MacCallum, "A class of homogeneous cosmological models", Commun. Math. Phys.
12 (1969) 108-141, table 1 (also Landau & Lifshitz vol. 2, section 116, and the table of Bianchi types
in Stephani et al., *Exact Solutions of Einstein's Field Equations*, 2nd ed., table 8.2). In the
Ellis-MacCallum form [e_i, e_j] = eps_ijk n_kl e_l + a_j e_i - a_i e_j the class A (unimodular, a = 0)
types are I, II, VI0, VII0, VIII, IX and class B are III, IV, V, VI_h, VII_h. The derived algebra is 0
for I, 1-dimensional for II and III, 2-dimensional for IV-VII, 3-dimensional for VIII, IX; the centre is
everything for I, 1-dimensional for II and III (III = R + aff(1)) and 0 otherwise.

Killing signatures, derived by hand from the canonical forms used by `named.bianchi`: for the class B
types and VI0, VII0, e3 acts on span(e1, e2) by a 2x2 matrix M (ad e1, ad e2 are nilpotent there), so the
Killing form is diag(0, 0, tr M^2): III, IV, V: tr M^2 = 1, 2, 2 > 0; VI_a: 1 + a^2 > 0; VI0: 2 > 0;
VII_a: 2(a^2 - 1) (negative for a < 1, zero at a = 1, positive for a > 1); VII0: -2 < 0; II nilpotent:
0; VIII = so(2,1): (2, 1, 0); IX = so(3): (0, 3, 0) (-2 times the identity).
"""

import numpy as np
import pytest

from liegroups import named

# type, a, dim [g, g], dim centre, Killing signature (+, -, 0), class A (unimodular)
TABLE = [
    ("I", None, 0, 3, (0, 0, 3), True),
    ("II", None, 1, 1, (0, 0, 3), True),
    ("III", None, 1, 1, (1, 0, 2), False),
    ("IV", None, 2, 0, (1, 0, 2), False),
    ("V", None, 2, 0, (1, 0, 2), False),
    ("VI", 2.0, 2, 0, (1, 0, 2), False),
    ("VI", -3.0, 2, 0, (1, 0, 2), False),
    ("VI0", None, 2, 0, (1, 0, 2), True),
    ("VII", 0.5, 2, 0, (0, 1, 2), False),
    ("VII", 1.0, 2, 0, (0, 0, 3), False),
    ("VII", 2.0, 2, 0, (1, 0, 2), False),
    ("VII0", None, 2, 0, (0, 1, 2), True),
    ("VIII", None, 3, 0, (2, 1, 0), True),
    ("IX", None, 3, 0, (0, 3, 0), True),
]


@pytest.mark.parametrize("t, a, derived, centre, killing, class_a", TABLE)
def test_bianchi_invariants(t, a, derived, centre, killing, class_a):
    g = named.bianchi(t, a=a)
    assert g.dim == 3
    assert g.derived_algebra_dim() == derived
    assert g.centre_dim() == centre
    assert g.killing_signature() == killing
    assert g.is_unimodular() == class_a
    # unimodular iff tr ad x = 0 for all x, checked directly on random x
    tr = np.trace(g.ad(np.random.default_rng(0).standard_normal((5, 3))), axis1=-2, axis2=-1)
    assert np.allclose(tr, 0.0) == class_a


@pytest.mark.parametrize("t, a, solvable, nilpotent, semisimple", [
    ("I", None, True, True, False), ("II", None, True, True, False), ("III", None, True, False, False),
    ("IV", None, True, False, False), ("V", None, True, False, False), ("VI", 2.0, True, False, False),
    ("VI0", None, True, False, False), ("VII", 0.5, True, False, False), ("VII0", None, True, False, False),
    ("VIII", None, False, False, True), ("IX", None, False, False, True),
])
def test_bianchi_solvable_nilpotent_semisimple(t, a, solvable, nilpotent, semisimple):
    g = named.bianchi(t, a=a)
    assert (g.is_solvable(), g.is_nilpotent(), g.is_semisimple()) == (solvable, nilpotent, semisimple)


@pytest.mark.parametrize("name, bianchi", [("so3", "IX"), ("so21", "VIII"), ("heisenberg", "II"), ("se2", "VII0")])
def test_named_algebras_are_their_bianchi_types(name, bianchi):
    """so(3) = IX, so(2,1) = VIII, Heisenberg = II, e(2) = VII0: same invariants."""
    g, b = named.get(name), named.bianchi(bianchi)
    for inv in ("derived_algebra_dim", "centre_dim", "killing_signature", "is_unimodular", "expected_casimir_count"):
        assert getattr(g, inv)() == getattr(b, inv)(), inv


def test_named_matrix_algebras_match_their_documented_tables():
    """from_matrices reproduces the bracket tables in the named.py docstring."""
    def br(g, i, j):
        return g.bracket(np.eye(g.dim)[i], np.eye(g.dim)[j])

    se2 = named.se2()
    assert np.allclose(br(se2, 2, 0), [0, 1, 0]) and np.allclose(br(se2, 2, 1), [-1, 0, 0])
    assert np.allclose(br(se2, 0, 1), 0)
    sl2 = named.sl2()
    assert np.allclose(br(sl2, 0, 1), [0, 2, 0]) and np.allclose(br(sl2, 0, 2), [0, 0, -2])
    assert np.allclose(br(sl2, 1, 2), [1, 0, 0])
    assert np.array_equal(named.su2().structure_constants, named.so3().structure_constants)
    se3 = named.se3()
    for i in range(3):
        for j in range(3):
            eps = np.cross(np.eye(3)[i], np.eye(3)[j])
            assert np.allclose(br(se3, i, j), np.r_[eps, 0, 0, 0])
            assert np.allclose(br(se3, i, 3 + j), np.r_[0, 0, 0, eps])
            assert np.allclose(br(se3, 3 + i, 3 + j), 0)


@pytest.mark.parametrize("t, a", [("IV", None), ("V", None), ("VI", 2.0), ("VI", -3.0), ("VI0", None),
                                  ("VII", 0.5), ("VII", 2.0), ("VII0", None)])
def test_bianchi_action_of_e3_on_the_derived_algebra(t, a):
    """What separates types with equal invariants (Ellis-MacCallum canonical forms): e3 acts on
    [g, g] = span(e1, e2) by M with IV a Jordan block, V a multiple of the identity, VI_a real
    eigenvalues of ratio a (VI0: a = -1), VII_a complex eigenvalues proportional to a +- i (VII0: a = 0)."""
    g = named.bianchi(t, a=a)
    assert g.derived_algebra_dim() == 2
    assert np.allclose(g.ad(np.array([0.0, 0.0, 1.0]))[2], 0)  # [e3, g] lies in span(e1, e2)
    M = g.ad(np.array([0.0, 0.0, 1.0]))[:2, :2]
    ev = np.linalg.eigvals(M)
    if t == "IV":
        assert np.isclose(ev[0], ev[1]) and np.linalg.matrix_rank(M - ev[0].real * np.eye(2)) == 1
    elif t == "V":
        assert np.allclose(M, M[0, 0] * np.eye(2)) and M[0, 0] != 0
    elif t in ("VI", "VI0"):
        ratio = {"VI": a, "VI0": -1.0}[t]
        assert np.allclose(ev.imag, 0) and np.isclose(min(ev.real / ev.real[::-1], key=lambda r: abs(r - ratio)), ratio)
    else:
        aa = {"VII": a, "VII0": 0.0}[t]
        assert np.all(np.abs(ev.imag) > 0) and np.isclose(abs(ev[0].real / ev[0].imag), aa)
