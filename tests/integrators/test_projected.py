"""The projected pairs rk45_projected, rk853_projected (Hairer, Lubich and Wanner 2006, IV.4,
Algorithm 4.2: each accepted step projected onto the level set of the algebra's polynomial Casimirs).

Expected values: the Casimirs evaluated by the algebra's own sympy polynomials (liegroups'
Casimir objects, lambdified: not the generated straight-line code under test) at t = 0; the exact
elliptic solution of the free rigid body (integrators.analysis.rigid_body); scipy's DOP853 at rtol 1e-13 as
an independent tight reference; the unprojected rk853 for the order (the projection keeps it, GNI
Theorem IV.4.2); the generic numpy reference loop for the generated code; single runs for the
independent ensembles; counted calls of the velocity for nfev.
"""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from integrators import CoadjointProblem, MethodError, applicable_methods, integrate

from integrators.backends import fastpath

from integrators.backends import numba_kernels
from integrators.analysis.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body, rigid_body_exact
from liegroups import named

from ._problems import ADAPTIVE_PROJECTED, ADAPTIVE_RK, ADAPTIVE_RKMK, ALGEBRAS, quadratic_problem, start

PROJECTED = tuple(ADAPTIVE_PROJECTED)
NUMBA = numba_kernels.available()
BACKENDS = ["reference", "numpy"] + (["numba"] if NUMBA else [])


def _random_basis(algebra, seed):
    rng = np.random.default_rng(seed)
    return algebra.change_basis(np.eye(algebra.dim) + 0.3 * rng.standard_normal((algebra.dim, algebra.dim)))


CASES = {**{k: f for k, f in ALGEBRAS.items()}, "so4 random basis": lambda: _random_basis(named.so4(), 4),
         "se3 random basis": lambda: _random_basis(named.se3(), 5)}


def _drift(algebra, y):
    """max over the Casimirs and saved states of |C(y_k) - C(y_0)| / S(y_0), S = sum_j |y_j dC/dy_j| at
    y_0 (the size of the terms of C, whose rounding a state at round-off distance shows), per
    trajectory."""
    worst = 0.0
    for c in algebra.casimirs():
        v = c(y)
        S = np.sum(np.abs(y[0] * c.grad(y[0])), axis=-1)
        worst = max(worst, float(np.max(np.abs(v - v[0]) / S)))
    return worst


def _run(P, z0, method, backend, **kw):
    opts = dict(fast=False) if backend == "reference" else dict(backend=backend)
    return integrate(P, z0, (0.0, 20.0), method=method, **opts, **kw)


#: numba compiles every structure and method once per machine (tens of seconds for DOP853): one case
COMPILED = [("so4 random basis", "numba", "rk45_projected")]


@pytest.mark.parametrize("case, backend, method", [(c, b, m) for c in sorted(CASES) for b in ("reference", "numpy")
                                                   for m in PROJECTED] + (COMPILED if NUMBA else []))
def test_casimirs_kept_to_round_off_after_many_steps(case, backend, method):
    algebra = CASES[case]()
    P = quadratic_problem(algebra, seed=11)
    z0 = start(P.dim, 11, batch=(3,))     # one trajectory and an ensemble (numpy: the array mode)
    for y0 in (z0[0], z0):
        r = _run(P, y0, method, backend, rtol=1e-6, atol=1e-8, max_step=0.1)
        assert r.status == 0 and "casimirs" in r.preserves
        assert r.nsteps >= 200, r.nsteps
        assert _drift(algebra, r.y) <= 1e-14, (case, method, backend, _drift(algebra, r.y))
    # without the projection the same pair drifts far beyond round-off: the test can fail
    plain = _run(P, z0[0], "rk853", "numpy", rtol=1e-6, atol=1e-8)
    assert _drift(algebra, plain.y) > 1e-10


@pytest.mark.parametrize("rtol", [1e-7, 1e-9])
def test_final_error_follows_rtol_on_the_exact_rigid_body(rtol):
    body = free_rigid_body(REFERENCE_INERTIA)
    m0 = np.array(REFERENCE_M0)
    exact = rigid_body_exact(REFERENCE_INERTIA, m0, 10.0)
    for method in PROJECTED:
        r = integrate(body, m0, (0.0, 10.0), method=method, rtol=rtol, atol=rtol * 1e-3)
        assert float(np.max(np.abs(r.y[-1] - exact))) <= 3.0 * rtol * np.linalg.norm(m0), method


