"""Lyapunov spectra on the leaf, their running estimates, a convergence check and MEGNO.

:func:`lyapunov_spectrum` is Benettin's method (Benettin, Galgani, Giorgilli and Strelcyn 1980;
Shimada and Nagashima 1979): the state y and n tangent vectors V solve

    y' = F(t, y),   V' = DF(t, y) V,

integrated together by the Runge-Kutta tableau of ``method`` (an explicit Runge-Kutta method applied to
the variational system gives exactly the derivative of its own step map, so the spectrum is that of the
method's map); every ``dt`` the tangent vectors are re-orthonormalised by a QR decomposition V = Q R
(diagonal of R made positive) and log R_ii accumulated:

    lambda_i(t_k) = (1 / (t_k - t_tr)) sum_{m <= k} log R_ii(t_m).

Leaf (Lie-Poisson and constrained systems): the first p = n - r vectors start in the tangent space of
the leaf through y0 (the complement of its r normals: Casimir gradients, rows of the linear invariants,
see :func:`integrators.analysis.phase_space.tangent.leaf_normals`) and are projected back onto it at every QR step
(removing the drift of the method); the flow maps the leaf into itself, so the first p exponents are
those of the flow on the leaf (``exponents``, largest first) and the remaining r, those of the quotient
flow across the leaves, are reported apart (``transverse``: zero on a Lie-Poisson system, whose
Casimirs are constant). Exponents along the Casimirs are therefore absent from ``exponents``.

MEGNO (Cincotta and Simo 2000): with delta(t) the first tangent vector, Y(t) = (2/t) int_0^t s
(delta' . delta / |delta|^2) ds = 2 (L(t) - (1/t) int_0^t L ds), L = log |delta|, and its mean
<Y>(t) = (1/t) int_0^t Y ds (trapezoid rule on the QR grid). <Y> tends to 0 on a stable periodic
(isochronous) orbit, to 2 on a quasi-periodic one and grows like lambda t / 2 on a chaotic one.

The loop runs as the generated code of :mod:`integrators.codegen.tangent_source` (with numpy, one
trajectory at a time batched over time: :mod:`integrators.backends.tangent_blocks`) for a recognised
coadjoint problem (the variational equation from the structure constants, stepped with the state by
the same tableau; the leaf projection and a modified Gram-Schmidt QR in the same code; Python floats,
numpy columns or numba, a ``prange`` over the trajectories), and for an ODE or time-dependent problem
whose field is quadratic in the state at every t (the forced sleighs, Lorenz, a gyrostat with a varying
rotor: the coefficients tabled at the stage times, :mod:`integrators.codegen.timed_source`, the Jacobian
the polynomial's own derivative), and as the numpy loop below otherwise (``fast=False`` forces it: both
agree to round-off). ``k`` < n keeps the k largest exponents only.

Convergence check: the running estimates of the last quarter of the run must stay within
``tol * max(1, max |lambda|)`` of each other; otherwise ``converged`` is False, ``status`` is 1 and the
message says by how much (run longer).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...backends import auto_compile, fastpath, numba_kernels, tangent_runner
from ...core.errors import IntegrationInputError, MethodError
from ...methods import RungeKutta, get_method
from ...core import validation
from .tangent import check_problem, leaf_normals, tangent_field

#: how many running estimates are kept by default (the QR steps are thinned to at most this many)
MAX_SAVED = 2000


@dataclass
class LyapunovResult:
    """The outcome of :func:`lyapunov_spectrum`.

    ``exponents``: (p,) or (B, p), largest first, on the leaf; ``transverse``: (r,) or (B, r) across the
    leaves; ``t`` (K,) the times of the running estimates ``running`` (K, [B,] p) and
    ``running_transverse``; ``megno`` and ``running_megno`` (mean MEGNO <Y>); ``converged`` per trajectory;
    ``status`` 0 (converged), 1 (not converged), -1 (the solution overflowed); ``per_period``: the
    exponents of the stroboscopic map (exponents * period) when a period was given."""

    exponents: NDArray[np.float64]
    transverse: NDArray[np.float64]
    t: NDArray[np.float64]
    running: NDArray[np.float64]
    running_transverse: NDArray[np.float64]
    megno: NDArray[np.float64]
    running_megno: NDArray[np.float64]
    converged: NDArray[np.bool_]
    status: int
    message: str
    y: NDArray[np.float64]
    method: str
    h: float
    dt: float
    jacobian: str
    period: float | None = None
    nsteps: int = 0
    wall_time: float = 0.0
    backend: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def largest(self) -> NDArray[np.float64]:
        """The largest exponent (per trajectory of an ensemble)."""
        return self.exponents[..., 0]

    @property
    def per_period(self) -> NDArray[np.float64] | None:
        return None if self.period is None else self.exponents * self.period

    @property
    def kaplan_yorke(self) -> NDArray[np.float64]:
        """The Kaplan-Yorke dimension of the leaf spectrum, j + sum_{i<=j} lambda_i / |lambda_{j+1}|."""
        lam = np.atleast_2d(self.exponents)
        out = np.empty(lam.shape[0])
        for b, row in enumerate(lam):
            s = np.cumsum(row)
            j = int(np.sum(s >= 0))
            out[b] = float(len(row)) if j == len(row) else (0.0 if j == 0 else j + s[j - 1] / abs(row[j]))
        return out if np.ndim(self.exponents) == 2 else out[0]


def _tableau(method, problem):
    m = get_method(method, problem)
    if not (isinstance(m, RungeKutta) and m.fixed_step and not m.project):
        raise MethodError(f"lyapunov_spectrum integrates the tangent flow with an explicit Runge-Kutta tableau: "
                          f"method {m.name!r} has none; use rk4 (or rkmk4, rkmk2, lie_euler: their tableaux)")
    return m


def rk_tangent_step(tf, m, t, y, V, h):
    """One step of the tableau of ``m`` on (y, V): y' = F, V' = DF V (vectorized over the batch)."""
    ks, Ks = [], []
    for i, row in enumerate(m.A):
        yi, Vi = y, V
        for a, k, K in zip(row, ks, Ks):
            if a != 0.0:
                yi = yi + (h * a) * k
                Vi = Vi + (h * a) * K
        ti = t + m.c[i] * h
        ks.append(np.asarray(tf.f(ti, yi), dtype=float))
        Ks.append(tf.jvp(ti, yi, Vi))
    y1, V1 = y, V
    for b, k, K in zip(m.b, ks, Ks):
        if b != 0.0:
            y1 = y1 + (h * b) * k
            V1 = V1 + (h * b) * K
    return y1, V1


def rk_step(tf, m, t, y, h):
    """One step of the tableau on y alone (the transient)."""
    ks = []
    for i, row in enumerate(m.A):
        yi = y
        for a, k in zip(row, ks):
            if a != 0.0:
                yi = yi + (h * a) * k
        ks.append(np.asarray(tf.f(t + m.c[i] * h, yi), dtype=float))
    for b, k in zip(m.b, ks):
        if b != 0.0:
            y = y + (h * b) * k
    return y


def _project_out(N, V):
    """V minus its component along the columns of N (..., n, r)."""
    G = np.swapaxes(N, -1, -2) @ N
    return V - N @ np.linalg.solve(G, np.swapaxes(N, -1, -2) @ V)


def initial_frame(normals, y):
    """(V0, p): an orthonormal frame whose first p columns span the complement of the normals at y."""
    B, n = y.shape
    if normals is None:
        return np.broadcast_to(np.eye(n), (B, n, n)).copy(), n
    N = np.asarray(normals(y), dtype=float).reshape(B, n, -1)
    r = N.shape[-1]
    s = np.linalg.svd(N, compute_uv=False)
    if np.any(s[:, -1] <= 1e-10 * np.maximum(s[:, 0], 1e-300)):
        b = int(np.argmin(s[:, -1] / np.maximum(s[:, 0], 1e-300)))
        raise IntegrationInputError(f"the leaf through y0[{b}] = {y[b]} is singular (its {r} normals, Casimir "
                                    f"gradients or linear invariants, are dependent there): give another y0 "
                                    f"or leaf=None")
    Qf, _ = np.linalg.qr(N, mode="complete")
    return np.concatenate([Qf[..., r:], Qf[..., :r]], axis=-1), n - r


def lyapunov_spectrum(problem: Any, y0: Any, t_end: float, dt: float | None = None, h: float | None = None,
                      method: str = "rk4", t0: float = 0.0, transient: float = 0.0, leaf: Any = "auto",
                      jac: Any = None, period: float | None = None, tol: float = 1e-2,
                      save_every: int | None = None, backend: str = "auto", fast: bool = True,
                      k: int | None = None) -> LyapunovResult:
    """The Lyapunov spectrum of ``problem`` along the orbit(s) from ``y0`` (Benettin's method, see the
    module docstring).

    Parameters
    ----------
    problem : ODEProblem y' = f(t, y) (time-dependent allowed) or CoadjointProblem.
    y0 : (n,) or (B, n): one orbit or an ensemble (one spectrum per orbit, vectorized).
    t_end : length of the averaging after the transient (the run covers t0 .. t0 + transient + t_end).
    dt : time between QR re-orthonormalisations (default: ``period`` when given, else 1.0); a whole
        number of steps h.
    h : step of the method (default dt / 10, rounded so that dt / h is an integer).
    method : an explicit Runge-Kutta method ("rk4") or an RKMK method, whose tableau is used on the
        variational system; other methods raise MethodError.
    transient : time integrated before averaging (the state only).
    leaf : "auto", None or a callable of normals (see :func:`integrators.analysis.phase_space.tangent.leaf_normals`).
    jac : callable (t, y) -> (..., n, n), the Jacobian of the vector field (default: closed form for an
        affine coadjoint problem, ``problem.jac``, else central differences).
    period : the period of a time-periodic vector field (default ``problem.period``): the stroboscopic exponents are
        ``per_period`` = exponents * period.
    tol : the convergence check's tolerance (relative to max(1, max |lambda|)).
    save_every : keep the running estimates every save_every QR steps (default: at most 2000 kept).
    backend : "auto" (default), "numpy" or "numba", as in :func:`integrators.integrate`: a recognised
        coadjoint problem (affine velocity, no forcing or a multiplier forcing, autonomous; no ``jac``,
        ``leaf`` "auto" or None), and an ODE or time-dependent problem whose field is a polynomial of
        degree <= 2 in the state (its coefficients tabled at the stage times,
        :mod:`integrators.codegen.timed_source`), run the generated tangent flow of
        :mod:`integrators.codegen.tangent_source` (compiled by numba; with numpy, up to 8 trajectories each
        batched over time, :mod:`integrators.backends.tangent_blocks`, larger ensembles as numpy columns).
        "auto" with numba installed runs the compiled flow whenever that needs no compiler: loaded in
        this process, or (runs of at least :data:`integrators.backends.tangent_runner.LOAD_WORK`) in numba's
        disk cache; otherwise the generated numpy code, and the compile is queued in the background
        (the rules of :mod:`integrators.backends.auto_compile`, ``LIEDYN_AUTO_COMPILE``). backend="numba"
        on a flow neither loaded nor in numba's disk cache runs the generated numpy code while a child process
        compiles it (:func:`integrators.backends.auto_compile.numba_or_cold`; ``LIEDYN_AUTO_COMPILE=wait``
        compiles in the call). Other problems run
        the numpy loop, and backend="numba" for them raises MethodError saying why. ``result.backend``
        says which ran ("numba", "numpy": the generated code, "reference": the numpy loop).
    fast : False runs the numpy loop (the reference) whatever the problem.
    k : the number of exponents (default all n): the k largest, from k tangent vectors (the first
        min(k, p) on the leaf, the rest across it), at about (1 + 2k) / (1 + 2n) of the cost of the
        whole spectrum (k = 1: the largest exponent, as for the charts of regimes).
    """
    start = time.perf_counter()
    m = _tableau(method, problem)
    n = check_problem(problem, jac)     # the tangent field itself is built only for the numpy loop
    y0 = validation.real_array(y0, "y0")
    if y0.shape[-1:] != (n,) or y0.ndim > 2 or not np.all(np.isfinite(y0)):
        raise IntegrationInputError(f"y0 must be finite, of shape ({n},) or (B, {n}); got shape {y0.shape}")
    single = y0.ndim == 1
    y = np.atleast_2d(y0).copy()
    B = y.shape[0]
    t_end = validation.positive(t_end, "t_end")
    transient = float(transient)
    if not math.isfinite(transient) or transient < 0:
        raise IntegrationInputError(f"transient must be a finite time >= 0, got {transient!r}")
    if period is None:
        period = getattr(problem, "period", None)   # the problem's own period (ODEProblem / CoadjointProblem)
    if period is not None:
        period = validation.positive(period, "period")
    dt = validation.positive(dt if dt is not None else (period or 1.0), "dt")
    if h is None:
        h = dt / 10.0
    h = validation.positive(h, "h")
    sub = max(1, int(round(dt / h)))
    if abs(sub * h - dt) > 1e-9 * dt and h < dt:
        sub = math.ceil(dt / h)
    h = dt / sub
    nqr = int(round(t_end / dt))
    if nqr < 4:
        raise IntegrationInputError(f"t_end = {t_end} covers {nqr} QR intervals of dt = {dt}: at least 4 are "
                                    f"needed (a larger t_end or a smaller dt)")
    validation.step_budget(nqr * sub)
    if save_every is None:
        save_every = max(1, math.ceil(nqr / MAX_SAVED))
    save_every = validation.step_count(save_every, "save_every")
    tol = validation.positive(tol, "tol")
    normals = leaf_normals(problem, leaf)
    if k is None:
        k = n
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise IntegrationInputError(f"k (the number of exponents) must be an integer from 1 to {n}, got {k!r}")
    k = int(k)
    fastpath.check_backend_args(backend, fast)
    why = tangent_runner.why_not(problem, jac, leaf, y, float(t0), period) if fast else \
        "fast=False asks for the numpy reference loop"
    if why is not None:
        fastpath.require_compiled(backend, why)
        tf = tangent_field(problem, jac)
        out = _reference_loop(tf, m, normals, y, float(t0), h, sub, nqr, save_every, dt, int(round(transient / h)), k)
        used, jkind = "reference", tf.kind
    else:
        jkind = "structure constants"    # the generated tangent flow (tangent_source)
        ntr = int(round(transient / h))
        out = _generated_loop(problem, m, normals, leaf, y, float(t0), h, sub, nqr, save_every, dt, ntr, backend, k,
                              period)
        if out is None:     # a time-dependent field whose coefficient table would be too large
            why = (f"the coefficient table of {problem.name} over {ntr + nqr * sub} steps is too large (give the "
                   f"problem a period that is a whole number of steps h)")
            fastpath.require_compiled(backend, why)
            tf = tangent_field(problem, jac)
            out = _reference_loop(tf, m, normals, y, float(t0), h, sub, nqr, save_every, dt, ntr, k)
            used, jkind = "reference", tf.kind
        else:
            used = out[-1]
            out = out[:-1]
            if tangent_runner.timed(problem):
                jkind = "quadratic in the state (coefficients tabled at the stage times)"
    y, logs, done, ts_a, run_a, runM_a, intY, status, message, p, tstart = out
    p = min(p, k)     # the leaf's columns among the k
    if np.any(done == 0):
        raise IntegrationInputError(f"the tangent flow overflowed in the first QR interval: {message}")
    tk = done * dt
    lam = logs / tk[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN columns of trajectories that stopped early
        last = ts_a >= tstart + 0.75 * float(tk.max())
        if np.count_nonzero(last) < 2:
            last = np.arange(len(ts_a)) >= len(ts_a) - 2
        if p:
            sel = run_a[last][..., :p]
            if np.all(done == done[0]):     # no trajectory stopped early: no NaN rows
                spread = (sel.max(axis=0) - sel.min(axis=0)).max(axis=-1)
            else:
                spread = (np.nanmax(sel, axis=0) - np.nanmin(sel, axis=0)).max(axis=-1)
        else:
            spread = np.zeros(B)
    bound = tol * np.maximum(1.0, np.abs(lam[:, :p]).max(axis=-1) if p else 1.0)
    converged = spread <= bound
    if status == 0:
        if np.all(converged):
            message = (f"converged: the running estimates of the last quarter stay within {float(spread.max()):.3g} "
                       f"(tolerance {float(bound.min()):.3g})")
        else:
            status = 1
            b = int(np.argmax(np.where(np.isnan(spread), np.inf, spread - bound)))
            message = (f"not converged: {int(np.count_nonzero(~converged))} of {B} spectra still move by up to "
                       f"{float(spread[b]):.3g} over the last quarter of the run (tolerance {float(bound[b]):.3g}); "
                       f"run longer (larger t_end) or raise tol")
    if p < 2 or np.all(lam[:, 1:p] <= lam[:, :p - 1]):
        order, ex = None, lam[:, :p]     # the QR keeps the columns largest first: nothing to reorder
    else:
        order = np.argsort(-lam[:, :p], axis=-1, kind="stable")
        ex = np.take_along_axis(lam[:, :p], order, axis=-1)
    tr = np.sort(lam[:, p:], axis=-1)[:, ::-1]
    if order is None or not len(run_a):
        run_leaf = run_a[..., :p] if len(run_a) else run_a
    elif B == 1:
        run_leaf = run_a[..., order[0]]      # one orbit: a plain index (take_along_axis costs ~0.1 ms)
    else:
        run_leaf = np.take_along_axis(run_a[..., :p], order[None], axis=-1)
    run_tr = np.sort(run_a[..., p:], axis=-1)[..., ::-1] if len(run_a) else run_a
    pick = (lambda a: a[0]) if single else (lambda a: a)
    pickr = (lambda a: a[:, 0]) if single else (lambda a: a)
    return LyapunovResult(
        exponents=pick(ex), transverse=pick(tr), t=ts_a, running=pickr(run_leaf), running_transverse=pickr(run_tr),
        megno=pick(intY / tk), running_megno=pickr(runM_a), converged=pick(converged), status=status,
        message=message, y=pick(y), method=m.name, h=h, dt=dt, jacobian=jkind, period=period,
        nsteps=int(done.max()) * sub + int(round(transient / h)), wall_time=time.perf_counter() - start,
        backend=used, info={"leaf_dimension": p, "qr_steps": int(done.min()) if single else done, "trajectories": B})


def _reference_loop(tf, m, normals, y, t, h, sub, nqr, save_every, dt, ntr, ncols):
    """The numpy loop (any vector field, Jacobian and leaf): transient, frame (its first ``ncols``
    vectors), QR intervals."""
    B, n = y.shape
    status, message = 0, ""
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(ntr):
            y = rk_step(tf, m, t, y, h)
            t += h
        if not np.all(np.isfinite(y)):
            raise IntegrationInputError(f"the solution overflowed during the transient (before t = {t:.6g})")
        V, p = initial_frame(normals, y)
        V = np.ascontiguousarray(V[..., :ncols])
        q = min(p, ncols)
        logs = np.zeros((B, ncols))
        tstart = t
        L_prev, intL, intY, Y_prev = np.zeros(B), np.zeros(B), np.zeros(B), np.zeros(B)
        ts, run, runM = [], [], []
        done = 0
        for k in range(1, nqr + 1):
            for _ in range(sub):
                y, V = rk_tangent_step(tf, m, t, y, V, h)
                t += h
            if normals is not None and p < n:
                V[..., :q] = _project_out(np.asarray(normals(y), dtype=float).reshape(B, n, -1), V[..., :q])
            Qm, R = np.linalg.qr(V)
            d = np.diagonal(R, axis1=-2, axis2=-1)
            if not (np.all(np.isfinite(d)) and np.all(np.isfinite(y))) or np.any(d == 0):
                status, message = -1, (f"the solution or its tangent vectors overflowed or became singular in the "
                                       f"QR interval ending at t = {t:.6g}; the estimates up to there are kept")
                break
            V = Qm * np.sign(d)[:, None, :]
            logs += np.log(np.abs(d))
            done = k
            tk = k * dt
            L = logs[:, 0]
            intL += 0.5 * dt * (L + L_prev)
            Yk = 2.0 * (L - intL / tk)
            intY += 0.5 * dt * (Yk + Y_prev)
            L_prev, Y_prev = L.copy(), Yk
            if k % save_every == 0 or k == nqr:
                ts.append(tstart + tk)
                run.append(logs / tk)
                runM.append(intY / tk)
    return (y, logs, np.full(B, done), np.asarray(ts), np.asarray(run), np.asarray(runM), intY, status, message,
            p, tstart)


def _generated_loop(problem, m, normals, leaf, y, t, h, sub, nqr, save_every, dt, ntr, backend, ncols, period=None):
    """The same loop by the generated code of :mod:`integrators.codegen.tangent_source` (a recognised
    coadjoint problem, or a field quadratic in the state with coefficients tabled at the stage times:
    :mod:`integrators.codegen.timed_source`): the transient and the QR intervals compiled, the initial
    frame in numpy. None when the coefficient table would be too large; the outputs end with the
    backend that ran ("numba" or "numpy": backend "auto" takes numba when the compiled flow can run
    without waiting on a compiler, :func:`integrators.backends.tangent_runner.choose_auto`)."""
    B, n = y.shape
    r = 0 if normals is None else np.asarray(normals(y[:1]), dtype=float).reshape(1, n, -1).shape[-1]
    pl = tangent_runner.plan(problem, m.tableau, y, leaf, r, ncols, t, period)
    timing = None
    if pl.timed is not None:
        tb = tangent_runner.table(pl, h, t, ntr + nqr * sub, period)
        if tb is None:
            return None
        timing = (tb[0], tb[1], 0)
    work = B * (ntr + nqr * sub) * (ncols + 1)
    if backend == "auto" and numba_kernels.available():
        be = tangent_runner.choose_auto(pl, B, work, timing)
    elif backend == "numba" and numba_kernels.available():
        be = tangent_runner.choose_numba(pl, B, timing)
    else:
        be = fastpath.resolve_backend(backend)
    mode = "numba" if be == "numba" else ("scalar" if B <= fastpath.SMALL_BATCH else "array")
    acc = np.zeros((B, ncols + 4))
    if ntr:
        eye = np.broadcast_to(np.eye(n)[:, :ncols], (B, n, ncols))
        y, _, _, _, _, _ = tangent_runner.run(pl, y, eye, acc, ntr, sub, 0, 1, h, dt, mode, timing)
        t += ntr * h
        if not np.all(np.isfinite(y)):
            raise IntegrationInputError(f"the solution overflowed during the transient (before t = {t:.6g})")
    if timing is not None:
        timing = (timing[0], timing[1], ntr)
    V, p = initial_frame(normals, y)
    y, V, acc, run, runM, done = tangent_runner.run(pl, y, V[..., :ncols], acc, 0, sub, nqr, save_every, h, dt,
                                                    "blocks" if mode == "scalar" else mode, timing, normals)
    ks = np.arange(save_every, nqr + 1, save_every, dtype=float)     # the saved intervals
    if nqr % save_every:
        ks = np.append(ks, float(nqr))
    keep = ks <= done.max()
    status, message = 0, ""
    if np.any(done < nqr):
        b = int(np.argmin(done))
        status, message = -1, (f"the solution or its tangent vectors overflowed or became singular in the QR "
                               f"interval ending at t = {t + (done[b] + 1) * dt:.6g} (trajectory {b}; "
                               f"{int(np.count_nonzero(done < nqr))} of {B} stopped early); the estimates up to "
                               f"there are kept")
    if backend == "numba" and be != "numba":   # a cold call: numpy while the tangent flow compiles elsewhere
        be = "numpy" + auto_compile.NUMBA_COLD_NOTE
    return (y, acc[:, :ncols], done, t + ks[keep] * dt, run[keep], runM[keep], acc[:, ncols + 2], status, message,
            p, t, be)
