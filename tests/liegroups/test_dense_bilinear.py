"""Bracket and coadjoint action of an algebra in a generic basis (every C[i, j, k] non-zero) on large
batches (LieAlgebra._bilinear's dense path: one matrix product with C and one einsum), against the
defining sums written with einsum here: [x, y]_k = sum x_i y_j C[i, j, k], (ad*_x m)_j = sum x_i C[i, j, k] m_k."""

import numpy as np
import pytest

from liegroups import named


@pytest.mark.parametrize("shapes", [((2, 300, 6), (2, 300, 6)), ((600, 6), (6,)), ((6,), (3, 200, 6))])
def test_dense_bracket_and_coadjoint_on_large_batches(shapes):
    rng = np.random.default_rng(0)
    alg = named.se3().change_basis(rng.standard_normal((6, 6)) + 2.0 * np.eye(6))
    C = alg.structure_constants
    assert np.count_nonzero(C) > 2 * 36
    x, y = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    br = np.einsum("...i,...j,ijk->...k", x, y, C)
    co = np.einsum("...i,ijk,...k->...j", x, C, y)
    for got, want in ((alg.bracket(x, y), br), (alg.coad(x, y), co)):
        assert got.shape == want.shape
        assert np.max(np.abs(got - want)) <= 1e-14 * np.max(np.abs(want))
