"""Module text of the compiled ensembles (:mod:`integrators.backends.batch_kernels` turns it into callables):
a parallel loop (``numba.prange``) over the trajectories around the one-trajectory programs of
:mod:`integrators.codegen.programs`, and the lane kernels, all written through
:class:`integrators.codegen.source_text.Lines` (the base of the one code writer).

* :func:`adaptive_module`: every trajectory runs the whole adaptive loop of
  :func:`integrators.codegen.programs.adaptive_source` (stages of :mod:`integrators.codegen.batchgen`), keeping
  only its end point;
* :func:`fixed_module`: every trajectory runs :func:`integrators.codegen.fixed_programs.fixed_source` into its column
  of the ensemble's output;
* :func:`lanes_source` (adaptive: so(3) RKMK pairs and the ambient pairs, projected or not) and
  :func:`fixed_lanes_source` (fixed step: so(3) and se(3) RKMK tableaux): the trajectories go in lanes;
  one attempt (or step) of all lanes is one loop of straight-line arithmetic with the branch-free
  exponentials of :class:`integrators.codegen.batchgen.EnsembleSource` (no call, no branch), which the
  compiler vectorizes, with ``copies`` lanes per iteration interleaved by :func:`jam` (one lane's attempt
  is a long chain of dependent operations: a single chain leaves the vector units waiting on latency).

The texts expect ``np``, ``numba``, ``CACHE`` and the options ``JIT`` and ``LANE_JIT`` defined before them (the
header and prelude of :func:`integrators.backends.numba_kernels.load_module`).
"""

from __future__ import annotations

import re

from ..core import controller
from . import batchgen, programs, step_source
from .source_text import Lines, assigned_names
from .dexpinv_writer import LANE_BIG
from .tangent_source import PBIG

#: save_every of the runs that keep only the end point (larger than any step count)
NEVER = 1 << 62

#: lanes of the branch-free kernels: trajectories stepped together by one vectorizable loop
LANES = 256
#: Newton iterations of the Casimir projection written into the lanes' attempt (a projected ambient pair):
#: quadratic Casimirs converge in 1-2 at the pairs' tolerances; a lane not converged projects again
PROJ_ITER = 2
#: the lanes' attempt loop computes JAM independent lanes per iteration (interleaved statement by
#: statement): one lane's attempt is a chain of dependent operations (the stages, the series of the
#: exponential), so a single vectorized chain waits on latency; JAM chains keep the units busy
JAM = 2

_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")

_PARALLEL = '@numba.njit(parallel=True, **JIT)'
_SERIAL = '@numba.njit(**JIT)'
#: the adaptive lanes' group (its attempt): products and sums may fuse (:data:`integrators.backends.numba_kernels.LANE_OPTIONS`)
_LANE_GROUP = '@numba.njit(**LANE_JIT)'


def jam(lines, names, copies):
    """The straight-line ``lines`` written ``copies`` times, interleaved line by line; copy k > 0
    renames every name in ``names`` and every name assigned in ``lines`` to name_J<k> (one lane's
    attempt per copy: independent chains of operations the processor overlaps)."""
    own = set(names)
    for ln in lines:
        own.update(assigned_names(ln))
    out = []
    for ln in lines:
        for k in range(copies):
            out.append(ln.strip() if k == 0 else
                       _NAME.sub(lambda m: m.group(0) + f"_J{k}" if m.group(0) in own else m.group(0), ln.strip()))
    return out


def _block(w, lines):
    """Emit the (stripped) ``lines`` at the writer's current indent."""
    for ln in lines:
        w.emit(ln.strip())


