"""The galgebra bridge: bivector algebras of Cl(p, q, r) against the matrix constructions in `named`.

Explicit isomorphisms, derived by hand (see the docstring of liegroups.bivectors): the bivector e_a e_b
acts on vectors by g_b E_ab - g_a E_ba, so for a Euclidean metric e_ab = L_ab = E_ab - E_ba, and
hat(e_1) = -L23, hat(e_2) = L13, hat(e_3) = -L12 give the so(3) basis; in Cl(p,0,1) the null bivectors
e_0i act as E_0i, which under the automorphism X -> -X^T of gl is -E_i0, i.e. minus the translation T_i
of the homogeneous matrices (after moving e0 to the last coordinate), and rotations map as in so(3).
For so(2,1) (metric (1, 1, -1)): e13, e23 are the boosts -(E13 + E31), -(E23 + E32), whose commutator is
E12 - E21 = e12, so (e1, e2, e3) = (e13, e23, -e12) reproduces [e1, e2] = -e3 of `named.so21`.
If C' = change_basis(P) equals the named C exactly, the two algebras are isomorphic by P.
"""

import subprocess
import sys

import numpy as np
import pytest

from liegroups import bivectors, from_bivectors, named

ISOMORPHISMS = {
    (3, 0): ("so3", [(-1, "e23"), (1, "e13"), (-1, "e12")]),
    (2, 1): ("so21", [(1, "e13"), (1, "e23"), (-1, "e12")]),
    (4, 0): ("so4", [(1, n) for n in ("e12", "e13", "e14", "e23", "e24", "e34")]),
    (2, 0, 1): ("se2", [(-1, "e01"), (-1, "e02"), (-1, "e12")]),
    (3, 0, 1): ("se3", [(-1, "e23"), (1, "e13"), (-1, "e12"), (-1, "e01"), (-1, "e02"), (-1, "e03")]),
}


def _invariants(g):
    cas = g.casimirs()
    return (g.dim, g.derived_algebra_dim(), g.centre_dim(), g.killing_signature(), g.is_unimodular(),
            cas.expected, sorted(c.degree for c in cas))


def test_galgebra_not_imported_on_import():
    code = "import liegroups, sys; from liegroups import named; named.so3(); assert 'galgebra' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("sig", list(ISOMORPHISMS))
def test_explicit_isomorphism_with_matrix_construction(sig):
    name, rows = ISOMORPHISMS[sig]
    g, h = from_bivectors(sig), named.get(name)
    P = np.zeros((g.dim, g.dim))
    for a, (sign, blade) in enumerate(rows):
        P[a, g.basis.index(blade)] = sign
    assert np.allclose(g.change_basis(P).structure_constants, h.structure_constants, atol=1e-14)
    assert _invariants(g) == _invariants(h)


@pytest.mark.parametrize("sig, ref", [((1, 2), "so21"), ((0, 3), "so3"), ((0, 2, 1), "se2")])
def test_other_signatures_by_invariants(sig, ref):
    """so(1,2) = so(2,1); Cl(0,3) and Cl(0,2,1) give so(3) and se(2) again (bivector squares do not
    depend on the overall sign of the metric)."""
    assert _invariants(from_bivectors(sig)) == _invariants(named.get(ref))


def test_lorentz_algebra_so31():
    g = from_bivectors((3, 1))
    assert g.dim == 6 and g.is_semisimple() and g.killing_signature() == (3, 3, 0)
    cas = g.casimirs()
    assert len(cas) == 2 and [c.degree for c in cas] == [2, 2]


def test_basis_names_and_order_are_explicit():
    assert from_bivectors((3, 0)).basis == ("e12", "e13", "e23")
    assert from_bivectors((3, 0, 1)).basis == ("e01", "e02", "e03", "e12", "e13", "e23")
    # [e12, e13] = (e1e2e1e3 - e1e3e1e2)/2 = (-e2e3 - e3e2)/2 = -e23, by hand
    g = from_bivectors((3, 0))
    assert np.allclose(g.bracket([1, 0, 0], [0, 1, 0]), [0, 0, -1])
    # degenerate: [e01, e02] = e0 e1 e0 e2 ... = 0 since e0^2 = 0
    assert np.allclose(from_bivectors((2, 0, 1)).bracket([1, 0, 0], [0, 1, 0]), 0)


def test_cached_and_silent(capfd):
    bivectors._cached.cache_clear()
    bivectors._bivector_structure.cache_clear()
    g = from_bivectors((3, 0, 1))  # degenerate metric: galgebra prints a warning while building
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert from_bivectors([3, 0, 1]) is g
