"""The adaptive programs: the whole adaptive loop of an embedded pair (and the one attempt the ensemble
kernels use), written by :class:`integrators.codegen.writer.Source` from a recognised
:class:`integrators.geometry.recognition.Structure` and the tableau, and the dispatcher :func:`source` of
every generated text (the fixed-step programs: :mod:`integrators.codegen.fixed_programs`; the output-grid
evaluators: :mod:`integrators.codegen.dense_source`), compiled once per (structure, method, mode):
"scalar" (Python floats, one trajectory), "array" (numpy (B,) columns, an ensemble) or "numba" (jitted).

Lie-group (RKMK) steps: K_i = h dexpinv_{theta_i}(w(exp(theta_i) . z)), theta_i = sum_j a_ij K_j,
theta = sum_i b_i K_i, z1 = exp(ad theta)^T z (Munthe-Kaas 1999); ambient Runge-Kutta steps
K_i = h F(z + sum_j a_ij K_j) (the stages: :mod:`integrators.codegen.step_source`). The increment is added
with Kahan's compensated summation (Hairer, McLachlan and Razakarivony 2008). The adaptive loop is
solve_ivp's controller (Hairer, Norsett and Wanner I, II.4); for the projected pairs every accepted step is
projected onto the level set of the Casimirs (Hairer, Lubich and Wanner 2006, IV.4,
:mod:`integrators.codegen.projection`). The adaptive loop of an ambient pair in mode "array" is written by
:class:`integrators.codegen.row_source.RowSource` (stage sums as np.dot over a buffer of stage rows); the
scalar and numba text is that of :class:`integrators.codegen.writer.Source`.
"""

from __future__ import annotations



from ..core import controller
from . import fixed_programs, step_source
from .affine_source import writer_for
from ..core.errors import MethodError
from .row_source import MatrixRowSource, RowSource
from . import dense_source
from . import orbit_source
from .matrix_source import MatrixSource, matrix_form, preamble, use_matrix


def attempt(src, tab, z, lie, terms, W0):
    """Emit one attempted step of signed size ``hs`` from z (first stage's generator W0: FSAL): the
    stages, the increment d, the generator wl at z1 = z + d (the next step's first one when accepted)
    and the error norm, as solve_ivp's RK45 / DOP853 compute it (Hairer, Norsett and Wanner I, II.4;
    the error vector of a Lie-group step mapped to the state to leading order by ad*_{err theta} z).
    Returns (d, z1, wl, the error norm's expression)."""
    n = src.n
    Ks = step_source.stages(src, tab, z, "hs", lie, terms, w0=W0)
    theta, d = step_source.increment(src, Ks, tab.b, z, lie)
    z1 = src.assign("z1_", [f"{z[i]} + {d[i]}" for i in range(n)])
    src.at_time("(t + hs)")
    wl = src.velocity(z1) if lie else src.field(z1)
    if lie:
        xl = src.assign("xl", [f"hs*{u}" for u in wl])
        Klast = src.dexpinv(theta, xl, terms) if terms > 1 else xl
    else:
        Klast = src.assign("Kl", [f"hs*{wl[j]}" for j in range(n)])
    Kall = Ks + ([Klast] if tab.fsal else [])
    src.stage_names = Kall   # the rows of the continuous extension (integrators.codegen.dense_source)
    if src.floats and not src.lanes:   # Python floats: the larger of the two inline (mx is a call)
        sc = []
        for i in range(n):
            src.emit(f"_a = abs({z[i]}); _b = abs({z1[i]})")
            sc += src.assign("sc", ["atol + rtol*(_a if _a > _b else _b)"])
    else:
        sc = src.assign("sc", [f"atol + rtol*mx(abs({z[i]}), abs({z1[i]}))" for i in range(n)])
    sums = []
    for Ev in tab.E:
        et = src.combo("et", list(zip(Ev, Kall))) or ["0.0"] * n
        if lie:
            et = src.to_state(et, z)
        es = src.assign("es", [f"({et[i]})/{sc[i]}" for i in range(n)])
        sums.append(" + ".join(f"{v}*{v}" for v in es))
    if len(sums) > 1:   # DOP853: each sum of squares once, as a name (the norm uses S5 twice)
        sums = src.assign("_S", sums)
    return d, z1, wl, controller.error_norm_source(sums, n, lie=lie)


