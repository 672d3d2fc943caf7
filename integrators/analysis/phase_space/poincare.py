"""Poincare sections: crossings of a hyperplane a . y = b or of a surface g(y) = 0, and stroboscopic maps.

:func:`poincare_section` integrates the orbits (an ensemble at once) with a fixed-step method of
:func:`integrators.integrate` (the generated fast path where it applies), in chunks of steps, and finds
the steps [t_k, t_k + h] over which g changes sign in the chosen direction (from g < 0 to g > 0 for
``direction=+1``: for a hyperplane, crossings in the direction of a). Each crossing is then located on
the method's own continuous extension, one step of the method from the step's start, y(s) =
Phi_s(t_k, y_k), 0 < s <= h: the root s* of g(Phi_s(y_k)) is bracketed and found by the Illinois
variant of regula falsi (Dowell and Jarratt 1971), vectorized over all crossings of the chunk, until
|g| <= xtol * (1 + |a| |y|) (default 1e-13) or the bracket is a few ulps wide. The point Phi_{s*}(y_k) is
an image of the method's map, so it keeps what the method keeps: a Casimir for a Lie-Poisson method, the
energy and |m|^2 for Moser-Veselov.

Many orbits of a recognised coadjoint problem crossing a hyperplane run, with numba, the compiled
section of :mod:`integrators.codegen.section_source` instead (:mod:`integrators.backends.section_runner`:
a ``numba.prange`` over the orbits, for a tableau in rk form 16 orbits stepped together by one
vectorizable loop; every orbit steps, watches a . y - b and locates its crossings by the same Illinois
iteration on the one-step map inside the loop; nothing but the crossings is stored). A time-dependent
problem's orbits are stepped by :func:`integrators.integrate` (the generated fixed-step loop of a field
quadratic in the state, :mod:`integrators.backends.timed_runner`) and its crossings located in numpy (the
stage times of a step of size s < h are off the coefficient table).

A stroboscopic map (``section="stroboscopic"``, with ``period`` T) records y(t0 + k T): the step is
T / m for an integer m and every m-th step is saved.

The result (:class:`PoincareResult`) keeps, per orbit, the crossing states, their times and the values
of the problem's invariants there; ``plot`` draws two coordinates of the points.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...backends import auto_compile, fastpath, section_runner
from ...engine.driver import integrate
from ...core.errors import IntegrationInputError, MethodError
from ...methods import RungeKutta, get_method
from ...reference.stepping import make_stepper
from ...core import validation

#: floats per chunk of saved steps (steps x orbits x dim) held at once
CHUNK_FLOATS = 4_000_000


@dataclass
class PoincareResult:
    """Crossings of a section. ``points``: one (K_b, n) array per orbit (a single array for one orbit);
    ``times``: their times; ``invariants``: name -> values at the points (per orbit); ``residual``: the
    largest |g| at the located points; ``status`` 0, or -1 when an orbit overflowed (its crossings up to
    there are kept) with ``message``."""

    points: Any
    times: Any
    invariants: dict[str, Any]
    residual: float
    status: int
    message: str
    method: str
    h: float
    section: str
    wall_time: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    backend: str = "numpy"

    def plot(self, i: int = 0, j: int = 1, ax: Any = None, orbits: Any = None, **kw: Any) -> Any:
        """Scatter of coordinates i and j of the points (all orbits, or the indices ``orbits``)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 5))
        pts = [self.points] if isinstance(self.points, np.ndarray) else list(self.points)
        sel = range(len(pts)) if orbits is None else np.atleast_1d(orbits)
        kw = {"s": 1.0, **kw}
        for b in sel:
            P = pts[b]
            if len(P):
                ax.scatter(P[:, i], P[:, j], **kw)
        ax.set_xlabel(f"y[{i}]")
        ax.set_ylabel(f"y[{j}]")
        ax.set_title(f"Poincare section ({self.section})")
        return ax


