"""The closed forms on almost abelian algebras (integrators.geometry.almost_abelian, the code writer's
"almost_abelian" exponential and dexp^-1, genhelpers aexp / aexpc / bern / bernc).

Expected values come from elsewhere:
* the recognition: algebras built here as R x_D R^(n-1) from a chosen D, moved to a random basis, and
  algebras without an abelian ideal of codimension one (so(3), se(3), sl(3), a sum of two almost abelian
  algebras) or with a defective D (Bianchi IV: a Jordan block);
* the scalar functions from mpmath at 40 digits (e^mu - 1 and mu / (e^mu - 1) of real and complex mu);
* the action exp(ad x)^T z from mpmath's matrix exponential of ad(x) at 40 digits;
* dexp^-1 as phi_1(-ad theta)^-1 v, phi_1 from scipy's expm of the block matrix [[X, I], [0, 0]] and a
  linear solve (Hairer, Lubich and Wanner 2006, IV.8: dexp^-1 = phi_1(-ad)^-1);
* whole RKMK runs against the generic numpy steppers (fast=False: scipy's expm and the Bernoulli series).
"""

import math

import mpmath
import numpy as np
import pytest
import scipy.linalg

from integrators import integrate
from integrators.backends import loader, numba_kernels
from integrators.codegen import writer as codegen
from integrators.geometry import recognition
from integrators.geometry.almost_abelian import almost_abelian
from integrators.geometry.spaces import DEXPINV_X2MAX, ROUNDOFF_TERMS
from integrators.reference import genhelpers
from liegroups import LieAlgebra, named

from ._problems import quadratic_problem, start

EPS = np.finfo(float).eps
NUMBA = numba_kernels.available()
MODES = ["scalar", "array"] + (["numba"] if NUMBA else [])


def _almost_abelian(D, seed=None):
    """R x_D R^(n-1): [e_0, e_i] = D e_i, the e_i (i >= 1) commute; in a random basis with ``seed``."""
    m = D.shape[0]
    n = m + 1
    C = np.zeros((n, n, n))
    for i in range(m):
        C[0, 1 + i, 1:] = D[:, i]
        C[1 + i, 0, 1:] = -D[:, i]
    alg = LieAlgebra(C, name="R x_D R^m")
    if seed is None:
        return alg
    rng = np.random.default_rng(seed)
    return alg.change_basis(np.linalg.qr(rng.standard_normal((n, n)))[0] * rng.uniform(0.5, 2.0, n))


def _drawn(m, seed):
    return _almost_abelian(np.random.default_rng(seed).uniform(-1.0, 1.0, (m, m)), seed + 1)


ALGEBRAS = {
    "R x_D R^4 random basis": _drawn(4, 3),
    "R x_D R^5 random basis": _drawn(5, 8),
    "R x_D R^3 diagonal": _almost_abelian(np.diag([1.0, -0.5, 0.0])),
    "rotation and scaling": _almost_abelian(np.array([[0.3, 1.2], [-1.2, 0.3]]), 2),
    "Bianchi VI_-2.5": named.bianchi("VI", a=-2.5),
    "Bianchi VII_0.5 random basis": named.bianchi("VII", a=0.5).change_basis(
        np.eye(3) + 0.3 * np.random.default_rng(4).standard_normal((3, 3))),
    "Bianchi III": named.bianchi("III"),
}


def _mp_expm1(mu):
    with mpmath.workdps(40):
        return complex(mpmath.expm1(mpmath.mpc(mu)))


def _mp_bern(mu):
    """(f, q): f = mu / (e^mu - 1), q = (f - 1)/mu, at 40 digits (q(0) = -1/2)."""
    with mpmath.workdps(40):
        m = mpmath.mpc(mu)
        if abs(m) < 1:   # q = sum_{k>=1} B_k m^(k-1)/k! (40 terms; (f - 1)/m would cancel at 40 digits)
            q = sum(mpmath.bernoulli(k) * m ** (k - 1) / mpmath.factorial(k) for k in range(1, 41))
            return complex(1 + m * q), complex(q)
        f = m / mpmath.expm1(m)
        return complex(f), complex((f - 1) / m)


def test_recognised_in_any_basis_with_the_adapted_ad():
    for name, alg in ALGEBRAS.items():
        C = alg.structure_constants
        assert recognition.closed_form(C) == "almost_abelian", name
        form = almost_abelian(C)
        # the adapted basis carries the bracket: T ad_xhat T^-1 = ad_x at random x
        for x in np.random.default_rng(1).standard_normal((4, alg.dim)):
            assert np.allclose(form.T @ form.adapted_ad(x) @ form.Tinv, alg.ad(x), atol=1e-12 * np.abs(alg.ad(x)).max())
        # the blocks are D's spectrum: eigenvalues of ad_(f0) on h, with f0 the first column of T
        key = lambda c: (round(abs(c), 9), c.imag)
        lam = sorted([complex(l) for _, l in form.reals] + [complex(a, s * b) for _, a, b in form.pairs for s in (1, -1)], key=key)
        ev = list(np.linalg.eigvals(form.Tinv @ alg.ad(form.T[:, 0]) @ form.T))
        ev.remove(min(ev, key=abs))   # the 0 of ad_(f0) f0 = 0
        assert np.allclose(lam, sorted(ev, key=key), atol=1e-10), name