class _LaneStart(Lines):
    """Hairer's starting step of :func:`integrators.codegen.programs._starting_step` in a lane's load, for a
    lane whose H0 is <= 0: the field is the lane's first-stage lines ``fl`` (straight-line, from the names
    z0..), written again at other names (every name of ``fl`` with the suffix _HS)."""

    def __init__(self, n, fl, wv):
        super().__init__(indent=0)
        self.n, self._fl, self._wv = n, fl, list(wv)
        self._own = {f"z{i}" for i in range(n)}
        for ln in fl:
            self._own.update(assigned_names(ln))

    def fresh(self, prefix):
        return super().fresh("hs_" + prefix)

    def at_time(self, expr, stage=None):
        """The lanes' fields are autonomous."""

    def _renamed(self, text):
        return _NAME.sub(lambda m: m.group(0) + "_HS" if m.group(0) in self._own else m.group(0), text.strip())

    def field(self, y):
        for i in range(self.n):
            self.emit(f"z{i}_HS = {y[i]}")
        for ln in self._fl:
            self.emit(self._renamed(ln))
        return [self._renamed(v) for v in self._wv]


def _state_args(n):
    return ", ".join(f"Z[b, {i}]" for i in range(n)), ", ".join(["0.0"] * n)


def adaptive_module(pl, grid=False):
    """Module text: the adaptive loop of plan ``pl`` for one trajectory, jitted, and
    ``ensemble(t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, PK)``: every row of Z
    from t0 to t1 with its own first step H0[b] (end state OUT[b], status ST[b], time reached TE[b], steps
    NS[b], rejections NR[b], the peak of its accepted steps PK[b] = (zmax, tmax, hmax) as its single run's;
    CZ[b]: its projection targets). ``grid``: the loop that also fills an output
    grid (:mod:`integrators.codegen.dense_source`), ``ensemble(..., CZ, TEV, YE, GI)`` with the grid times
    TEV, the outputs YE (G, B, n) and each trajectory's next grid index GI[b]."""
    n = pl.st.n
    zb, zeros = _state_args(n)
    cz = "".join(f", CZ[b, {k}]" for k in range(0 if pl.proj is None else pl.proj.p))
    w = Lines(indent=0)
    w.emit('run = numba.njit(run, **JIT)')
    w.emit("")
    w.emit("")
    w.emit(_PARALLEL)
    w.emit("def ensemble(t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, PK"
           + (", TEV, YE, GI):" if grid else "):"))
    w.indent += 1
    w.emit("for b in numba.prange(Z.shape[0]):")
    w.indent += 1
    w.emit("ts = np.empty(2)")
    w.emit(f"ys = np.empty((2, {n}))")
    w.emit("ts[0] = t0")
    tail = ", TEV, YE[:, b, :], GI[b:b + 1]" if grid else ""
    w.emit(f"out = run(t0, t1, H0[b], rtol, atol, max_step, {NEVER}, max_steps, 0, ts, ys, {zb}, {zeros}{cz}{tail})")
    for k, name in ((0, "ST"), (1, "TE"), (3, "NS"), (4, "NR")):
        w.emit(f"{name}[b] = out[{k}]")
    for i in range(n):
        w.emit(f"OUT[b, {i}] = out[{8 + i}] + out[{8 + n + i}]")
    for k in range(3):   # the trajectory's peak (zmax, tmax, hmax: integrators.engine.growth)
        w.emit(f"PK[b, {k}] = out[{8 + 2 * n + k}]")
    return batchgen.adaptive_source(pl.st, pl.tab, pl.lie, pl.terms, pl.proj, grid=grid) + "\n" + w.text()


def fixed_module(pl):
    """Module text: the fixed-step loop of plan ``pl`` for one trajectory, jitted, and
    ``ensemble(h, nsteps, save_every, t0, Z, YS, DONE, J)``: every row of Z stepped into its column YS[:, b]
    (steps done DONE[b], saves J[b])."""
    zb, zeros = _state_args(pl.st.n)
    w = Lines(indent=0)
    w.emit('run = numba.njit(run, **JIT)')
    w.emit("")
    w.emit("")
    w.emit(_PARALLEL)
    w.emit("def ensemble(h, nsteps, save_every, t0, Z, YS, DONE, J):")
    w.indent += 1
    w.emit("for b in numba.prange(Z.shape[0]):")
    w.indent += 1
    w.emit("ts = np.empty(YS.shape[0])")
    w.emit(f"out = run(h, nsteps, save_every, ts, YS[:, b, :], t0, {zb}, {zeros})")
    w.emit("DONE[b] = out[0]")
    w.emit("J[b] = out[1]")
    return programs.source("fixed", pl.st, pl.tab, pl.lie, pl.terms) + "\n" + w.text()