def _project_accepted(src, proj, z1, targets, lie, fixed=None):
    """Emit the projection of an accepted step's end point z1 onto {C = targets} (Hairer, Lubich and
    Wanner 2006, IV.4, Algorithm 4.2; :mod:`integrators.codegen.projection`) and the first stage's generator
    (or field) of the next step at the projected point z1 + inc; returns (its names, inc)."""
    inc, zp = proj.write(src, z1, targets, fixed=fixed)
    return (src.velocity(zp) if lie else src.field(zp)), inc


def _rms(src, v, name):
    """Emit ``name`` = rms of the expressions v without overflow (genhelpers.rmsq)."""
    u = src.assign("u", v)
    m = " ".join(f"mx(abs({x}), " for x in u[:-1]) + f"abs({u[-1]})" + ")" * (len(u) - 1)
    src.emit(f"_m = {m}")
    src.emit("_m = _m if _m > 0.0 else 1.0")
    src.emit(f"{name} = rmsq(_m, " + " + ".join(f"({x}/_m)*({x}/_m)" for x in u) + f", {float(len(u))!r})")


def _starting_step(src, z, f0, order):
    """Emit Hairer's starting step into h when the caller passes h <= 0 (genhelpers.hstart, the formula
    :func:`integrators.engine.starting_step.initial_step` also calls): two evaluations of the ambient field, so a
    single run needs no Python call before its loop. ``f0``: the field at z when already emitted."""
    n = src.n
    src.emit("if not h > 0.0:")
    src.indent += 1
    f0 = f0 if f0 is not None else src.field(z)
    src.emit("_iv = abs(t1 - t0)")
    sc = src.assign("sc", [f"atol + abs({z[i]})*rtol" for i in range(n)])
    _rms(src, [f"{z[i]}/{sc[i]}" for i in range(n)], "_d0")
    _rms(src, [f"{f0[i]}/{sc[i]}" for i in range(n)], "_d1")
    src.emit(f"_h0 = hstart(0, _d0, _d1, 0.0, 0.0, {order}, _iv, max_step)")
    dh = "(_h0 if t1 > t0 else -_h0)"
    src.at_time(f"(t0 + {dh})")
    f1 = src.field(src.assign("y", [f"{z[i]} + {dh}*{f0[i]}" for i in range(n)]))
    _rms(src, [f"({f1[i]} - {f0[i]})/{sc[i]}" for i in range(n)], "_d2h")
    src.emit(f"h = hstart(1, _d0, _d1, _d2h, _h0, {order}, _iv, max_step)")
    src.indent -= 1