@pytest.mark.parametrize("alg", ["se3", "so4"])
def test_error_against_a_tight_reference_tracks_rtol_like_rk853(alg):
    P = quadratic_problem(ALGEBRAS[alg](), seed=3)
    z0 = start(P.dim, 3)
    ref = solve_ivp(lambda t, z: P.rhs(t, z), (0.0, 10.0), z0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
    err = {}
    for method in ("rk853", "rk853_projected"):
        for rtol in (1e-6, 1e-10):
            r = integrate(P, z0, (0.0, 10.0), method=method, rtol=rtol, atol=rtol * 1e-2)
            err[method, rtol] = float(np.max(np.abs(r.y[-1] - ref)))
    for rtol in (1e-6, 1e-10):
        assert err["rk853_projected", rtol] <= 5.0 * err["rk853", rtol] + 1e-12, err
    assert err["rk853_projected", 1e-10] < err["rk853_projected", 1e-6] / 1000, err


@pytest.mark.parametrize("method", PROJECTED)
@pytest.mark.parametrize("alg", ["so3", "se3", "sl2", "so4"])
def test_generated_loops_agree_with_the_reference_loop(method, alg):
    """Scalar (one trajectory), array (an ensemble sharing its steps) and numba (so(3)) against the
    generic numpy reference loop: a projected step from the same state and h equal to round-off;
    whole runs to the tolerance (the error estimate is a difference of nearly equal sums, so its
    rounding, 1e-6 relative, moves the step sizes by ~1e-9: the runs are not equal to round-off)."""
    P = quadratic_problem(ALGEBRAS[alg](), seed=7)
    z0 = start(P.dim, 7, batch=(4,))
    backends = ("numpy",) + (("numba",) if NUMBA and alg == "so3" else ())
    for y0 in (z0[0], z0):
        one = dict(method=method, rtol=1e-3, atol=1e-5, first_step=0.05, max_steps=1, check=False)
        ref = integrate(P, y0, (0.0, 5.0), fast=False, **one)
        assert ref.nsteps == 1 and ref.nrejected == 0 and ref.t[1] == 0.05
        for be in backends:
            r = integrate(P, y0, (0.0, 5.0), backend=be, **one)
            assert r.nsteps == 1 and r.t[1] == 0.05 and not r.backend.startswith("numpy (generic")
            np.testing.assert_allclose(r.y[1], ref.y[1], rtol=0, atol=1e-14 * np.max(np.abs(ref.y[1])))
        kw = dict(method=method, rtol=1e-8, atol=1e-10)
        ref = integrate(P, y0, (0.0, 5.0), fast=False, **kw)
        for be in backends:
            r = integrate(P, y0, (0.0, 5.0), backend=be, **kw)
            assert abs(r.nsteps - ref.nsteps) <= 1, (be, r.nsteps, ref.nsteps)
            np.testing.assert_allclose(r.y[-1], ref.y[-1], rtol=0, atol=1e-7 * np.max(np.abs(ref.y)))


@pytest.mark.parametrize("backend, method", [("numpy", "rk853_projected")]
                         + ([("numba", "rk45_projected")] if NUMBA else []))
def test_independent_ensemble_equals_single_runs(backend, method):
    P = quadratic_problem(named.se3(), seed=9)
    z0 = start(6, 9, batch=(5,))
    kw = dict(method=method, rtol=1e-8, atol=1e-10, backend=backend)
    r = integrate(P, z0, (0.0, 5.0), ensemble="independent", **kw)
    for b in range(5):
        one = integrate(P, z0[b], (0.0, 5.0), **kw)
        assert r.nsteps_each[b] == one.nsteps
        np.testing.assert_allclose(r.y[-1, b], one.y[-1], rtol=0, atol=1e-12)
    assert _drift(named.se3(), r.y) <= 1e-14


@pytest.mark.parametrize("fast", [True, False])
def test_states_at_t_eval_and_events_lie_on_the_level_set(fast):
    """The interpolant between steps leaves the level set by its error; the returned states are projected."""
    algebra = named.so4()
    P = quadratic_problem(algebra, seed=2)
    z0 = start(6, 2)
    te = np.linspace(0.0, 10.0, 41)
    r = integrate(P, z0, (0.0, 10.0), method="rk853_projected", rtol=1e-5, atol=1e-7, t_eval=te, fast=fast)
    np.testing.assert_array_equal(r.t, te)
    assert _drift(algebra, r.y) <= 1e-14
    # the continuous extension is accurate to the tolerance: against the tight reference at t_eval
    ref = solve_ivp(lambda t, z: P.rhs(t, z), (0.0, 10.0), z0, method="DOP853", rtol=1e-13, atol=1e-15,
                    t_eval=te).y.T
    assert np.max(np.abs(r.y - ref)) <= 1e-3
    ev = lambda t, y: y[..., 0]  # noqa: E731
    r = integrate(P, z0, (0.0, 10.0), method="rk853_projected", rtol=1e-5, atol=1e-7, events=ev, fast=fast)
    ye = np.concatenate([z0[None], r.y_events[0]])
    assert len(r.t_events[0]) >= 1 and np.max(np.abs(r.y_events[0][:, 0])) <= 1e-10
    assert _drift(algebra, ye) <= 1e-14
    # an ensemble: event location steps each trajectory alone, projected onto its own level set
    zb = start(6, 3, batch=(3,))
    r = integrate(P, zb, (0.0, 10.0), method="rk853_projected", rtol=1e-5, atol=1e-7, events=ev, fast=fast)
    assert len(r.t_events[0]) >= 3
    for c in algebra.casimirs():
        S = np.sum(np.abs(zb * c.grad(zb)), axis=-1)           # (3,): the scale of each trajectory
        rel = np.abs(c(r.y_events[0])[:, None] - c(zb)[None]) / S[None]
        assert np.max(np.min(rel, axis=1)) <= 1e-14          # each event state on one trajectory's level set


def test_the_generated_loop_projects_onto_the_targets_it_is_given():
    """A continuation (a later chunk) projects onto C(y0) of the initial state, passed in, not onto C at
    its own start: started off the level set, the run lands on the targets."""
    from integrators import tableaux
    from integrators.codegen import projection
    P = quadratic_problem(named.se3(), seed=1)
    z0 = start(6, 1)
    proj = projection.of_algebra(P.algebra)
    pl = fastpath.plan(P, tableaux.get("dop853"), False, 1, z0, proj)
    target = proj.values(z0)
    zs = z0 * (1.0 + 1e-6)                  # the "chunk" starts 1e-6 off the level set
    ts, ys = np.empty(64), np.empty((64, 6))
    ts[0], ys[0] = 0.0, zs
    out = pl.function("adaptive", "scalar")(0.0, 1.0, 0.01, 1e-8, 1e-10, np.inf, 1, 10**6, 0, ts, ys,
                                            *zs, *([0.0] * 6), *target)
    zf = np.array(out[8:14]) + np.array(out[14:20])
    for k, c in enumerate(P.algebra.casimirs()):
        assert abs(c(zf) - target[k]) <= 1e-14 * np.sum(np.abs(zf * c.grad(zf))), k
        assert abs(c(zf) - c(zs)) > 1e-8


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_a_long_python_run_continues_compiled_on_the_same_level_set(monkeypatch):
    P = free_rigid_body((2.0, 1.0, 0.5))
    y0 = np.array([0.3, -0.8, 0.5])
    kw = dict(method="rk853_projected", rtol=1e-12, atol=1e-14, save_every=7)
    whole = integrate(P, y0, (0.0, 100.0), backend="numpy", **kw)
    monkeypatch.setattr(fastpath, "NUMPY_CHUNK", 40)
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "wait")   # compile in the call (not the background default)
    chunked = integrate(P, y0, (0.0, 100.0), backend="auto", **kw)
    assert chunked.backend.startswith("numpy for the first 40 steps, then numba") and whole.nsteps > 120
    assert abs(chunked.nsteps - whole.nsteps) <= 1   # compiled code may round the error estimate otherwise
    np.testing.assert_allclose(chunked.y[-1], whole.y[-1], rtol=0, atol=1e-10)
    assert _drift(P.algebra, chunked.y) <= 1e-14


