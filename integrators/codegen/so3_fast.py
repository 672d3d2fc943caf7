"""Fast path for Lie-Poisson problems on so(3)* with a linear velocity w = W z (no forcing).

The generic steppers spend most of their time in numpy call overhead on (..., 3) arrays (stack,
cross, einsum). Here each method's step is generated once as straight-line Python source
(codegen from the method's tableau, with the zero entries of W dropped) working on the three
components separately, and compiled with ``exec``. The same code runs on Python floats (a single
trajectory: no numpy calls at all) and on numpy arrays of shape (B,) (an ensemble: a few dozen
ufunc calls per stage on contiguous columns, no (B, 3) temporaries).

Formulas are those of :mod:`integrators.geometry.spaces` specialised to so(3) (C = epsilon):

* act(x, z) = exp(ad x)^T z = R(-x) z = z - a (x cross z) + b x cross (x cross z),
  a = sin t / t, b = (1 - cos t)/t^2, t = |x|, from ``liegroups.so3_coefficients`` (on Python floats
  for a single trajectory, on arrays for an ensemble);
* the matching bracket is -(x cross y), so the RKMK dexp^-1 series with three terms is
  v + (theta cross v)/2 + theta cross (theta cross v)/12, and with any number of terms (or summed
  to round-off) v + (theta cross v)/2 + cf theta cross (theta cross v) (:func:`_dexpinv`);
* McLachlan's splitting: exact rotations about the two non-middle axes (see stepping.SplittingStepper).

Compensated summation. The state is carried as z + e (Kahan): each step computes its increment
d = y_{n+1} - y_n directly (exp(ad x)^T z - z = -a x cross z + b x cross (x cross z); a rotation's
(c - 1) = -2 sin^2(ang/2)), whose rounding error is O(eps |d|) = O(eps h |z|), and adds it with
Kahan's compensated sum. The round-off random walk of the Casimirs then grows like eps h sqrt(N)
instead of eps sqrt(N) (Hairer, McLachlan and Razakarivony (2008), "Achieving Brouwer's law with
implicit Runge-Kutta methods"), which is what keeps |m|^2 to 1e-13 over 10^6 steps.

The generic path is the reference; tests check that both agree to round-off.
"""

from __future__ import annotations

import math

import numpy as np

from liegroups import so3_coefficients
from liegroups.closed_forms import bernoulli_coefficients, so3_dexpinv_coefficient

from ..core.errors import IntegrationInputError
from ..geometry.spaces import DEXPINV_X2MAX, ROUNDOFF_TERMS
from ..methods import CommutatorFree, RungeKutta, Splitting

_CACHE = {}


def _lin(_name, terms):
    """Source for sum of coefficient * variable, or None when empty."""
    parts = [f"({c!r})*{v}" for c, v in terms if c != 0.0]
    return " + ".join(parts) if parts else None


class _Gen:
    def __init__(self, W):
        self.W = W
        self.lines = []
        self.n = 0

    def tmp(self):
        self.n += 1
        return f"_t{self.n}_"

    def emit(self, s):
        self.lines.append("    " + s)

    def vel(self, z, out):
        for i in range(3):
            expr = _lin(None, [(float(self.W[i, j]), f"{z}{j}") for j in range(3)]) or "0.0"
            self.emit(f"{out}{i} = {expr}")

    def cross(self, a, b, out):
        self.emit(f"{out}0 = {a}1*{b}2 - {a}2*{b}1")
        self.emit(f"{out}1 = {a}2*{b}0 - {a}0*{b}2")
        self.emit(f"{out}2 = {a}0*{b}1 - {a}1*{b}0")

    def act(self, x, z, out, delta=False):
        """out = exp(ad x)^T z, or (delta=True) the increment exp(ad x)^T z - z (no cancellation)."""
        c1, c2, ca, cb = self.tmp(), self.tmp(), self.tmp(), self.tmp()
        self.emit(f"{ca}, {cb} = co({x}0*{x}0 + {x}1*{x}1 + {x}2*{x}2)")
        self.cross(x, z, c1)
        self.cross(x, c1, c2)
        for i in range(3):
            base = "" if delta else f"{z}{i} "
            self.emit(f"{out}{i} = {base}- {ca}*{c1}{i} + {cb}*{c2}{i}")

    def kahan(self, d, i=None):
        """Compensated z += d (Kahan): z holds the rounded state, e the carried rounding error."""
        for j in (range(3) if i is None else [i]):
            self.emit(f"_y = {d}{j} + e{j}; _s = z{j} + _y; e{j} = (z{j} - _s) + _y; z{j} = _s")

    def combo(self, coeffs, names, out, scale="h"):
        """out = scale * sum coeffs[j] * names[j]; returns False if all coefficients vanish."""
        pairs = [(float(c), n) for c, n in zip(coeffs, names) if c != 0.0]
        if not pairs:
            return False
        for i in range(3):
            self.emit(f"{out}{i} = {scale}*(" + " + ".join(f"({c!r})*{n}{i}" for c, n in pairs) + ")")
        return True


