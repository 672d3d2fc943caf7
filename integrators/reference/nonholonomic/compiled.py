"""The compiled runs of the discrete schemes: the loops of :mod:`integrators.reference.nonholonomic.kernels`,
``coordinate_kernels`` and ``vakonomic_kernel`` jitted with the ``jit`` the engine hands down
(``integrators.backends.numba_kernels.jit``; this room does not import numba or the backends), their constant
data, and the reasons a run has no compiled path.

* ``dlas_exp`` (and ``lie_rattle_exp``, the same loop) on algebras with ad_x^3 = -theta^2 ad_x and a negative
  semi-definite Killing form (so(3), se(2)); ``dlas_cay`` where S(x, y, x) = vee(XYX) stays in the algebra
  (so(3), se(2), se(3)). The engine passes ``generated`` (``integrators.backends.nonholonomic_loops``): the
  straight-line loop with simplified Newton written for the problem's data
  (:mod:`integrators.codegen.nonholonomic_source`), run instead of the generic loop (full Newton, analytic
  Jacobian), which stays for algebras above its size and for the tests;
* ``mp_lda`` and ``nh_rattle`` on problems carrying expression source (``source=``; servo.coordinates prints it
  from its symbolic equations) by the engine's generated loops (:mod:`integrators.codegen.coordinate_source`:
  no gauge term, k <= 2), else on problems built with scalar problem functions
  (``lagrange_dalembert_problem(..., scalar=(grad_V1, A1, dA1[, a1, Da1]))``, each of one q, numba-compilable,
  f(q) or f(q, out)), with the gauge term when a1, Da1 are given;
* ``dvak_mid`` on :class:`integrators.reference.nonholonomic.problems.VakonomicCoordinateData` carrying expression
  source (L*, phi as text) by the engine's generated loop (:mod:`integrators.codegen.vakonomic_source`), else on
  its scalar functions (servo.coordinates writes both).

The jitted loops are kept per process (the generic dlas loop) or on the problem data (the coordinate
loops, which bind the problem's functions, and the generated dlas loops); the first call compiles (seconds).
"""

from __future__ import annotations

import numpy as np

from ...core.errors import ConvergenceError
from ...core.result import IntegrationResult
from . import coordinate_kernels, kernels, vakonomic_kernel

_JITTED = {}


def _helpers(jit):
    key = ("helpers", id(jit))
    if key not in _JITTED:
        solve = jit(kernels.solve_small)
        dinv = jit(kernels.make_dinv(jit(kernels.beta_exp)))
        _JITTED[key] = (solve, dinv)
    return _JITTED[key]


def _plain(f):
    return f


# ---------------------------------------------------------------- the Lie-group scheme
def dlas_data(retraction, d, tau):
    """(mode, C, S, N, Pc) of the dlas loop, or a str saying why ``retraction`` has no closed form here."""
    C = np.ascontiguousarray(np.asarray(d.algebra.structure_constants, dtype=float))
    n, k = d.n, d.k
    if retraction == "exp":
        rng = np.random.default_rng(0)
        X = rng.standard_normal((4, n))
        ad = np.einsum("bi,ijk->bkj", X, C)
        s = -0.5 * np.trace(ad @ ad, axis1=-2, axis2=-1)
        cubic = np.max(np.abs(ad @ ad @ ad + s[:, None, None] * ad)) <= 1e-12 * max(1.0, float(np.max(np.abs(ad))) ** 3)
        E = np.einsum("aij,bji->ab", np.swapaxes(C, 1, 2), np.swapaxes(C, 1, 2))   # Killing form tr(ad_a ad_b)
        if not cubic or np.max(np.linalg.eigvalsh(0.5 * (E + E.T))) > 1e-12:
            return (f"the closed form of dexp^-1 needs ad_x^3 = -theta^2 ad_x with theta^2 >= 0 (so(3), se(2)); "
                    f"{d.algebra.name} does not satisfy it (dlas_cay has a compiled path on se(3))")
        mode, S = 0, np.zeros((1, 1, 1, 1))
    else:
        basis = tau.basis
        S = np.zeros((n, n, n, n))
        for i in range(n):
            for j in range(n):
                for l in range(n):
                    M = 0.5 * (basis[i] @ basis[j] @ basis[l] + basis[l] @ basis[j] @ basis[i])
                    v = tau._vee(M)
                    if np.max(np.abs(tau._hat(v) - M)) > 1e-12 * max(1.0, np.max(np.abs(M))):
                        return (f"vee(XYX) leaves the algebra {d.algebra.name} in its matrix representation: "
                                f"dcay^-1 has no closed form there")
                    S[i, j, l] = v
        mode = 1
    # an orthonormal basis N of ker A and the projection Pc onto A I^-1 m = 0
    _, _, Vt = np.linalg.svd(d.A)
    N = np.ascontiguousarray(Vt[k:].T)
    G = d.A @ d.Iinv @ d.A.T
    Pc = np.eye(n) - d.A.T @ np.linalg.solve(G, d.A @ d.Iinv)
    return mode, C, np.ascontiguousarray(S), N, Pc