def _section(section, n, direction):
    """(g(y) -> (...), description, hyperplane normal or None)."""
    if direction not in (1, -1, 0):
        raise IntegrationInputError(f"direction must be +1, -1 or 0 (both), got {direction!r}")
    if callable(section):
        return section, getattr(section, "__name__", "g(y) = 0"), None
    if isinstance(section, (tuple, list)) and len(section) == 2:
        a = validation.real_array(section[0], "section normal a")
        if a.shape != (n,) or not np.all(np.isfinite(a)) or not np.any(a):
            raise IntegrationInputError(f"a section (a, b) needs a finite nonzero normal a of shape ({n},), got "
                                        f"{section[0]!r:.80}")
        b = float(section[1])
        if not math.isfinite(b):
            raise IntegrationInputError(f"the section offset b must be finite, got {section[1]!r}")
        return (lambda y: np.asarray(y) @ a - b), f"{a.tolist()} . y = {b:g}", a
    raise IntegrationInputError(f"section must be a pair (a, b) for the hyperplane a . y = b, a callable g(y) or "
                                f"'stroboscopic' (with period), got {section!r:.80}")


def _illinois(g, flip, step, t, y, s_hi, xtol, scale, max_iter=200):
    """Roots s in (0, s_hi] of flip * g(step(t, y, s)) for a batch of crossings (flip normalises each so
    that it goes from - at s = 0 to + at s = s_hi); returns (s, state, |g|)."""
    N = len(y)
    lo, hi = np.zeros(N), np.full(N, s_hi)
    glo = flip * g(y)
    yhi = step(t, y, hi)
    ghi = flip * g(yhi)
    s, ys, gs = hi.copy(), yhi.copy(), ghi.copy()
    side = np.zeros(N, dtype=int)
    active = np.abs(gs) > xtol * scale
    for _ in range(max_iter):
        if not np.any(active):
            break
        a = np.nonzero(active)[0]
        denom = ghi[a] - glo[a]
        safe = np.where(denom > 0, denom, 1.0)
        sa = np.where(denom > 0, lo[a] - glo[a] * (hi[a] - lo[a]) / safe, 0.5 * (lo[a] + hi[a]))
        sa = np.clip(sa, lo[a], hi[a])
        ya = step(t[a], y[a], sa)
        ga = flip[a] * g(ya)
        s[a], ys[a], gs[a] = sa, ya, ga
        neg = ga < 0
        # Illinois: the end point kept twice in a row has its value halved
        ia, ib = a[neg], a[~neg]
        lo[ia], glo[ia] = sa[neg], ga[neg]
        ghi[ia] = np.where(side[ia] == -1, 0.5 * ghi[ia], ghi[ia])
        side[ia] = -1
        hi[ib], ghi[ib] = sa[~neg], ga[~neg]
        glo[ib] = np.where(side[ib] == 1, 0.5 * glo[ib], glo[ib])
        side[ib] = 1
        done = (np.abs(ga) <= xtol * scale[a]) | (hi[a] - lo[a] <= 4 * np.finfo(float).eps * s_hi)
        active[a[done]] = False
    return s, ys, np.abs(gs)


class _RowStep:
    """One step of the method from (t_i, y_i) with step s_i, for arrays t (N,), y (N, n), s (N,).

    Explicit Runge-Kutta methods run their tableau here with per-row times and steps (stage times
    t + c_i s as an (N,) array, the batch convention of f(t, y)); other methods call the library's
    stepper with a column of steps (coadjoint problems do not depend on t). The vectorized step is
    checked once against the stepper's own scalar step on one row (relative 1e-12); where it differs
    or fails, the rows are stepped one by one."""

    def __init__(self, problem, m):
        self.stepper = make_stepper(m, problem)
        self.rk = isinstance(m, RungeKutta) and m.form == "rk"
        self.m = m
        self.f = problem.rhs if problem.kind == "coadjoint" else problem.f
        self.vector = None
        # an autonomous coadjoint vector field does not depend on t (rows may share one stage time)
        self.timeless = problem.kind == "coadjoint" and not getattr(problem, "time_dependent", False)

    def _vec(self, t, y, s):
        if self.rk:
            m, ks = self.m, []
            for i, row in enumerate(m.A):
                yi = y
                for a, k in zip(row, ks):
                    if a != 0.0:
                        yi = yi + (a * s)[:, None] * k
                ks.append(np.asarray(self.f(t + m.c[i] * s, yi), dtype=float))
            out = y
            for b, k in zip(m.b, ks):
                if b != 0.0:
                    out = out + (b * s)[:, None] * k
            return out
        return self.stepper.step(float(t[0]), y, s[:, None])

    def _rows(self, t, y, s):
        return np.stack([self.stepper.step(float(t[i]), y[i], float(s[i])) for i in range(len(y))])

    def __call__(self, t, y, s):
        t = np.broadcast_to(np.asarray(t, dtype=float), (len(y),))
        s = np.broadcast_to(np.asarray(s, dtype=float), (len(y),))
        if self.vector is None:
            try:
                with np.errstate(all="ignore"):
                    v = np.asarray(self._vec(t[:2], y[:2], s[:2]), dtype=float)
                r = self._rows(t[:2], y[:2], s[:2])
                self.vector = bool(v.shape == r.shape and np.all(np.abs(v - r) <= 1e-12 * (1 + np.abs(r))))
            except Exception:  # noqa: BLE001 - a vector field that does not take per-row times
                self.vector = False
        if self.vector and (self.rk or self.timeless or np.all(t == t[0])):
            return np.asarray(self._vec(t, y, s), dtype=float)
        return self._rows(t, y, s)