def _dexpinv(g, terms, K):
    """K = dexp^-1_th(x) as :func:`integrators.geometry.spaces.dexpinv_series` defines it for ``terms``,
    with A v = -[th, v] = -(th x v): A^3 = -|th|^2 A, so every truncated series is
    x + p/2 + cf q (p = th x x, q = th x p = A^2 x, cf = sum_{even k < terms} B_k/k! (-|th|^2)^(k/2-1),
    B_k = 0 for odd k >= 3), and the round-off sum is the closed form cf = (1 - (t/2) cot(t/2))/t^2
    (so3_dexpinv_coefficient), NaN for ||ad th||_F^2 = 2 t^2 beyond (2 pi)^2 DEXPINV_X2MAX (the rule of
    the other paths)."""
    if terms <= 1:
        for j in range(3):
            g.emit(f"{K}{j} = x{j}")
        return
    g.cross("th", "x", "p")
    if terms == 2:
        for j in range(3):
            g.emit(f"{K}{j} = x{j} + 0.5*p{j}")
        return
    g.cross("th", "p", "q")
    g.emit("_t2 = th0*th0 + th1*th1 + th2*th2")
    if terms >= ROUNDOFF_TERMS:
        g.emit("_cf = dq(_t2)")
    else:
        coeffs = bernoulli_coefficients(int(terms))
        poly = "0.0"
        for c in reversed([c for k, c in enumerate(coeffs) if k >= 2 and k % 2 == 0]):  # Horner in -|th|^2
            poly = f"({c!r} - _t2*{poly})" if poly != "0.0" else repr(c)
        g.emit(f"_cf = {poly}")
    for j in range(3):
        g.emit(f"{K}{j} = x{j} + 0.5*p{j} + _cf*q{j}")


def _source_rkmk(method, W):
    g = _Gen(W)
    Ks = []
    for i, row in enumerate(method.A):
        K = f"K{i}_"
        pairs = [(a, k) for a, k in zip(row, Ks) if a != 0.0]
        if not pairs:
            g.vel("z", "w")
            for j in range(3):
                g.emit(f"{K}{j} = h*w{j}")
        else:
            g.combo([p[0] for p in pairs], [p[1] for p in pairs], "th", scale="1.0")
            g.act("th", "z", "Y")
            g.vel("Y", "w")
            for j in range(3):
                g.emit(f"x{j} = h*w{j}")
            _dexpinv(g, method.terms, K)
        Ks.append(K)
    g.combo(method.b, Ks, "th", scale="1.0")
    g.act("th", "z", "d", delta=True)
    g.kahan("d")
    g.emit("return z0, z1, z2, e0, e1, e2")
    return g