def _accept_lines(pl, raw="Dc"):
    """The accepted step of lane b: the compensated sum of the increment Dc and the next first stage
    Lc; for a projected pair the end point Zc + D is projected onto the lane's targets CZ[IDX[b]]
    first (:func:`integrators.codegen.programs._project_accepted`) and the next first stage is taken there
    (D: the array ``raw`` of the unprojected increments)."""
    n = pl.st.n
    if pl.proj is None or raw is None:
        return [f"for i in range({n}):",
                "    _y = Dc[i, b] + Ec[i, b]; _s = Zc[i, b] + _y; Ec[i, b] = (Zc[i, b] - _s) + _y; Zc[i, b] = _s",
                "    Wc[i, b] = Lc[i, b]"]
    src = batchgen.EnsembleSource(pl.st)
    src.indent, src.count = 0, 10 ** 6    # names apart from those of the attempt
    zq = src.assign("zq", [f"Zc[{i}, b] + {raw}[{i}, b]" for i in range(n)])
    wp, inc = programs._project_accepted(src, pl.proj, zq, [f"CZ[IDX[b], {k}]" for k in range(pl.proj.p)], pl.lie)
    return src.lines + [f"_y = ({raw}[{i}, b] + {inc[i]}) + Ec[{i}, b]; _s = Zc[{i}, b] + _y; "
                        f"Ec[{i}, b] = (Zc[{i}, b] - _s) + _y; Zc[{i}, b] = _s; Wc[{i}, b] = {wp[i]}"
                        for i in range(n)]