def dlas_data_of(retraction, d, tau):
    """:func:`dlas_data`, kept on the problem data ``d`` (once per retraction)."""
    cache = d.__dict__.setdefault("_compiled", {})
    if ("data", retraction) not in cache:
        cache[("data", retraction)] = dlas_data(retraction, d, tau)
    return cache[("data", retraction)]


def n_saved(n, save_every):
    return n // save_every + 1 + (1 if n % save_every else 0)


def _times(t0, h, n, save_every, done):
    ks = np.arange(0, done + 1, save_every, dtype=float)
    if ks[-1] != done:
        ks = np.append(ks, float(done))
    return t0 + h * ks


def _result(name, ys, y0, t0, h, n, save_every, done, nfev):
    ts = _times(t0, h, n, save_every, done)
    ys = ys[:len(ts)].reshape((len(ts),) + y0.shape)
    if done < n:
        raise ConvergenceError(f"{name}: Newton's method did not converge in step {done + 1} (t = "
                               f"{t0 + done * h:.6g}) of the compiled run; reduce h")
    if not np.isfinite(ys.sum()) and not np.isfinite(ys).all():   # a finite sum: every entry is finite
        bad = int(np.argmin(np.isfinite(ys).reshape(len(ts), -1).all(axis=1)))
        return IntegrationResult(t=ts[:bad], y=ys[:bad], status=-1, nsteps=done, h=h, nfev=int(nfev),
                                 message=f"the solution overflowed or became NaN before t = {ts[bad]:.6g}; "
                                         f"the last finite saved state is kept; reduce h")
    return IntegrationResult(t=ts, y=ys, status=0, message="reached the end of t_span", nsteps=done, h=h,
                             nfev=int(nfev))


