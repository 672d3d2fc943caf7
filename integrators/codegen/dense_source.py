"""The output grid inside the generated adaptive loop: after every accepted step, the states at the
requested times inside it from the pair's continuous extension, written by the same
:class:`integrators.codegen.writer.Source` as the step (:func:`integrators.codegen.programs.adaptive_source`
with ``grid``).

For an accepted step [t_n, t_n + h] (signed h) with stage increments K_i (the step's own, the FSAL stage
and the extra stages of the interpolant, written from the tableau's ``extra_A``, ``extra_c`` as the
step's stages are: K_i = h f(z_n + sum_j a_ij K_j), or h dexp^-1_{theta_i}(w(exp(theta_i) . z_n)) for
RKMK, Munthe-Kaas 1999), every requested time t in it has s = (t - t_n) / h and

    theta(s) = sum_i b_i(s) K_i,   b_i(s) = sum_k P[i, k] s^(k+1)   (Horner, as Tableau.weights),

mapped to the state as the step maps theta(1): z_n + exp(ad theta(s))^T z_n - z_n (RKMK, the writer's
act), z_n + theta(s) (ambient), then projected onto {C = C(y0)} for the projected pairs (Hairer, Lubich
and Wanner 2006, IV.4; :mod:`integrators.codegen.projection`). z_n is the step's compensated start z + e.
A requested time equal to a step's end takes the step's state. This is the definition of
:func:`integrators.reference.dense_output.at_times` (the numpy reference the tests compare with), with the
stages of the step itself instead of recomputed ones: the same to round-off, and the extra stages are
computed only for a step that contains a requested time.

Two ways, one definition:

* compiled code (numba; ``inline``): every output time is evaluated inside the loop as the loop passes it
  (:func:`inside`, :func:`inside_batch`), straight-line code per point;
* Python (floats for one trajectory, numpy columns for an ensemble): a point at a time in Python would
  cost far more than the step (hundreds of bytecodes, or of ufunc calls, per output time), so the loop
  only logs each step that contains output times (its start, size, compensated start state and stage
  increments: :func:`inside_log`) and the logged steps are evaluated together, every output time of them
  a column of one call of the generated :func:`evaluator_source` (the weights, the state map and the
  projection over numpy arrays; the extra stages before, a column per logged step), when the log is
  full (``FLUSH``) and at the end.

Arguments the loop gains: ``te`` (sorted in the direction of integration; times at t0 filled by the
caller), ``ye`` ((G, n); numpy columns (G, n, B); compiled ensemble (G, B, n)) and ``GI`` (an int64
array of one entry: the next grid index, read at the start and written at the end, so a run continued
in segments or chunks goes on filling the same grid); without ``inline`` also ``LOG`` (a list),
``FLUSH`` (called with no argument when LOG holds ``LOGCAP`` steps: the caller bounds the memory of an
ensemble's log) and ``TU`` (the list direction * te, for bisect_left).
"""

from __future__ import annotations

import numpy as np

from .source_text import num
from .affine_source import writer_for

def grid_arguments(inline=True):
    return ["te", "ye", "GI"] + ([] if inline else ["LOG", "FLUSH", "LOGCAP", "TU"])


def inside_log(src, K, z, e, copy):
    """Emit (Python loops, in the accepted branch before the state is updated): when the step from t to
    tn_ contains output times, skip them (gi) and log (first index, end index, t, tn_, hs, z + e..., K...)
    (``copy``: the K are views of a buffer the next attempt overwrites, numpy columns of RowSource)."""
    n = src.n
    src.emit("tn_ = t1 if last else t + hs")
    src.emit("if gi < ng and direction*(te[gi] - tn_) < 0.0:")
    src.indent += 1
    src.emit("g0_ = gi")
    src.emit("gi = bisect_left(TU, direction*tn_, gi)")
    ks = [f"np.copy({v})" if copy else v for V in K for v in V]
    src.emit("LOG.append((g0_, gi, t, tn_, hs, " + ", ".join([f"{z[j]} + {e[j]}" for j in range(n)] + ks) + "))")
    src.emit("if len(LOG) >= LOGCAP:")
    src.emit("    FLUSH()")
    src.indent -= 1


