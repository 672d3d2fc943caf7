"""The Lie-group methods on an almost abelian algebra move along its coadjoint orbits with the abelian group R^2
acting (integrators.geometry.orbit_space, its generated twin integrators.codegen.orbit_source).

Expected values come from elsewhere:
* the infinitesimal action of the generator against the Lie-Poisson field ad*_w z summed from the structure
  constants;
* the action of (s, c) against the coadjoint action of the group, exp(ad x)^T z from mpmath's matrix exponential
  at 40 digits: for x with adapted f0-component s, the points share e^(s D^T) y, and c is the z0-shift of that
  exact point;
* the transcendental Casimirs of R x_D R^3 with D = diag(1, -0.5, 2), derived here in the basis the algebra is
  built in (z_j' = w_0 lambda_j z_j, so log|z_j| / lambda_j - log|z_k| / lambda_k is constant), the run made in a
  random basis (momenta m' = P m, liegroups' change_basis);
* the order of rkmk4 (fixed step) from its errors against rk853 at rtol 1e-13 as the step halves;
* the generated steps (numpy, numba) against the numpy reference (fast=False) step for step.
"""

import math

import mpmath
import numpy as np
import pytest

from integrators import integrate
from integrators.backends import generic_kernel, numba_kernels, plan as plans
from integrators.codegen import orbit_source
from integrators.geometry import recognition
from integrators.geometry.almost_abelian import almost_abelian
from integrators.geometry.orbit_space import OrbitSpace
from integrators.methods import METHODS
from liegroups import named

from ._problems import quadratic_problem, start
from .test_almost_abelian import _almost_abelian

EPS = np.finfo(float).eps
NUMBA = numba_kernels.available()
LAMBDA = np.array([1.0, -0.5, 2.0])


_rng = np.random.default_rng(3)
#: the random basis of the Casimir test, f_a = sum_i P4[a, i] e_i (its momenta m' = P4 m)
P4 = np.linalg.qr(_rng.standard_normal((4, 4)))[0] * _rng.uniform(0.5, 2.0, 4)
ALGEBRAS = {
    "R x_D R^3 diagonal, random basis": _almost_abelian(np.diag(LAMBDA)).change_basis(P4),
    "R x_D R^5 random basis": _almost_abelian(np.random.default_rng(8).uniform(-1.0, 1.0, (5, 5)), 9),
    "Bianchi VI_-2.5": named.bianchi("VI", a=-2.5),
    "Bianchi VII_0.5 random basis": named.bianchi("VII", a=0.5).change_basis(
        np.eye(3) + 0.3 * np.random.default_rng(4).standard_normal((3, 3))),
}


def _space(alg, seed=1):
    return OrbitSpace(quadratic_problem(alg, seed=seed))


@pytest.mark.parametrize("name", sorted(ALGEBRAS))
def test_the_generator_moves_along_the_lie_poisson_field(name):
    alg = ALGEBRAS[name]
    space = _space(alg)
    C = alg.structure_constants
    for z in np.random.default_rng(2).standard_normal((5, alg.dim)):
        w = space.velocity(z)
        field = np.einsum("i,ijk,k->j", w, C, z)
        got = space.to_state(space.field(0.0, z), z)
        assert np.max(np.abs(got - field)) <= 100 * EPS * np.abs(w).sum() * np.abs(C).max() * np.abs(z).sum(), name


@pytest.mark.parametrize("name", sorted(ALGEBRAS))
def test_the_action_is_the_coadjoint_action_of_the_group_on_the_orbit(name):
    alg = ALGEBRAS[name]
    space = _space(alg)
    form = almost_abelian(alg.structure_constants)
    rng = np.random.default_rng(5)
    for scale in (1e-6, 0.3, 1.5):
        x, z = scale * rng.standard_normal(alg.dim), rng.standard_normal(alg.dim)
        with mpmath.workdps(40):
            E = mpmath.expm(mpmath.matrix(alg.ad(x).T.tolist()))
            exact = np.array([float(v) for v in E * mpmath.matrix(z.tolist())])
        s = (form.Tinv @ x)[0]
        c = (form.T.T @ exact - form.T.T @ z)[0]
        got = space.act(np.array([s, c]), z)
        cond = np.linalg.cond(form.T)
        assert np.max(np.abs(got - exact)) <= 20 * cond * EPS * np.abs(exact).max() * math.exp(scale), (name, scale)
        # the increment is the difference, without its cancellation
        assert np.allclose(space.act_delta(np.array([s, c]), z), got - z, rtol=0, atol=10 * cond * EPS * np.abs(z).max())