def run_dlas(stepper, y0, t0, h, n, save_every, jit=None, lam0=None, generated=None):
    """The dlas run by the compiled loop (``jit`` None: the same loop in plain Python, for tests); with ``lam0``
    (the multipliers at y0) the Lie-group RATTLE's run by the same loop: (result, the multipliers at the end).
    ``generated``: the engine's maker of the straight-line loop with simplified Newton
    (``integrators.backends.nonholonomic_loops.dlas_loop``; the same map, the same stop tolerance), used
    when it returns one; else the generic loop of :mod:`integrators.reference.nonholonomic.kernels`."""
    jit = jit or _plain
    d = stepper.d
    cache = d.__dict__.setdefault("_compiled", {})
    data = dlas_data_of(stepper.retraction, d, stepper.tau)
    if isinstance(data, str):
        raise ValueError(data)
    mode, C, S, N, Pc = data
    M0 = np.ascontiguousarray(np.asarray(y0, dtype=float).reshape(-1, d.n))
    K = n_saved(n, save_every)
    Y0, Pout, stride = M0, Pc, 1
    if lam0 is not None:        # the Lie-group RATTLE: carry mu^+ = m + h/2 A^T lambda, reflect by 2 P - 1
        Y0 = M0
        M0 = np.ascontiguousarray(M0 + 0.5 * h * np.asarray(lam0, dtype=float).reshape(-1, d.k) @ d.A)
        Pc = np.ascontiguousarray(2.0 * Pout - np.eye(d.n))
        N = np.eye(d.n)
        stride = 2
    loop = None
    if generated is not None:            # one generated loop per problem data, retraction and scheme
        key = ("generated", stepper.retraction, stride, generated)
        if key not in cache:
            cache[key] = generated(mode, C, S, N, Pc, Pout, d.I, d.Iinv, stride)
        loop = cache[key]
    if loop is not None:
        run, cst = loop
        ys, done, iters, Mend, njac = run(M0, Y0, float(h), int(n), int(save_every), K, cst)
        stepper.jacobians = int(njac)
    else:
        key = ("dlas", id(jit))
        if key not in _JITTED:
            solve, dinv = _helpers(jit) if jit is not _plain else (kernels.solve_small,
                                                                   kernels.make_dinv(kernels.beta_exp))
            _JITTED[key] = jit(kernels.make_dlas_run(dinv, solve))
        ys, done, iters, Mend = _JITTED[key](M0, float(h), int(n), int(save_every), K, d.I, d.Iinv, N, Pc, C, S,
                                             mode, Pout, Y0, stride)
    stepper.nfev_total = int(iters)
    res = _result(stepper.name, ys, np.asarray(y0, dtype=float), t0, h, n, save_every, int(done), iters)
    if lam0 is None:
        return res
    # lambda at the end from mu^+ - m = h/2 A^T lambda (A has full rank)
    mend = ys[len(res.t) - 1].reshape(Mend.shape)
    lam = np.linalg.lstsq(d.A.T, ((Mend - mend) * (2.0 / h)).T, rcond=None)[0].T
    return res, lam.reshape(np.shape(y0)[:-1] + (d.k,))


# ---------------------------------------------------------------- the coordinate schemes
def coordinate_reason(d, scheme):
    """None when the coordinate ``scheme`` has a compiled path on the data ``d``, else why not."""
    sc = getattr(d, "scalar", None)
    if getattr(d, "gauge", None) is not None and (sc is None or sc[3] is None):
        return ("the gauge term a(q) . v needs the scalar a1(q), Da1(q) for the compiled loop (lagrange_dalembert_problem"
                "(..., scalar=(grad_V1, A1, dA1, a1, Da1)))")
    src = getattr(d, "source", None)
    if sc is None and src is not None and getattr(d, "gauge", None) is None and d.k <= 2 and (
            scheme != "mp" or "dA" in src):
        return None                      # the generated loop of integrators.codegen.coordinate_source
    if sc is None:
        return ("the problem has no scalar problem functions (lagrange_dalembert_problem(..., scalar=(grad_V1, "
                "A1, dA1)), numba-compilable functions of one q)")
    if scheme == "mp" and sc[2] is None:
        return "mp_lda's compiled Newton needs the scalar dA1(q) (k, n, n) too"
    return None


def _into(f, ndim):
    """f(q, out) from a scalar problem function f(q) returning an array of ``ndim`` dimensions."""
    if ndim == 1:
        def g(q, out):
            out[:] = f(q)
    elif ndim == 2:
        def g(q, out):
            out[:, :] = f(q)
    else:
        def g(q, out):
            out[:, :, :] = f(q)
    return g