def test_nfev_counts_velocity_calls():
    """The reference loop: 2 calls for the starting step, 1 at y0, one per stage and attempt, and one
    more per accepted step (the next first stage at the projected state: no FSAL)."""
    calls = []
    body = free_rigid_body(REFERENCE_INERTIA)
    vel = body.velocity
    body.velocity = lambda z: (calls.append(1), vel(z))[1]
    r = integrate(body, np.array(REFERENCE_M0), (0.0, 5.0), method="rk45_projected", rtol=1e-8, atol=1e-10,
                  fast=False, check=False)
    assert r.nfev == len(calls) == 3 + 6 * (r.nsteps + r.nrejected) + r.nsteps


def test_methods_that_do_not_apply_say_why_and_name_what_applies():
    bianchi4 = CoadjointProblem(named.bianchi("IV"), lambda z: z, velocity_matrix=np.eye(3))
    assert len(bianchi4.algebra.casimirs()) == 0
    for method in PROJECTED:
        assert method not in applicable_methods(bianchi4)
        with pytest.raises(MethodError, match=r"no polynomial Casimir.*rk853") as e:
            integrate(bianchi4, np.ones(3), (0.0, 1.0), method=method)
        assert "rk853_projected" not in str(e.value).split("apply:")[1]
    forced = CoadjointProblem(named.so3(), lambda z: z, velocity_matrix=np.eye(3), forcing=lambda z: 0.1 * z)
    for method in PROJECTED:
        assert method not in applicable_methods(forced)
        with pytest.raises(MethodError, match=r"unforced.*methods that apply: .*rk853"):
            integrate(forced, np.ones(3), (0.0, 1.0), method=method)
    assert set(PROJECTED) <= set(applicable_methods(free_rigid_body(REFERENCE_INERTIA)))