def test_not_recognised_without_an_abelian_ideal_or_with_a_jordan_block():
    pair = _almost_abelian(np.diag([1.0, 2.0]))
    C2 = np.zeros((6, 6, 6))
    C2[:3, :3, :3] = pair.structure_constants
    C2[3:, 3:, 3:] = pair.structure_constants
    for C in (named.so3().structure_constants, named.se3().structure_constants, named.sl(3).structure_constants,
              C2, named.bianchi("IV").structure_constants, _almost_abelian(np.array([[1.0, 1.0], [0.0, 1.0]]), 3).structure_constants):
        assert almost_abelian(C) is None
    # the 3-dimensional algebras with ad_x^3 = q ad_x keep their own closed form
    assert recognition.closed_form(named.bianchi("V").structure_constants) == "ad3"


MUS = [0.0, 1e-300, 1e-9, -3e-5, 0.1, -0.4999, 0.5001, 1.0, -2.5, 6.0, -30.0]
CMUS = [complex(a, b) for a in (0.0, 1e-8, -0.3, 0.45, 1.7, -4.0) for b in (1e-9, 0.2, -0.4, 1.5, 5.5)]


def test_scalar_functions_against_mpmath():
    jit = numba_kernels.jitted_helpers() if NUMBA else {}
    for mu in MUS:
        f, q = _mp_bern(mu)
        for impl in [genhelpers.SCALAR["bern"], lambda m: tuple(v[0] for v in genhelpers.ARRAY["bern"](np.array([m])))] + \
                ([jit["bern"]] if jit else []):
            gf, gq = impl(mu)
            assert abs(gf - f.real) <= 2 * EPS * abs(f) and abs(gq - q.real) <= 8 * EPS * abs(q), mu
        for a, lam in ((mu, 1.0), (1.0, mu), (0.0, mu)):
            e = _mp_expm1(a * lam).real
            g = lam if a == 0.0 else e / a
            for impl in [genhelpers.SCALAR["aexp"], lambda a, l: tuple(v[0] for v in genhelpers.ARRAY["aexp"](np.array([a]), l))] + \
                    ([jit["aexp"]] if jit else []):
                ge, gg = impl(a, lam)
                assert abs(ge - e) <= 2 * EPS * abs(e) and abs(gg - g) <= 2 * EPS * abs(g), (a, lam)
    for mu in CMUS:
        f, q = _mp_bern(mu)
        for impl in [genhelpers.SCALAR["bernc"], lambda r, i: tuple(v[0] for v in genhelpers.ARRAY["bernc"](np.array([r]), np.array([i])))] + \
                ([jit["bernc"]] if jit else []):
            got = impl(mu.real, mu.imag)
            assert abs(complex(got[0], got[1]) - f) <= 4 * EPS * abs(f) and abs(complex(got[2], got[3]) - q) <= 16 * EPS * abs(q), mu
        for a in (0.0, 1e-7, 0.8, -2.0):
            e = _mp_expm1(a * mu)
            g = mu if a == 0.0 else e / a
            for impl in [genhelpers.SCALAR["aexpc"], lambda a, r, i: tuple(v[0] for v in genhelpers.ARRAY["aexpc"](np.array([a]), r, i))] + \
                    ([jit["aexpc"]] if jit else []):
                got = impl(a, mu.real, mu.imag)
                # the real part from expm1 and a half angle: relative to |E|, not to its real part alone
                assert abs(complex(got[0], got[1]) - e) <= 4 * EPS * abs(e) and abs(complex(got[2], got[3]) - g) <= 4 * EPS * abs(g), (a, mu)
    # overflow and NaN give NaN (the step is rejected), not an exception
    for args, fn in (((800.0, 1.0), "aexp"), ((math.nan, 1.0), "aexp"), ((1.0, 800.0, 0.0), "aexpc"),
                     ((1.0, 0.0, math.inf), "aexpc"), ((math.nan,), "bern"), ((800.0,), "bern"), ((800.0, 1.0), "bernc")):
        assert all(math.isnan(v) for v in genhelpers.SCALAR[fn](*args)), fn
        assert all(np.isnan(v[0]) for v in genhelpers.ARRAY[fn](*(np.array([a]) for a in args))), fn


