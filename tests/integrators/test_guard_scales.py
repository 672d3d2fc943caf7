"""The guard's scale of a quantity (integrators.engine.quantity_scale.scales): S(y) = sum_i |q(r e_i)|, r = |y|_inf,
evaluated on the probe rows flattened to one (M, dim) array (one matmul for an ensemble instead of one
per dim x dim block) and, for a quantity that is not a function of each row, on the probe as it is.
Expected values written by hand from the formula."""

import numpy as np

from integrators.engine import guard, quantity_scale


def test_scales_of_row_quantities_and_of_one_that_needs_the_stacked_probe():
    c = np.array([1.0, -2.0, 3.0])
    r = np.array([[0.5, 2.0], [1.0, 3.0]])                  # (m, B) = (2, 2): r per probe and trajectory

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
        S = quantity_scale.scales([linear, quadratic, stacked_only, wrong_shape], r, 3)
    assert S.shape == (4, 2, 2)
    np.testing.assert_allclose(S[0], r * np.sum(np.abs(c)), rtol=1e-15)     # |q(r e_i)| = r |c_i|
    np.testing.assert_allclose(S[1], 3.0 * r ** 2, rtol=1e-15)              # q(r e_i) = r^2 each
    np.testing.assert_allclose(S[2], 10.0 * r, rtol=1e-15)                  # only e_3 counts
    assert np.all(S[3] == 0.0)


def _reference_figures(qs, raw, inv, kept):
    """The guard's figures written out per trajectory and saved state from its definition: an invariant's
    |q(y_k) - q(y_0)| / max(|q(y_0)|, S(y_0), S(y_big) if kept), a constraint's |q(y_k)| / max(S(y_0),
    S(y_big) if kept, |y_k|_inf), S(y) = sum_i |q(r e_i)| at r = |y|_inf, y_big the saved state with the
    largest |y|_inf over the ensemble; the max over trajectories per saved state."""
    K, B, n = raw.shape
    size = np.abs(raw).max(axis=2)                     # (K, B)
    kbig = int(np.argmax(size.max(axis=1)))
    out = np.zeros((len(qs), K))
    for a, q in enumerate(qs):
        for b in range(B):
            S0 = sum(abs(float(q((size[0, b] * np.eye(n))[i]))) for i in range(n))
            S1 = sum(abs(float(q((size[kbig, b] * np.eye(n))[i]))) for i in range(n)) if kept[a] else 0.0
            v0 = float(q(raw[0, b]))
            for k in range(K):
                v = float(q(raw[k, b]))
                d = max(abs(v0), S0, S1, 1e-300) if inv[a] else max(S0, S1, size[k, b], 1e-300)
                out[a, k] = max(out[a, k], abs(v - v0) / d if inv[a] else abs(v) / d)
    return out


def test_figures_read_the_scale_at_the_largest_state_only_for_kept_quantities():
    rng = np.random.default_rng(2)
    c = np.array([0.5, -1.0, 2.0])
    qs = [lambda z: np.asarray(z) @ c, lambda z: np.sum(np.asarray(z) ** 2, axis=-1),
          lambda z: np.asarray(z)[..., 0] * np.asarray(z)[..., 2] + 0.1]
    inv, kept = np.array([True, True, False]), np.array([True, False, True])
    for grow in (3.0, 0.5):               # the largest state last, or the first one
        raw = rng.standard_normal((3, 4, 3)) * np.array([1.0, 1.5, grow])[:, None, None]
        quantities = [("invariant" if i else "constraint", f"q{a}", q(raw), q)
                      for a, (q, i) in enumerate(zip(qs, inv))]
        worst, firsts, per_k = guard._figures(quantities, raw, inv, kept, [1e9, 1e9, 1e9])
        want = _reference_figures(qs, raw, inv, kept)
        np.testing.assert_allclose(per_k, want, rtol=1e-13)
        np.testing.assert_allclose(worst, want.max(axis=1), rtol=1e-13)
        assert firsts == [3, 3, 3]


def test_scale_of_a_homogeneous_casimir_from_the_unit_rows():
    """A Casimir of so(4) (homogeneous of degree 2, its ``homogeneous_degree``) gets its scale from one
    call on the unit rows, r^2 sum_i |C(e_i)|: equal to the scale of the same function without the
    attribute (called on every probe row); a polynomial that is not homogeneous has no degree."""
    from liegroups import named
    from liegroups.casimirs import Casimir
    import sympy as sp

    cas = named.so4().casimirs()
    assert [c.homogeneous_degree for c in cas] == [2, 2]
    r = np.array([[0.5, 2.0, 3.0]])
    with np.errstate(all="ignore"):
        fast = quantity_scale.scales(list(cas), r, 6)
        slow = quantity_scale.scales([lambda z, c=c: c(z) for c in cas], r, 6)
    np.testing.assert_allclose(fast, slow, rtol=1e-14)
    x, y = sp.symbols("m1 m2")
    assert Casimir(x * x + y, (x, y), 2).homogeneous_degree is None


