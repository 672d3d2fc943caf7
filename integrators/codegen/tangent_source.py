"""The generated tangent flow: Benettin's QR loop of a Lyapunov spectrum as straight-line source.

For a recognised coadjoint problem z' = F(z) = Q ad*_{W z + c} z (:class:`integrators.geometry.recognition.Structure`;
Q = I - P, P the multiplier projector of a servo-constraint of the first kind, Q = I without forcing)
the variational equation V' = DF(z) V has, column by column, the closed form from the structure constants

    DF(z) v = Q (ad*_{W v} z + ad*_{W z + c} v),   (ad*_x m)_j = sum_{i,k} x_i C[i, j, k] m_k,

written here as one sum over the non-zero entries of C per component, sum C[i, j, k] (u_i z_k + w_i v_k),
u = W v, w = W z + c. The state and the n tangent columns are stepped by the SAME explicit Runge-Kutta
tableau, stage by stage (one stage recurrence: Y_i = z + sum_j a_ij K_j, VY_i = V + sum_j a_ij KV_j,
K_i = h F(Y_i), KV_i = h DF(Y_i) VY_i), which is the derivative of the method's own step map
(Hairer, Norsett and Wanner I, II.2: an explicit Runge-Kutta method commutes with linearisation), so the
spectrum is that of the method's map, as in the numpy loop of
:func:`integrators.analysis.phase_space.lyapunov.rk_tangent_step`.

Every ``sub`` steps (one QR interval dt) the columns are

* projected onto the tangent space of the leaf (the first p columns; the leaf's r normals at z are the
  gradients of the algebra's polynomial Casimirs, written from their polynomials by
  :class:`integrators.codegen.projection.CasimirProjection`, and the rows of the linear invariants; the
  normals are orthonormalised by modified Gram-Schmidt and their components removed: the same map as
  V - N (N^T N)^-1 N^T V of the numpy loop);
* re-orthonormalised by modified Gram-Schmidt (Golub and Van Loan 2013, 5.2.8: V = Q R with a
  positive diagonal, the R_ii the norms), and log R_ii accumulated. The columns are orthogonalised
  against the previous ones before those are normalised, v <- v - ((u . v) / (u . u)) u (the same map
  as v - (q . v) q, q = u / |u|, to round-off), and the sums of squares as balanced trees: the chain of
  dependent operations from one column to the next is a dot product, a multiplication by the
  precomputed 1 / (u . u) and a subtraction, not also a square root and a division (the QR of every
  step was a latency chain that cost more than the 6 x 6 tangent step itself with numba); with the MEGNO integrals of the
  first column (Cincotta and Simo 2000), as in :mod:`integrators.analysis.phase_space.lyapunov`.
  Column 0 (MEGNO reads its sum every interval) adds log R_00 each time; the other columns keep the
  running product pr_i of their R_ii and move it into the sum, lg_i += log pr_i, pr_i = 1, only when it
  leaves [1e-30, 1e30] (``lbig``, ``pbig``), and at the saves and the end: one logarithm per interval
  instead of k. No overflow or underflow: a finite norm of finite components lies in [1e-162, 1.4e154]
  (its square neither underflows to 0, which fails the finiteness check through 1/R_ii, nor
  overflows), so pr_i R_ii stays within [1e-192, 1e185].

The function (one text for Python floats, numpy (B,) columns and numba)::

    run(h, ntr, sub, nqr, save_every, dt, Z, V, ACC, RUN, RUNM) -> done

first takes ``ntr`` steps of the state alone (the transient), then ``nqr`` QR intervals of ``sub``
steps; Z (n) the state, V (n k) the frame of k <= n columns, flat (k < n: the k largest exponents only;
each column costs about two evaluations of the field, so a step costs about 1 + 2k of them)
(V[i*k + l]: component i of column l; flat, one index per entry in every mode), ACC (k + 4) the sums
log R_ii and the MEGNO accumulators (L_prev, int L, int Y, Y_prev), all updated in place; RUN[j][i] and
RUNM[j] receive the running estimates every ``save_every`` QR intervals and at the last. ``done`` is
the number of QR intervals completed: an interval whose state or norms are not finite (overflow, a
singular frame) stops the loop with the previous values kept. Besides the helpers of
:mod:`integrators.reference.genhelpers` (``sqrt``, ``fin``: the finiteness of the interval, over the
whole ensemble for numpy columns), the text calls ``inv`` (1/x, inf at 0), ``slog`` (log x, -inf
for x <= 0 or NaN), ``inr`` (x inside (1e-30, 1e30); numpy columns: all of them), ``lbig`` (log x outside
[1e-30, 1e30], else 0) and ``pbig`` (1 outside [1e-30, 1e30],
else x), supplied per mode by :mod:`integrators.backends.tangent_runner`.
"""

