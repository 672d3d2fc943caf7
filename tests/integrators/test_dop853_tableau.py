"""The DOP853 coefficients written out in integrators.tableaux.dop853, checked against the order conditions
they must satisfy (Hairer, Norsett and Wanner 1993, II.2): row sums of A equal the nodes c, and the weights
integrate t^(k-1) exactly, sum_i b_i c_i^(k-1) = 1/k for k = 1..8 (order 8)."""

import numpy as np

from integrators.tableaux import dop853 as d


def test_row_sums_are_the_nodes_and_the_quadrature_has_order_8():
    s = d.N_STAGES
    assert len(d.A) == s and all(len(row) == i for i, row in enumerate(d.A))
    c = np.array(d.C)
    assert np.allclose([sum(row) for row in d.A], c, atol=1e-14)
    b = np.array(d.B)
    for k in range(1, 9):
        assert abs(b @ c ** (k - 1) - 1.0 / k) < 1e-14, k
    # the 5th-order error estimator weighs a difference of two order-5 quadratures: it integrates 1 to 0
    assert abs(sum(d.E5)) < 1e-14