def adaptive_source(st, tab, lie, terms, batch=False, source_class=None, proj=None, columns=False, grid=False):
    """Source of the whole adaptive loop (solve_ivp's controller: Hairer-Norsett-Wanner I, II.4;
    error norm as in scipy's RK45 / DOP853, max over an ensemble)::

        run(t0, t1, h, rtol, atol, max_step, save_every, max_steps, since, ts, ys, z..., e...) ->
            (status, t, h, nsteps, nrej, nsave, ts, ys, z..., e..., zmax, tmax, hmax)

    zmax: the largest |z|_inf of the accepted steps, tmax the time it was reached, hmax the step that reached
    it (0 when no step was accepted): the peak that :mod:`integrators.engine.growth` judges (a step across a
    pole of a finite-time blow-up leaves the run on the other branch, finite, with only its peak to show it).

    h <= 0 (one trajectory): the loop starts with Hairer's starting step (:func:`_starting_step`).
    status 0: reached t1; -1: the step size fell below 10 eps |t| (overflow or stiffness); -2: the
    budget of ``max_steps`` accepted steps was spent before t1 (t, the proposed h and z, e are returned,
    so a second call continues the run; ``since``: accepted steps since the last saved one). With
    ``batch`` (the compiled ensemble) the state is Z, E of shape (B, n), ys (cap, B, n), and the
    stages run in a loop over the trajectories: run(..., ts, ys, Z, E) -> (status, t, h, nsteps,
    nrej, nsave, ts, ys). ``source_class``: a subclass of :class:`Source` to write the stages with.

    ``proj`` (a :class:`integrators.codegen.projection.CasimirProjection`, for the projected pairs): every
    accepted step is projected onto {C_k = c_k} (:func:`_project_accepted`), the targets c_k passed
    after e... as ``cz0, ...`` (with ``batch``, after E as CZ of shape (B, p)); the next first stage
    is evaluated at the projected state.

    Ensembles (``batch``, or ``columns``: the numpy columns of mode "array") lose trajectories alone
    (:mod:`integrators.engine.freeze`, the numpy reference of the rule): the arguments end with
    ``AL`` (B,) bool (alive), ``TE`` (B,) (the time each lost one stopped) and ``FZ`` (its last finite
    state: (n, B) for columns, (B, n) for batch), updated in place. A lost trajectory's working state
    is parked at z = 0, e = 0 (its first stage and projection targets too): every recognised field
    vanishes there, so it adds 0 to the error norm and to every batch-wide bound, and its saved rows
    are FZ. status -1 then means that every trajectory was lost.

    ``grid``: the loop also fills an output grid (arguments ``te, ye, GI`` at the end) with the pair's
    continuous extension after every accepted step (:mod:`integrators.codegen.dense_source`): True for
    compiled code, "log" for the Python modes (the steps with output times logged, arguments ``LOG, FLUSH``
    too).
    """
    src = source_class(st) if source_class else writer_for(st, lie)
    src.floats = not columns
    n = st.n
    g = src.gdim   # generator components: n, 2n for (w, f) of a forcing, 2 on an almost abelian orbit
    if batch and getattr(st, "P", None) is not None and g != n:
        raise MethodError("the compiled ensemble loop writes generators of n components: an RKMK pair of a forced "
                          "problem runs one trajectory at a time (integrators.backends.plan)")
    z = [f"z{i}" for i in range(n)]
    e = [f"e{i}" for i in range(n)]
    W0 = [f"W0_{i}" for i in range(src.gdim)]   # the first stage's generator (2n names for (w, f) of a forcing)
    order = controller.estimate_order(tab, lie)
    cz = [] if proj is None else [f"cz{k}" for k in range(proj.p)]
    if batch:
        head = ("def run(t0, t1, h, rtol, atol, max_step, save_every, max_steps, since, ts, ys, Z, E"
                + (", CZ" if proj is not None else "") + ", AL, TE, FZ):")
        src.emit(f"ERRB = np.zeros(Z.shape[0])")
        src.emit(f"B = Z.shape[0]; D = np.empty((B, {n})); WL = np.empty((B, {g})); WF = np.empty((B, {g}))")
        src.emit("for b in range(B):")
        src.indent += 1
        for i in range(n):
            src.emit(f"z{i} = Z[b, {i}]")
        w0 = src.velocity(z) if lie else src.field(z)
        for i in range(g):
            src.emit(f"WF[b, {i}] = {w0[i]}")
        src.indent -= 1
        if grid:
            src.emit(f"KS = np.empty((B, {tab.s + (1 if tab.fsal else 0)}, {g}))")
    else:
        head = (f"def run(t0, t1, h, rtol, atol, max_step, save_every, max_steps, since, ts, ys, "
                f"{', '.join(z + e + cz + (['AL', 'TE', 'FZ'] if columns else []))}):")
        # first stage generator at z (FSAL: the last stage of an accepted step is the next first one)
        src.at_time("t0")
        w0 = src.velocity(z) if lie else src.field(z)
        for i in range(len(W0)):
            src.emit(f"{W0[i]} = {w0[i]}")
        if not columns:
            _starting_step(src, z, w0 if not lie else None, order)
    if grid:
        head = head[:-2] + ", " + ", ".join(dense_source.grid_arguments(grid != "log")) + "):"
        src.emit("gi = GI[0]; ng = len(te)")
    expo = -1.0 / (order + 1)
    src.emit("t = t0; direction = 1.0 if t1 > t0 else -1.0")
    src.emit("nsteps = 0; nrej = 0; j = 1; status = 0; nfro = 0")
    if not (batch or columns):
        src.emit("zmax = 0.0; tmax = t0; hmax = 0.0")
    src.emit("while direction*(t1 - t) > 0.0:")
    src.indent += 1
    src.emit("if nsteps >= max_steps:")
    src.emit("    status = -2; break")
    src.emit("if h > max_step: h = max_step")
    src.emit("last = False")
    src.emit("if direction*(t + direction*h - t1) >= 0.0:")
    src.emit("    h = abs(t1 - t); last = True")
    src.emit("hs = direction*h")
    if batch:
        src.emit("err = 0.0")
        src.emit("for b in range(B):")
        src.indent += 1
        src.emit("; ".join([f"z{i} = Z[b, {i}]" for i in range(n)] + [f"{W0[i]} = WF[b, {i}]" for i in range(g)]))
    d, z1, wl, expr = attempt(src, tab, z, lie, terms, W0)
    if batch:
        src.emit(f"errb = {expr}")
        src.emit("ERRB[b] = errb")
        src.emit("if not errb <= err: err = errb")
        src.emit("; ".join([f"D[b, {i}] = {d[i]}" for i in range(n)] + [f"WL[b, {i}] = {wl[i]}" for i in range(g)]))
        if grid:
            for r, K in enumerate(src.stage_names):
                src.emit("; ".join(f"KS[b, {r}, {i}] = {K[i]}" for i in range(g)))
        src.indent -= 1
        src.emit("if not err == err: err = 1e308")
    elif columns:
        src.emit(f"errb = {expr}")
        src.emit("err = bmax(errb)")
    else:   # one trajectory: a NaN norm fails err <= 1 and the rejection's err < 1e300 as inf does
        src.emit(f"err = {expr}")
    src.emit("if err <= 1.0:")
    src.indent += 1
    if batch:
        _lose_nonfinite_batch(src, n, g, proj)
        if grid:
            dense_source.inside_batch(src, tab, len(src.stage_names), n, lie, terms, proj)
    elif columns:
        src.emit("_ck = " + " + ".join(d))
        src.emit("_lo = AL & ~(_ck - _ck == 0.0)")
        src.emit("_any = _lo.any()")
        src.emit("if _any:")
        src.indent += 1
        _freeze_columns(src, z, e)
        src.indent -= 1
    if batch and proj is not None:
        src.emit("chk = 0.0")
        src.emit("for b in range(B):")
        src.indent += 1
        zb = src.assign("zq", [f"Z[b, {i}] + D[b, {i}]" for i in range(n)])  # z1 of the attempt
        wp, inc = _project_accepted(src, proj, zb, [f"CZ[b, {k}]" for k in range(proj.p)], lie)
        for i in range(n):
            src.emit(f"_y = (D[b, {i}] + {inc[i]}) + E[b, {i}]; _s = Z[b, {i}] + _y; "
                     f"E[b, {i}] = (Z[b, {i}] - _s) + _y; Z[b, {i}] = _s; chk += _y")
        src.emit("; ".join(f"WF[b, {i}] = {wp[i]}" for i in range(g)))
        src.indent -= 1
        src.emit("if not fin(chk):")
        src.emit("    status = -1; break")
    elif batch:
        src.emit("chk = 0.0")
        src.emit("for b in range(B):")
        src.emit(f"    for i in range({n}):")
        src.emit("        _y = D[b, i] + E[b, i]; _s = Z[b, i] + _y; E[b, i] = (Z[b, i] - _s) + _y; Z[b, i] = _s")
        src.emit("        chk += _y")
        src.emit(f"    for i in range({g}):")
        src.emit("        WF[b, i] = WL[b, i]")
        src.emit("if not fin(chk):")
        src.emit("    status = -1; break")
    else:
        src.emit("chk = " + " + ".join(d))
        # not finite: genhelpers' fin inline on floats (on columns fin is True: the lost ones are frozen above)
        src.emit("if not (chk - chk == 0.0):" if src.floats else "if not fin(chk):")
        src.emit("    status = -1; break")
        if grid == "log":   # Python: the step is logged, its output times evaluated with others
            dense_source.inside_log(src, src.stage_names, z, e, copy=isinstance(src, RowSource))
        elif grid:   # compiled; before the step's projection: the grid's own projections reuse its names
            dense_source.inside(src, tab, src.stage_names, z, e, lie, terms, proj, cz,
                                lambda y: [f"ye[gi, {i}] = {y[i]}" for i in range(n)])
        if proj is not None:
            wl, inc = _project_accepted(src, proj, z1, cz, lie)
            d = [f"({d[i]} + {inc[i]})" for i in range(n)]
        step_source.kahan(src, z, e, d)
        for i in range(len(W0)):
            src.emit(f"{W0[i]} = {wl[i]}")
        if columns:
            src.emit("if _any:")
            src.indent += 1
            _park_columns(src, z, e, W0, cz)
            src.indent -= 1
    src.emit("t = t1 if last else t + hs")
    if not (batch or columns):   # the peak of the run (integrators.engine.growth): the largest |z|_inf accepted
        src.emit(f"_zn = {'max(' + ', '.join(f'abs({v})' for v in z) + ')' if n > 1 else f'abs({z[0]})'}")
        src.emit("if _zn > zmax:")
        src.emit("    zmax = _zn; tmax = t; hmax = hs")
    if grid:
        zs = [f"{z[i]} + {e[i]}" for i in range(n)]
        dense_source.at_end(src, (lambda: _store_batch_end(n)) if batch else
                            (lambda: _store_columns(zs, "gi")) if columns else
                            (lambda: [f"ye[gi, {i}] = {zs[i]}" for i in range(n)]))
    src.emit("nsteps += 1; since += 1")
    src.emit("if since == save_every or last:")
    src.indent += 1
    src.emit("since = 0")
    src.emit("if j >= ts.shape[0]:")
    src.emit("    ts, ys = grow(ts, ys)")
    src.emit("ts[j] = t")
    if batch:
        src.emit("ys[j] = Z + E")
        src.emit("if nfro:")
        src.emit("    for b in range(B):")
        src.emit("        if not AL[b]:")
        src.emit("            ys[j, b] = FZ[b]")
    elif columns:
        src.emit("if nfro:")
        for i in range(n):
            src.emit(f"    ys[j, {i}] = np.where(AL, z{i} + e{i}, FZ[{i}])")
        src.emit("else:")
        for i in range(n):
            src.emit(f"    ys[j, {i}] = z{i} + e{i}")
    else:
        for i in range(n):
            src.emit(f"ys[j, {i}] = z{i} + e{i}")
    src.emit("j += 1")
    src.indent -= 1
    src.emit(controller.accepted_source(order))
    src.emit("hp = h; h = h*fac")
    if batch or columns:   # a trajectory whose own error collapses the next step is lost after its step
        src.emit("if not last and (h < 10.0*2.2e-16*abs(t) or h < 1e-300):")
        src.indent += 1
        _lose_collapsed(src, n, z, e, W0, cz, proj, batch, expo)
        src.indent -= 1
    src.indent -= 1
    src.emit("else:")
    src.indent += 1
    src.emit("nrej += 1")
    src.emit(controller.rejected_source(order))
    src.emit("hp = h; h = h*fac")
    src.emit("if h < 10.0*2.2e-16*abs(t) or h < 1e-300:")
    if batch or columns:
        src.indent += 1
        _lose_collapsed(src, n, z, e, W0, cz, proj, batch, expo)
        src.indent -= 1
    else:
        src.emit("    status = -1; break")
    src.indent -= 2
    if grid:
        src.emit("GI[0] = gi")
    if batch:
        src.emit("return status, t, h, nsteps, nrej, j, ts, ys")
    else:
        src.emit(f"return status, t, h, nsteps, nrej, j, ts, ys, {', '.join(z + e)}"
                 + ("" if columns else ", zmax, tmax, hmax"))
    return head + "\n" + "\n".join(src.lines) + "\n"


