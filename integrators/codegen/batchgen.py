"""Generated code of the ensembles (:mod:`integrators.engine.batch`, :mod:`integrators.backends.batch_kernels`):
the stages of :mod:`integrators.codegen.writer` (its one dexp^-1: on so(3) the truncated series is folded
by the relation ad_x^3 = -|x|^2 ad_x into two brackets, :meth:`integrators.codegen.writer.Source._fold`),
with branch-free exponentials for the lanes.

For the lanes of :mod:`integrators.backends.batch_kernels` (code the compiler vectorizes: no call, no
branch) Rodrigues' coefficients a = sin t / t and b = (1 - cos t)/t^2 (Murray, Li and Sastry 1994,
2.2; t = |x|) come without sin, cos or sqrt: sigma = sin u / u and cos u from their Taylor series to
u^20 and u^22 at u = t/16 (truncation < 1e-19 for t <= 16), three doublings sin(2s)/(2s) = sigma
cos s, cos 2s = 1 - 2 s^2 sigma^2 to s = t/2, then a = sigma cos(t/2), b = sigma^2 / 2. The
largest t^2 of an attempt is recorded as ``_big``; an attempt with t > 16 is rejected by the caller.

On se(3) the lanes' exponential (Ad_exp(x)^T of :meth:`integrators.codegen.exp_writer.ExponentialWriter._act_se3`) needs
also c = (t - sin t)/t^3; at s = t/16 the four of sigma = sin s / s, cos s, beta = (1 - cos s)/s^2
and c come from their Taylor series (:func:`_power_series`), then four doublings s -> 2s:
sigma' = sigma cos s, cos 2s = 1 - 2 s^2 sigma^2, beta' = sigma^2 / 2 (1 - cos 2s = 2 sin^2 s) and
c' = (c + sigma beta)/4 (1 - sin 2s/2s = (1 - sigma) + sigma (1 - cos s)); all without
cancellation, so (a, b, c) = (sigma, beta, c) at t to a few ulp (relative) for t <= 16.
"""

from __future__ import annotations

import math
from fractions import Fraction

from . import writer as codegen
from . import programs


class EnsembleSource(codegen.Source):
    """codegen.Source with the branch-free so(3) and se(3) exponentials of the lanes (module docstring)."""

    lanes = False

    def so3_ab(self, x):
        if not self.lanes:
            return super().so3_ab(x)
        # branch-free Rodrigues coefficients (module docstring); _big records the largest |x|^2
        t2, s, c = self.fresh("t2"), self.fresh("s"), self.fresh("c")
        self.emit(f"{t2} = {x[0]}*{x[0]} + {x[1]}*{x[1]} + {x[2]}*{x[2]}")
        self.emit(f"_big = max(_big, {t2})")
        self.emit(f"{s}u = {t2}*0.00390625")
        self.emit(f"{s} = {_horner(f'{s}u', [(2 * k) * (2 * k + 1) for k in range(1, 11)])}")
        self.emit(f"{c} = {_horner(f'{s}u', [(2 * k - 1) * (2 * k) for k in range(1, 12)])}")
        for k in range(3):  # t -> 2t: sin(2t)/(2t) = sigma cos t, cos 2t = 1 - 2 t^2 sigma^2
            self.emit(f"{c}, {s} = 1.0 - {2.0 * 4.0 ** k * 0.00390625!r}*{t2}*{s}*{s}, {s}*{c}")
        ca, cb = self.fresh("a"), self.fresh("b")
        self.emit(f"{ca} = {s}*{c}")
        self.emit(f"{cb} = 0.5*{s}*{s}")
        # s = sin(t/2)/(t/2), c = cos(t/2) of this x: the closed dexp^-1 of the same x reads them
        # (:meth:`integrators.codegen.writer.Source._dexpinv_so3_lanes`)
        self.half_angle[tuple(x)] = (t2, s, c)
        return ca, cb

    def _act_se3(self, x, z, delta):
        if not self.lanes:
            return super()._act_se3(x, z, delta)
        # codegen's se(3) action with its one call co3(t2) replaced by the branch-free coefficients
        start = len(self.lines)
        out = super()._act_se3(x, z, delta)
        at = next(i for i in range(start, len(self.lines)) if "= co3(" in self.lines[i])
        names, arg = self.lines[at].strip().split(" = co3(", 1)
        saved, self.lines = self.lines[at + 1:], self.lines[:at]
        self._co3_lanes(arg[:-1], [v.strip() for v in names.split(",")])
        self.lines += saved
        return out

    def _co3_lanes(self, t2expr, names):
        """Emit names = (a, b, c) = (sin t / t, (1 - cos t)/t^2, (t - sin t)/t^3), t^2 = t2expr,
        without branch, call or sqrt (module docstring: series at s = t/16, four doublings); records
        the largest t^2 in ``_big``."""
        t2, sg, co, bb, cc = (self.fresh(p) for p in ("t2", "sg", "co", "bb", "cc"))
        self.emit(f"{t2} = {t2expr}")
        self.emit(f"_big = max(_big, {t2})")
        u = f"{t2}*0.00390625"
        self.emit(f"{sg}u = {u}")
        for name, m in ((sg, 1), (co, 0), (bb, 2), (cc, 3)):  # sum_k (-1)^k u^k/(2k + m)!
            self.emit(f"{name} = {_power_series(f'{sg}u', m)}")
        for k in range(4):  # s -> 2s (s^2 = t^2 4^k/256)
            s2 = 4.0 ** k * 0.00390625
            self.emit(f"{cc}, {bb}, {sg}, {co} = 0.25*({cc} + {sg}*{bb}), 0.5*{sg}*{sg}, {sg}*{co}, "
                      f"1.0 - {2.0 * s2!r}*{t2}*{sg}*{sg}")
        self.emit(f"{names[0]}, {names[1]}, {names[2]} = {sg}, {bb}, {cc}")


