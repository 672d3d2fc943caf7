"""The generic kernel (integrators.backends.generic_kernel) on forced coadjoint problems (issue 24): the adaptive
RKMK pairs of m' = ad*_w m + f(m), f = -P ad*_w m (servo-constraints of the first kind, one and several), whose
generators (w, f) live in g x g* (integrators.codegen.generic_group_source), with every accepted step projected
onto the linear invariants (I^-1 a_i, m) = 0 (integrators.codegen.generic_projection_source).

Expected values come from the numpy reference loop (``fast=False``: AffineCoadjointSpace, exp of the (n+1) x (n+1)
matrix [[ad(x)^T, v], [0, 0]] by expm_small (Rodrigues on so(3)), dexp^-1 by spaces.dexpinv_series with the
space's bracket, the projection of LinearProjection in numpy), a second implementation of the same method: the
kernel must take the same steps and end at the same state to round-off (amplified by the flow over the interval),
and keep the constraints to round-off after every step. The systems are seeded: so(4) in its basis and in a random
one, and a solvable R x_D R^3 in a random basis (no closed-form exponential, a dense structure).
"""

import math

import numpy as np
import pytest

from integrators import METHODS, integrate
from integrators.backends import auto_compile, fastpath, generic_kernel, numba_kernels
from integrators.codegen import linear_projection
from liegroups import named
from servo.lie import ServoFirstKind
from tests.algebras import random_basis, semidirect_r_rn

NUMBA = numba_kernels.available()
needs_numba = pytest.mark.skipif(not NUMBA, reason="numba not installed")
#: the kernel's mode in the tests that need no compiler
MODE = "numba" if NUMBA else "python"
#: the adaptive Lie-group pairs of the registry (each runs forced problems in g x g*)
PAIRS = tuple(k for k, m in METHODS.items() if getattr(m, "lie", False) and getattr(m.tableau, "E", None))


def _random_basis(alg, seed):
    return random_basis(alg, np.random.default_rng(seed))


def _solvable(seed):
    """R x_D R^3 (D uniform in [-1, 1]) in a random basis."""
    D = np.random.default_rng(seed).uniform(-1.0, 1.0, (3, 3))
    return _random_basis(semidirect_r_rn(D), seed + 1)


#: label -> (algebra builder, number of constraints, seed of the inertia and constraints)
SYSTEMS = {
    "so(4), 1 constraint": (named.so4, 1, 7),
    "so(4), 2 constraints": (named.so4, 2, 7),
    "so(4) random basis, 2 constraints": (lambda: _random_basis(named.so4(), 5), 2, 11),
    "R x_D R^3 random basis, 1 constraint": (lambda: _solvable(3), 1, 2),   # |m| grows 2.6x on [0, 3]
}


def _system(label):
    """ServoFirstKind with k constraints (a_i, w) = 0 kept by the forces lambda_i b_i, and m0 on them."""
    build, k, seed = SYSTEMS[label]
    alg = build()
    rng = np.random.default_rng(seed)
    n = alg.dim
    Bm = rng.standard_normal((n, n))
    I = Bm @ Bm.T / n + np.eye(n)
    A, B = rng.standard_normal((k, n)), rng.standard_normal((k, n))
    s = ServoFirstKind(alg, I, a=A[0] if k == 1 else A, b=B[0] if k == 1 else B)
    return s, s.state_from(m=rng.standard_normal(n), project=True)


def _plan(P, method, m0):
    M = METHODS[method]
    proj = linear_projection.kept(P, M)
    pl = fastpath.plan(P, M.tableau, M.lie, M.terms, m0, proj)
    assert pl is not None and pl.st.P is not None and proj is not None     # a forced plan, projected
    return pl


def _kernel_run(pl, y0, t1, rtol, atol, mode=MODE, proj="plan"):
    """The generic loop of one trajectory from t = 0 with its own starting step, every step saved; ``proj``
    None: without the projection onto the linear invariants."""
    n = pl.st.n
    pr = pl.proj if proj == "plan" else proj
    fn = generic_kernel.function(pl.st, pl.tab, pl.lie, pl.terms, pr, mode)
    ts, ys = np.empty(8), np.empty((8, n))
    ts[0], ys[0] = 0.0, y0
    cz = [] if pr is None else pr.values(y0).tolist()
    out = fn(0.0, t1, 0.0, rtol, atol, math.inf, 1, 10**6, 0, ts, ys, *y0.tolist(), *([0.0] * n), *cz)
    status, t, _, ns, nr, j = out[:6]
    return status, t, ns, nr, out[6][:j], out[7][:j], np.array(out[8:8 + n]) + np.array(out[8 + n:8 + 2 * n])


