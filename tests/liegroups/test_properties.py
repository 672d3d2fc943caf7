"""Property tests of the Lie-algebra axioms and of exp / Ad* / dexp, run over every named algebra
(`named.all_named()`) and over random changes of basis of each (`LieAlgebra.change_basis`).

Independent references: the axioms themselves (antisymmetry, Jacobi, ad a homomorphism, ad-invariance of
the Killing form), scipy.linalg.expm / expm_frechet for exp and its derivative, a fourth-order Runge-Kutta
integration written here for the flows A' = A ad(X) and m' = ad*_X m, and the defining equation of a
Casimir Pi(m) grad F = 0. In a new basis f = P e, momenta transform as m' = P m, so a Casimir F of the
named algebra becomes F'(m') = F(P^-1 m') with grad F'(m') = P^-T grad F(P^-1 m'): the Casimirs of the
new basis are obtained by this transport (independently of the Casimir finder), which also checks the
change-of-basis formula for C.
"""

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from liegroups import named

NAMED = named.all_named()
NAMES = sorted(NAMED)


class Case:
    """An algebra (named, or in the new basis f = P e) with its Casimirs transported to that basis and a
    random generator for test vectors (seeded by hypothesis)."""

    def __init__(self, name, seed, change):
        base = NAMED[name]
        self.rng = np.random.default_rng(seed)
        n = base.dim
        self.P = np.eye(n)
        if change:
            while True:
                P = np.eye(n) + 0.5 * self.rng.uniform(-1, 1, (n, n))
                if np.linalg.cond(P) < 20:
                    break
            self.P = P
        self.Pinv = np.linalg.inv(self.P)
        self.g = base.change_basis(self.P) if change else base
        self.cond = float(np.linalg.cond(self.P))
        self.casimirs = list(base.casimirs())

    def vec(self, batch=8, bound=1.0):
        return self.rng.uniform(-bound, bound, (batch, self.g.dim))

    def F(self, c, m):
        return c(m @ self.Pinv.T)

    def gradF(self, c, m):
        return c.grad(m @ self.Pinv.T) @ self.Pinv

    def tol(self, scale=1.0):
        return 1e-11 * self.cond**3 * max(1.0, scale)