def lanes_source(pl, copies=JAM):
    """Module text of the adaptive lane kernel (so(3) RKMK pairs and the ambient pairs, projected or not):
    ``ensemble(t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, PK, G)`` (PK[b]: the
    peak (zmax, tmax, hmax) of trajectory b's accepted steps, as :func:`adaptive_module`'s).

    The trajectories are split into G contiguous groups, one per ``numba.prange`` iteration; a group
    keeps C = copies * S lanes, refilled from its range as trajectories finish (no lane idles while its
    group has work left). One attempt of all lanes is the loop over s < S computing the lanes
    s, s + S, ..., s + (copies - 1) S (:func:`jam`) with the stages of
    :func:`integrators.codegen.batchgen.attempt_lines`; the controller (solve_ivp's, Hairer, Norsett and
    Wanner I, II.4) then runs per lane. A trajectory with H0[b] <= 0 starts with Hairer's starting step,
    computed in its lane when it is loaded (the ambient pairs: :func:`integrators.codegen.programs._starting_step`,
    the text of the one-trajectory loops, its second field evaluation the lane's first-stage lines again)."""
    n = pl.st.n
    # a projected ambient pair projects in the vectorized attempt too (PROJ_ITER Newton iterations
    # without a test); an accepted step whose residual is not yet at round-off projects again per lane
    vproj = pl.proj is not None and not pl.lie
    extra = {}
    fl, wv, al, d, wl = batchgen.attempt_lines(pl.st, pl.tab, pl.lie, pl.terms, lanes=True,
                                               proj=pl.proj if vproj else None, fixed=PROJ_ITER, extra=extra)
    order = controller.estimate_order(pl.tab, pl.lie)
    cz = [f"c{k}" for k in range(pl.proj.p)] if vproj else []
    inputs = [f"z{i}" for i in range(n)] + [f"W0_{i}" for i in range(n)] + ["hs", "_big", "err"] + cz
    body = []
    for k in range(copies):
        lane, sfx = ("b", "") if k == 0 else (f"b + {k}*S", f"_J{k}")
        body += [f"hs{sfx} = HS[{lane}]", f"_big{sfx} = 0.0"] + [f"z{i}{sfx} = Zc[{i}, {lane}]" for i in range(n)]
        body += [f"W0_{i}{sfx} = Wc[{i}, {lane}]" for i in range(n)]
        body += [f"c{j}{sfx} = CL[{j}, {lane}]" for j in range(len(cz))]   # contiguous: no gather
    body += jam(al, inputs, copies)
    for k in range(copies):  # d and wl are names assigned in al: copy k has them with the suffix
        lane, sfx = ("b", "") if k == 0 else (f"b + {k}*S", f"_J{k}")
        body += [f"ERR[{lane}] = err{sfx}", f"BIG[{lane}] = _big{sfx}"]
        body += [f"Dc[{i}, {lane}] = {d[i]}{sfx}" for i in range(n)]
        body += [f"Lc[{i}, {lane}] = {wl[i]}{sfx}" for i in range(n)]
        if vproj:
            body += [f"DR[{i}, {lane}] = {extra['d_raw'][i]}{sfx}" for i in range(n)] + [f"OK[{lane}] = _pok{sfx}"]
    load = [f"Zc[{i}, b] = Z[nxt, {i}]; Ec[{i}, b] = 0.0" for i in range(n)]
    load += [f"z{i} = Zc[{i}, b]" for i in range(n)] + [ln.strip() for ln in fl]
    load += [f"Wc[{i}, b] = {wv[i]}" for i in range(n)]
    load += [f"CL[{j}, b] = CZ[nxt, {j}]" for j in range(len(cz))]   # the lane's projection targets
    zs, f0 = [f"z{i}" for i in range(n)], [f"f0_{i}" for i in range(n)]
    start = []
    if not pl.lie:   # H0 <= 0: Hairer's starting step (the field at z is the first stage, wv), in a function of
        # its own: the group's body, which numba compiles as one, does not grow by a second copy of the field
        ls = _LaneStart(n, fl, wv)
        programs._starting_step(ls, zs, f0, order)
        start = ([_SERIAL, f"def lane_start(h, t0, t1, rtol, atol, max_step, {', '.join(zs + f0)}):"]
                 + ["    " + ln for ln in ls.lines] + ["    return h", "", ""])
        load += [f"h = lane_start(H0[nxt], t0, t1, rtol, atol, max_step, {', '.join(zs + list(wv))})"]
    else:
        load += ["h = H0[nxt]"]
    load += ["IDX[b] = nxt; T[b] = t0; H[b] = h; ns[b] = 0; nr[b] = 0; PZ[b] = 0.0; PT[b] = t0; PH[b] = 0.0; nxt += 1"]
    S = LANES // copies

    # the parallel loop's body is one call of the group's function: numba's parfor passes (the hoisting of
    # _hoist_internal is quadratic in the statements of the body) then see one statement instead of the
    # thousands of the jammed attempt of a dense basis (so(5) in a random basis, rk853_projected with a
    # servo-constraint of the second kind: the first call 575 s against ~29 min; the same 87-91 us a
    # trajectory, the same end states bit for bit on so(4) in a random basis)
    args = "t0, t1, H0, rtol, atol, max_step, max_steps, Z, OUT, ST, TE, NS, NR, CZ, PK"
    w = Lines(indent=0)
    for ln in start:
        w.emit(ln)
    w.emit(_LANE_GROUP)
    w.emit(f"def group(g, per, {args}):")
    w.indent += 1
    w.emit("B = Z.shape[0]")
    w.emit("direction = 1.0 if t1 > t0 else -1.0")
    w.emit(f"S = {S}")
    w.emit(f"C = {copies * S}")
    w.emit("lo = g*per")
    w.emit("hi = min(B, lo + per)")
    w.emit(f"Zc = np.zeros(({n}, C)); Ec = np.zeros(({n}, C)); Wc = np.zeros(({n}, C))")
    w.emit(f"Dc = np.zeros(({n}, C)); Lc = np.zeros(({n}, C)); ERR = np.zeros(C); BIG = np.zeros(C)")
    w.emit(f"DR = np.zeros(({n if vproj else 0}, C)); OK = np.zeros(C); CL = np.zeros(({len(cz)}, C))")
    w.emit("T = np.full(C, t0); H = np.zeros(C); HS = np.zeros(C); LAST = np.zeros(C, np.bool_)")
    w.emit("IDX = np.full(C, -1, np.int64); ns = np.zeros(C, np.int64); nr = np.zeros(C, np.int64)")
    w.emit("PZ = np.zeros(C); PT = np.full(C, t0); PH = np.zeros(C)")   # each lane's peak (zmax, tmax, hmax)
    w.emit("nxt = lo")
    w.emit("nact = 0")
    w.emit("for b in range(C):")
    w.emit("    if nxt < hi:")
    w.indent += 2
    _block(w, load)
    w.emit("nact += 1")
    w.indent -= 2
    w.emit("while nact > 0:")
    w.indent += 1
    w.emit("for b in range(C):")
    w.indent += 1
    for ln in ("hb = min(H[b], max_step)", "LAST[b] = direction*(T[b] + direction*hb - t1) >= 0.0", "if LAST[b]:",
               "    hb = abs(t1 - T[b])", "H[b] = hb", "HS[b] = 0.0 if IDX[b] < 0 else direction*hb"):
        w.emit(ln)
    w.indent -= 1
    w.emit("for b in range(S):")
    w.indent += 1
    _block(w, body)
    w.indent -= 1
    w.emit("for b in range(C):")
    w.indent += 1
    for ln in ("if IDX[b] < 0:", "    continue", "err = ERR[b]", f"if not (err == err) or BIG[b] > {LANE_BIG!r}:",
               "    err = np.inf", "fin = False", "status = 0", "if err <= 1.0:"):
        w.emit(ln)
    w.indent += 1
    w.emit("chk = " + " + ".join(f"{'DR' if vproj else 'Dc'}[{i}, b]" for i in range(n)))
    w.emit("if not (chk - chk == 0.0):")
    w.emit("    fin = True")
    w.emit("    status = -1")
    if vproj:   # projected in the attempt (Dc, Lc) when converged there, else again from DR per lane
        w.emit("elif OK[b] <= 0.0:")
        w.indent += 1
        for ln in _accept_lines(pl, raw=None):
            w.emit(ln)
        w.indent -= 1
    w.emit("else:")
    w.indent += 1
    for ln in _accept_lines(pl, raw="DR" if vproj else "Dc"):
        w.emit(ln)
    w.indent -= 1
    w.emit("if status == 0:")
    w.indent += 1
    w.emit("T[b] = t1 if LAST[b] else T[b] + HS[b]")
    w.emit("ns[b] += 1")
    # the peak of the accepted steps, as the one-trajectory loop tracks it (integrators.engine.growth)
    w.emit("_zn = " + ("max(" + ", ".join(f"abs(Zc[{i}, b])" for i in range(n)) + ")" if n > 1 else "abs(Zc[0, b])"))
    w.emit("if _zn > PZ[b]:")
    w.emit("    PZ[b] = _zn; PT[b] = T[b]; PH[b] = HS[b]")
    w.emit(controller.accepted_source(order))
    w.emit("H[b] = H[b]*fac")
    w.emit("fin = LAST[b]")
    w.emit("if not fin and ns[b] >= max_steps:")
    w.emit("    fin = True")
    w.emit("    status = -2")
    w.indent -= 2
    w.emit("else:")
    w.indent += 1
    w.emit("nr[b] += 1")
    w.emit(controller.rejected_source(order))
    w.emit("H[b] = H[b]*fac")
    w.emit("if H[b] < 10.0*2.2e-16*abs(T[b]) or H[b] < 1e-300:")
    w.emit("    fin = True")
    w.emit("    status = -1")
    w.indent -= 1
    w.emit("if fin:")
    w.indent += 1
    w.emit("k = IDX[b]")
    w.emit(f"for i in range({n}):")
    w.emit("    OUT[k, i] = Zc[i, b] + Ec[i, b]")
    for ln in ("ST[k] = status", "TE[k] = T[b]", "NS[k] = ns[b]", "NR[k] = nr[b]",
               "PK[k, 0] = PZ[b]; PK[k, 1] = PT[b]; PK[k, 2] = PH[b]", "if nxt < hi:"):
        w.emit(ln)
    w.indent += 1
    _block(w, load)
    w.indent -= 1
    w.emit("else:")
    w.emit("    IDX[b] = -1")
    w.emit("    nact -= 1")
    w.indent = 0
    w.emit("")
    w.emit("")
    w.emit(_PARALLEL)
    w.emit(f"def ensemble({args}, G):")
    w.emit("    per = (Z.shape[0] + G - 1) // G")
    w.emit("    for g in numba.prange(G):")
    w.emit(f"        group(g, per, {args})")
    return w.text()