def _store_columns(y, g):
    """Lines writing the state y (numpy columns) at grid row g; a lost column its frozen state FZ."""
    n = len(y)
    return (["if nfro:"] + [f"    ye[{g}, {i}] = np.where(AL, {y[i]}, FZ[{i}])" for i in range(n)] + ["else:"]
            + [f"    ye[{g}, {i}] = {y[i]}" for i in range(n)])


def _store_batch_end(n):
    """Lines writing the compiled ensemble's state Z + E (FZ for a lost trajectory) at grid row gi."""
    return ["for b in range(B):",
            "    if AL[b]:",
            f"        for i in range({n}):",
            "            ye[gi, b, i] = Z[b, i] + E[b, i]",
            "    else:",
            f"        for i in range({n}):",
            "            ye[gi, b, i] = FZ[b, i]"]


def _freeze_columns(src, z, e):
    """Emit: the trajectories _lo (numpy columns) are lost at t with their state z + e (FZ, TE, AL);
    status -1 and the loop ends when none is left."""
    for i in range(len(z)):
        src.emit(f"FZ[{i}, _lo] = ({z[i]} + {e[i]})[_lo]")
    src.emit("TE[_lo] = t; AL[_lo] = False; nfro = 1")
    src.emit("if not AL.any():")
    src.emit("    status = -1; break")


