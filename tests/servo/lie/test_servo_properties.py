"""Identities of the servo systems on every named algebra (hypothesis over random I, a, b, states)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liegroups import named
from servo import EulerPoincare, ServoFirstKind, ServoSecondKind

ALGEBRAS = sorted(named.all_named())


def _data(name, seed):
    g = named.all_named()[name]
    n = g.dim
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return g, A @ A.T + n * np.eye(n), rng.standard_normal(n), rng.standard_normal(n), rng


@pytest.mark.parametrize("name", ALGEBRAS)
@settings(max_examples=5)  # 19 algebras x 5 draws per test keeps the set fast
@given(seed=st.integers(0, 2**32 - 1))
def test_first_kind_field_is_tangent_to_the_constraint_everywhere(name, seed):
    # lambda is defined so that (I^-1 a, m') = 0 for every m, on the constraint or not
    g, I, a, b, rng = _data(name, seed)
    s = ServoFirstKind(g, I, a=a, b=b)
    m = rng.standard_normal((4, g.dim))
    mdot = s.rhs(m)
    assert np.allclose(mdot @ np.linalg.solve(I, a), 0.0, atol=1e-10 * (1 + np.abs(mdot).max()))
    # and the multiplier is the one of the formula lambda = -(I^-1 a, ad*_w m)/(I^-1 a, b)
    w = np.linalg.solve(I, m.T).T
    lam = -(g.coad(w, m) @ np.linalg.solve(I, a)) / (a @ np.linalg.solve(I, b))
    assert np.allclose(s.multiplier(m), lam, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ALGEBRAS)
@settings(max_examples=5)  # 19 algebras x 5 draws per test keeps the set fast
@given(seed=st.integers(0, 2**32 - 1))
def test_second_kind_keeps_constraint_and_shifted_casimirs(name, seed):
    g, I, a, b, rng = _data(name, seed)
    s = ServoSecondKind(g, I, a=a, b=b)
    x = s.state_from(w=rng.standard_normal((3, g.dim)), lam=rng.standard_normal(3), project=True)
    xdot = s.rhs(x)
    # d/dt (a, w) = (a, I^-1 m') = 0
    assert np.allclose(xdot[:, :g.dim] @ np.linalg.solve(I, a), 0.0, atol=1e-9 * (1 + np.abs(xdot).max()))
    # d/dt F(m + lambda b) = grad F(z) . (m' + lambda' b) = 0 for each Casimir
    z = x[:, :g.dim] + x[:, -1:] * b
    zdot = xdot[:, :g.dim] + xdot[:, -1:] * b
    for c in g.casimirs():
        rate = np.sum(c.grad(z) * zdot, -1)
        scale = 1 + np.abs(c.grad(z)).max() * np.abs(zdot).max()
        assert np.allclose(rate, 0.0, atol=1e-9 * scale), str(c)


@pytest.mark.parametrize("name", ALGEBRAS)
@settings(max_examples=5)  # 19 algebras x 5 draws per test keeps the set fast
@given(seed=st.integers(0, 2**32 - 1))
def test_free_system_energy_rate_vanishes(name, seed):
    g, I, a, b, rng = _data(name, seed)
    s = EulerPoincare(g, I)
    m = rng.standard_normal((3, g.dim))
    w = s.velocity(m)
    assert np.allclose(np.sum(w * s.rhs(m), -1), 0.0, atol=1e-10 * (1 + np.abs(m).max() ** 2 * np.abs(w).max()))