def _horner(u, dens):
    """The series 1 - u/d1 (1 - u/d2 (1 - ...)) as c0 + u (c1 + u (c2 + ...)) with c_k = (-1)^k /
    (d1 ... dk): sin t / t with d = (2k)(2k + 1) and cos t with d = (2k - 1)(2k), u = t^2 (the
    Taylor series); two dependent operations per term (a product and a sum) instead of three."""
    coeffs, prod = [1.0], 1
    for k, d in enumerate(dens, 1):
        prod *= d  # exact integer: each c_k is correctly rounded
        coeffs.append((-1.0) ** k / prod)
    out = repr(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = f"({c!r} + {u}*{out})"
    return out


def _power_series(u, m, terms=11):
    """sum_{k < terms} (-1)^k u^k / (2k + m)! in Horner form (u = s^2): m = 1 sin s / s, m = 0 cos s,
    m = 2 (1 - cos s)/s^2, m = 3 (s - sin s)/s^3 (the Taylor series; truncation below 1e-21 for
    u <= 1); each coefficient is the correctly rounded 1/(2k + m)!."""
    coeffs = [float(Fraction((-1) ** k, math.factorial(2 * k + m))) for k in range(terms)]
    out = repr(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = f"({c!r} + {u}*{out})"
    return out


def attempt_lines(st, tab, lie, terms, lanes=False, proj=None):
    """(first lines, w names, attempt lines, d names, wl names): the bodies of :func:`attempt_source`
    (``lanes``: the branch-free so(3) exponential, which also records ``_big``; ``proj``: the Casimir
    projection of a projected pair, onto the targets c0, c1, ...: then d is the projected step's
    increment and wl the generator at the projected point, :func:`integrators.codegen.programs._project_accepted`)."""
    n = st.n
    z = [f"z{i}" for i in range(n)]
    W0 = [f"W0_{i}" for i in range(n)]
    first = EnsembleSource(st)
    w = first.velocity(z) if lie else first.field(z)
    src = EnsembleSource(st)
    src.lanes = lanes
    d, z1, wl, err = programs.attempt(src, tab, z, lie, terms, W0)
    src.emit(f"err = {err}")
    if proj is not None:
        wl, inc = programs._project_accepted(src, proj, z1, [f"c{k}" for k in range(proj.p)], lie)
        d = src.assign("dp", [f"{d[i]} + {inc[i]}" for i in range(n)])
    return first.lines, w, src.lines, d, wl


def attempt_source(st, tab, lie, terms, proj=None):
    """Source of ``first(z...) -> w...`` (the first stage's generator, or field) and ``attempt(hs,
    rtol, atol, z..., w0..., c...) -> (err, d..., wl...)``: one attempted step of signed size hs (arrays
    of shape (B,) allowed), its increment d = z1 - z, the generator wl at z1 (first stage of the next
    step: FSAL) and the error norm of :func:`integrators.codegen.programs.adaptive_source` per trajectory;
    with ``proj`` (a projected pair) the step is projected onto {C = c} (the targets c... only then)."""
    n = st.n
    z = [f"z{i}" for i in range(n)]
    W0 = [f"W0_{i}" for i in range(n)]
    cz = [] if proj is None else [f"c{k}" for k in range(proj.p)]
    fl, w, al, d, wl = attempt_lines(st, tab, lie, terms, proj=proj)
    text = f"def first({', '.join(z)}):\n" + "\n".join(fl) + f"\n    return ({', '.join(w)},)\n\n"
    text += (f"def attempt(hs, rtol, atol, {', '.join(z + W0 + cz)}):\n" + "\n".join(al)
             + f"\n    return (err, {', '.join(d + wl)},)\n")
    return text


def adaptive_source(st, tab, lie, terms, proj=None, grid=False):
    """:func:`integrators.codegen.programs.adaptive_source` (one trajectory, compiled) written with
    :class:`EnsembleSource`; ``grid``: with the output grid (:mod:`integrators.codegen.dense_source`)."""
    return programs.adaptive_source(st, tab, lie, terms, source_class=EnsembleSource, proj=proj, grid=grid)