def _park_columns(src, z, e, W0, cz):
    """Emit: the lost columns (not AL) of z, e, the first stage W0 and the projection targets set to 0."""
    for v in list(z) + list(e) + list(W0) + list(cz):
        src.emit(f"{v} = np.where(AL, {v}, 0.0)")


def _lose_nonfinite_batch(src, n, g, proj):
    """Emit (compiled ensemble, accepted attempt): the alive trajectories whose increment D[b] is not
    finite are lost at t with their state before the step, and parked at 0 (Z, E, D, WL, CZ)."""
    src.emit("for b in range(B):")
    src.emit("    if AL[b]:")
    src.emit("        _c = " + " + ".join(f"D[b, {i}]" for i in range(n)))
    src.emit("        if not (_c - _c == 0.0):")
    src.emit("            AL[b] = False; TE[b] = t; nfro += 1")
    src.emit(f"            for i in range({n}):")
    src.emit("                FZ[b, i] = Z[b, i] + E[b, i]; Z[b, i] = 0.0; E[b, i] = 0.0; D[b, i] = 0.0")
    src.emit(f"            for i in range({g}):")
    src.emit("                WL[b, i] = 0.0")
    if proj is not None:
        src.emit(f"            for k in range({proj.p}):")
        src.emit("                CZ[b, k] = 0.0")
    src.emit("if nfro >= B:")
    src.emit("    status = -1; break")


