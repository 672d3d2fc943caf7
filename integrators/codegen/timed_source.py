"""Generated code of a time-dependent field quadratic in the state, its coefficients read from a table.

For F(t, y) = e(t) + L(t) y + q(t)[y, y] (:mod:`integrators.geometry.timed_quadratic`) and an explicit
Runge-Kutta tableau with a fixed step h, stage i of step k is evaluated at t0 + (k + c_i) h; the caller
passes the coefficients at these times as a flat table TB (S steps x s stages x n components x nf
features, nf = 1 + n + n (n + 1) / 2) and S, the number of steps after which they repeat (the steps of
one period, or of the whole run); step k reads block k mod S. The text depends on n and the tableau only:
one compilation serves every parameter value (a chart of regimes) and every period.

The stage's field, component r, is sum_f TB[b + (i n + r) nf + f] phi_f(Y) with phi = (1, Y_j, Y_j Y_k);
its Jacobian (for the tangent flow of the Lyapunov spectra, :mod:`integrators.codegen.tangent_source`)
J[r][l] = dF_r/dY_l = L_rl + sum_(j<=k) q_rjk d(Y_j Y_k)/dY_l, written once per stage and applied to
every tangent column (the variational equation stepped by the same tableau: the derivative of the
method's map, Hairer, Norsett and Wanner I, II.2).

* :func:`fixed_source`: ``run(h, nsteps, save_every, ts, ys, t0, TB, S, k0, z..., e...)`` -> (steps done,
  saves, z..., e...), n steps with Kahan's compensated sum of the increments (as
  :func:`integrators.codegen.fixed_programs.fixed_source`; ``k0`` the index of the first step, so a run
  continues a table);
* :class:`TimedStepper`: the step of :func:`integrators.codegen.tangent_source.lyapunov_source` for
  this field (arguments ``TB, S, k0`` after RUNM; the transient and the QR intervals count the steps
  from k0).
"""

from __future__ import annotations

from ..geometry.timed_quadratic import features, nfeatures
from . import programs, step_source
from .source_text import lin
from .writer import Source


class TimedShape:
    """What the text is written from: the dimension n (and a key)."""

    def __init__(self, n):
        self.n = int(n)
        self.key = ("timed-quadratic", self.n)


def _poly(src, Y, base, i, what="F"):
    """Names of F(Y) at stage i (coefficients at TB[base + (i n + r) nf + f])."""
    n, nf = src.n, nfeatures(src.n)
    pr = src.assign("p", [f"{Y[j]}*{Y[k]}" for j, k in features(n)])
    feats = ["1.0"] + list(Y) + pr
    out = []
    for r in range(n):
        off = (i * n + r) * nf
        terms = [f"TB[{base} + {off}]"] + [f"TB[{base} + {off + f}]*{feats[f]}" for f in range(1, nf)]
        out.append(" + ".join(terms))
    return src.assign(what, out)


def _jac(src, Y, base, i):
    """Names J[r][l] of dF_r/dY_l at stage i."""
    n, nf = src.n, nfeatures(src.n)
    pairs = features(n)
    J = []
    for r in range(n):
        off = (i * n + r) * nf
        row = []
        for l in range(n):
            terms = [f"TB[{base} + {off + 1 + l}]"]
            for idx, (j, k) in enumerate(pairs):
                c = f"TB[{base} + {off + 1 + n + idx}]"
                if j == k == l:
                    terms.append(f"2.0*{c}*{Y[l]}")
                elif j == l:
                    terms.append(f"{c}*{Y[k]}")
                elif k == l:
                    terms.append(f"{c}*{Y[j]}")
            row.append(" + ".join(terms))
        J.append(src.assign("J", row))
    return J


def _stages(src, tab, z, h, base, jac=False, record=None):
    """The state's stages (K_i = h F(t_i, Y_i)); with ``jac`` also each stage's Jacobian; the stages' names
    Y_i appended to ``record`` when given."""
    n = src.n
    Ks, Js = [], []
    for i, row in enumerate(tab.A):
        pairs = [(a, K) for a, K in zip(row, Ks) if a != 0.0]
        Y = src.assign("Y", [f"{z[j]} + {x}" for j, x in enumerate(src.combo("dz", pairs))]) if pairs else z
        if record is not None:
            record.append(Y)
        F = _poly(src, Y, base, i)
        Ks.append(src.assign("K", [f"{h}*{F[j]}" for j in range(n)]))
        if jac:
            Js.append(_jac(src, Y, base, i))
    return Ks, Js


