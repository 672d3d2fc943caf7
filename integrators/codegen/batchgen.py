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

In the lanes the ambient field (I - P) ad*_{W z + c} z of the plain and projected pairs is written as a
quadratic form in z (:func:`quadratic_form`) when that takes fewer operations: in a random basis every
C[i, j, k] is non-zero and ad*_w z alone costs ~3 n^3 operations, the form ~n^3 (dimension 6: a step
of rk853_projected on se(3) in a random basis with a servo-constraint 9052 -> 4264 operations).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import writer as codegen
from . import orbit_source, programs
from .matrix_source import MatrixSource, matrix_form, preamble
from .source_text import lin


class EnsembleSource(codegen.Source):
    """codegen.Source with the branch-free so(3) and se(3) exponentials of the lanes and, in the lanes,
    the ambient field as a quadratic form when that takes fewer operations (module docstring)."""

    lanes = False

    def field(self, z):
        if not self.lanes:
            return super().field(z)
        form = quadratic_form(self.st)
        if form is None:
            return super().field(z)
        Q, L, pairs = form
        mono = self.assign("qm", [f"{z[k]}*{z[l]}" for k, l in pairs])
        return self.assign("f", [lin([(Q[j, p], mono[p]) for p in range(len(pairs))]
                                     + [(L[j, k], z[k]) for k in range(self.n)]) for j in range(self.n)])

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


def attempt_lines(st, tab, lie, terms, lanes=False, proj=None, fixed=None, extra=None, base=None):
    """(first lines, w names, attempt lines, d names, wl names): the bodies of :func:`attempt_source`
    (``lanes``: the branch-free so(3) exponential, which also records ``_big``; ``proj``: the Casimir
    projection of a projected pair, onto the targets c0, c1, ...: then d is the projected step's
    increment and wl the generator at the projected point, :func:`integrators.codegen.programs._project_accepted`;
    ``fixed``: that many Newton iterations without a test, ``_pok`` <= 0 when converged,
    :meth:`integrators.codegen.projection.CasimirProjection.write`; ``extra``: a dict that gets the names of the
    unprojected increment as "d_raw"); ``base``: the writer class (default :class:`EnsembleSource`)."""
    n = st.n
    z = [f"z{i}" for i in range(n)]
    cls = orbit_source.writer_class(st, lie, base or EnsembleSource)
    first = cls(st)
    W0 = [f"W0_{i}" for i in range(first.gdim)]
    w = first.velocity(z) if lie else first.field(z)
    src = cls(st)
    src.lanes = lanes
    d, z1, wl, err = programs.attempt(src, tab, z, lie, terms, W0)
    src.emit(f"err = {err}")
    if proj is not None:
        if extra is not None:
            extra["d_raw"] = list(d)
        wl, inc = programs._project_accepted(src, proj, z1, [f"c{k}" for k in range(proj.p)], lie, fixed=fixed)
        d = src.assign("dp", [f"{d[i]} + {inc[i]}" for i in range(n)])
    return first.lines, w, src.lines, d, wl


def attempt_source(st, tab, lie, terms, proj=None):
    """Source of ``first(z...) -> w...`` (the first stage's generator, or field) and ``attempt(hs,
    rtol, atol, z..., w0..., c...) -> (err, d..., wl...)``: one attempted step of signed size hs (arrays
    of shape (B,) allowed), its increment d = z1 - z, the generator wl at z1 (first stage of the next
    step: FSAL) and the error norm of :func:`integrators.codegen.programs.adaptive_source` per trajectory;
    with ``proj`` (a projected pair) the step is projected onto {C = c} (the targets c... only then).
    Dense structure constants (:func:`integrators.codegen.matrix_source.matrix_form`) are written in matrix form,
    the products with C one numpy product over the (n, B) stack of the columns (its constants in the text's
    preamble), as the one-trajectory numpy loop does: ~100 ufunc calls an attempt instead of one or two a term of
    the quadratic form (sp(4) in a random basis, servo1, rk853: 4.6 -> 0.37 ms an attempt of 2 trajectories,
    10.9 -> 4.6 ms of 2048)."""
    n = st.n
    z = [f"z{i}" for i in range(n)]
    cz = [] if proj is None else [f"c{k}" for k in range(proj.p)]
    matrix = matrix_form(st, lie)
    fl, w, al, d, wl = attempt_lines(st, tab, lie, terms, proj=proj, base=MatrixSource if matrix else None)
    W0 = [f"W0_{i}" for i in range(len(w))]
    text = f"def first({', '.join(z)}):\n" + "\n".join(fl) + f"\n    return ({', '.join(w)},)\n\n"
    text += (f"def attempt(hs, rtol, atol, {', '.join(z + W0 + cz)}):\n" + "\n".join(al)
             + f"\n    return (err, {', '.join(d + wl)},)\n")
    return preamble(st, proj) + text if matrix else text