@pytest.mark.skipif(not NUMBA, reason="numba not installed")
def test_compiled_lanes_refill_and_equal_the_numpy_ensemble():
    """600 rigid bodies, more than the 256 lanes of a thread (finished lanes take new trajectories):
    the compiled lane kernel (projection per lane after acceptance) against the numpy engine."""
    body = free_rigid_body(REFERENCE_INERTIA)
    z0 = np.array(REFERENCE_M0) + 0.1 * np.random.default_rng(5).standard_normal((600, 3))
    kw = dict(method="rk45_projected", rtol=1e-7, atol=1e-9, ensemble="independent")
    a = integrate(body, z0, (0.0, 3.0), backend="numba", **kw)
    b = integrate(body, z0, (0.0, 3.0), backend="numpy", **kw)
    assert a.backend == "numba" and b.backend == "numpy"
    assert np.max(np.abs(a.nsteps_each - b.nsteps_each)) <= 1
    np.testing.assert_allclose(a.y[-1], b.y[-1], rtol=0, atol=1e-9)
    assert _drift(body.algebra, a.y) <= 1e-14


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_and_tiny_states_are_left_unprojected_not_divided_by_zero(backend):
    """At m = 0 the gradient of |m|^2 vanishes; at |m| = 1e-160 |grad C|^2 underflows: the projection
    drops the direction (rinv) instead of returning NaN; the runs end normally with rk45's states
    (the reference: the unprojected pair, identical when nothing is projected)."""
    P = quadratic_problem(named.sl2(), seed=1)
    for y0 in (np.zeros(3), np.array([1e-160, 0.0, 0.0])):
        r = _run(P, y0, "rk45_projected", backend, rtol=1e-6, atol=1e-8)
        plain = _run(P, y0, "rk45", backend, rtol=1e-6, atol=1e-8)
        assert r.status == 0 and np.all(np.isfinite(r.y))
        np.testing.assert_allclose(r.y[-1], plain.y[-1], rtol=1e-12, atol=0)