def fixed_lanes_source(pl, copies=JAM):
    """Module text of the fixed-step lane kernel (so(3) and se(3) RKMK tableaux: the step with the
    branch-free exponential of :class:`integrators.codegen.batchgen.EnsembleSource`, no call, no branch):
    ``ensemble(h, nsteps, save_every, Z, YS, BAD)``.

    The trajectories go in chunks of C = copies * S lanes (one chunk per ``numba.prange``
    iteration); a step of all lanes is the loop over s < S computing the lanes s, s + S, ...,
    s + (copies - 1) S (:func:`jam`), then the compensated sums. ``BAD[b]`` marks a trajectory whose
    exponential left the series' range (|x| > 16 in some step) or whose end state is not finite:
    the caller runs it again with the one-trajectory code."""
    n = pl.st.n
    z = [f"z{i}" for i in range(n)]
    src = batchgen.EnsembleSource(pl.st)
    src.lanes = True
    Ks = step_source.stages(src, pl.tab, z, "h", pl.lie, pl.terms)
    _, d = step_source.increment(src, Ks, pl.tab.b, z, pl.lie)
    body = []
    for k in range(copies):
        lane, sfx = ("b", "") if k == 0 else (f"b + {k}*S", f"_J{k}")
        body += [f"_big{sfx} = BIG[{lane}]"] + [f"z{i}{sfx} = Zc[{i}, {lane}]" for i in range(n)]
    body += jam(src.lines, z + ["_big"], copies)
    for k in range(copies):
        lane, sfx = ("b", "") if k == 0 else (f"b + {k}*S", f"_J{k}")
        body += [f"BIG[{lane}] = _big{sfx}"] + [f"Dc[{i}, {lane}] = {d[i]}{sfx}" for i in range(n)]
    S = LANES // copies
    w = Lines(indent=0)
    w.emit(_PARALLEL)
    w.emit("def ensemble(h, nsteps, save_every, Z, YS, BAD):")
    w.indent += 1
    w.emit("B = Z.shape[0]")
    w.emit(f"S = {S}")
    w.emit(f"C = {copies * S}")
    w.emit("for g in numba.prange((B + C - 1) // C):")
    w.indent += 1
    w.emit("lo = g*C")
    w.emit("m = min(B, lo + C) - lo")
    w.emit(f"Zc = np.zeros(({n}, C)); Ec = np.zeros(({n}, C)); Dc = np.zeros(({n}, C)); BIG = np.zeros(C)")
    w.emit("for b in range(m):")
    w.emit(f"    for i in range({n}):")
    w.emit("        Zc[i, b] = Z[lo + b, i]")
    w.emit("j = 1")
    w.emit("for k in range(1, nsteps + 1):")
    w.indent += 1
    w.emit("for b in range(S):")
    w.indent += 1
    _block(w, body)
    w.indent -= 1
    w.emit(f"for i in range({n}):")
    w.emit("    for b in range(C):")
    w.emit("        _y = Dc[i, b] + Ec[i, b]; _s = Zc[i, b] + _y; Ec[i, b] = (Zc[i, b] - _s) + _y; Zc[i, b] = _s")
    w.emit("if k % save_every == 0 or k == nsteps:")
    w.emit("    for b in range(m):")
    w.emit(f"        for i in range({n}):")
    w.emit("            YS[j, lo + b, i] = Zc[i, b] + Ec[i, b]")
    w.emit("    j += 1")
    w.indent -= 1
    w.emit("for b in range(m):")
    w.emit("    chk = " + " + ".join(f"Zc[{i}, b]" for i in range(n)))
    w.emit(f"    BAD[lo + b] = not (BIG[b] <= {LANE_BIG!r}) or not (chk - chk == 0.0)")
    return w.text()