def test_scale_of_a_declared_polynomial_from_its_values_on_the_axes():
    """A quantity declared a polynomial of degree <= d (``polynomial_quantity``) gets its scale from its values
    on the rows k e_i, k = 0..d: equal to the scale of the same function without the declaration (called on
    every probe row), for a quadratic with linear and constant terms, a cubic and a constant; a declared
    degree too low for the function gives another scale (the declaration is read, not ignored)."""
    from integrators import polynomial_quantity

    rng = np.random.default_rng(4)
    n = 5
    A, b = rng.standard_normal((n, n)), rng.standard_normal(n)
    T = rng.standard_normal((n, n, n))

    def quad(z):
        z = np.asarray(z)
        return 0.5 * np.einsum("...i,ij,...j->...", z, A, z) + z @ b - 0.7

    def cubic(z):
        z = np.asarray(z)
        return np.einsum("...i,ijk,...j,...k->...", z, T, z, z) + z[..., 0]

    def const(z):
        return np.full(np.shape(z)[:-1], 2.5)

    r = np.abs(rng.standard_normal((2, 7))) * 3.0          # (m, B): a size per probe and trajectory
    for fn, d in ((quad, 2), (cubic, 3), (const, 0)):
        declared = polynomial_quantity(d)(lambda z, fn=fn: fn(z))
        with np.errstate(all="ignore"):
            fast = quantity_scale.scales([declared], r, n)
            slow = quantity_scale.scales([lambda z, fn=fn: fn(z)], r, n)
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)
    wrong = polynomial_quantity(1)(lambda z: quad(z))
    with np.errstate(all="ignore"):
        assert not np.allclose(quantity_scale.scales([wrong], r, n), quantity_scale.scales([quad], r, n))


def test_a_declared_polynomial_is_read_on_the_axes_once_per_dimension():
    """The axes' values of a declared polynomial (homogeneous or of a declared degree) are computed on the first
    scale and kept for that quantity and dimension: a second scale at other sizes calls it no more and equals
    r^d sum_i |q(e_i)| (homogeneous) or the scale of the undeclared function; another dimension reads the axes
    again; a quantity that refuses weak references is still scaled (every call)."""
    from integrators import polynomial_quantity

    calls = []

    def quad(z):
        calls.append(np.shape(z))
        z = np.asarray(z, dtype=float)
        return (z ** 2).sum(-1) - 2.0 * z[..., 0] + 1.0

    declared = polynomial_quantity(2)(quad)
    r1, r2 = np.array([0.5, 2.0]), np.array([3.0])
    with np.errstate(all="ignore"):
        a = quantity_scale.scales([declared], r1, 3)
        b = quantity_scale.scales([declared], r2, 3)
        assert len(calls) == 1
        for r, got in ((r1, a), (r2, b)):      # |r^2 - 2 r + 1| + 2 |r^2 + 1| on the axes
            np.testing.assert_allclose(got[0], np.abs(r ** 2 - 2 * r + 1) + 2 * np.abs(r ** 2 + 1), rtol=1e-13)
        quantity_scale.scales([declared], r2, 4)
        assert len(calls) == 2

    class Homog:
        """a homogeneous quartic whose instances take no weak reference (__slots__)"""
        __slots__ = ()
        homogeneous_degree = 4

        def __call__(self, z):
            calls.append(1)
            return (np.asarray(z, dtype=float) ** 4).sum(-1) * 3.0

    with np.errstate(all="ignore"):
        got = [quantity_scale.scales([Homog()], r2, 5)[0] for _ in range(2)]
    np.testing.assert_allclose(got, [r2 ** 4 * 15.0] * 2, rtol=1e-13)
    assert len(calls) == 4


def test_polynomial_quantity_refuses_a_degree_that_is_not_a_non_negative_integer():
    import pytest
    from integrators import IntegrationInputError, polynomial_quantity

    for bad in (-1, 1.5, True, "2", None):
        with pytest.raises(IntegrationInputError, match="non-negative integer"):
            polynomial_quantity(bad)
    assert polynomial_quantity(np.int64(2))(lambda z: z).polynomial_degree == 2


def test_the_servo_systems_declare_their_polynomial_quantities_rightly():
    """Every invariant and constraint the Lie-group systems declare a polynomial (their energies, the
    constraints (a_i, w)) has, on random sizes, the scale the guard computes without the declaration: a
    declaration of a degree below the formula's would differ (the previous test)."""
    from liegroups import named
    from servo.lie import EulerPoincare, ServoFirstKind, ServoSecondKind

    rng = np.random.default_rng(7)
    n = 6
    Bm = rng.standard_normal((n, n))
    I = Bm @ Bm.T / n + np.eye(n)
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    A2 = rng.standard_normal((2, n))
    systems = [EulerPoincare(named.so4(), I), EulerPoincare(named.so4(), I, linear_term=b),
               ServoFirstKind(named.so4(), I, a=a, b=b), ServoFirstKind(named.so4(), I, a=a, b=a),
               ServoFirstKind(named.so4(), I, a=A2, b=rng.standard_normal((2, n))),
               ServoSecondKind(named.so4(), I, a=a, b=b), ServoSecondKind(named.so4(), I, a=a, b=a),
               ServoSecondKind(named.so4(), I, a=A2, b=rng.standard_normal((2, n)))]
    r = np.abs(rng.standard_normal((1, 5))) * 2.0
    seen = 0
    for s in systems:
        P = s.problem()
        for name, q in list(P.invariants.items()) + list(P.constraints.items()):
            if getattr(q, "polynomial_degree", None) is None:
                continue
            seen += 1
            with np.errstate(all="ignore"):
                fast = quantity_scale.scales([q], r, P.dim)
                slow = quantity_scale.scales([lambda z, q=q: q(z)], r, P.dim)
            # (a, W z) of the second kind vanishes identically (W keeps the constraint): its scale is round-off
            np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-13 * r.max() ** 2, err_msg=f"{s.name}: {name}")
    assert seen >= 10