def evaluator_source(st, tab, lie, terms, proj, part="points", source_class=None):
    """Source of the evaluation of logged steps, every argument a numpy array (columns):

    * ``part`` "stages": ``run(hs, zb..., K...) -> (Kx...)``, the interpolant's extra stages (rows over the
      components) of the steps of size hs from the compensated starts zb with the stage increments K (the
      step's and the FSAL one), a column per logged step (and trajectory);
    * "points": ``run(s, hs, V, cz...) -> (y...)``, the state at s of such a step, a column per output time
      (and trajectory): V (n + r g, columns) holds its rows zb, K, Kx (the extra stages of its step) stacked,
      one array as the caller has them (no restacking of r g rows a call), and cz the targets of a projected
      pair.

    ``source_class``: the writer (:class:`Source` unless given; :mod:`integrators.codegen.matrix_source`)."""
    src = source_class(st) if source_class else writer_for(st, lie)
    n, g = st.n, src.gdim   # stage increments are generators: 2n components with a forcing
    rows = tab.s + (1 if tab.fsal else 0)
    zb = [f"zb{j}" for j in range(n)]
    K = [[f"K{r}_{j}" for j in range(g)] for r in range(rows)]
    names = [v for V in K for v in V]
    if part == "stages":
        Kx = extra_stages(src, tab, K, zb, "hs", lie, terms)[rows:]
        head = f"def run(hs, {', '.join(zb + names)}):"
        return head + "\n" + "\n".join(src.lines) + f"\n    return ({', '.join(v for V in Kx for v in V)},)\n"
    Kx = [[f"Kx{r}_{j}" for j in range(g)] for r in range(len(tab.extra_c))]
    cz = [] if proj is None else [f"cz{k}" for k in range(proj.p)]
    consts = []   # the interpolant's weight polynomials (_columns_theta): built once, when the text is loaded
    src.emit(f"{', '.join(zb)}, = V_[:{n}]")
    y = interpolant(src, tab, K + Kx, zb, "s_", lie, proj, cz, stacked=f"V_[{n}:]", consts=consts)
    head = "".join(line + "\n" for line in consts) + f"def run(s_, hs, {', '.join(['V_'] + cz)}):"
    return head + "\n" + "\n".join(src.lines) + f"\n    return ({', '.join(y)},)\n"


def extra_stages(src, tab, K, z, h, lie, terms):
    """Emit the interpolant's extra stages after the stages K (names: the step's, the FSAL one) from z
    with step h; return the list of all stage increments."""
    K = list(K)
    for row in tab.extra_A:
        pairs = [(a, V) for a, V in zip(row, K) if float(a) != 0.0]
        if lie:
            theta = src.combo("thx", pairs)
            Y = src.stage_act(theta, z)
            xh = src.velocity(Y, scale=h)
            K.append(src.dexpinv(theta, xh, terms) if terms > 1 else xh)
        else:
            dz = src.combo("dzx", pairs)
            Y = src.assign("Yx", [f"{z[j]} + {dz[j]}" for j in range(src.n)])
            w = src.field(Y)
            K.append(src.assign("Kx", [f"{h}*{w[j]}" for j in range(src.n)]))
    return K


def _weights(src, tab, s):
    """Names of b_i(s) (None where the row of P vanishes), Horner in s as Tableau.weights."""
    out = []
    for row in tab.P:
        if not any(float(p) != 0.0 for p in row):
            out.append(None)
            continue
        e = "0.0"
        for p in reversed(row):
            e = f"({e} + {num(p)})*{s}"
        out.append(src.assign("bw", [e])[0])
    return out


def _columns_theta(src, tab, K, s, stacked, consts):
    """Names of theta(s) = sum_i b_i(s) K_i on numpy columns with a few array operations instead of a
    Horner chain per weight and a term per (stage, component): the weights of every row at once by the
    same Horner recurrence as :func:`_weights` (b = (..((P_q s) + P_(q-1)) s ..) s, elementwise the same
    operations, so the same values), then theta_j = sum_i b_i K_ij over the stacked K (rows, n, G) (one
    einsum: the sum over the rows in another order than the scalar text's, round-off); ``stacked``: an
    expression of the K already stacked (rows n, columns), else they are stacked here; ``consts``: the list that
    receives the module-level line of the weight table (built once, when the text is loaded)."""
    n, rows = len(K[0]), len(K)
    P = np.array(tab.P[:rows], dtype=float)
    w, st, out, coef = src.fresh("Wb"), src.fresh("KK"), src.fresh("ths"), src.fresh("Pc")
    consts.append(f"{coef} = np.array({P.T.tolist()!r})[:, :, None]")
    src.emit(f"{w} = 0.0")
    for k in range(P.shape[1] - 1, -1, -1):
        src.emit(f"{w} = ({w} + {coef}[{k}])*{s}")
    rowsof = stacked or f"np.array(np.broadcast_arrays({', '.join(v for V in K for v in V)}))"
    src.emit(f"{st} = {rowsof}.reshape({rows}, {n}, -1)")
    names = [f"{out}{j}" for j in range(n)]
    src.emit(f"{', '.join(names)}, = np.einsum('rg,rjg->jg', {w} + np.zeros(({rows}, 1)), {st})")
    return names