def section_module(text):
    """Module text: the one-orbit Poincare-section loop ``text`` (``run`` of
    :func:`integrators.codegen.section_source.section_source`), jitted, and ``ensemble(h, nsteps, t0, cap, MAXC,
    Z, E, K, A, b0, direction, xtol, PTS, TS, CNT, ST, RES, ACTIVE)``: every ACTIVE orbit b continues from
    its step K[b] (state Z[b] + E[b]) into its buffers PTS[b], TS[b] (count CNT[b], status ST[b], largest
    residual RES[b]); see :mod:`integrators.backends.section_runner`."""
    w = Lines(indent=0)
    w.emit('run = numba.njit(run, **JIT)')
    w.emit("")
    w.emit("")
    w.emit(_PARALLEL)
    w.emit("def ensemble(h, nsteps, t0, cap, MAXC, Z, E, K, A, b0, direction, xtol, PTS, TS, CNT, ST, RES, ACTIVE):")
    w.indent += 1
    w.emit("for b in numba.prange(Z.shape[0]):")
    w.indent += 1
    w.emit("if not ACTIVE[b]:")
    w.emit("    CNT[b] = 0")
    w.emit("    continue")
    w.emit("out = run(h, K[b], nsteps, t0, cap, MAXC[b], Z[b], E[b], A, b0, direction, xtol, PTS[b], TS[b])")
    for k, name in enumerate(("K", "CNT", "ST", "RES")):
        w.emit(f"{name}[b] = out[{k}]")
    return "\n" + text + w.text()