def _lose_collapsed(src, n, z, e, W0, cz, proj, batch, expo):
    """Emit (ensembles, the next step h below 10 eps |t|): every alive trajectory whose own demand
    hp sfac(err_b) is below the floor is lost at t with its current state (parked at 0); the others
    continue with hp sfac(their largest error); status -1 when none is left."""
    src.emit("_fl = 10.0*2.2e-16*abs(t)")
    src.emit("_fl = _fl if _fl > 1e-300 else 1e-300")
    if batch:
        src.emit("_em = 0.0")
        src.emit("for b in range(B):")
        src.indent += 1
        src.emit("if not AL[b]:")
        src.emit("    continue")
        src.emit(f"if hp*sfac(ERRB[b], {expo!r}) < _fl:")
        src.emit("    AL[b] = False; TE[b] = t; nfro += 1")
        src.emit(f"    for i in range({n}):")
        src.emit("        FZ[b, i] = Z[b, i] + E[b, i]; Z[b, i] = 0.0; E[b, i] = 0.0")
        src.emit(f"    for i in range({src.gdim}):")
        src.emit("        WF[b, i] = 0.0")
        if proj is not None:
            src.emit(f"    for k in range({proj.p}):")
            src.emit("        CZ[b, k] = 0.0")
        src.emit("elif not ERRB[b] <= _em:")
        src.emit("    _em = ERRB[b]")
        src.indent -= 1
        src.emit("if nfro >= B:")
        src.emit("    status = -1; break")
        src.emit(f"h = hp*sfac(_em, {expo!r})")
        return
    src.emit(f"_lo = AL & (hp*sfac(errb, {expo!r}) < _fl)")
    _freeze_columns(src, z, e)
    _park_columns(src, z, e, W0, cz)
    src.emit(f"h = hp*sfac(bmax(np.where(AL, errb, 0.0)), {expo!r})")