def _block(src, nst):
    """Emit the table offset of the current step (``_b``) and count the step."""
    src.emit(f"_b = (kk % S)*{nst * src.n * nfeatures(src.n)}")
    src.emit("kk += 1")
    return "_b"


class TimedStepper:
    """The step of :func:`integrators.codegen.tangent_source.lyapunov_source` for a tabled quadratic field."""

    args = ", TB, S, k0"

    def __init__(self, nst):
        self.nst = nst

    def begin(self, src):
        src.emit("kk = k0")

    def state_step(self, src, tab, z, h, record=None):
        base = _block(src, self.nst)
        Ks, _ = _stages(src, tab, z, h, base, record=record)
        d = src.combo("d", [(b, K) for b, K in zip(tab.b, Ks) if b != 0.0])
        return [f"{z[j]} + {d[j]}" for j in range(src.n)]

    def tangent_step(self, src, tab, z, nc, h):
        n = src.n
        base = _block(src, self.nst)
        Ks, Js = _stages(src, tab, z, h, base, jac=True)
        src.emit(f"for _l in range({nc}):")
        src.indent += 1
        v = src.assign("c", [f"V[{i * nc} + _l]" for i in range(n)])
        KVs = []
        for row, J in zip(tab.A, Js):
            pairs = [(a, KV) for a, KV in zip(row, KVs) if a != 0.0]
            VY = src.assign("VY", [f"{v[j]} + {x}" for j, x in enumerate(src.combo("dv", pairs))]) if pairs else v
            KVs.append(src.assign("KV", [f"{h}*({lin([(1.0, f'{J[r][l]}*{VY[l]}') for l in range(n)])})"
                                         for r in range(n)]))
        dv = src.combo("dV", [(b, KV) for b, KV in zip(tab.b, KVs) if b != 0.0])
        for i in range(n):
            src.emit(f"V[{i * nc} + _l] = {v[i]} + {dv[i]}")
        src.indent -= 1
        d = src.combo("d", [(b, K) for b, K in zip(tab.b, Ks) if b != 0.0])
        return [f"{z[j]} + {d[j]}" for j in range(n)]


def fixed_source(n, tab):
    """Source of the fixed-step loop (module docstring) for dimension n and tableau ``tab``."""
    src = Source(TimedShape(n))
    z = [f"z{i}" for i in range(n)]
    e = [f"e{i}" for i in range(n)]
    head = f"def run(h, nsteps, save_every, ts, ys, t0, TB, S, k0, {', '.join(z + e)}):"
    src.emit("j = 1")
    src.emit("done = 0")
    src.emit("kk = k0")
    src.emit("for k in range(1, nsteps + 1):")
    src.indent += 1
    base = _block(src, len(tab.A))
    Ks, _ = _stages(src, tab, z, "h", base)
    d = src.combo("d", [(b, K) for b, K in zip(tab.b, Ks) if b != 0.0])
    step_source.fixed_step_end(src, z, e, d)
    return head + "\n" + "\n".join(src.lines) + "\n"


class TimedSource(Source):
    """:class:`Source` of a quadratic field whose coefficients a function ``coef(t)`` (a tuple in the order of
    the table: component r, feature f at r nf + f) returns at the time given by :meth:`at_time` (the
    stage times t + c_i hs of the adaptive loop, t0 + dh of its starting step)."""

    def __init__(self, st):
        super().__init__(st)
        self.tnow = "t0"     # the first evaluation (a compiled ensemble's first stages) is at the start

    def at_time(self, expr, stage=None):
        self.tnow = expr

    #: a compiled ensemble's stages run in a loop over the trajectories ``b`` at one shared time: the
    #: coefficients are evaluated for the first and kept for the others
    batch = False

    def field(self, z):
        n, nf = self.n, nfeatures(self.n)
        cq = self.fresh("cq")
        if self.batch:
            self.emit("if b == 0:")
            self.emit(f"    {cq} = coef({self.tnow})")
        else:
            self.emit(f"{cq} = coef({self.tnow})")
        pr = self.assign("p", [f"{z[j]}*{z[k]}" for j, k in features(n)])
        feats = ["1.0"] + list(z) + pr
        out = []
        for r in range(n):
            off = r * nf
            out.append(" + ".join([f"{cq}[{off}]"] + [f"{cq}[{off + f}]*{feats[f]}" for f in range(1, nf)]))
        return self.assign("F", out)