@pytest.mark.parametrize("label", sorted(SYSTEMS))
def test_forced_rkmk_pairs_agree_with_the_numpy_reference_and_keep_the_constraints(label):
    s, m0 = _system(label)
    P = s.problem()
    assert set(PAIRS) >= {"rkmk45", "rkmk853"}
    for method in PAIRS:
        pl = _plan(P, method, m0)
        ref = integrate(P, m0, (0.0, 3.0), method=method, rtol=1e-9, atol=1e-12, fast=False)
        status, t, ns, nr, ts, ys, z = _kernel_run(pl, m0, 3.0, 1e-9, 1e-12)
        assert status == 0 and t == 3.0 and ref.status == 0
        assert abs(ns - ref.nsteps) <= 1 and abs(nr - ref.nrejected) <= 1, (method, ns, ref.nsteps)
        scale = np.max(np.abs(ref.y))
        assert np.max(np.abs(z - ref.y[-1])) <= 1e-12 * scale, method
        assert np.max(np.abs(z - m0)) > 0.1 * scale      # the state moved: the agreement is not trivial
        # every accepted step on the constraints (a_i, I^-1 m) = 0, the servo's own, to round-off
        L = np.atleast_2d(s.A) @ np.linalg.inv(s.I)
        assert np.max(np.abs(ys @ L.T)) <= 1e-13 * scale * np.max(np.abs(L)), method


def test_the_projection_is_what_keeps_the_constraints():
    """Without the projection the RKMK steps (in g x g*) leave the constraints at the size of the local error: so
    the check above can fail, and the kernel's projection is what passes it."""
    s, m0 = _system("so(4), 2 constraints")
    pl = _plan(s.problem(), "rkmk45", m0)
    L = np.atleast_2d(s.A) @ np.linalg.inv(s.I)
    _, _, _, _, _, ys, _ = _kernel_run(pl, m0, 3.0, 1e-7, 1e-10, proj=None)
    _, _, _, _, _, yp, _ = _kernel_run(pl, m0, 3.0, 1e-7, 1e-10)
    assert np.max(np.abs(ys @ L.T)) > 1e3 * np.max(np.abs(yp @ L.T)) and np.max(np.abs(ys @ L.T)) > 1e-12


def test_python_text_takes_the_specialised_loops_steps():
    """The kernel's text run as Python floats (no numba needed) takes the steps of the generated straight-line
    loop of AffineSource (the cubic closed form of the action on so(4) there, the Taylor series here) and ends
    at its state to round-off; the numba kernel ends at the Python text's state."""
    s, m0 = _system("so(4), 2 constraints")
    n = m0.size
    for method in ("rkmk45", "rkmk853"):
        pl = _plan(s.problem(), method, m0)
        status, _, ns, nr, _, _, z = _kernel_run(pl, m0, 2.0, 1e-8, 1e-11, mode="python")
        T, Y = np.empty(8), np.empty((8, n))
        T[0], Y[0] = 0.0, m0
        out = pl.function("adaptive", "scalar")(0.0, 2.0, 0.0, 1e-8, 1e-11, math.inf, 1, 10**6, 0, T, Y, *m0,
                                                *([0.0] * n), *pl.targets(m0))
        zg = np.array(out[8:8 + n]) + np.array(out[8 + n:8 + 2 * n])
        assert (status, ns, nr) == (out[0], out[3], out[4]) and status == 0
        assert np.max(np.abs(z - zg)) <= 1e-13 * np.max(np.abs(zg)), method
        if NUMBA:
            nb = _kernel_run(pl, m0, 2.0, 1e-8, 1e-11, mode="numba")
            assert nb[2] == ns and np.max(np.abs(nb[6] - z)) <= 1e-14 * np.max(np.abs(z))


