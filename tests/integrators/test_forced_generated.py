"""Forced coadjoint problems with the Lie-group methods: what the generator writes (the multiplier force of linear
invariants, an affine velocity W z + c included), what it does not (a forcing given only as a callable: the
reference loop, and the result says so), and the size of ad in g x g* that the round-off dexp^-1 reads."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from integrators import CoadjointProblem, MethodError, integrate
from integrators.codegen.affine_source import affine_adnorm_form
from integrators.geometry.spaces import AffineCoadjointSpace
from liegroups import named


def _heavy_top_with_a_constraint():
    """se(3)* with w = K z + c (the heavy top's linear term c = (0, 0, 0, m g chi)) and the multiplier force
    -b (l, ad*_w z) / (l, b) keeping (l, z) = 0: written here, not by a system class."""
    K = np.diag([1.0, 1 / 1.5, 0.5, 0.0, 0.0, 0.0])
    c = np.array([0.0, 0.0, 0.0, 0.1, 0.2, 0.7])
    l = np.array([0.3, -0.2, 1.0, 0.0, 0.0, 0.0])
    b = np.array([0.1, 0.4, 1.0, 0.0, 0.0, 0.0])
    g = named.se3()

    def w(z):
        return z @ K + c

    def forcing(z):
        lam = -(g.coad(w(z), z) @ l) / (l @ b)
        return lam[..., None] * b

    P = CoadjointProblem(g, w, forcing=forcing, linear_invariants=l)
    z0 = np.array([0.3, 0.2, 0.0, 0.1, 0.2, 0.97])
    z0 = z0 - l * (l @ z0) / (l @ l)
    return P, z0, l


def _dop853(P, z0, t1):
    return solve_ivp(lambda t, z: P.rhs(t, z), (0.0, t1), z0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]


@pytest.mark.parametrize("method", ["rkmk4", "cf4", "rkmk853"])
def test_an_affine_velocity_with_a_multiplier_force_runs_generated(method):
    P, z0, l = _heavy_top_with_a_constraint()
    kw = dict(steps=500) if method != "rkmk853" else dict(rtol=1e-10, atol=1e-13)
    gen = integrate(P, z0, (0.0, 5.0), method=method, backend="numpy", **kw)
    ref = integrate(P, z0, (0.0, 5.0), method=method, fast=False, **kw)
    assert gen.backend == "numpy"
    assert np.max(np.abs(gen.y[-1] - ref.y[-1])) <= 1e-12
    assert np.max(np.abs(gen.y @ l)) <= 1e-14
    assert np.max(np.abs(gen.y[-1] - _dop853(P, z0, 5.0))) <= 1e-7


def test_a_forcing_given_only_as_a_callable_runs_the_reference_and_says_so():
    M = np.diag([1.0, 0.5, 0.25])
    P = CoadjointProblem(named.so3(), lambda z: z @ M, velocity_matrix=M, forcing=lambda z: -0.1 * z)
    z0 = np.array([1.0, 0.3, 0.2])
    exact = _dop853(P, z0, 2.0)
    for method, kw in (("rkmk4", dict(steps=400)), ("cf4", dict(steps=400)), ("rkmk853", dict(rtol=1e-10))):
        r = integrate(P, z0, (0.0, 2.0), method=method, **kw)
        assert r.backend.startswith("numpy (generic reference: the generator does not recognise")
        assert "multiplier force of its linear invariants" in r.backend
        assert np.max(np.abs(r.y[-1] - exact)) <= 1e-8     # the reference in g x g* solves it
        with pytest.raises(MethodError, match="does not recognise"):
            integrate(P, z0, (0.0, 2.0), method=method, backend="numba", **kw)


@pytest.mark.parametrize("name", ["so4", "se3", "sl2"])
def test_the_size_of_ad_in_g_x_gstar_is_the_frobenius_norm_of_the_spaces_bracket(name):
    alg = getattr(named, name)()
    n = alg.dim
    space = AffineCoadjointSpace(CoadjointProblem(alg, lambda z: z, forcing=lambda z: 0 * z))
    F = affine_adnorm_form(alg.structure_constants)
    rng = np.random.default_rng(5)
    for theta in rng.standard_normal((4, 2 * n)):
        cols = np.array([space.bracket(theta, e) for e in np.eye(2 * n)])   # ad_theta applied to the basis
        assert abs(theta @ F @ theta - np.sum(cols ** 2)) <= 1e-12 * np.sum(cols ** 2)


def test_unforced_problems_keep_their_casimirs_on_the_generated_path_as_before():
    M = np.diag([1.0, 0.7, 0.5, 0.4, 0.3, 0.2])
    P = CoadjointProblem(named.so4(), lambda z: z @ M, velocity_matrix=M)
    z0 = np.array([0.5, -0.3, 0.2, 0.7, 0.1, -0.4])
    for method in ("rkmk4", "cf4"):
        r = integrate(P, z0, (0.0, 10.0), method=method, steps=1000, backend="numpy")
        assert r.backend == "numpy" and "casimirs" in r.preserves
        for k, v in r.invariants.items():
            if k.startswith("casimir"):
                assert np.max(np.abs(v - v[0])) <= 1e-14 * max(1.0, abs(float(v[0])))


def _multiplier_problem(alg, seed):
    """w = M z (M SPD) with the multiplier force keeping (l, z) = 0, on ``alg``, written here."""
    rng = np.random.default_rng(seed)
    n = alg.dim
    B = rng.standard_normal((n, n))
    M = B @ B.T / n + np.eye(n)
    l, b = rng.standard_normal(n), rng.standard_normal(n)

    def forcing(z):
        lam = -(alg.coad(z @ M, z) @ l) / (l @ b)
        return lam[..., None] * b

    P = CoadjointProblem(alg, lambda z: z @ M, forcing=forcing, linear_invariants=l)
    z0 = rng.standard_normal(n)
    return P, z0 - l * (l @ z0) / (l @ l), l


@pytest.mark.parametrize("name", ["so3", "sl2"])   # the closed affine action on 3-dimensional algebras (q < 0, q of both signs)
@pytest.mark.parametrize("method", ["rkmk4", "cf4", "rkmk853"])
def test_the_closed_form_affine_action_equals_the_reference(name, method):
    P, z0, l = _multiplier_problem(getattr(named, name)(), 3)
    kw = dict(steps=400) if method != "rkmk853" else dict(rtol=1e-10, atol=1e-13)
    gen = integrate(P, z0, (0.0, 4.0), method=method, backend="numpy", **kw)
    ref = integrate(P, z0, (0.0, 4.0), method=method, fast=False, **kw)
    assert gen.backend == "numpy" and gen.status == 0
    scale = np.max(np.abs(ref.y))
    assert np.max(np.abs(gen.y[-1] - ref.y[-1])) <= 1e-12 * scale
    assert np.max(np.abs(gen.y @ l)) <= 1e-14 * scale
    assert np.max(np.abs(gen.y[-1] - _dop853(P, z0, 4.0))) <= 1e-7 * scale


def test_the_phi1_coefficient_s3_against_high_precision():
    mpmath = pytest.importorskip("mpmath")
    from integrators.reference.genhelpers import _cq2_float, _cq3_array, _cq3_float
    mpmath.mp.dps = 40
    qs = [-400.0, -30.0, -1.0000001, -0.9999, -0.3, -1e-6, 0.0, 1e-7, 0.5, 0.99999, 1.0, 7.0, 90.0]
    for q in qs:
        r = mpmath.sqrt(mpmath.mpf(q)) if q >= 0 else mpmath.sqrt(mpmath.mpf(-q)) * 1j
        exact = mpmath.mpf(1) / 6 if q == 0 else mpmath.re((mpmath.sinh(r) - r) / r ** 3)   # sum_k q^k/(2k+3)!
        got = _cq3_float(q, _cq2_float(q)[0])
        assert abs(got - float(exact)) <= 2e-15 * abs(float(exact)), (q, got, float(exact))   # a few ulp
    arr = np.array(qs)
    assert np.allclose(_cq3_array(arr, np.array([_cq2_float(q)[0] for q in qs])),
                       [_cq3_float(q, _cq2_float(q)[0]) for q in qs], rtol=1e-15, atol=0.0)