case_args = dict(seed=st.integers(0, 2**32 - 1), change=st.booleans())
#: the expm-heavy tests run a third of the profile's examples (each example is already a batch)
FEW = settings(max_examples=max(4, settings().max_examples // 3))


def _rk4(f, y, h, steps):
    for _ in range(steps):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


@pytest.mark.parametrize("name", NAMES)
@given(**case_args)
def test_algebra_axioms(name, seed, change):
    """Antisymmetry, Jacobi, ad a homomorphism, coad = ad^T, Killing form ad-invariant."""
    case = Case(name, seed, change)
    g = case.g
    x, y, z = case.vec(), case.vec(), case.vec()
    C = g.structure_constants
    assert np.allclose(C, -np.transpose(C, (1, 0, 2)), atol=case.tol())
    assert np.allclose(g.bracket(x, y), -g.bracket(y, x), atol=case.tol())
    jac = g.bracket(x, g.bracket(y, z)) + g.bracket(y, g.bracket(z, x)) + g.bracket(z, g.bracket(x, y))
    assert np.max(np.abs(jac)) < case.tol(np.max(np.abs(C)) ** 2)
    adx, ady = g.ad(x), g.ad(y)
    assert np.allclose(adx @ y[..., None], g.bracket(x, y)[..., None], atol=case.tol())
    assert np.allclose(g.ad(g.bracket(x, y)), adx @ ady - ady @ adx, atol=case.tol(np.max(np.abs(C)) ** 2))
    # coad is the transpose of ad: (ad*_x m, v) = (m, [x, v])
    assert np.allclose(np.sum(g.coad(x, z) * y, -1), np.sum(z * g.bracket(x, y), -1), atol=case.tol())
    E = g.ad(np.eye(g.dim))
    K = g.killing_form()
    assert np.allclose(K, np.einsum("iab,jba->ij", E, E), atol=case.tol())
    inv = (np.einsum("...i,ij,...j->...", g.bracket(z, x), K, y)
           + np.einsum("...i,ij,...j->...", x, K, g.bracket(z, y)))
    assert np.max(np.abs(inv)) < case.tol(np.max(np.abs(K)))


@pytest.mark.parametrize("name", NAMES)
@FEW
@given(**case_args)
def test_casimirs_commute_and_are_kept_by_coadjoint_exp(name, seed, change):
    """Pi(m) grad F(m) = 0 and F(Ad*_exp(x) m) = F(m) for every Casimir F, at random m and x."""
    case = Case(name, seed, change)
    g = case.g
    m, x = case.vec(bound=2.0), case.vec(bound=0.5)
    Pi = g.poisson_tensor(m)
    assert np.allclose(Pi, np.einsum("ijk,...k->...ij", g.structure_constants, m))
    m2 = g.coadjoint_exp(x, m)
    for c in case.casimirs:
        scale = max(1.0, float(np.max(np.abs(m)))) ** c.degree
        assert np.max(np.abs(np.einsum("...ij,...j->...i", Pi, case.gradF(c, m)))) < case.tol(scale)
        assert np.allclose(case.F(c, m2), case.F(c, m), atol=1e3 * case.tol(scale))


@pytest.mark.parametrize("name", NAMES)
@FEW
@given(**case_args)
def test_constant_velocity_reproduces_exp(name, seed, change):
    """A' = A ad(X), A(0) = I integrated by RK4 gives exp(ad X) = Ad_exp(X) (= scipy expm); m' = ad*_X m
    gives coadjoint_exp(X, m)."""
    case = Case(name, seed, change)
    g = case.g
    X, m = case.vec(4, bound=0.7), case.vec(4)
    adX = g.ad(X)
    steps = 50
    A = _rk4(lambda A: A @ adX, np.broadcast_to(np.eye(g.dim), adX.shape), 1.0 / steps, steps)
    ref = scipy.linalg.expm(adX)
    scale = float(np.max(np.abs(ref)))
    assert np.allclose(g.exp_ad(X), ref, atol=1e-12 * scale * case.cond)
    assert np.allclose(g.Ad(X), A, atol=1e-6 * scale)
    mt = _rk4(lambda mm: g.coad(X, mm), m, 1.0 / steps, steps)
    assert np.allclose(g.coadjoint_exp(X, m), mt, atol=1e-6 * scale)


@pytest.mark.parametrize("name", NAMES)
@FEW
@given(**case_args)
def test_dexp_is_the_derivative_of_exp_and_dexpinv_inverts_it(name, seed, change):
    """ad(dexp_x v) = (d/dt exp(ad(x + t v)))|_0 exp(-ad x) (scipy expm_frechet); dexpinv o dexp = id."""
    case = Case(name, seed, change)
    g = case.g
    x, v = case.vec(4, bound=0.5), case.vec(4)
    x = x / np.maximum(1.0, np.max(np.abs(np.linalg.eigvals(g.ad(x))), axis=-1) / 5.0)[:, None]  # |eig| < 2 pi
    tol = 1e-9 * case.cond**2
    d = g.dexp(x, v)
    for k in range(len(x)):
        _, dE = scipy.linalg.expm_frechet(g.ad(x[k]), g.ad(v[k]))
        assert np.allclose(g.ad(d[k]), dE @ scipy.linalg.expm(-g.ad(x[k])), atol=tol)
        assert np.allclose(g.dexp(x[k], v[k]), d[k], atol=tol)  # batched = single
    assert np.allclose(g.dexpinv(x, d), v, atol=tol)
    assert np.allclose(g.dexp(x, g.dexpinv(x, v)), v, atol=tol)


@pytest.mark.parametrize("name", NAMES)
@FEW
@given(q=st.integers(1, 6), **case_args)
def test_truncated_series_have_their_order(name, q, seed, change):
    """dexpinv_q(x, dexp_q(x, v)) - v = O(|x|^q): halving x divides the error by at least ~2^q; with
    many terms the series agree with the exact maps."""
    case = Case(name, seed, change)
    g = case.g
    x, v = case.vec(1)[0], case.vec(1)[0]
    v = v / np.linalg.norm(v)

    def err(s):
        return np.linalg.norm(g.dexpinv(s * x, g.dexp(s * x, v, order=q), order=q) - v)

    e1, e2 = err(0.02), err(0.01)
    assert e2 <= 1.6 * 2.0**-q * e1 + 1e-14
    assert np.allclose(g.dexpinv(0.02 * x, v, order=14), g.dexpinv(0.02 * x, v), atol=1e-12)
    assert np.allclose(g.dexp(0.02 * x, v, order=14), g.dexp(0.02 * x, v), atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_unrolled_large_batch_path_matches_the_definition(name):
    """The bracket/coad path used for batches >= 64 against explicit sums over C (loops, no einsum)."""
    g = NAMED[name]
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 100, g.dim))
    C = g.structure_constants
    br = np.zeros((100, g.dim))
    co = np.zeros((100, g.dim))
    for i in range(g.dim):
        for j in range(g.dim):
            for k in range(g.dim):
                br[:, k] += x[:, i] * y[:, j] * C[i, j, k]
                co[:, j] += x[:, i] * C[i, j, k] * y[:, k]
    assert np.allclose(g.bracket(x, y), br, atol=1e-13)
    assert np.allclose(g.coad(x, y), co, atol=1e-13)
    assert np.allclose(g.bracket(x[:5], y[:5]), br[:5], atol=1e-13)  # einsum path
    assert np.allclose(g.coad(x[0], y), np.stack([g.coad(x[0], yy) for yy in y]), atol=1e-13)


@pytest.mark.parametrize("name", ["so3", "se3", "bianchi_VII"])
def test_unrolled_path_broadcasts(name):
    g = NAMED[name]
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((20, 1, g.dim)), rng.standard_normal((30, g.dim))  # 600 pairs
    C = g.structure_constants
    assert np.allclose(g.bracket(x, y), np.einsum("...i,...j,ijk->...k", x, y, C), atol=1e-13)
    assert np.allclose(g.coad(x, y), np.einsum("...i,...k,ijk->...j", x, y, C), atol=1e-13)
