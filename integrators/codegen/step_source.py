"""The pieces of one generated step, shared by every program (:mod:`integrators.codegen.programs`,
:mod:`integrators.codegen.fixed_programs`, the section and ensemble kernels): the stage recurrence of a
tableau in rk or rkmk form (the generated twin of :func:`integrators.reference.runge_kutta.stages`), the
increment of the step without cancellation, and Kahan's compensated sum (:mod:`integrators.core.summation`)."""

from __future__ import annotations

from .row_source import RowSource


def stages(src, tab, z, h, lie, terms, w0=None):
    """Emit the stages; return the list of K_i (vectors, already multiplied by h) and the last
    stage's velocity (for FSAL). ``w0`` is the first stage's generator when given (FSAL)."""
    A = tab.A   # the nodes c_i only for a time-dependent field (src.at_time; a no-op otherwise)
    Ks = []
    for i, row in enumerate(A):
        pairs = [(a, K) for a, K in zip(row, Ks) if a != 0.0]
        src.at_time(f"(t + {float(tab.c[i])!r}*{h})", i)
        if not pairs:
            if lie:
                w = src.velocity(z) if w0 is None else w0
            else:
                w = src.field(z) if w0 is None else w0
            Ks.append(src.assign("K", [f"{h}*{u}" for u in w]))   # a generator: 2n names with a forcing
            continue
        if lie:
            theta = src.combo("th", pairs)
            Y = src.stage_act(theta, z)
            xh = src.velocity(Y, scale=h)
            Ks.append(src.dexpinv(theta, xh, terms) if terms > 1 else xh)
        else:
            if isinstance(src, RowSource):
                Ks.append(src.field_increment(src.point(z, pairs), h))
                continue
            dz = src.combo("dz", pairs)
            Y = src.assign("Y", [f"{z[j]} + {dz[j]}" for j in range(src.n)])
            w = src.field(Y)
            Ks.append(src.assign("K", [f"{h}*{w[j]}" for j in range(src.n)]))
    return Ks


def increment(src, Ks, b, z, lie):
    theta = src.combo("tb", list(zip(b, Ks)))
    if lie:
        return theta, act_delta(src, theta, z)
    return theta, theta


def act_delta(src, x, z):
    """exp(ad x)^T z - z without cancellation (the update of a step)."""
    return src.fold_act(x, z, delta=True) if src.foldable() else src.act(x, z, delta=True)


def kahan(src, z, e, d):
    for j in range(src.n):
        src.emit(f"_y = {d[j]} + {e[j]}; _s = {z[j]} + _y; {e[j]} = ({z[j]} - _s) + _y; {z[j]} = _s")


def fixed_step_end(src, z, e, d=None, check=True):
    """The end of step k of a fixed-step loop ``for k in range(1, nsteps + 1)`` and of the function:
    with the increment ``d``, a step that is not finite stops the loop (``check``) and z + e takes d
    (Kahan); then ``done = k``, the state saved every ``save_every`` steps and at the last into ts, ys
    (row j), and after the loop ``return done, j, z..., e...``."""
    if d is not None:
        if check:
            src.emit("_chk = " + " + ".join(d))
            src.emit("if not fin(_chk):")
            src.emit("    break")
        kahan(src, z, e, d)
    src.emit("done = k")
    src.emit("if k % save_every == 0 or k == nsteps:")
    src.indent += 1
    src.emit("ts[j] = t0 + k*h")
    for i in range(src.n):
        src.emit(f"ys[j, {i}] = {z[i]} + {e[i]}")
    src.emit("j += 1")
    src.indent -= 2
    src.emit(f"return done, j, {', '.join(z + e)}")