def _function(alg, mode, what):
    """act(x..., z...) -> exp(ad x)^T z, dexpinv(x..., v...) or coad(x..., m...) -> ad*_x m as the code writer
    writes them."""
    n = alg.dim
    st = recognition.Structure(alg.structure_constants, np.eye(n), np.zeros(n),
                               closed=recognition.closed_form(alg.structure_constants))
    src = codegen.Source(st)
    xs, zs = [f"x{i}" for i in range(n)], [f"z{i}" for i in range(n)]
    if what == "coad":
        out = src.coad(xs, zs)
    else:
        out = src.act(xs, zs, delta=False) if what == "act" else src.dexpinv(xs, zs, ROUNDOFF_TERMS)
    text = f"def f({', '.join(xs + zs)}):\n" + "\n".join(src.lines) + f"\n    return ({', '.join(out)},)\n"
    if what != "coad":
        assert "aexp" in text or "bern" in text     # the closed form, not a series
    if mode == "numba":
        return numba_kernels.compile_cached(text, "f")
    env = loader._env(mode)
    exec(compile(text, "<test almost abelian>", "exec"), env)
    return env["f"]


def _call(fn, mode, x, z):
    if mode == "array":
        return np.array([v[0] for v in fn(*(np.full(2, c) for c in np.concatenate([x, z])))])
    return np.array(fn(*x, *z))


def _exact_action(alg, x, z):
    with mpmath.workdps(40):
        E = mpmath.expm(mpmath.matrix(alg.ad(x).T.tolist()))
        return np.array([float(v) for v in E * mpmath.matrix(z.tolist())])


def _phi1(X):
    n = X.shape[0]
    M = np.zeros((2 * n, 2 * n))
    M[:n, :n], M[:n, n:] = X, np.eye(n)
    return scipy.linalg.expm(M)[:n, n:]


def _directions(alg):
    """Random x, x along f0 alone (a pure scaling) and x in the ideal h (a = 0: ad_x nilpotent)."""
    form = almost_abelian(alg.structure_constants)
    rng = np.random.default_rng(6)
    xs = list(rng.standard_normal((4, alg.dim))) + [form.T[:, 0], form.T[:, 1:] @ rng.standard_normal(alg.dim - 1)]
    return [x / np.linalg.norm(alg.ad(x)) for x in xs]    # ||ad x||_2 = 1


def _check(name, what, exact, sizes, factor, seed):
    """The generated ``what`` of every mode against ``exact(alg, x, v)`` at x = size * u over _directions (None:
    skip that x), to factor cond(T) eps |v| e^size (the maps by T, cond(T) eps each, of vectors of size
    <= |v| e^||ad x||); returns the functions and v."""
    alg = ALGEBRAS[name]
    fns = {m: _function(alg, m, what) for m in MODES}
    v = np.random.default_rng(seed).standard_normal(alg.dim)
    cond = np.linalg.cond(almost_abelian(alg.structure_constants).T)
    for u in _directions(alg):
        for size in sizes:
            ref = exact(alg, size * u, v)
            if ref is None:
                continue
            tol = factor * cond * EPS * np.linalg.norm(v) * math.exp(size)
            for mode, fn in fns.items():
                got = _call(fn, mode, size * u, v)
                assert np.max(np.abs(got - ref)) <= tol, (name, mode, size, np.max(np.abs(got - ref)) / tol)
    return fns, v


@pytest.mark.parametrize("name", sorted(ALGEBRAS))
def test_action_is_the_matrix_exponential(name):
    _check(name, "act", _exact_action, (1e-9, 1e-3, 0.3, 1.5, 4.0), 20, 2)


def _exact_dexpinv(alg, x, v):
    """phi_1(-ad x)^-1 v, or None beyond the series' bound."""
    if np.sum(alg.ad(x) ** 2) / (2 * np.pi) ** 2 > DEXPINV_X2MAX:
        return None
    return np.linalg.solve(_phi1(-alg.ad(x)), v)


@pytest.mark.parametrize("name", sorted(ALGEBRAS))
def test_dexpinv_inverts_phi1(name):
    fns, v = _check(name, "dexpinv", _exact_dexpinv, (1e-9, 1e-3, 0.3, 1.5, 3.0), 50, 3)
    alg = ALGEBRAS[name]
    # beyond the series' bound: NaN, as the other forms (the step is rejected)
    x = 1.05 * math.sqrt(DEXPINV_X2MAX) * 2 * np.pi * _directions(alg)[0] / np.linalg.norm(alg.ad(_directions(alg)[0]))
    assert np.all(np.isnan(_call(fns["scalar"], "scalar", x, v)))


