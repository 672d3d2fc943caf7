"""sl(n) from its matrices (E_ij for i != j, then H_k = E_kk - E_(k+1)(k+1)): the dimension n^2 - 1, the
Killing form against the classical formula K(X, Y) = 2 n tr(X Y) on the basis matrices written out here,
[E_12, E_21] = H_1, and the error path."""

import numpy as np
import pytest

from liegroups import LieAlgebraError, named


def _basis(n):
    mats = []
    for i in range(n):
        for j in range(n):
            if i != j:
                X = np.zeros((n, n))
                X[i, j] = 1.0
                mats.append(X)
    for k in range(n - 1):
        X = np.zeros((n, n))
        X[k, k], X[k + 1, k + 1] = 1.0, -1.0
        mats.append(X)
    return mats


@pytest.mark.parametrize("n", [2, 3, 4])
def test_killing_form_is_2n_trace(n):
    g = named.sl(n)
    assert g.dim == n * n - 1
    M = _basis(n)
    expected = np.array([[2 * n * np.trace(a @ b) for b in M] for a in M])
    np.testing.assert_allclose(g.killing_form(), expected, atol=1e-12)
    e = np.eye(g.dim)   # [E_12, E_21] = H_1: E_12 is basis 0, E_21 basis n - 1, H_1 basis n (n - 1)
    np.testing.assert_allclose(g.bracket(e[0], e[n - 1]), e[n * (n - 1)], atol=1e-14)


@pytest.mark.parametrize("bad", [1, 0, 2.5, True, "3"])
def test_sl_needs_an_integer_at_least_two(bad):
    with pytest.raises(LieAlgebraError, match="integer n >= 2"):
        named.sl(bad)