def source(kind, st, tab, lie, terms, proj=None, mode=None):
    """The generated source text of ``kind`` ("fixed", "adaptive", "adaptive_batch", "step"; the adaptive
    loops with the suffix "_grid" fill an output grid, and "dense" and "dense_stages" evaluate the steps
    the Python loops log, :mod:`integrators.codegen.dense_source`);
    ``proj`` applies to the adaptive loops; the adaptive loop of an ambient pair in ``mode`` "array"
    writes its stage sums with :class:`RowSource`. The numpy-backend texts of the one-trajectory adaptive
    loop (mode "scalar") and of the dense output's evaluator (mode "array") are written in matrix form when
    the structure constants are dense (:func:`integrators.codegen.matrix_source.matrix_form`: the same
    products as numpy matrix products, the constants in a preamble)."""
    matrix = mode in ("scalar", "array") and matrix_form(st, lie)
    if kind in ("dense", "dense_stages"):   # the logged steps' output times (integrators.codegen.dense_source)
        cls = MatrixSource if matrix else None
        if mode == "array" and orbit_source.applies(st, lie) and use_matrix(st):
            # numpy columns of the orbit steps: the adapted basis's maps as products (MatrixSource.adapted)
            cls, matrix = orbit_source.orbit_class(MatrixSource), True
        text = dense_source.evaluator_source(st, tab, lie, terms, proj, "points" if kind == "dense" else "stages",
                                             source_class=cls)
        return preamble(st, proj) + text if matrix else text
    grid = kind.endswith("_grid")   # the loop that fills an output grid (integrators.codegen.dense_source)
    kind = kind[:-5] if grid else kind
    if grid and mode != "numba":
        grid = "log"
    if kind == "adaptive_batch":
        return adaptive_source(st, tab, lie, terms, batch=True, proj=proj, grid=grid)
    if kind == "adaptive":
        cls = MatrixSource if matrix else None
        if mode == "array" and not lie:   # a shared ensemble of an ambient pair: the stage rows of RowSource
            rows = MatrixRowSource if matrix else RowSource
            cls = lambda s: rows(s, len(tab.A))   # noqa: E731
        text = adaptive_source(st, tab, lie, terms, source_class=cls, proj=proj, columns=mode == "array", grid=grid)
        return preamble(st, proj) + text if matrix else text
    if kind == "fixed":
        return fixed_programs.fixed_source(st, tab, lie, terms, columns=mode == "array")
    return fixed_programs.trial_source(st, tab, lie, terms)