def interpolant(src, tab, K, zb, s, lie, proj, targets, stacked=None, consts=None):
    """Emit the state at s of the step from the compensated start zb with the stage increments K (all
    rows of P; on numpy columns ``stacked`` may name them stacked and ``consts`` receives the module-level lines,
    :func:`_columns_theta`); return its names."""
    n = src.n
    if not src.floats and not src.lanes:   # numpy columns (the evaluator of the logged steps): matrix products
        th = _columns_theta(src, tab, K, s, stacked, consts)
    else:
        B = _weights(src, tab, s)
        th = src.assign("ths", [" + ".join(f"{b}*{V[j]}" for b, V in zip(B, K) if b is not None) or "0.0"
                                for j in range(len(K[0]))])
    if lie:
        dl = src.fold_act(th, zb, delta=True) if src.foldable() else src.act(th, zb, delta=True)
        y = src.assign("yo", [f"{zb[j]} + {dl[j]}" for j in range(n)])
    else:
        y = src.assign("yo", [f"{zb[j]} + {th[j]}" for j in range(n)])
    if proj is not None:
        inc, _ = proj.write(src, y, targets)
        y = src.assign("yo", [f"{y[j]} + {inc[j]}" for j in range(n)])
    return y


def inside(src, tab, K, z, e, lie, terms, proj, targets, store):
    """Emit (compiled code, in the accepted branch, before the state is updated): the states at the requested times
    strictly inside the step from (t, z + e) to tn_ (emitted here), each written by ``store(y)``
    (a list of lines)."""
    n = src.n
    src.emit("tn_ = t1 if last else t + hs")
    src.emit("if gi < ng and direction*(te[gi] - tn_) < 0.0:")
    src.indent += 1
    zb = src.assign("zb", [f"{z[j]} + {e[j]}" for j in range(n)])
    Kall = extra_stages(src, tab, K, z, "hs", lie, terms)
    src.emit("hp_ = tn_ - t")
    src.emit("while gi < ng and direction*(te[gi] - tn_) < 0.0:")
    src.indent += 1
    src.emit("s_ = (te[gi] - t)/hp_")
    y = interpolant(src, tab, Kall, zb, "s_", lie, proj, targets)
    for line in store(y):
        src.emit(line)
    src.emit("gi += 1")
    src.indent -= 2


def inside_batch(src, tab, rows, n, lie, terms, proj):
    """Emit the compiled ensemble's version of :func:`inside`: the stage increments of trajectory b were
    kept in KS[b] during the attempt, its state before the step is Z[b] + E[b]; a lost trajectory
    (not AL[b]) writes its frozen state FZ[b]."""
    src.emit("tn_ = t1 if last else t + hs")
    src.emit("if gi < ng and direction*(te[gi] - tn_) < 0.0:")
    src.indent += 1
    src.emit("g0_ = gi; hp_ = tn_ - t")
    src.emit("for b in range(B):")
    src.indent += 1
    src.emit("gi = g0_")
    src.emit("if not AL[b]:")
    src.emit("    while gi < ng and direction*(te[gi] - tn_) < 0.0:")
    src.emit(f"        for i in range({n}):")
    src.emit("            ye[gi, b, i] = FZ[b, i]")
    src.emit("        gi += 1")
    src.emit("    continue")
    z = src.assign("zk", [f"Z[b, {j}]" for j in range(n)])
    zb = src.assign("zb", [f"Z[b, {j}] + E[b, {j}]" for j in range(n)])
    K = [src.assign("Kk", [f"KS[b, {r}, {j}]" for j in range(src.gdim)]) for r in range(rows)]
    Kall = extra_stages(src, tab, K, z, "hs", lie, terms)
    src.emit("while gi < ng and direction*(te[gi] - tn_) < 0.0:")
    src.indent += 1
    src.emit("s_ = (te[gi] - t)/hp_")
    targets = None if proj is None else [f"CZ[b, {k}]" for k in range(proj.p)]
    y = interpolant(src, tab, Kall, zb, "s_", lie, proj, targets)
    for j in range(n):
        src.emit(f"ye[gi, b, {j}] = {y[j]}")
    src.emit("gi += 1")
    src.indent -= 3


def at_end(src, store):
    """Emit (after t has moved to the step's end and the state is updated): the requested times equal to
    t take the state, ``store(gi)`` (lines)."""
    src.emit("while gi < ng and te[gi] == t:")
    src.indent += 1
    for line in store():
        src.emit(line)
    src.emit("gi += 1")
    src.indent -= 1