from __future__ import annotations

import numpy as np

from .source_text import lin
from .writer import Source

#: the range [1/PBIG, PBIG] in which a running product of the R_ii stays (``lbig``, ``pbig``)
PBIG = 1e30


class TangentSource(Source):
    """:class:`Source` with the tangent map of the coadjoint field and Gram-Schmidt."""

    def wv(self, v):
        """u = W v (the velocity's linear part, no c)."""
        W = self.st.W
        return self.assign("u", [lin([(W[i, j], v[j]) for j in range(self.n)]) for i in range(self.n)])

    def project_q(self, g, prefix):
        """Q g = (I - P) g (g itself without forcing)."""
        P = self.st.P
        if P is None:
            return g
        return self.assign(prefix, [lin([((1.0 if i == j else 0.0) - P[i, j], g[j]) for j in range(self.n)])
                                    for i in range(self.n)])

    def jvp(self, z, w, v):
        """DF(z) v = Q (ad*_{W v} z + ad*_w v), w = W z + c (module docstring)."""
        C, n = self.st.C, self.n
        u = self.wv(v)
        out = []
        for j in range(n):
            terms = []
            for i in range(n):
                for k in range(n):
                    if C[i, j, k] != 0.0:
                        terms.append((C[i, j, k], f"({u[i]}*{z[k]} + {w[i]}*{v[k]})"))
            out.append(lin(terms))
        return self.project_q(self.assign("jv", out), "jq")

    def dot(self, a, b):
        return self.assign("dp", [" + ".join(f"{x}*{y}" for x, y in zip(a, b))])[0]

    def axpy(self, a, x, y, prefix):
        """y - a x (a the name of a scalar)."""
        return self.assign(prefix, [f"{yi} - {a}*{xi}" for xi, yi in zip(x, y)])


def _tangent_step(src, tab, z, V, h):
    """Emit one step of the tableau on (z, V); return (z1, V1) names."""
    n = src.n
    Ks, KVs = [], []
    for row in tab.A:
        pairs = [(a, K) for a, K in zip(row, Ks) if a != 0.0]
        if pairs:
            dz = src.combo("dz", pairs)
            Y = src.assign("Y", [f"{z[j]} + {dz[j]}" for j in range(n)])
            VY = []
            for l in range(len(V)):
                dv = src.combo("dv", [(a, KV[l]) for a, KV in zip(row, KVs) if a != 0.0])
                VY.append(src.assign("VY", [f"{V[l][j]} + {dv[j]}" for j in range(n)]))
        else:
            Y, VY = z, V
        w = src.velocity(Y)
        F = src.project_q(src.coad(w, Y), "f")
        Ks.append(src.assign("K", [f"{h}*{F[j]}" for j in range(n)]))
        KV = []
        for l in range(len(V)):
            J = src.jvp(Y, w, VY[l])
            KV.append(src.assign("KV", [f"{h}*{J[j]}" for j in range(n)]))
        KVs.append(KV)
    bs = [(b, K) for b, K in zip(tab.b, Ks) if b != 0.0]
    d = src.combo("d", bs)
    z1 = [f"{z[j]} + {d[j]}" for j in range(n)]
    V1 = []
    for l in range(len(V)):
        dv = src.combo("dV", [(b, KV[l]) for b, KV in zip(tab.b, KVs) if b != 0.0])
        V1.append([f"{V[l][j]} + {dv[j]}" for j in range(n)])
    return z1, V1