def _coordinate_loop(d, scheme, jit):
    cache = d.__dict__.setdefault("_compiled", {})
    key = (scheme, id(jit))
    if key not in cache:
        solve = kernels.solve_small if jit is _plain else _helpers(jit)[0]
        fs = []
        for f, nd, writes in zip(d.scalar, (1, 2, 3, 1, 2), d.scalar_writes):
            if f is not None:
                f = f if jit is _plain else jit(f)
                if not writes:                   # f(q) returns a new array: the loops' form f(q, out) copies it
                    f = _into(f, nd) if jit is _plain else jit(_into(f, nd))
            fs.append(f)
        g, A, dA, a, Da = fs
        k = d.k
        if d.gauge is not None:
            maker = (coordinate_kernels.make_mp_gauge_run(solve, g, A, dA, a, Da, k) if scheme == "mp"
                     else coordinate_kernels.make_rattle_gauge_run(solve, g, A, a, Da, k))
        else:
            maker = (coordinate_kernels.make_mp_run(solve, g, A, dA, k) if scheme == "mp"
                     else coordinate_kernels.make_rattle_run(solve, g, A, k))
        cache[key] = jit(maker)
    return cache[key]


def _generated_loop(d, scheme, generated):
    """The engine's generated loop of ``scheme`` on the problem's expression source (kept on the data), or
    None (no source, a gauge term, no maker, or k above what it writes)."""
    loop = None
    if generated is not None and getattr(d, "source", None) is not None and d.gauge is None and (
            scheme != "mp" or "dA" in d.source):
        cache = d.__dict__.setdefault("_compiled", {})
        key = ("generated", scheme, generated)
        if key not in cache:
            cache[key] = generated(scheme, d.source, d.Minv)
        loop = cache[key]
    if loop is None and d.scalar is None:
        raise ValueError(f"{scheme}: no compiled loop from the expression source alone here (the generated loops "
                         f"need the engine's maker, no gauge term, k <= 2 and, for mp_lda, dA); give "
                         f"scalar=(grad_V1, A1, dA1) for the generic loop")
    return loop


def run_mp(stepper, y0, t0, h, n, save_every, jit=None, generated=None):
    """mp_lda's run: the generated loop (``generated``: the engine's maker,
    ``integrators.backends.nonholonomic_loops.coordinate_loop``) where the problem carries expression source,
    else the generic loop on its scalar functions (``jit`` None: plain Python, for tests)."""
    jit = jit or _plain
    d = stepper.d
    Y0 = np.ascontiguousarray(np.asarray(y0, dtype=float).reshape(-1, 2 * d.n))
    K = n_saved(n, save_every)
    loop = _generated_loop(d, "mp", generated)
    if loop is not None:
        ys, done, iters = loop(Y0, float(h), int(n), int(save_every), K)
    else:
        ys, done, iters = _coordinate_loop(d, "mp", jit)(Y0, float(h), int(n), int(save_every), K, d.M, d.Minv)
    stepper.nfev_total = int(iters)
    return _result(stepper.name, ys, np.asarray(y0, dtype=float), t0, h, n, save_every, int(done), iters)


def run_rattle(stepper, y0, lam0, t0, h, n, save_every, jit=None, generated=None):
    """(result, the multipliers at the end); the generated loop where the problem carries expression source
    (see :func:`run_mp`)."""
    jit = jit or _plain
    d = stepper.d
    Y0 = np.ascontiguousarray(np.asarray(y0, dtype=float).reshape(-1, 2 * d.n))
    L0 = np.ascontiguousarray(np.asarray(lam0, dtype=float).reshape(-1, d.k))
    K = n_saved(n, save_every)
    loop = _generated_loop(d, "rattle", generated)
    if loop is not None:
        out = loop(Y0, L0, float(h), int(n), int(save_every), K)
    else:
        out = _coordinate_loop(d, "rattle", jit)(Y0, L0, float(h), int(n), int(save_every), K, d.M, d.Minv)
    ys, Lend, done = out[:3]
    iters = n + (int(out[3]) if len(out) > 3 else 0)       # with a gauge term: the Newton solves for q_(k+1)
    stepper.nfev_total = iters
    y0 = np.asarray(y0, dtype=float)
    res = _result(stepper.name, ys, y0, t0, h, n, save_every, int(done), iters)
    return res, Lend.reshape(y0.shape[:-1] + (d.k,))


def result_of(name, ys, y0, t0, h, n, save_every):
    """The result of a complete run (``ys`` (K, ...) saved every ``save_every`` steps of n)."""
    return _result(name, ys, y0, t0, h, n, save_every, n, n)