def test_the_affine_pieces_against_their_definitions():
    """The kernel's functions run as Python on so(4) in a random basis: the generator (w, -P ad*_w m) against the
    problem's velocity and forcing, the affine action against scipy's expm of [[ad(x)^T, v], [0, 0]], the bracket
    of g x g* in dexp^-1 against spaces.dexpinv_series with AffineCoadjointSpace.bracket, the state change
    ad*_x m + v against AffineCoadjointSpace.to_state, and the linear projection against LinearProjection."""
    import scipy.linalg
    from integrators.codegen import generic_source
    from integrators.geometry.spaces import AffineCoadjointSpace, dexpinv_series
    from integrators.reference import genhelpers
    ns = dict(genhelpers.SCALAR, np=np, math=math)
    exec(compile(generic_source.text(), "<generic>", "exec"), ns)
    s, m0 = _system("so(4) random basis, 2 constraints")
    P = s.problem()
    pl = _plan(P, "rkmk853", m0)
    n = m0.size
    C = s.algebra.structure_constants
    arrays = generic_kernel.data(pl.st, pl.tab, pl.lie, pl.terms, pl.proj)
    _, _, ci, cj, ck, cv, W, c, Pm, hasP, G2, bern = arrays[:12]
    pL, pG = arrays[-2:]
    assert hasP and G2.shape == (2 * n, 2 * n) and pL.shape == (2, n)
    space = AffineCoadjointSpace(P)
    rng = np.random.default_rng(3)
    out, g = np.empty(2 * n), np.empty(n)
    ns["gk_generator"](ci, cj, ck, cv, W, c, Pm, True, m0, g, out)
    ref = space.field(0.0, m0)
    assert np.max(np.abs(out - ref)) <= 1e-14 * np.max(np.abs(ref))
    M, t1, t2 = np.empty((2 * n, 2 * n)), np.empty(2 * n), np.empty(2 * n)
    work = [np.empty(n) for _ in range(5)]
    y = np.empty(n)
    for x2 in (1e-3, 0.1, 0.4):   # x^2 = ||ad_xi||_F^2 / (2 pi)^2 in g x g*, below DEXPINV_X2MAX
        xi, v = rng.standard_normal(2 * n), rng.standard_normal(2 * n)
        xi *= math.sqrt(x2 / (xi @ G2 @ xi))
        for terms in (100, 6):
            res = np.empty(2 * n)
            ns["gk_dexpinv"](ci, cj, ck, cv, G2, bern, terms, True, xi, v, res, M, t1, t2)
            expected = dexpinv_series(space.bracket, xi, v, terms)
            assert np.max(np.abs(res - expected)) <= 1e-13 * np.max(np.abs(expected)), (x2, terms)
        xi = 4.0 * xi                # the action at any size: substeps
        Mx = np.zeros((n + 1, n + 1))
        Mx[:n, :n] = np.einsum("i,ijk->jk", xi[:n], C)
        Mx[:n, n] = xi[n:]
        expected = (scipy.linalg.expm(Mx) @ np.append(m0, 1.0))[:n]
        for delta in (False, True):
            ns["gk_act"](ci, cj, ck, cv, xi, True, m0, delta, y, M, *work)
            got = y + (m0 if delta else 0.0)
            assert np.max(np.abs(got - expected)) <= 1e-13 * np.max(np.abs(expected)), (x2, delta)
        ns["gk_state"](ci, cj, ck, cv, True, xi, m0, y)
        assert np.max(np.abs(y - space.to_state(xi, m0))) <= 1e-14 * np.max(np.abs(y))
    zt = m0 + 1e-3 * rng.standard_normal(n)
    targets = pl.proj.values(m0)
    inc, zp, r = np.empty(n), np.empty(n), np.empty(2)
    ns["gk_linproject"](pL, pG, zt, targets, inc, zp, r)
    assert np.max(np.abs(zp - pl.proj.project(zt, targets))) <= 1e-15 * np.max(np.abs(zp))
    assert np.max(np.abs(pl.proj.values(zp) - targets)) <= 1e-14


# ------------------------------------------------------------------ the engine's choice
@needs_numba
def test_cold_numba_and_auto_run_the_generic_kernel_on_a_forced_problem(cold_specialised):
    """A cold backend="numba" call of rkmk853 on a servo-constraint of the first kind runs the generic kernel (was:
    the specialised loop compiled in the call, a minute), queues the specialised loop, and agrees with the numpy
    backend's generated loop to round-off, on the default output grid of simulate too; "auto" on a run the engine
    would compile takes the generic kernel, no wait."""
    generic_kernel.warm()
    s, m0 = _system("so(4) random basis, 2 constraints")
    P = s.problem()
    kw = dict(method="rkmk853", rtol=1e-9, atol=1e-12)
    a = integrate(P, m0, (0.0, 3.0), backend="numba", **kw)
    b = integrate(P, m0, (0.0, 3.0), backend="numpy", **kw)
    assert a.backend == auto_compile.NUMBA_GENERIC_LABEL and b.backend == "numpy"
    assert [k[0] for k in cold_specialised] == ["adaptive"]
    assert a.status == b.status == 0 and abs(a.nsteps - b.nsteps) <= 1
    scale = np.max(np.abs(b.y))
    assert np.max(np.abs(a.y[-1] - b.y[-1])) <= 1e-11 * scale
    g = s.simulate(m0, 3.0, backend="numba", **kw)              # its default grid: filled by the kernel
    gn = s.simulate(m0, 3.0, backend="numpy", **kw)
    assert g.backend == auto_compile.NUMBA_GENERIC_LABEL and np.array_equal(g.t, gn.t) and len(g.t) > 100
    assert np.max(np.abs(g.y - gn.y)) <= 1e-10 * scale
    L = np.atleast_2d(s.A) @ np.linalg.inv(s.I)
    assert np.max(np.abs(g.y @ L.T)) <= 1e-13 * scale * np.max(np.abs(L))   # the grid states on the constraints
    pl = _plan(P, "rkmk853", m0)
    assert auto_compile.choose(pl, "numba", 2e6, False, False, 3.0, 1e-9, 1e-12, None) == "generic"