def test_casimir_values_of_one_state_in_floats_equal_the_algebras_casimirs():
    """CasimirProjection.values of one state (Python floats, the generated expressions) equals its batched
    (numpy columns) value at that state to the last bit where the text is the same, and the algebra's own
    Casimirs (lambdified sympy) to round-off, on so(4) and on so(5) in a random basis (a dense quartic)."""
    from integrators.codegen import projection
    from tests.algebras import random_basis
    rng = np.random.default_rng(8)
    for alg in (named.so4(), random_basis(named.so(5), rng)):
        proj = projection.of_algebra(alg)
        Z = rng.standard_normal((3, alg.dim))
        one = np.array([proj.values(z) for z in Z])
        assert one.shape == (3, proj.p)
        np.testing.assert_allclose(one, proj.values(Z), rtol=1e-13, atol=1e-13)
        own = np.array([[c(z) for c in alg.casimirs()] for z in Z])
        np.testing.assert_allclose(one, own, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("name", ["so4", "sl3", "so4 random basis"])
def test_first_residuals_by_euler_identity_are_the_casimirs(name):
    """The projection takes its first residuals from the gradients it has just written
    (Euler's identity, sum_j z_j dC/dz_j = d C for a homogeneous C of degree d): they equal C(z) - c computed from
    the Casimirs themselves (so(4): two quadratics; sl(3): a quadratic and a cubic; a random basis: dense ones). A
    Casimir that is not homogeneous (a constant added) keeps its direct value."""
    from integrators.codegen import projection
    from integrators.codegen.source_text import Lines
    from integrators.reference import genhelpers
    alg = named.sl(3) if name == "sl3" else CASES[name]()
    proj = projection.of_algebra(alg)
    shifted = projection.CasimirProjection([poly + ((2.5, (0,) * alg.dim),) for poly in proj.polys], alg.dim)
    assert proj.degrees == sorted(proj.degrees) and proj.degrees[0] == 2 and None not in proj.degrees
    assert shifted.degrees == [None] * proj.p
    Z = np.random.default_rng(3).standard_normal((4, alg.dim))
    c = np.array([0.3, -0.7, 1.1])[:proj.p]
    for pr in (proj, shifted):
        z, cn = [f"z{j}" for j in range(alg.dim)], [f"c{k}" for k in range(pr.p)]
        w = Lines()
        pr.write(w, z, cn)
        last = min(i for i, ln in enumerate(w.lines) if ln.strip().startswith(f"_pr{pr.p - 1} = "))
        first = w.lines[:last + 1]     # up to the first residuals (the iterations follow)
        text = (f"def first({', '.join(z + cn)}):\n" + "\n".join(first)
                + f"\n    return ({', '.join(f'_pr{k}' for k in range(pr.p))},)\n")
        assert pr is shifted or ")/2.0" in text        # the Euler form (/d, d = 2 for the quadratic) where it applies
        env = dict(genhelpers.ARRAY, np=np)
        exec(text, env)
        got = np.array(env["first"](*Z.T, *c))
        want = pr.values(Z).T - c[:, None]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * np.abs(pr.values(Z)).max())