def run_dvak(stepper, y0, t0, h, n, save_every, jit=None, generated=None):
    """dvak_mid's run: the engine's generated loop (``generated``: ``integrators.backends.nonholonomic_loops.
    vakonomic_loop``; analytic Jacobians, simplified Newton, the same map and stop tolerance) where the problem
    carries expression source, else the loop of
    :func:`integrators.reference.nonholonomic.vakonomic_kernel.make_dvak_run` on its scalar functions (``jit``
    None: plain Python, for tests); None when neither applies (no scalar functions and no generated loop: the
    maker's limit of unknowns)."""
    jit = jit or _plain
    d = stepper.d
    cache = d.__dict__.setdefault("_compiled", {})
    Y0 = np.ascontiguousarray(np.asarray(y0, dtype=float).reshape(-1, 2 * d.n + d.k))
    loop = None
    if generated is not None and getattr(d, "source", None) is not None:
        key = ("generated", generated)
        if key not in cache:
            cache[key] = generated(d.source, d.n, d.k)
        loop = cache[key]
    if loop is not None:
        run, cst = loop
        ys, done, iters, njac = run(Y0, float(h), int(n), int(save_every), n_saved(n, save_every), cst)
        stepper.jacobians = int(njac)
        stepper.nfev_total = int(iters)
        return _result(stepper.name, ys, np.asarray(y0, dtype=float), t0, h, n, save_every, int(done), iters)
    if d.scalar is None:             # neither loop applies (the stepper says why)
        return None
    key = ("dvak", id(jit))
    if key not in cache:
        solve = kernels.solve_small if jit is _plain else _helpers(jit)[0]
        fs = tuple(f if jit is _plain else jit(f) for f in d.scalar)
        cache[key] = vakonomic_kernel.make_dvak_run(solve, *fs, d.n, d.k, jit)
    ys, done, iters = cache[key](Y0, float(h), int(n), int(save_every), n_saved(n, save_every))
    stepper.nfev_total = int(iters)
    return _result(stepper.name, ys, np.asarray(y0, dtype=float), t0, h, n, save_every, int(done), iters)


# ---------------------------------------------------------------- the discrete vakonomic / second-kind map
def dvak_reason(retraction, d, tau):
    """None when ``dvak_<retraction>`` has a generated loop on the data ``d``, else why not."""
    data = dlas_data_of(retraction, d, tau)
    return data if isinstance(data, str) else None


def run_dvak_lie(stepper, y0, t0, h, n, save_every, generated):
    """The run of the discrete vakonomic / second-kind map (``dvak_exp``, ``dvak_cay``) by the engine's
    generated straight-line loop (``generated``: ``integrators.backends.nonholonomic_loops.dvak_loop``; the
    same map and stop tolerance as the numpy stepper, simplified Newton in (eta, lambda)), or None where the
    maker writes none (above its largest algebra)."""
    d = stepper.d
    data = dlas_data_of(stepper.retraction, d, stepper.tau)
    if isinstance(data, str):
        raise ValueError(data)
    mode, C, S, N, _ = data
    cache = d.__dict__.setdefault("_compiled", {})
    key = ("generated_dvak", stepper.retraction, generated)
    if key not in cache:
        G0 = np.concatenate([N.T @ stepper.W, np.linalg.solve(d.R, d.A @ d.Iinv)], axis=0)
        cache[key] = generated(mode, C, S, N, d.I, d.B, G0)
    if cache[key] is None:
        return None
    run, cst = cache[key]
    M0 = np.ascontiguousarray(np.asarray(y0, dtype=float).reshape(-1, d.n))
    K = n_saved(n, save_every)
    ys, done, iters, _, njac = run(M0, M0, float(h), int(n), int(save_every), K, cst)
    stepper.jacobians = int(njac)
    stepper.nfev_total = int(iters)
    return _result(stepper.name, ys, np.asarray(y0, dtype=float), t0, h, n, save_every, int(done), iters)