def _tangent_step_columns(src, tab, z, nc, h):
    """Emit one step of the tableau on z and, column by column, on the frame held in the flat array V
    (V[i*nc + l]: component i of column l), updated in place; return the new state's expressions.

    The stages of the state come first (Y_i, w_i = W Y_i + c, K_i), then a loop over the columns runs
    each column's own stage recurrence VY_i = v + sum_j a_ij KV_j, KV_i = h DF(Y_i) VY_i with the state's
    stages shared: the same arithmetic as stepping all columns together (each column's recurrence
    depends only on the state's stages and itself), in a body 1/k of the size with k times fewer values
    alive at once (the straight-line form of all k columns spilled its registers: 30x the flow's cost
    per step against about 13x its arithmetic, benchmarks/phase_space.py)."""
    n = src.n
    Ks, Ys, ws = [], [], []
    for row in tab.A:
        pairs = [(a, K) for a, K in zip(row, Ks) if a != 0.0]
        Y = src.assign("Y", [f"{z[j]} + {x}" for j, x in enumerate(src.combo("dz", pairs))]) if pairs else z
        w = src.velocity(Y)
        F = src.project_q(src.coad(w, Y), "f")
        Ks.append(src.assign("K", [f"{h}*{F[j]}" for j in range(n)]))
        Ys.append(Y)
        ws.append(w)
    hs = _step_scalars(src, tab, h)
    src.emit(f"for _l in range({nc}):")
    src.indent += 1
    v = src.assign("c", [f"V[{i * nc} + _l]" for i in range(n)])
    Js = []      # DF(Y_i) VY_i per stage; VY_i = v + sum_j (a_ij h) J_j (h folded into the scalars)
    for row, Y, w in zip(tab.A, Ys, ws):
        VY = _fold(src, "VY", v, [(hs[a], J) for a, J in zip(row, Js) if a != 0.0])
        Js.append(src.jvp(Y, w, VY))
    for i, x in enumerate(_fold_terms(v, [(hs[b], J) for b, J in zip(tab.b, Js) if b != 0.0])):
        src.emit(f"V[{i * nc} + _l] = {x}")
    src.indent -= 1
    d = src.combo("d", [(b, K) for b, K in zip(tab.b, Ks) if b != 0.0])
    return [f"{z[j]} + {d[j]}" for j in range(n)]


def _step_scalars(src, tab, h):
    """Names of a h for the distinct nonzero coefficients a of the tableau (A and b), emitted once per step:
    the tangent columns' stage sums then take one product per term (h folded in)."""
    out = {}
    for a in sorted({float(x) for row in tab.A for x in row if x != 0.0} | {float(x) for x in tab.b if x != 0.0}):
        out[a] = h if a == 1.0 else src.assign("ha", [f"{a!r}*{h}"])[0]
    return out


def _fold_terms(v, pairs):
    return [" + ".join([v[j]] + [f"{c}*{J[j]}" for c, J in pairs]) for j in range(len(v))]


def _fold(src, prefix, v, pairs):
    """Names of v + sum c J over (c, J) pairs (c a scalar's name), or v itself without a pair."""
    return src.assign(prefix, _fold_terms(v, pairs)) if pairs else v


def _state_step(src, tab, z, h, record=None):
    """Emit one step of the tableau on z alone; return the new state's expressions (the stages' names Y_i
    appended to ``record`` when given)."""
    n = src.n
    Ks = []
    for row in tab.A:
        pairs = [(a, K) for a, K in zip(row, Ks) if a != 0.0]
        Y = src.assign("Y", [f"{z[j]} + {x}" for j, x in enumerate(src.combo("dz", pairs))]) if pairs else z
        if record is not None:
            record.append(Y)
        F = src.field(Y)
        Ks.append(src.assign("K", [f"{h}*{F[j]}" for j in range(n)]))
    d = src.combo("d", [(b, K) for b, K in zip(tab.b, Ks) if b != 0.0])
    return [f"{z[j]} + {d[j]}" for j in range(n)]


def _normals(src, z, proj, L):
    """Names of the leaf's normals at z: Casimir gradients (``proj``, a CasimirProjection or None)
    and the rows of L, orthonormalised by modified Gram-Schmidt."""
    raw = []
    if proj is not None:
        for row in proj.grad_exprs(src, z):
            raw.append(src.assign("ng", row))
    if L is not None:
        for row in np.atleast_2d(L):
            raw.append([repr(float(x)) for x in row])
    out = []
    for v in raw:
        for q in out:
            v = src.axpy(src.dot(q, v), q, v, "nv")
        ri = src.assign("ni", [f"inv(sqrt({' + '.join(f'{x}*{x}' for x in v)}))"])[0]
        out.append(src.assign("nq", [f"{x}*{ri}" for x in v]))
    return out