def poincare_section(problem: Any, y0: Any, section: Any, t_end: float, method: str = "rk4",
                     h: float | None = None, steps: int | None = None, t0: float = 0.0, direction: int = 1,
                     period: float | None = None, transient: float = 0.0, max_crossings: int | None = None,
                     xtol: float = 1e-13, backend: str = "auto") -> PoincareResult:
    """Crossings of the orbits from ``y0`` with ``section`` over (t0 + transient, t0 + transient + t_end).

    Parameters
    ----------
    problem : ODEProblem or CoadjointProblem (any problem :func:`integrators.integrate` takes with a
        fixed-step method).
    y0 : (n,) or (B, n); for an ensemble the result holds one array per orbit.
    section : (a, b) for the hyperplane a . y = b, a callable g(y) -> (...) (the surface g = 0), or
        "stroboscopic" (the states at t0 + transient + k ``period``).
    method : a fixed-step method name (rk4, rkmk4, moser_veselov, ...); adaptive pairs raise MethodError.
    h, steps : the step (default period / 50 for a stroboscopic map, else t_end / 10^4) or the number of
        steps over t_end.
    direction : +1 crossings from g < 0 to g > 0 (default; for (a, b): in the direction of a), -1 the
        reverse, 0 both.
    max_crossings : stop an orbit after this many crossings (the run stops when all have them).
    xtol : the located points satisfy |g| <= xtol (1 + |a| |y|) for a hyperplane, xtol (1 + |g|-scale)
        for a callable.
    period : the period of a time-periodic problem (default ``problem.period``), for the stroboscopic map.
    backend : "auto" (default), "numpy" or "numba", as in :func:`integrators.integrate`. A hyperplane
        section of a recognised coadjoint problem with a Runge-Kutta method (rk or rkmk form) runs the
        compiled section of :mod:`integrators.codegen.section_source` with numba (crossings located inside
        the stepping loop, no states stored; "auto" takes it, when numba is installed, whenever it is loaded
        in this process, or in numba's disk cache for runs of at least
        :data:`integrators.backends.fastpath.AUTO_NUMBA_WORK` orbit-steps; otherwise the numpy path runs and
        its compile is queued in the background: :func:`integrators.backends.section_runner.choose`; so does
        backend="numba" while the compiled section is neither loaded nor in numba's disk cache, the compile in a
        child process);
        otherwise the orbits are integrated in chunks by :func:`integrators.integrate` with this backend
        and the crossings located in numpy. ``result.backend`` says which ran.
    """
    start = time.perf_counter()
    m = get_method(method, problem)
    fastpath.check_backend_args(backend, True)
    if not m.fixed_step:
        raise MethodError(f"poincare_section locates crossings with one step of a fixed-step method; {m.name!r} "
                          f"is adaptive: use rk4, rkmk4, cf4, moser_veselov, ... with h")
    n = problem.dim
    y0 = validation.real_array(y0, "y0")
    if y0.shape[-1:] != (n,) or y0.ndim > 2 or not np.all(np.isfinite(y0)):
        raise IntegrationInputError(f"y0 must be finite, of shape ({n},) or (B, {n}); got shape {y0.shape}")
    single = y0.ndim == 1
    Y = np.atleast_2d(y0).astype(float)
    B = Y.shape[0]
    t_end = validation.positive(t_end, "t_end")
    xtol = validation.positive(xtol, "xtol")
    transient = float(transient)
    if not math.isfinite(transient) or transient < 0:
        raise IntegrationInputError(f"transient must be a finite time >= 0, got {transient!r}")
    if max_crossings is not None:
        max_crossings = validation.step_count(max_crossings, "max_crossings")
    if period is None:
        period = getattr(problem, "period", None)   # the problem's own period (ODEProblem / CoadjointProblem)
    strobe = isinstance(section, str)
    if strobe:
        if section != "stroboscopic":
            raise IntegrationInputError(f"a section given by name must be 'stroboscopic', got {section!r}")
        if period is None:
            raise IntegrationInputError("a stroboscopic section needs the period of the system (period=T, or a "
                                        "problem built with period=T)")
    if period is not None:
        period = validation.positive(period, "period")
    t = float(t0)
    if transient > 0:
        hh = h if h is not None else (period / 50 if strobe else transient / 1000)
        r = integrate(problem, Y, (t, t + transient), method=m.name, h=hh, save_every=10**9, check=False,
                      backend=backend)
        if r.status < 0:
            raise IntegrationInputError(f"the transient failed: {r.message}")
        Y, t = np.asarray(r.y[-1]).reshape(B, n), t + transient
    if strobe:
        return _stroboscopic(problem, m, Y, t, t_end, period, h, steps, max_crossings, backend, single, start)
    g, desc, a = _section(section, n, direction)
    if steps is not None:
        steps = validation.step_count(steps, "steps")
        h = t_end / steps
    h = validation.positive(h if h is not None else t_end / 1e4, "h")
    nsteps = math.ceil(t_end / h - 1e-9)
    h = t_end / nsteps
    validation.step_budget(nsteps)
    pl = None
    if a is not None and isinstance(m, RungeKutta) and not m.project and problem.kind == "coadjoint":
        pl = fastpath.plan(problem, m.tableau, m.lie, m.terms, Y)
        if pl is not None and pl.lie and pl.st.P is not None:   # the section kernels write no forced generator
            pl = None
    chosen = None if pl is None else section_runner.choose(pl, backend, nsteps * B)
    if chosen == "numba":
        P, T, st, reached, worst = section_runner.crossings(pl, Y, t, h, nsteps, a, float(section[1]), direction,
                                                            xtol, max_crossings, "numba")
        count = np.array([len(q) for q in T])
        status, message = 0, f"{int(count.sum())} crossings of {desc}"
        if np.any(st != 0):
            bad = np.flatnonzero(st)
            status = -1
            message = (f"{len(bad)} of {B} orbits overflowed (orbit {int(bad[0])} after t = "
                       f"{t + float(reached[bad[0]]) * h:.6g}); their crossings up to there are kept; {message}")
        res = _finish(problem, P, T, worst, status, message, m, h, desc, single, start,
                      {"crossings": count if not single else int(count[0]), "steps": int(reached.max())})
        res.backend = "numba"
        return res
    chunk = max(1, min(nsteps, CHUNK_FLOATS // (B * n)))
    sgn = 1.0 if direction >= 0 else -1.0
    stepper = _RowStep(problem, m)
    pts = [[] for _ in range(B)]
    tms = [[] for _ in range(B)]
    count = np.zeros(B, dtype=int)
    worst, status, message = 0.0, 0, ""
    alive = np.ones(B, dtype=bool)
    k0 = 0
    g0 = np.asarray(g(Y), dtype=float)
    if g0.shape != (B,):
        raise IntegrationInputError(f"the section function must return one value per state, shape ({B},); "
                                    f"got shape {g0.shape}")
    # "auto" (or a cold backend="numba") declined the section's kernel (its compile queued): the chunks run numpy,
    # not queueing the fixed-step ensemble's kernel too (the next call takes the section's)
    chunk_backend = "numpy" if pl is not None and backend in ("auto", "numba") else backend
    while k0 < nsteps and np.any(alive):
        kk = min(chunk, nsteps - k0)
        ta = t + k0 * h
        r = integrate(problem, Y, (ta, ta + kk * h), method=m.name, steps=kk, check=False, backend=chunk_backend)
        ys = np.asarray(r.y).reshape(-1, B, n)
        if r.status < 0:
            bad = ~np.all(np.isfinite(ys[-1]), axis=-1) if len(ys) == kk + 1 else np.ones(B, dtype=bool)
            status, message = -1, f"an orbit overflowed after t = {float(r.t[-1]):.6g}: {r.message}"
            if len(ys) < kk + 1:  # keep the finite part of every orbit
                kk = len(ys) - 1
            alive &= ~bad
        G = np.asarray(g(ys.reshape(-1, n)), dtype=float).reshape(-1, B)
        s0, s1 = G[:-1], G[1:]
        if direction == 0:
            hit = ((s0 < 0) & (s1 >= 0)) | ((s0 > 0) & (s1 <= 0))
        else:
            hit = (sgn * s0 < 0) & (sgn * s1 >= 0)
        hit &= alive[None, :]
        ks, bs = np.nonzero(hit)
        if len(ks):
            ya = ys[ks, bs]
            flip = np.where(s0[ks, bs] < 0, 1.0, -1.0)  # normalise so that g goes from - to +
            tk = ta + ks * h
            if a is not None:
                scale = 1.0 + np.linalg.norm(a) * np.linalg.norm(ya, axis=-1)
            else:
                scale = 1.0 + np.abs(s0[ks, bs]) + np.abs(s1[ks, bs])
            s, yc, res = _illinois(lambda v: np.asarray(g(v), dtype=float), flip, stepper, tk, ya, h, xtol, scale)
            worst = max(worst, float(np.max(res / scale)))
            order = np.lexsort((ks, bs))
            for i in order:
                b = bs[i]
                if max_crossings is None or count[b] < max_crossings:
                    pts[b].append(yc[i])
                    tms[b].append(tk[i] + s[i])
                    count[b] += 1
        Y = ys[kk].copy() if len(ys) > kk else ys[-1].copy()
        k0 += kk
        if max_crossings is not None and np.all(count >= max_crossings):
            break
        if status < 0 and len(ys) < kk + 1:
            break
    P = [np.asarray(p, dtype=float).reshape(-1, n) for p in pts]
    T = [np.asarray(q, dtype=float) for q in tms]
    res = _finish(problem, P, T, worst, status, message or f"{int(count.sum())} crossings of {desc}", m, h, desc,
                  single, start, {"crossings": count if not single else int(count[0]), "steps": k0})
    if chosen is not None and backend == "numba":   # cold: numpy while a child process compiles the section
        res.backend = "numpy" + auto_compile.NUMBA_COLD_NOTE
    return res


def _stroboscopic(problem, m, Y, t, t_end, period, h, steps, max_crossings, backend, single, start):
    B, n = Y.shape
    per = max(1, int(round(period / (h if h is not None else period / 50))))
    hh = period / per
    K = int(math.floor(t_end / period + 1e-9))
    if max_crossings is not None:
        K = min(K, max_crossings)
    if K < 1:
        raise IntegrationInputError(f"t_end = {t_end} is shorter than one period ({period})")
    validation.step_budget(K * per)
    r = integrate(problem, Y, (t, t + K * period), method=m.name, h=hh, save_every=per, check=False,
                  backend=backend)
    ys = np.asarray(r.y).reshape(-1, B, n)[1:]
    ts = np.asarray(r.t)[1:]
    ok = np.all(np.isfinite(ys), axis=-1)
    P = [ys[ok[:, b], b] for b in range(B)]
    T = [ts[ok[:, b]] for b in range(B)]
    status, msg = (0, f"{K} stroboscopic points (period {period:g})") if r.status >= 0 else (-1, r.message)
    return _finish(problem, P, T, 0.0, status, msg, m, hh, "stroboscopic", single, start,
                   {"crossings": K, "steps": K * per})


def _finish(problem, P, T, worst, status, message, m, h, desc, single, start, info):
    inv = {}
    for name, F in getattr(problem, "invariants", {}).items():
        vals = [np.asarray(F(p), dtype=float) if len(p) else np.zeros(0) for p in P]
        inv[name] = vals[0] if single else vals
    return PoincareResult(points=P[0] if single else P, times=T[0] if single else T, invariants=inv,
                          residual=worst, status=status, message=message, method=m.name, h=h, section=desc,
                          wall_time=time.perf_counter() - start, info=info)