def adaptive_source(st, tab, lie, terms, proj=None, grid=False):
    """:func:`integrators.codegen.programs.adaptive_source` (one trajectory, compiled) written with
    :class:`EnsembleSource`; ``grid``: with the output grid (:mod:`integrators.codegen.dense_source`)."""
    return programs.adaptive_source(st, tab, lie, terms, source_class=orbit_source.writer_class(st, lie, EnsembleSource),
                                    proj=proj, grid=grid)


_FORMS = {}


def _flops(a):
    """Operations of a sum of products with the coefficients ``a`` (a product and an addition each
    term; a coefficient +-1 no product)."""
    a = np.asarray(a).ravel()
    a = a[a != 0.0]
    return 2 * a.size - int(np.sum(np.abs(a) == 1.0))


def quadratic_form(st):
    """The ambient field f(z) = (I - P) ad*_{W z + c} z of structure ``st`` as f_j = sum_p Q[j, p] z_k z_l
    (p over the pairs k <= l of ``pairs``) + sum_k L[j, k] z_k, or None when that is not fewer operations
    than the writer's w = W z + c, g = ad*_w z, (I - P) g (:meth:`integrators.codegen.writer.Source.field`).

    With A[j, l, k] = sum_i C[i, j, k] W[i, l]: g_j = sum_{l, k} A[j, l, k] z_l z_k + sum_k (sum_i c_i
    C[i, j, k]) z_k, so Q[j, (k, l)] = A[j, k, l] + A[j, l, k] (k < l), A[j, k, k] (k = l), then Q and L
    multiplied by I - P. In a generic (random) basis C has ~n^3 non-zero entries and the writer's form
    costs ~2 n^3 + 4 n^2 operations against ~n^3 + n^2 / 2 here (dimension 6: 650 against 290); in a
    sparse basis the writer's form is kept. The same polynomial summed in another order: equal to
    round-off. Entries below 1e-16 of the largest (the round-off of a basis change, sub-ulp terms) are
    dropped."""
    key = st.key
    if key in _FORMS:
        return _FORMS[key]
    C, W, c, n = st.C, st.W, st.c, st.n
    A = np.einsum("ijk,il->jlk", C, W)
    pairs = [(k, l) for k in range(n) for l in range(k, n)]
    Q = np.array([[A[j, k, l] + A[j, l, k] if k != l else A[j, k, k] for k, l in pairs] for j in range(n)])
    L = np.einsum("i,ijk->jk", c, C)
    M = np.eye(n) if st.P is None else np.eye(n) - st.P
    Q, L = M @ Q, M @ L
    big = max(float(np.max(np.abs(Q), initial=0.0)), float(np.max(np.abs(L), initial=0.0)))
    Q[np.abs(Q) <= 1e-16 * big] = 0.0
    L[np.abs(L) <= 1e-16 * big] = 0.0
    used = np.flatnonzero(np.any(Q != 0.0, axis=0))
    ours = len(used) + _flops(Q) + _flops(L) + n
    theirs = _flops(W) + _flops(c) + 3 * int(np.count_nonzero(C)) + (0 if st.P is None else _flops(M))
    out = None if ours >= theirs else (Q[:, used], L, [pairs[p] for p in used])
    _FORMS[key] = out
    return out

