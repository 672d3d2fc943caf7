"""Time-dependent vector fields that are quadratic in the state, recognised from their values.

The forced systems of the phase-space tools, a coadjoint problem with time-dependent data
(:class:`servo.TimeDependentSystem`: z' = ad*_{W(t) z + c(t)} z + f(t) + B(t)^T lambda(t, z), the multiplier
affine in ad*_w z and w) and the reduced Chaplygin sleighs with a moving mass or a rotor, have, at every
fixed t, a right-hand side that is a quadratic polynomial in the state:

    F_i(t, y) = e_i(t) + sum_j L_ij(t) y_j + sum_{j <= k} q_ijk(t) y_j y_k.

The generated code of such a problem (:mod:`integrators.codegen.timed_source`) is written for the
polynomial's shape only (n, the tableau), and reads the coefficients at the stage times from a table:
for a fixed step h the stage times are t0 + k h + c_i h, and for a problem of period T with T / h = S an
integer they repeat every S steps, so one table of S steps serves the whole run (a run without a
period, or with T / h not an integer, gets a table of all its steps, up to :data:`MAX_TABLE` numbers).
The same compiled code therefore serves every parameter value of a chart of regimes.

The coefficients at one time t are read off the problem's own F(t, .) at the points 0, +-e_j,
e_j + e_k (exact for a quadratic polynomial up to rounding: e = F(0), L_j = (F(e_j) - F(-e_j))/2,
q_jj = (F(e_j) + F(-e_j))/2 - e, q_jk = F(e_j + e_k) - e - L_j - L_k - q_jj - q_kk), vectorized over
the probes; :func:`recognise` checks the polynomial against F at random points and times (relative
1e-9) and returns None when F is not quadratic in y (a Lagrangian system whose mass matrix depends on
the coordinates, say). No symbolic work and no knowledge of where F comes from.
"""

from __future__ import annotations

import numpy as np

#: the largest coefficient table (numbers) of a run without a usable period
MAX_TABLE = 4_000_000
#: relative agreement of the recognised polynomial with F at the check points
CHECK_RTOL = 1e-9
#: the largest dimension written (the features grow as n^2 / 2)
MAX_DIM = 12


def features(n):
    """The pairs (j, k), j <= k, of the quadratic monomials y_j y_k in table order."""
    return [(j, k) for j in range(n) for k in range(j, n)]


def nfeatures(n):
    """1 (the constant) + n (linear) + n (n + 1) / 2 (quadratic) coefficients per component."""
    return 1 + n + n * (n + 1) // 2


def field_of(problem):
    """F(t, Y) of a time-dependent problem (an ODEProblem's f or a coadjoint problem's rhs)."""
    return problem.rhs if getattr(problem, "kind", None) == "coadjoint" else problem.f


def _probes(n):
    pts = [np.zeros(n)]
    eye = np.eye(n)
    for j in range(n):
        pts += [eye[j], -eye[j]]
    for j, k in features(n):
        if j < k:
            pts.append(eye[j] + eye[k])
    return np.array(pts)


