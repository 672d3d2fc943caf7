"""so(n) from the elementary skew matrices L_ij = E_ij - E_ji: its brackets against the matrix commutator
written out here ([L_ij, L_jk] = L_ik for i < j < k), the dimension n(n-1)/2, so(4) as the named one, and
the error path."""

import numpy as np
import pytest

from liegroups import LieAlgebraError, named


@pytest.mark.parametrize("n", [3, 5, 6])
def test_brackets_are_the_commutators_of_the_skew_matrices(n):
    g = named.so(n)
    assert g.dim == n * (n - 1) // 2
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    index = {p: k for k, p in enumerate(pairs)}

    def L(i, j):
        X = np.zeros((n, n))
        X[i, j], X[j, i] = 1.0, -1.0
        return X

    for a, (i, j) in enumerate(pairs):
        for b, (k, m) in enumerate(pairs):
            M = L(i, j) @ L(k, m) - L(k, m) @ L(i, j)
            expected = np.array([M[p, q] for p, q in pairs])      # M = sum_c x_c L_c, x_c = M[p, q]
            ea, eb = np.eye(g.dim)[a], np.eye(g.dim)[b]
            np.testing.assert_allclose(g.bracket(ea, eb), expected, atol=1e-14)
    if n >= 3:   # [L12, L23] = L13
        np.testing.assert_allclose(g.bracket(np.eye(g.dim)[index[0, 1]], np.eye(g.dim)[index[1, 2]]),
                                   np.eye(g.dim)[index[0, 2]], atol=1e-14)


def test_so4_is_so_of_4():
    assert named.so4() is named.so(4)
    assert named.so(4).basis == ("L12", "L13", "L14", "L23", "L24", "L34")


@pytest.mark.parametrize("bad", [1, 0, 2.5, True, "4"])
def test_so_needs_an_integer_at_least_two(bad):
    with pytest.raises(LieAlgebraError, match="integer n >= 2"):
        named.so(bad)