def _source_cf(method, W):
    g = _Gen(W)
    Fs = []
    for i, exps in enumerate(method.stages):
        cur = "z"
        for e, coeffs in enumerate(exps):
            if g.combo(coeffs, Fs, "x"):
                nxt = f"S{i}_{e}_"
                g.act("x", cur, nxt)
                cur = nxt
        F = f"F{i}_"
        g.vel(cur, F)
        Fs.append(F)
    # the update as a sum of increments: z1 = z + d_1 + d_2 + ..., d_e = act(x_e, U_{e-1}) - U_{e-1}
    cur, total = "z", None
    for e, coeffs in enumerate(method.update):
        if g.combo(coeffs, Fs, "x"):
            d = f"D{e}_"
            g.act("x", cur, d, delta=True)
            nxt = f"U{e}_"
            for j in range(3):
                g.emit(f"{nxt}{j} = {cur}{j} + {d}{j}")
                g.emit(f"T{j} = {d}{j}" if total is None else f"T{j} = T{j} + {d}{j}")
            cur, total = nxt, "T"
    g.kahan("T")
    g.emit("return z0, z1, z2, e0, e1, e2")
    return g


def _source_split(method, W):
    a = np.diag(W).astype(float)
    j = int(np.argsort(a)[1])
    i, k = [q for q in range(3) if q != j]
    al = {i: float(a[i] - a[j]), k: float(a[k] - a[j])}
    g = _Gen(W)
    seq = []  # (axis, fraction of h); adjacent rotations about the same axis merge exactly (m_axis fixed)
    for gam in method.gammas:
        for axis, frac in ((i, 0.5), (k, 1.0), (i, 0.5)):
            if seq and seq[-1][0] == axis:
                seq[-1] = (axis, seq[-1][1] + gam * frac)
            else:
                seq.append((axis, gam * frac))
    for axis, frac in seq:
        p, q = (axis + 1) % 3, (axis + 2) % 3
        # (m_p, m_q) += ((c - 1) m_p + s m_q, (c - 1) m_q - s m_p), c - 1 = -2 sin^2(ang/2)
        g.emit(f"ang = ({frac * al[axis]!r})*h*z{axis}")
        g.emit("sh = sin(0.5*ang); cm = -2.0*sh*sh; s = sin(ang)")
        g.emit(f"d{p} = cm*z{p} + s*z{q}; d{q} = cm*z{q} - s*z{p}")
        g.kahan("d", p)
        g.kahan("d", q)
    g.emit("return z0, z1, z2, e0, e1, e2")
    return g


def applies(method, problem):
    """True when the so(3) fast path can run ``method`` on ``problem``."""
    if not (isinstance(method, (CommutatorFree, Splitting)) or (isinstance(method, RungeKutta) and method.lie
                                                                  and method.fixed_step)):
        return False
    return (problem.kind == "coadjoint" and problem.forcing is None
            and problem.algebra.closed_form == "so3"
            and problem.velocity_matrix is not None and problem.velocity_matrix.shape == (3, 3))


def check_velocity_matrix(problem, z):
    """velocity(z) must equal W z (W = velocity_matrix); raise ValueError naming the mismatch."""
    W = problem.velocity_matrix
    w = np.asarray(problem.velocity(z), dtype=float)
    Wz = z @ W.T
    err = float(np.max(np.abs(w - Wz)))
    if err > 1e-12 * max(1.0, float(np.max(np.abs(Wz)))):
        raise IntegrationInputError(f"velocity_matrix W does not match velocity(z): max |velocity(z) - W z| = {err:.3e} "
                         f"at the initial state (convention w_i = sum_j W[i, j] z_j)")


#: |th|^2 beyond which the round-off dexp^-1 is NaN: ||ad th||_F^2 = 2 |th|^2 > (2 pi)^2 DEXPINV_X2MAX
_T2MAX = DEXPINV_X2MAX * (2.0 * math.pi) ** 2 / 2.0


def _dq_float(t2):
    """so3_dexpinv_coefficient on a Python float, NaN beyond _T2MAX."""
    return float(so3_dexpinv_coefficient(t2)) if t2 <= _T2MAX else math.nan


def _dq_array(t2):
    """so3_dexpinv_coefficient on an array, NaN beyond _T2MAX."""
    return np.where(t2 <= _T2MAX, so3_dexpinv_coefficient(np.minimum(t2, _T2MAX)), np.nan)