@pytest.mark.parametrize("name", ["so5 random basis", "sl3", "shifted"])
def test_gradient_text_names_each_monomial_once_and_equals_sympys_gradient(name):
    """The projection's gradients (the text the loops run) equal the algebra's own Casimirs differentiated by
    sympy, on a dense quartic (so(5) in a random basis), a cubic (sl(3)) and a polynomial that is not homogeneous
    (so(4)'s Casimirs plus a linear and a constant term, so the values take the split C = c_0 + sum_j z_j H_j
    with its constant); and every monomial of degree >= 2 is a name computed once: no term of a gradient or value
    multiplies two state variables (a dense quartic written term by term: ~3 products a term)."""
    import re
    import sympy as sp
    from integrators.codegen import projection
    from integrators.codegen.source_text import Lines
    from tests.algebras import random_basis
    rng = np.random.default_rng(11)
    alg = {"so5 random basis": lambda: random_basis(named.so(5), rng), "sl3": lambda: named.sl(3),
           "shifted": named.so4}[name]()
    n = alg.dim
    m = sp.symbols(f"m1:{n + 1}")
    # the projection written from the library's Casimirs in the user's basis (of_algebra would write so(5)'s
    # through its root basis: tests/integrators/test_root_basis.py)
    proj = projection.CasimirProjection(projection.polynomials(alg), n)
    if name == "shifted":
        proj = projection.CasimirProjection([poly + ((0.75, (0,) * (n - 1) + (1,)), (2.5, (0,) * n)) for poly in proj.polys], n)
    sym = [sum(c * sp.prod([s ** e for s, e in zip(m, ex)]) for c, ex in poly) for poly in proj.polys]
    z = [f"z{j}" for j in range(n)]
    w = Lines()
    grads = proj.grad_exprs(w, z)
    vals = proj.value_exprs(w, z)
    products = re.compile(r"\bz\d+\s*\*\s*z\d+\b")
    for ln in w.lines:   # the monomials: a lower one (or a variable) times one variable
        assert re.fullmatch(r"\s*_pq\w+ = (z\d+|_pq\w+)\*z\d+", ln), ln
    for e in [g for row in grads for g in row] + vals:
        assert not products.search(e), e
    text = (f"def f({', '.join(z)}):\n" + "\n".join(w.lines)
            + f"\n    return ({', '.join(g for row in grads for g in row)},), ({', '.join(vals)},)\n")
    env = {}
    exec(text, env)
    for x in rng.standard_normal((3, n)):
        g, v = env["f"](*x)
        sub = dict(zip(m, x))
        want_g = [float(sp.diff(S, mj).subs(sub)) for S in sym for mj in m]
        want_v = [float(S.subs(sub)) for S in sym]
        np.testing.assert_allclose(g, want_g, rtol=1e-12, atol=1e-12 * np.abs(want_g).max())
        np.testing.assert_allclose(v, want_v, rtol=1e-12, atol=1e-12 * np.abs(want_v).max())


def test_the_iterations_stop_at_the_rounding_of_the_residuals(monkeypatch):
    """sp(4) in a random basis projected with its library quartic (715 terms, the dense text) from 1001 points
    off the level set: every point ends within TOL_FACTOR times 2 eps sum_j |G_j z_j| of its targets (the
    residuals by the library's Casimir objects, not the text under test). From ~1e-9 off one correction
    reaches that (Newton's quadratic convergence) and the iterations stop; from 3e-3 they go on. With
    TOL_FACTOR = 1 (2 eps) the rounding of the dense quartic's own evaluation leaves a few points above the
    tolerance, where no iteration makes progress, and the projection runs to MAX_ITER (the test can fail)."""
    import builtins

    from integrators.codegen import projection
    from integrators.reference import genhelpers
    from tests.algebras import random_basis, sp4

    alg = random_basis(sp4(), np.random.default_rng(24))
    cas, n = alg.casimirs(), alg.dim
    rng = np.random.default_rng(7)
    Z = rng.standard_normal((1001, n))
    targets = [c(Z) for c in cas]
    noise = rng.standard_normal(Z.shape)

    def project(factor, off):
        Zp = Z * (1.0 + off * noise)
        monkeypatch.setattr(projection, "TOL_FACTOR", factor)
        text = projection.CasimirProjection(projection.polynomials(alg), n).source()
        passes = []

        def counted(k):       # the text's one loop, for _pit in range(MAX_ITER - 1), after the first correction
            for i in builtins.range(k):
                passes.append(i)
                yield i
        env = dict(genhelpers.ARRAY, np=np, range=counted)
        exec(compile(text, "<projection>", "exec"), env)
        inc = env["increment"](*Zp.T, *targets)
        return Zp, Zp + np.array(inc).T, len(passes)

    for off in (1e-9, 3e-3):
        Zp, Y, passes = project(projection.TOL_FACTOR, off)
        assert passes == 1 if off < 1e-6 else passes > 1
        for c, target in zip(cas, targets):
            size = np.sum(np.abs(Zp * c.grad(Zp)), axis=-1)       # the size of the terms the residual rounds
            assert np.max(np.abs(c(Y) - target) / size) <= projection.TOL_FACTOR * 4.440892098500626e-16 * 1.5, off
    assert project(1.0, 1e-9)[2] == projection.MAX_ITER - 1