def _tree_sum(names):
    """sum of the names as a balanced expression ((a + b) + (c + d)) ..."""
    items = list(names)
    while len(items) > 1:
        items = [f"({items[i]} + {items[i + 1]})" if i + 1 < len(items) else items[i]
                 for i in range(0, len(items), 2)]
    return items[0]


class StructuredStepper:
    """How :func:`lyapunov_source` writes a step: from the recognised structure (the coadjoint field and its
    tangent map); :class:`integrators.codegen.timed_source.TimedStepper` writes a time-dependent quadratic
    field instead (extra arguments ``args`` after RUNM, a ``begin`` line, a step counter)."""

    args = ""

    def begin(self, src):
        pass

    def state_step(self, src, tab, z, h, record=None):
        return _state_step(src, tab, z, h, record)

    def tangent_step(self, src, tab, z, nc, h):
        return _tangent_step_columns(src, tab, z, nc, h)


def lyapunov_source(st, tab, p, proj=None, L=None, ncols=None, stepper=None):
    """Source of ``run`` (module docstring) for structure ``st``, tableau ``tab`` (explicit, fixed step),
    ``ncols`` tangent columns (default n: the whole spectrum; fewer: the largest exponents only, V of
    flat of length n ncols, ACC (ncols + 4), RUN[j] (ncols)), the first ``p`` of them kept on the leaf whose
    normals are the Casimir gradients of ``proj`` and the rows of ``L`` (p = n and both None: no leaf).
    ``stepper``: how a step is written (default :class:`StructuredStepper`)."""
    stepper = StructuredStepper() if stepper is None else stepper
    src = TangentSource(st)
    n = st.n
    nc = n if ncols is None else int(ncols)
    z = [f"z{i}" for i in range(n)]
    V = [[f"v{l}_{i}" for i in range(n)] for l in range(nc)]   # V[l][i]: component i of column l
    lg = [f"lg{i}" for i in range(nc)]
    head = f"def run(h, ntr, sub, nqr, save_every, dt, Z, V, ACC, RUN, RUNM{stepper.args}):"
    stepper.begin(src)
    for i in range(n):
        src.emit(f"z{i} = Z[{i}]")
    for i in range(nc):
        src.emit(f"{lg[i]} = ACC[{i}]")
    src.emit(f"Lp = ACC[{nc}]; iL = ACC[{nc + 1}]; iY = ACC[{nc + 2}]; Yp = ACC[{nc + 3}]")
    pr = [f"pr{i}" for i in range(1, nc)]      # the running products of R_ii, columns 1.. (module docstring)
    for x in pr:
        src.emit(f"{x} = 1.0")
    src.emit("for _t in range(ntr):")
    src.indent += 1
    z1 = stepper.state_step(src, tab, z, "h")
    src.emit(", ".join(z) + " = " + ", ".join(z1))
    src.indent -= 1
    src.emit("done = 0")
    src.emit("j = 0")
    src.emit("sc = save_every     # intervals to the next save (k % save_every == 0)")
    src.emit("for k in range(1, nqr + 1):")
    src.indent += 1
    src.emit("for _s in range(sub):")
    src.indent += 1
    z1 = stepper.tangent_step(src, tab, z, nc, "h")
    src.emit(", ".join(z) + " = " + ", ".join(z1))
    src.indent -= 1
    for l in range(nc):
        src.emit(", ".join(V[l]) + " = " + ", ".join(f"V[{i * nc + l}]" for i in range(n)))
    cols = [list(c) for c in V]
    if (proj is not None or L is not None) and p < n:
        for q in _normals(src, z, proj, L):
            for l in range(min(p, nc)):
                cols[l] = src.axpy(src.dot(q, cols[l]), q, cols[l], "pv")
    # modified Gram-Schmidt, R_ii = the norms
    Q, R, RI, U, IS = [], [], [], [], []
    for l in range(nc):
        v = cols[l]
        for u, isj in zip(U, IS):
            c = src.assign("gc", [f"{_tree_sum([f'{a}*{b}' for a, b in zip(u, v)])}*{isj}"])[0]
            v = src.axpy(c, u, v, "gv")
        s = src.assign("ss", [_tree_sum([f"{x}*{x}" for x in v])])[0]
        U.append(v)
        IS.append(src.assign("is", [f"inv({s})"])[0])
        nrm = src.assign("rn", [f"sqrt({s})"])[0]
        R.append(nrm)
        ri = src.assign("ri", [f"inv({nrm})"])[0]
        RI.append(ri)
        Q.append(src.assign("qv", [f"{x}*{ri}" for x in v]))
    lr0 = src.assign("lr", [f"slog({R[0]})"])[0]
    # a finite log of R_00, finite R_ii and 1/R_ii (each norm finite and > 0) and a finite state imply a
    # finite frame (q = v / |v| with v finite); the sum as a balanced tree (a chain of adds is one long
    # dependency in compiled code)
    src.emit("_chk = " + _tree_sum([lr0] + R[1:] + RI[1:] + z))
    src.emit("if not fin(_chk):")
    src.emit("    break")
    for l in range(nc):
        for i in range(n):
            src.emit(f"V[{i * nc + l}] = {Q[l][i]}")
    src.emit(f"{lg[0]} = {lg[0]} + {lr0}")
    for i in range(1, nc):
        src.emit(f"{pr[i - 1]} = {pr[i - 1]}*{R[i]}")
    if nc > 1:    # one predicted branch: the products move into the sums only when one leaves the range
        src.emit("if not (" + " and ".join(f"inr({x})" for x in pr) + "):")
        for i in range(1, nc):
            src.emit(f"    {lg[i]} = {lg[i]} + lbig({pr[i - 1]})")
            src.emit(f"    {pr[i - 1]} = pbig({pr[i - 1]})")
    src.emit("done = k")
    src.emit("tk = k*dt")
    src.emit(f"iL = iL + 0.5*dt*({lg[0]} + Lp)")
    src.emit(f"Yk = 2.0*({lg[0]} - iL/tk)")
    src.emit("iY = iY + 0.5*dt*(Yk + Yp)")
    src.emit(f"Lp = {lg[0]}; Yp = Yk")
    src.emit("sc -= 1")
    src.emit("if sc == 0 or k == nqr:")
    src.indent += 1
    src.emit("sc = save_every")
    src.emit(f"RUN[j][0] = {lg[0]}/tk")
    for i in range(1, nc):
        src.emit(f"RUN[j][{i}] = ({lg[i]} + slog({pr[i - 1]}))/tk")
    src.emit("RUNM[j] = iY/tk")
    src.emit("j += 1")
    src.indent -= 2
    for i in range(n):
        src.emit(f"Z[{i}] = z{i}")
    src.emit(f"ACC[0] = {lg[0]}")
    for i in range(1, nc):
        src.emit(f"ACC[{i}] = {lg[i]} + slog({pr[i - 1]})")
    src.emit(f"ACC[{nc}] = Lp; ACC[{nc + 1}] = iL; ACC[{nc + 2}] = iY; ACC[{nc + 3}] = Yp")
    src.emit("return done")
    return head + "\n" + "\n".join(src.lines) + "\n"