class TimedQuadratic:
    """F(t, y) of a time-dependent problem as a quadratic polynomial in y with coefficients in t (module
    docstring); ``coefficients(times)`` -> (len(times), n, nfeatures(n)), features ordered
    [1, y_0 .. y_(n-1), y_j y_k (j <= k)]."""

    def __init__(self, problem):
        self.problem = problem
        self.n = problem.dim
        self.f = field_of(problem)
        self.P = _probes(self.n)
        self.pairs = features(self.n)
        self.nf = nfeatures(self.n)
        self.vector = None     # F takes a column of times (checked at the first table)
        # the structure of the generated code: the dimension only (every parameter value shares it)
        self.key = ("timed-quadratic", self.n)

    def coefficients(self, times):
        times = np.asarray(times, dtype=float).ravel()
        n, P = self.n, self.P
        out = np.empty((len(times), n, self.nf))
        uniq, inv = np.unique(times, return_inverse=True)
        vals = np.empty((len(uniq), n, self.nf))
        allF = self._values(uniq)
        for u, t in enumerate(uniq):
            Fv = allF[u]
            e = Fv[0]
            Fp, Fm = Fv[1:2 * n + 1:2], Fv[2:2 * n + 1:2]          # (n, n): row j = F(+-e_j)
            L = 0.5 * (Fp - Fm)
            qd = 0.5 * (Fp + Fm) - e
            c = vals[u]
            c[:, 0] = e
            c[:, 1:n + 1] = L.T
            r = 2 * n + 1
            for idx, (j, k) in enumerate(self.pairs):
                if j == k:
                    c[:, 1 + n + idx] = qd[j]
                else:
                    c[:, 1 + n + idx] = Fv[r] - e - L[j] - L[k] - qd[j] - qd[k]
                    r += 1
        out[:] = vals[inv]
        return out

    def _values(self, times):
        """F at the probes for every time, (T, probes, n): one call of F with a column of times (the batch
        convention of f(t, y): t broadcasting against y[..., 0]) when F takes one and agrees with a call at
        a scalar time, else one call per time."""
        P, n = self.P, self.P.shape[1]
        T = len(times)
        if self.vector is not False and T > 1:
            try:
                with np.errstate(all="ignore"):
                    F = np.asarray(self.f(np.repeat(times, len(P)), np.tile(P, (T, 1))), dtype=float)
                F = F.reshape(T, len(P), n)
                if self.vector is None:
                    one = np.asarray(self.f(float(times[-1]), P), dtype=float).reshape(len(P), n)
                    self.vector = bool(np.all(np.abs(F[-1] - one) <= 1e-13 * (1.0 + np.abs(one))))
                if self.vector:
                    return F
            except (ValueError, TypeError, IndexError):
                self.vector = False
        return np.stack([np.asarray(self.f(float(t), P), dtype=float).reshape(len(P), n) for t in times])

    def evaluate(self, coef, Y):
        """The polynomial with coefficients ``coef`` (n, nf) at the points Y (..., n)."""
        Y = np.asarray(Y, dtype=float)
        feats = [np.ones(Y.shape[:-1])] + [Y[..., j] for j in range(self.n)] + \
                [Y[..., j] * Y[..., k] for j, k in self.pairs]
        return np.stack(feats, -1) @ coef.T


def recognise(problem, y0, t0=0.0, period=None):
    """The :class:`TimedQuadratic` of a time-dependent problem (``time_dependent`` coadjoint, or an ODE
    problem) whose F(t, y) is quadratic in y, checked at random points around y0 and times in
    [t0, t0 + period] (or [t0, t0 + 1]); None otherwise."""
    kind = getattr(problem, "kind", None)
    if kind not in ("ode", "coadjoint"):
        return None
    # what the field is made of (attributes of the problem: their ids are stable while it lives)
    parts = (problem.f,) if kind == "ode" else (problem.velocity, problem.forcing)
    key = (tuple(id(x) for x in parts), float(t0), period)
    cached = getattr(problem, "_timed_quadratic", None)    # (key, result) of the last recognition
    if cached is not None and cached[0] == key and (cached[1] is None or _still(cached[1], y0, t0)):
        return cached[1]
    out = _recognise(problem, y0, t0, period)
    try:
        problem._timed_quadratic = (key, out)
    except AttributeError:   # a problem object that takes no attributes: recognised every time
        pass
    return out


def _still(tq, y0, t0):
    """The cached polynomial still gives F at (t0, y0) (data changed in place since are caught here)."""
    Y = np.atleast_2d(np.asarray(y0, dtype=float))[:1]
    try:
        with np.errstate(all="ignore"):
            F = np.asarray(tq.f(float(t0), Y), dtype=float).reshape(Y.shape)
            G = tq.evaluate(tq.coefficients([t0])[0], Y)
    except (ValueError, TypeError, ArithmeticError, IndexError):
        return False
    scale = max(1.0, float(np.max(np.abs(Y))))
    return bool(np.all(np.abs(G - F) <= CHECK_RTOL * (np.abs(F) + scale ** 2 + 1.0)))