def _finite_sin(x):
    """math.sin, but NaN for an infinite angle (an overflowed state) as numpy gives, not a ValueError."""
    return math.sin(x) if -math.inf < x < math.inf else math.nan


def step_function(method, problem, scalar):
    """The compiled step f(z0, z1, z2, e0, e1, e2, h) -> (z0, z1, z2, e0, e1, e2) for floats (scalar)
    or (B,) arrays; (z, e) is the state with its compensated rounding error (z + e is the value)."""
    W = problem.velocity_matrix
    key = (method, W.tobytes(), scalar)
    if key not in _CACHE:
        if isinstance(method, Splitting):
            g = _source_split(method, W)
        elif isinstance(method, RungeKutta):
            g = _source_rkmk(method, W)
        else:
            g = _source_cf(method, W)
        src = "def step(z0, z1, z2, e0, e1, e2, h):\n" + "\n".join(g.lines) + "\n"
        env = {"co": so3_coefficients, "dq": _dq_float if scalar else _dq_array,
               "sin": _finite_sin if scalar else np.sin}
        exec(compile(src, f"<so3_fast {method.name}>", "exec"), env)
        _CACHE[key] = env["step"]
    return _CACHE[key]


class FastStepper:
    """Stepper interface (step(t, y, h) -> y1) over the generated function, used with events."""

    def __init__(self, method, problem, fevals):
        self.method, self.problem, self.fevals = method, problem, fevals

    def step(self, t, y, h):
        y = np.asarray(y, dtype=float)
        if y.ndim == 1:
            f = step_function(self.method, self.problem, scalar=True)
            r = f(float(y[0]), float(y[1]), float(y[2]), 0.0, 0.0, 0.0, float(h))
            return np.array([r[0] + r[3], r[1] + r[4], r[2] + r[5]])
        f = step_function(self.method, self.problem, scalar=False)
        flat = y.reshape(-1, 3)
        zero = np.zeros(flat.shape[0])
        r = f(flat[:, 0], flat[:, 1], flat[:, 2], zero, zero, zero, h)
        return np.stack([r[0] + r[3], r[1] + r[4], r[2] + r[5]], axis=-1).reshape(y.shape)


#: ensembles are stepped in chunks of this many trajectories, so that the temporaries stay in cache
#: (measured about 1.7x faster than stepping 10^5 columns at once)
CHUNK = 8192


def run(method, problem, y0, t0, h, n, save_every, K):
    """Integrate n steps of size h from y0 (..., 3); return (ts, ys) at every save_every-th step."""
    ts = np.empty(K)
    ts[0] = t0
    j = 1
    for k in range(1, n + 1):
        if k % save_every == 0 or k == n:
            ts[j] = t0 + k * h
            j += 1
    ys = np.empty((K,) + y0.shape)
    ys[0] = y0
    if y0.ndim == 1:
        f = step_function(method, problem, scalar=True)
        z0, z1, z2 = (float(v) for v in y0)
        e0 = e1 = e2 = 0.0
        j = 1
        for k in range(1, n + 1):
            z0, z1, z2, e0, e1, e2 = f(z0, z1, z2, e0, e1, e2, h)
            if k % save_every == 0 or k == n:
                ys[j] = (z0 + e0, z1 + e1, z2 + e2)
                j += 1
        return ts, ys
    f = step_function(method, problem, scalar=False)
    flat = y0.reshape(-1, 3)
    out = ys.reshape(K, -1, 3)
    for s0 in range(0, flat.shape[0], CHUNK):
        sl = slice(s0, s0 + CHUNK)
        z0, z1, z2 = (np.ascontiguousarray(flat[sl, i]) for i in range(3))
        e0, e1, e2 = (np.zeros_like(z0) for _ in range(3))
        j = 1
        for k in range(1, n + 1):
            z0, z1, z2, e0, e1, e2 = f(z0, z1, z2, e0, e1, e2, h)
            if k % save_every == 0 or k == n:
                out[j, sl, 0] = z0 + e0
                out[j, sl, 1] = z1 + e1
                out[j, sl, 2] = z2 + e2
                j += 1
    return ts, ys