def tangent_module(text, extra=""):
    """Module text: the helpers ``inv`` (1/x), ``slog`` (log x, -inf for x <= 0), ``lbig`` and ``pbig`` (the log
    of a running product of the R_ii outside [1e-30, 1e30] and its restart, else 0 and the product) jitted, the tangent-flow
    loop ``text`` (``run`` of :func:`integrators.codegen.tangent_source.lyapunov_source`) jitted, and
    ``ensemble(h, ntr, sub, nqr, save_every, dt, Z, V, ACC, RUN, RUNM, DONE)``: ``run`` for every row b
    (see :mod:`integrators.backends.tangent_runner`); ``extra``: the arguments after RUNM of a timed
    ``run`` (", TB, S, k0": :mod:`integrators.codegen.timed_source`), passed on by ``ensemble`` after DONE."""
    w = Lines(indent=0)
    for name, body in (("inv", "return 1.0 / x"), ("slog", "return math.log(x) if x > 0.0 else -math.inf"),
                       ("lbig", f"return math.log(x) if (x > {PBIG!r} or x < {1.0 / PBIG!r}) else 0.0"),
                       ("pbig", f"return 1.0 if (x > {PBIG!r} or x < {1.0 / PBIG!r}) else x"),
                       ("inr", f"return {1.0 / PBIG!r} <= x <= {PBIG!r}")):
        w.emit("")
        w.emit('@numba.njit(**JIT)')
        w.emit(f"def {name}(x):")
        w.emit(f"    {body}")
        w.emit("")
    head = w.text()
    w = Lines(indent=0)
    w.emit('run = numba.njit(run, **JIT)')
    w.emit("")
    w.emit("")
    w.emit(_PARALLEL)
    w.emit(f"def ensemble(h, ntr, sub, nqr, save_every, dt, Z, V, ACC, RUN, RUNM, DONE{extra}):")
    w.emit("    for b in numba.prange(Z.shape[0]):")
    w.emit(f"        DONE[b] = run(h, ntr, sub, nqr, save_every, dt, Z[b], V[b], ACC[b], RUN[b], RUNM[b]{extra})")
    return head + "\n" + text + w.text()