def _recognise(problem, y0, t0, period):
    n = problem.dim
    if n > MAX_DIM:
        return None
    tq = TimedQuadratic(problem)
    rng = np.random.default_rng(20261127)
    y0 = np.atleast_2d(np.asarray(y0, dtype=float))
    scale = max(1.0, float(np.max(np.abs(y0))))
    span = period if period is not None else 1.0
    times = t0 + span * np.array([0.0, 0.137, 0.5, 0.731, 0.913])
    Y = np.concatenate([y0[:2], scale * rng.standard_normal((4, n))])
    try:
        with np.errstate(all="ignore"):   # a field singular at the probes (0, unit vectors) is refused, silently
            coef = tq.coefficients(times)
            if not np.all(np.isfinite(coef)):
                return None
            for t, c in zip(times, coef):
                F = np.asarray(tq.f(float(t), Y), dtype=float).reshape(Y.shape)
                G = tq.evaluate(c, Y)
                bound = CHECK_RTOL * (np.abs(F) + np.max(np.abs(c)) * scale ** 2 + 1.0)
                if not (np.all(np.isfinite(F)) and np.all(np.abs(G - F) <= bound)):
                    return None
    except (ValueError, TypeError, ArithmeticError, IndexError):
        return None
    return tq


def table_layout(tab_c, h, nsteps, period, t0=0.0):
    """(S, times): the number S of steps after which the stage times repeat (T / h when ``period`` T is a
    whole number of steps h to 1e-9, else the whole run of ``nsteps``) and the stage times (S, s) of a
    tableau with nodes ``tab_c``; None when the table would exceed MAX_TABLE / (coefficients) steps."""
    c = np.asarray(tab_c, dtype=float)
    S = None
    if period is not None:
        m = period / h
        if abs(m - round(m)) <= 1e-9 * max(1.0, m) and round(m) >= 1:
            S = int(round(m))
    if S is None:
        S = max(1, int(nsteps))
    k = np.arange(S, dtype=float)
    return S, t0 + (k[:, None] + c[None, :]) * h


class TimedAffineVelocity:
    """The velocity of a time-dependent coadjoint problem as w(t, z) = W(t) z + c(t) (for its Lie-group steps):
    ``coefficients(times)`` -> (len(times), n, 1 + n), row r = (c_r, W_r0 .. W_r(n-1)), read off w at 0 and
    at the unit vectors (exact for an affine map up to rounding)."""

    def __init__(self, problem):
        self.n = problem.dim
        self.f = problem.velocity
        self.P = np.concatenate([np.zeros((1, self.n)), np.eye(self.n)])
        self.vector = None

    def coefficients(self, times):
        times = np.asarray(times, dtype=float).ravel()
        uniq, inv = np.unique(times, return_inverse=True)
        V = TimedQuadratic._values(self, uniq)                 # (T, n + 1, n): w at 0, e_0, ..
        c = V[:, 0]
        W = np.swapaxes(V[:, 1:] - c[:, None, :], 1, 2)         # W[:, r, j] = w_r(e_j) - c_r
        return np.concatenate([c[..., None], W], axis=-1)[inv]

    def evaluate(self, coef, Y):
        Y = np.asarray(Y, dtype=float)
        return coef[:, 0] + Y @ coef[:, 1:].T


def recognise_velocity(problem, y0, t0=0.0, period=None):
    """The :class:`TimedAffineVelocity` of a ``time_dependent`` coadjoint problem without forcing whose
    velocity is affine in z at every t (checked at random points and times, relative 1e-9), else None."""
    if getattr(problem, "kind", None) != "coadjoint" or not getattr(problem, "time_dependent", False) \
            or problem.forcing is not None or problem.dim > MAX_DIM:
        return None
    tv = TimedAffineVelocity(problem)
    rng = np.random.default_rng(20261128)
    n = tv.n
    y0 = np.atleast_2d(np.asarray(y0, dtype=float))
    scale = max(1.0, float(np.max(np.abs(y0))))
    span = period if period is not None else 1.0
    times = t0 + span * np.array([0.0, 0.211, 0.6, 0.947])
    Y = np.concatenate([y0[:2], scale * rng.standard_normal((3, n))])
    try:
        with np.errstate(all="ignore"):
            coef = tv.coefficients(times)
            if not np.all(np.isfinite(coef)):
                return None
            for t, c in zip(times, coef):
                F = np.asarray(tv.f(float(t), Y), dtype=float).reshape(Y.shape)
                G = tv.evaluate(c, Y)
                if not (np.all(np.isfinite(F)) and np.all(np.abs(G - F) <= CHECK_RTOL * (np.abs(F) + scale + 1.0))):
                    return None
    except (ValueError, TypeError, ArithmeticError, IndexError):
        return None
    return tv
