"""The generated Poincare section: crossings of a hyperplane a . y = b located inside the stepping loop.

One trajectory's loop (run by :mod:`integrators.backends.section_runner`, a ``numba.prange`` over the
orbits of an ensemble)::

    run(h, k0, nsteps, t0, cap, maxc, Z, E, A, b0, direction, xtol, PTS, TS) -> (k, count, status, worst)

takes the fixed steps k0 .. nsteps - 1 of the method (the stages of
:func:`integrators.codegen.step_source.stages`, rk or rkmk form, Kahan-compensated as in the fixed-step
loop: the state is Z + E, both updated in place) and watches g = A . y - b0 at every step's end. A sign
change in ``direction`` (+1: from g < 0 to g >= 0, -1 the reverse, 0 both) over the step from y_k is
located on the method's own continuous extension s -> Phi_s(y_k), 0 < s <= h (one step of the method
of size s from the step's start, as :func:`integrators.analysis.phase_space.poincare._illinois` does
in numpy): the Illinois variant of regula falsi (Dowell and Jarratt 1971) until
|g| <= xtol (1 + |A| |y_k|) or the bracket is 4 ulps of h wide, at most 200 iterations. The crossing
state and time go to PTS[count], TS[count]; the loop returns when ``cap`` crossings are stored, when
``maxc`` crossings are reached, at ``nsteps``, or (status -1) when a step is not finite; ``worst`` is
the largest |g| / (1 + |A| |y_k|) at the located points.
"""

from __future__ import annotations

from .step_source import increment as _increment, stages as _stages
from .writer import Source


def section_source(st, tab, lie, terms):
    """Source of ``run`` (module docstring) for structure ``st`` and tableau ``tab`` (rk or rkmk form)."""
    src = Source(st)
    n = st.n
    z = [f"z{i}" for i in range(n)]
    e = [f"e{i}" for i in range(n)]
    ys = [f"ys{i}" for i in range(n)]
    head = "def run(h, k0, nsteps, t0, cap, maxc, Z, E, A, b0, direction, xtol, PTS, TS):"
    for i in range(n):
        src.emit(f"z{i} = Z[{i}]; e{i} = E[{i}]; a{i} = A[{i}]")
    gexpr = lambda y: " + ".join(f"a{i}*{y[i]}" for i in range(n)) + " - b0"
    src.emit("anorm = sqrt(" + " + ".join(f"a{i}*a{i}" for i in range(n)) + ")")
    src.emit("g0 = " + gexpr([f"(z{i} + e{i})" for i in range(n)]))
    src.emit("cnt = 0; status = 0; worst = 0.0; k = k0")
    src.emit("while k < nsteps and cnt < cap and cnt < maxc:")
    src.indent += 1
    for i in range(n):
        src.emit(f"{ys[i]} = z{i} + e{i}")
    Ks = _stages(src, tab, z, "h", lie, terms)
    _, d = _increment(src, Ks, tab.b, z, lie)
    src.emit("_chk = " + " + ".join(d))
    src.emit("if not fin(_chk):")
    src.emit("    status = -1")
    src.emit("    break")
    for j in range(n):
        src.emit(f"_y = {d[j]} + {e[j]}; _s = {z[j]} + _y; {e[j]} = ({z[j]} - _s) + _y; {z[j]} = _s")
    src.emit("k += 1")
    src.emit("g1 = " + gexpr([f"(z{i} + e{i})" for i in range(n)]))
    src.emit("hit = (direction >= 0 and g0 < 0.0 and g1 >= 0.0) or (direction <= 0 and g0 > 0.0 and g1 <= 0.0)")
    src.emit("if hit:")
    src.indent += 1
    src.emit("flip = 1.0 if g0 < 0.0 else -1.0")
    src.emit("scale = 1.0 + anorm*sqrt(" + " + ".join(f"{y}*{y}" for y in ys) + ")")
    src.emit("lo = 0.0; glo = flip*g0; hi = h; ghi = flip*g1; s = h; gs = ghi; side = 0")
    yc = [f"yc{i}" for i in range(n)]
    for i in range(n):
        src.emit(f"{yc[i]} = z{i} + e{i}")
    src.emit("if abs(gs) > xtol*scale:")
    src.indent += 1
    src.emit("for _it in range(200):")
    src.indent += 1
    src.emit("den = ghi - glo")
    src.emit("sa = lo - glo*(hi - lo)/den if den > 0.0 else 0.5*(lo + hi)")
    src.emit("sa = min(max(sa, lo), hi)")
    Ks2 = _stages(src, tab, ys, "sa", lie, terms)
    _, d2 = _increment(src, Ks2, tab.b, ys, lie)
    for i in range(n):
        src.emit(f"{yc[i]} = {ys[i]} + {d2[i]}")
    src.emit("ga = flip*(" + gexpr(yc) + ")")
    src.emit("s = sa; gs = ga")
    src.emit("if ga < 0.0:")
    src.emit("    lo = sa; glo = ga")
    src.emit("    if side == -1:")
    src.emit("        ghi = 0.5*ghi")
    src.emit("    side = -1")
    src.emit("else:")
    src.emit("    hi = sa; ghi = ga")
    src.emit("    if side == 1:")
    src.emit("        glo = 0.5*glo")
    src.emit("    side = 1")
    src.emit("if abs(ga) <= xtol*scale or hi - lo <= 8.881784197001252e-16*h:")
    src.emit("    break")
    src.indent -= 2
    for i in range(n):
        src.emit(f"PTS[cnt, {i}] = {yc[i]}")
    src.emit("TS[cnt] = t0 + (k - 1)*h + s")
    src.emit("cnt += 1")
    src.emit("if abs(gs)/scale > worst:")
    src.emit("    worst = abs(gs)/scale")
    src.indent -= 1
    src.emit("g0 = g1")
    src.indent -= 1
    for i in range(n):
        src.emit(f"Z[{i}] = z{i}; E[{i}] = e{i}")
    src.emit("return k, cnt, status, worst")
    return head + "\n" + "\n".join(src.lines) + "\n"