def _casimirs(y):
    """log|m_j| / lambda_j - log|m_1| / lambda_1 (j = 2, 3) of the momenta y in the random basis: m = P^-1 y."""
    m = np.abs(y @ np.linalg.inv(P4).T)
    return np.log(m[..., 2:]) / LAMBDA[1:] - (np.log(m[..., 1]) / LAMBDA[0])[..., None]


def test_transcendental_casimirs_kept_where_the_ambient_pair_drifts():
    alg = ALGEBRAS["R x_D R^3 diagonal, random basis"]
    P = quadratic_problem(alg, seed=2)
    z0 = P4 @ np.array([0.3, 0.8, -0.6, 0.5])      # momenta of the built basis, moved to the random one
    ref = _casimirs(z0)
    for backend in ("numpy", "reference"):
        kw = dict(fast=False) if backend == "reference" else dict(backend="numpy")
        r = integrate(P, z0, (0.0, 20.0), method="rkmk853", rtol=1e-7, atol=1e-9, **kw)
        assert r.status == 0
        drift = np.max(np.abs(_casimirs(r.y) - ref))
        assert drift <= 2000 * EPS * len(r.t) ** 0.5, (backend, drift)
    amb = integrate(P, z0, (0.0, 20.0), method="rk853", rtol=1e-7, atol=1e-9, backend="numpy")
    assert np.max(np.abs(_casimirs(amb.y) - ref)) > 1e-9    # the ambient pair of the same tableau does not keep them


def test_fixed_step_rkmk4_has_order_four():
    alg = ALGEBRAS["R x_D R^5 random basis"]
    P = quadratic_problem(alg, seed=3)
    z0 = start(alg.dim, 3)
    ref = integrate(P, z0, (0.0, 2.0), method="rk853", rtol=1e-13, atol=1e-15, fast=False).y[-1]
    errs = [np.max(np.abs(integrate(P, z0, (0.0, 2.0), method="rkmk4", steps=N, fast=False).y[-1] - ref))
            for N in (20, 40, 80)]
    rates = [math.log2(errs[k] / errs[k + 1]) for k in range(2)]
    assert all(3.7 <= r <= 4.4 for r in rates), rates


@pytest.mark.parametrize("method", ["rkmk853", "rkmk45", "rkmk_tsit5"])
def test_error_proportional_to_the_tolerance(method):
    alg = ALGEBRAS["R x_D R^5 random basis"]
    P = quadratic_problem(alg, seed=6)
    z0 = start(alg.dim, 6)
    ref = integrate(P, z0, (0.0, 5.0), method="rk853", rtol=1e-13, atol=1e-15, fast=False).y[-1]
    size = np.max(np.abs(ref))
    for rtol in (1e-6, 1e-8, 1e-10):
        r = integrate(P, z0, (0.0, 5.0), method=method, rtol=rtol, atol=1e-3 * rtol, backend="numpy")
        assert r.status == 0
        assert np.max(np.abs(r.y[-1] - ref)) <= 3 * rtol * size, (method, rtol)


def _plan(P, z0, method):
    m = METHODS[method]
    return plans.plan(P, m.tableau, True, m.terms, z0)


