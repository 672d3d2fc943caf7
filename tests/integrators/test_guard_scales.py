"""The guard's scale of a quantity (integrators.engine.guard._scales): S(y) = sum_i |q(r e_i)|, r = |y|_inf,
evaluated on the probe rows flattened to one (M, dim) array (one matmul for an ensemble instead of one
per dim x dim block) and, for a quantity that is not a function of each row, on the probe as it is.
Expected values written by hand from the formula."""

import numpy as np

from integrators.engine import guard


def test_scales_of_row_quantities_and_of_one_that_needs_the_stacked_probe():
    c = np.array([1.0, -2.0, 3.0])
    r = np.array([[0.5, 2.0], [1.0, 3.0]])                  # (m, B) = (2, 2): r per probe and trajectory
    probe = r[..., None, None] * np.eye(3)

    def linear(z):
        return np.asarray(z) @ c

    def quadratic(z):
        return np.sum(np.asarray(z) ** 2, axis=-1) - 2.0 * np.asarray(z)[..., 0] * np.asarray(z)[..., 1]

    def stacked_only(z):                                    # reads the layout: refuses flat rows
        z = np.asarray(z)
        if z.ndim < 3:
            raise ValueError("not one row per state")
        return z[..., 2] * 10.0

    def wrong_shape(z):                                     # one number for all rows: scale 0
        return np.float64(1.0)

    with np.errstate(all="ignore"):
        S = guard._scales([linear, quadratic, stacked_only, wrong_shape], probe)
    assert S.shape == (4, 2, 2)
    np.testing.assert_allclose(S[0], r * np.sum(np.abs(c)), rtol=1e-15)     # |q(r e_i)| = r |c_i|
    np.testing.assert_allclose(S[1], 3.0 * r ** 2, rtol=1e-15)              # q(r e_i) = r^2 each
    np.testing.assert_allclose(S[2], 10.0 * r, rtol=1e-15)                  # only e_3 counts
    assert np.all(S[3] == 0.0)