def test_coadjoint_product_through_the_adapted_basis():
    # R x_D R^5 in a random basis: C has ~180 entries, more than the route's 3 n^2 + 6 n, so the writer goes
    # through the adapted basis; the product must be ad*_x m = sum_{i,k} x_i C[i, j, k] m_k all the same
    alg = ALGEBRAS["R x_D R^5 random basis"]
    n, C = alg.dim, alg.structure_constants
    src = codegen.Source(recognition.Structure(C, np.eye(n), np.zeros(n), closed="almost_abelian"))
    src.coad([f"x{i}" for i in range(n)], [f"m{i}" for i in range(n)])
    assert "xa" in "\n".join(src.lines)     # the adapted route was taken
    fns = {m: _function(alg, m, "coad") for m in ("scalar", "array")}
    rng = np.random.default_rng(9)
    for x, m in rng.standard_normal((5, 2, n)):
        ref = np.einsum("i,ijk,k->j", x, C, m)
        for mode, fn in fns.items():
            got = _call(fn, mode, x, m)
            assert np.max(np.abs(got - ref)) <= 50 * EPS * np.abs(x).sum() * np.abs(m).sum() * np.abs(C).max(), mode


def test_scalar_text_loop_agrees_with_the_generic_steppers(monkeypatch):
    # the numpy backend writes a random basis in matrix form; with the scalar text forced (as numba compiles
    # it) the loop runs the adapted coadjoint products, the closed exponential and dexp^-1 on Python floats
    from integrators.codegen import matrix_source
    monkeypatch.setattr(matrix_source, "MATRIX_TERMS", 10 ** 6)
    alg = ALGEBRAS["R x_D R^5 random basis"]
    P = quadratic_problem(alg, seed=5)
    z0 = start(alg.dim, 5)
    ref = integrate(P, z0, (0.0, 4.0), method="rkmk853", rtol=1e-10, atol=1e-12, fast=False)
    got = integrate(P, z0, (0.0, 4.0), method="rkmk853", rtol=1e-10, atol=1e-12, backend="numpy")
    assert got.status == 0 and got.nsteps == ref.nsteps
    assert np.max(np.abs(got.y[-1] - ref.y[-1])) <= 1e-11 * np.max(np.abs(ref.y[-1]))


@pytest.mark.parametrize("name", ["R x_D R^4 random basis", "Bianchi VII_0.5 random basis"])
def test_rkmk_runs_agree_with_the_generic_steppers(name):
    alg = ALGEBRAS[name]
    n = alg.dim
    P = quadratic_problem(alg, seed=4)
    z0 = start(n, 4)
    ref = integrate(P, z0, (0.0, 4.0), method="rkmk853", rtol=1e-10, atol=1e-12, fast=False)
    got = integrate(P, z0, (0.0, 4.0), method="rkmk853", rtol=1e-10, atol=1e-12, backend="numpy")
    assert got.status == 0 and got.nsteps == ref.nsteps
    assert np.max(np.abs(got.y[-1] - ref.y[-1])) <= 1e-11 * np.max(np.abs(ref.y[-1]))
    fix = integrate(P, z0, (0.0, 4.0), method="rkmk4", steps=200, backend="numpy")
    fref = integrate(P, z0, (0.0, 4.0), method="rkmk4", steps=200, fast=False)
    assert np.max(np.abs(fix.y - fref.y)) <= 1e-12 * np.max(np.abs(fref.y))
    # an ensemble on numpy columns (one exponential per column, both signs of a in one array)
    ens = start(n, 5, batch=(5,))
    fe = integrate(P, ens, (0.0, 4.0), method="rkmk4", steps=200, backend="numpy")
    re = integrate(P, ens, (0.0, 4.0), method="rkmk4", steps=200, fast=False)
    assert np.max(np.abs(fe.y - re.y)) <= 1e-12 * np.max(np.abs(re.y))


def test_coadjoint_orbit_kept_over_a_long_run():
    # On R x_D R^m the orbit of z = (z0, zeta) keeps every function of zeta invariant under e^(a D^T): with
    # D diagonal, |zeta_i|^(1/lambda_i) / |zeta_j|^(1/lambda_j) for lambda_i, lambda_j != 0 (zeta_i(t) =
    # e^(a(t) lambda_i) zeta_i(0)). Here lambda = (1, -0.5): zeta_1 zeta_2^2 is a Casimir.
    alg = _almost_abelian(np.diag([1.0, -0.5]))
    P = quadratic_problem(alg, seed=2)
    z0 = np.array([0.4, 0.8, -0.6])
    r = integrate(P, z0, (0.0, 50.0), method="rkmk853", rtol=1e-8, atol=1e-10, backend="numpy")
    cas = r.y[:, 1] * r.y[:, 2] ** 2
    assert r.status == 0 and np.max(np.abs(cas - cas[0])) <= 200 * EPS * abs(cas[0]) * len(r.t) ** 0.5