@pytest.mark.parametrize("name", ["R x_D R^5 random basis", "Bianchi VI_-2.5"])
def test_generated_steps_agree_with_the_reference(name):
    alg = ALGEBRAS[name]
    n = alg.dim
    P = quadratic_problem(alg, seed=4)
    z0 = start(n, 4)
    pl = _plan(P, z0, "rkmk853")
    assert orbit_source.applies(pl.st, pl.lie) and not generic_kernel.covers(pl)
    te = np.linspace(0.0, 4.0, 301)
    ref = integrate(P, z0, (0.0, 4.0), method="rkmk853", rtol=1e-10, atol=1e-12, fast=False, t_eval=te)
    for backend in ["numpy"] + (["numba"] if NUMBA else []):
        got = integrate(P, z0, (0.0, 4.0), method="rkmk853", rtol=1e-10, atol=1e-12, backend=backend, t_eval=te)
        assert got.status == 0 and got.nsteps == ref.nsteps, backend
        assert got.backend.startswith(backend), got.backend       # never the generic kernel's other method
        assert np.max(np.abs(got.y - ref.y)) <= 1e-11 * np.max(np.abs(ref.y)), backend
    fix = integrate(P, z0, (0.0, 4.0), method="rkmk4", steps=200, backend="numpy")
    fref = integrate(P, z0, (0.0, 4.0), method="rkmk4", steps=200, fast=False)
    assert np.max(np.abs(fix.y - fref.y)) <= 1e-12 * np.max(np.abs(fref.y))
    ens = start(n, 5, batch=(6,))
    # an ensemble sharing its steps, and each trajectory on its own steps (the single reference runs)
    kw = dict(method="rkmk853", rtol=1e-9, atol=1e-11)
    fe = integrate(P, ens, (0.0, 4.0), backend="numpy", **kw)
    re = integrate(P, ens, (0.0, 4.0), fast=False, **kw)
    assert np.all(fe.status == 0) and np.max(np.abs(fe.y[-1] - re.y[-1])) <= 1e-10 * np.max(np.abs(re.y[-1]))
    ind = integrate(P, ens, (0.0, 4.0), backend="numpy", ensemble="independent", **kw)
    one = np.array([integrate(P, z, (0.0, 4.0), fast=False, **kw).y[-1] for z in ens])
    assert np.all(ind.status == 0) and np.max(np.abs(ind.y[-1] - one)) <= 1e-10 * np.max(np.abs(one))


def test_forced_and_other_algebras_keep_their_spaces():
    # a forcing keeps the affine action in g x g*; so(3) and Bianchi V ("ad3") the coadjoint one
    alg = ALGEBRAS["Bianchi VI_-2.5"]
    st = recognition.Structure(alg.structure_constants, np.eye(3), np.zeros(3), P=np.zeros((3, 3)),
                               closed=recognition.closed_form(alg.structure_constants))
    assert not orbit_source.applies(st, True) and not orbit_source.applies(st.__class__(
        alg.structure_constants, np.eye(3), np.zeros(3), closed="almost_abelian"), False)
    for other in (named.so3(), named.bianchi("V")):
        P = quadratic_problem(other, seed=1)
        pl = _plan(P, start(3, 1), "rkmk853")
        assert not orbit_source.applies(pl.st, pl.lie) and generic_kernel.covers(pl)


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_the_compiled_section_steps_as_the_reference(monkeypatch):
    # the compiled Poincare section (integrators.codegen.section_source) takes the orbit space's steps too: its
    # crossings are those of the numpy path (the reference stepper's steps, located in numpy)
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")
    from integrators import poincare_section
    alg = ALGEBRAS["Bianchi VI_-2.5"]   # where the two actions' steps differ by 4e-8 over these 2000 steps
    P = quadratic_problem(alg, seed=4)
    z0 = start(alg.dim, 4)
    path = integrate(P, z0, (0.0, 20.0), method="rkmk4", steps=2000, backend="numpy").y
    j = int(np.argmax(np.ptp(path, axis=0)))       # the plane through the middle of the widest swing
    a, b = np.eye(alg.dim)[j], float(np.median(path[:, j]))
    got = {bk: poincare_section(P, z0, (a, b), 20.0, method="rkmk4", h=0.01, backend=bk, direction=0)
           for bk in ("numpy", "numba")}
    assert got["numba"].backend == "numba" and got["numpy"].backend == "numpy"
    p, q = np.asarray(got["numpy"].points), np.asarray(got["numba"].points)
    assert p.shape == q.shape and len(p) >= 2
    assert np.max(np.abs(p - q)) <= 1e-11 * np.max(np.abs(p))