def stages_source(st, tab, stepper=None):
    """Source of ``states(h, nsteps, Z, OUT{args})``: ``nsteps`` steps of the state alone from Z (n), updated
    in place, the stage values of every step appended to the list OUT (step k, stage i, component j at
    (k s + i) n + j): the same arithmetic as the state's steps of :func:`lyapunov_source` (the stages
    the tangent flow's Jacobians are evaluated at, :mod:`integrators.backends.tangent_blocks`)."""
    stepper = StructuredStepper() if stepper is None else stepper
    src = TangentSource(st)
    n = st.n
    z = [f"z{i}" for i in range(n)]
    head = f"def states(h, nsteps, Z, OUT{stepper.args}):"
    stepper.begin(src)
    src.emit("push = OUT.extend")
    for i in range(n):
        src.emit(f"z{i} = Z[{i}]")
    src.emit("for _t in range(nsteps):")
    src.indent += 1
    rec = []
    z1 = stepper.state_step(src, tab, z, "h", rec)
    src.emit("push((" + ", ".join(x for Y in rec for x in Y) + ",))")
    src.emit(", ".join(z) + " = " + ", ".join(z1))
    src.indent -= 1
    for i in range(n):
        src.emit(f"Z[{i}] = z{i}")
    return head + "\n" + "\n".join(src.lines) + "\n"