def adaptive_source(n, tab, columns=False, batch=False):
    """Source of the adaptive loop of an embedded pair (rk form) for a quadratic field with coefficients
    ``coef(t)``: the text of :func:`integrators.codegen.programs.adaptive_source` (solve_ivp's controller,
    FSAL, Hairer's starting step, Kahan's sum) written by :class:`TimedSource`; one trajectory, or a shared
    step for an ensemble as numpy ``columns`` or a compiled ``batch`` (the coefficients at the shared stage
    times, the state per trajectory). A trajectory such an ensemble loses is parked at z = 0 as for the
    autonomous fields, where a timed field need not vanish (its e(t)): it then moves smoothly from 0 and
    takes part in the shared error norm, so the steps after a loss may differ from the reference loop's."""
    return programs.adaptive_source(TimedShape(n), tab, False, 1, batch=batch, columns=columns,
                                    source_class=TimedBatchSource if batch else TimedSource)


class TimedBatchSource(TimedSource):
    """:class:`TimedSource` of a compiled ensemble (``batch``: the coefficients once per stage, at b = 0)."""

    batch = True


class TimedVelocitySource(Source):
    """:class:`Source` of a coadjoint field z' = ad*_{w(t, z)} z with an affine velocity w = W(t) z + c(t)
    read from the table TB (per stage i: c_r at (i n + r)(1 + n), W_rj after it), for the Lie-group (RKMK)
    steps of a time-dependent problem without forcing: the stages' exponentials and dexp^-1 are those of
    the autonomous writer (the structure constants only), the velocity is the stage's own."""

    def __init__(self, st):
        super().__init__(st)
        self.stage = 0

    def at_time(self, expr, stage=None):
        if stage is not None:
            self.stage = stage

    def velocity(self, z, scale=None):
        n, i = self.n, self.stage
        exprs = []
        for r in range(n):
            off = (i * n + r) * (1 + n)
            e = " + ".join([f"TB[_b + {off}]"] + [f"TB[_b + {off + 1 + j}]*{z[j]}" for j in range(n)])
            exprs.append(e if scale is None else f"{scale}*({e})")
        return self.assign("w", exprs)


def lie_fixed_source(st, tab, terms):
    """Source of the fixed-step loop (the signature of :func:`fixed_source`) of an RKMK tableau on a
    structure ``st`` (its C and closed form) with the velocity tabled per stage (:class:`TimedVelocitySource`;
    stride per step s n (1 + n))."""
    src = TimedVelocitySource(st)
    n = st.n
    z = [f"z{i}" for i in range(n)]
    e = [f"e{i}" for i in range(n)]
    head = f"def run(h, nsteps, save_every, ts, ys, t0, TB, S, k0, {', '.join(z + e)}):"
    src.emit("j = 1")
    src.emit("done = 0")
    src.emit("kk = k0")
    src.emit("for k in range(1, nsteps + 1):")
    src.indent += 1
    src.emit(f"_b = (kk % S)*{len(tab.A) * n * (1 + n)}")
    src.emit("kk += 1")
    Ks = step_source.stages(src, tab, z, "h", True, terms)
    _, d = step_source.increment(src, Ks, tab.b, z, True)
    step_source.fixed_step_end(src, z, e, d)
    return head + "\n" + "\n".join(src.lines) + "\n"


def fourier_coef_source(fit):
    """Source of ``coef(t)`` (the tuple of coefficients in table order) of a
    :class:`integrators.geometry.timed_fourier.FourierFit`: cos k w t and sin k w t by the rotation
    recurrence from cos w t, sin w t (k w t itself is not formed), the amplitudes written as numbers,
    the vanishing ones left out (``math`` functions only: numba compiles it)."""
    K = fit.K
    lines = ["def coef(t):"]
    if K:
        lines.append(f"    _th = {fit.omega!r}*t")
        lines.append("    c1 = math.cos(_th)")
        lines.append("    s1 = math.sin(_th)")
        for k in range(2, K + 1):
            lines.append(f"    c{k} = c{k - 1}*c1 - s{k - 1}*s1")
            lines.append(f"    s{k} = s{k - 1}*c1 + c{k - 1}*s1")
    exprs = []
    for j in range(len(fit.a0)):
        terms = [repr(float(fit.a0[j]))]
        terms += [f"{float(fit.a[k, j])!r}*c{k + 1}" for k in range(K) if fit.a[k, j] != 0.0]
        terms += [f"{float(fit.b[k, j])!r}*s{k + 1}" for k in range(K) if fit.b[k, j] != 0.0]
        exprs.append(" + ".join(terms))
    lines.append("    return (" + ", ".join(exprs) + ",)")
    return "\n".join(lines) + "\n"
