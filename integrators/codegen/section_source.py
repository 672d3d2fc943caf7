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
from .orbit_source import writer_class
from .writer import Source


def section_source(st, tab, lie, terms):
    """Source of ``run`` (module docstring) for structure ``st`` and tableau ``tab`` (rk or rkmk form)."""
    src = writer_class(st, lie)(st)   # (the orbit space's RKMK steps on an almost abelian algebra)
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
    yc = [f"yc{i}" for i in range(n)]
    for i in range(n):
        src.emit(f"{yc[i]} = z{i} + e{i}")
    _illinois(src, tab, lie, terms, ys, yc, gexpr)
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


def _illinois(src, tab, lie, terms, ys, yc, gexpr):
    """Emit the location of a crossing over the step from ys (g0 at ys, g1 at the step's end, whose state
    ``yc`` holds on entry): the Illinois iteration on s -> Phi_s(ys) (module docstring), leaving the point
    in ``yc``, its step fraction in ``s``, its g in ``gs`` and the tolerance's scale in ``scale``."""
    n = src.n
    src.emit("flip = 1.0 if g0 < 0.0 else -1.0")
    src.emit("scale = 1.0 + anorm*sqrt(" + " + ".join(f"{y}*{y}" for y in ys) + ")")
    src.emit("lo = 0.0; glo = flip*g0; hi = h; ghi = flip*g1; s = h; gs = ghi; side = 0")
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


#: orbits stepped together by the lane kernel (one vectorizable loop per step)
LANES = 16


def locate_source(st, tab, lie, terms):
    """Source of ``locate(h, A, anorm, b0, xtol, g0, g1, YS, YC) -> (s, gs, scale)``: the crossing over
    the step from YS (its end state in YC on entry, the located point on return), by the same
    Illinois iteration as ``run`` (:func:`_illinois`)."""
    src = writer_class(st, lie)(st)   # (the orbit space's RKMK steps on an almost abelian algebra)
    n = st.n
    ys = [f"ys{i}" for i in range(n)]
    yc = [f"yc{i}" for i in range(n)]
    for i in range(n):
        src.emit(f"a{i} = A[{i}]; {ys[i]} = YS[{i}]; {yc[i]} = YC[{i}]")
    gexpr = lambda y: " + ".join(f"a{i}*{y[i]}" for i in range(n)) + " - b0"
    _illinois(src, tab, lie, terms, ys, yc, gexpr)
    for i in range(n):
        src.emit(f"YC[{i}] = {yc[i]}")
    src.emit("return s, gs, scale")
    return "def locate(h, A, anorm, b0, xtol, g0, g1, YS, YC):\n" + "\n".join(src.lines) + "\n"


def lanes_module(st, tab, lie, terms, lanes=LANES):
    """Module text of the lane kernel of the section (a tableau in rk form: its step is arithmetic only)::

        ensemble(h, nsteps, t0, cap, MAXC, Z, E, K, A, b0, direction, xtol, PTS, TS, CNT, ST, RES, IDX, NG)

    with the arguments of ``run``'s ensemble (:func:`integrators.codegen.ensemble_source.section_module`)
    and the orbits to run IDX split into NG groups (a ``numba.prange`` over them). A group steps ``lanes``
    orbits together: one step of all lanes is one loop of straight-line arithmetic (state, compensated
    sum, g at the end, the crossing test as a bit mask), which the compiler vectorizes and whose
    independent chains the processor overlaps (one orbit's step is a chain of dependent operations);
    only when a lane has an event (a crossing, a step that is not finite, its last step) does a scalar
    pass handle it: the crossing located by ``locate`` (the same Illinois iteration on the one-step map
    as ``run``), an orbit whose buffer is full, whose ``MAXC`` is reached, that overflowed or that
    reached ``nsteps`` hands its lane to the group's next orbit. Each orbit's outputs are those of
    ``run`` (the same arithmetic in the same order: identical crossings)."""
    n = st.n
    src = Source(st)
    src.indent = 0
    z = [f"z{i}" for i in range(n)]
    Ks = _stages(src, tab, z, "h", lie, terms)
    _, d = _increment(src, Ks, tab.b, z, lie)
    body = [f"z{i} = Zc[{i}, b]; e{i} = Ec[{i}, b]" for i in range(n)]
    body += [f"YSc[{i}, b] = z{i} + e{i}" for i in range(n)]
    body += src.lines
    body += ["_chk = " + " + ".join(d), "bad = (_chk - _chk) != 0.0", "BADc[b] = bad"]
    for j in range(n):
        body.append(f"_y = {d[j]} + e{j}; _s = z{j} + _y; Ec[{j}, b] = (z{j} - _s) + _y; Zc[{j}, b] = _s")
    body.append("g1 = " + " + ".join(f"a{i}*(Zc[{i}, b] + Ec[{i}, b])" for i in range(n)) + " - b0")
    body.append("g0 = G0[b]")
    body.append("hit = (up & (g0 < 0.0) & (g1 >= 0.0)) | (down & (g0 > 0.0) & (g1 <= 0.0))")
    body.append("kb = KC[b] + 1")
    body.append("KC[b] = kb")
    body.append("G1[b] = g1")
    body.append("ev = LIVE[b] & (hit | bad | (kb >= nsteps))")
    body.append("EV[b] = ev")
    body.append("nev += ev")
    w = [
        "",
        "locate = numba.njit(locate, **JIT)",
        "",
        "",
        '@numba.njit(parallel=True, **JIT)',
        "def ensemble(h, nsteps, t0, cap, MAXC, Z, E, K, A, b0, direction, xtol, PTS, TS, CNT, ST, RES, IDX, NG):",
        f"    L = {lanes}",
        "    M = IDX.shape[0]",
        "    up = direction >= 0",
        "    down = direction <= 0",
        "    anorm = sqrt(" + " + ".join(f"A[{i}]*A[{i}]" for i in range(n)) + ")",
        "    for grp in numba.prange(NG):",
        "        lo = (grp*M)//NG",
        "        hi = ((grp + 1)*M)//NG",
        "        nxt = lo",
        f"        Zc = np.zeros(({n}, L)); Ec = np.zeros(({n}, L)); YSc = np.zeros(({n}, L)); YC = np.zeros({n})",
        "        G0 = np.zeros(L); G1 = np.zeros(L); KC = np.zeros(L, np.int64); LIVE = np.zeros(L, np.bool_)",
        "        EV = np.zeros(L, np.bool_); BADc = np.zeros(L, np.bool_); ORB = np.zeros(L, np.int64)",
        "        nlive = 0",
        "        for b in range(L):",
        "            if nxt < hi:",
        "                o = IDX[nxt]; nxt += 1",
        "                ORB[b] = o; LIVE[b] = True; nlive += 1; KC[b] = K[o]",
        "                CNT[o] = 0; ST[o] = 0; RES[o] = 0.0",
        f"                for i in range({n}):",
        "                    Zc[i, b] = Z[o, i]; Ec[i, b] = E[o, i]",
        "                G0[b] = " + " + ".join(f"A[{i}]*(Zc[{i}, b] + Ec[{i}, b])" for i in range(n)) + " - b0",
        "                if KC[b] >= nsteps or MAXC[o] <= 0 or cap <= 0:",
        "                    LIVE[b] = False; nlive -= 1",
        "        " + "; ".join(f"a{i} = A[{i}]" for i in range(n)),
        "        while nlive > 0:",
        "            nev = 0",
        "            for b in range(L):",
    ]
    w += ["                " + ln.strip() for ln in body]
    w += [
        "            if nev == 0:",
        "                for b in range(L):",
        "                    G0[b] = G1[b]",
        "                continue",
        "            for b in range(L):",
        "                if not EV[b]:",
        "                    G0[b] = G1[b]",
        "                    continue",
        "                o = ORB[b]",
        "                g0 = G0[b]; g1 = G1[b]",
        "                G0[b] = g1",
        "                done = False",
        "                if BADc[b]:",
        "                    # the step was not finite: the state before it is kept, status -1",
        f"                    for i in range({n}):",
        "                        Zc[i, b] = YSc[i, b]; Ec[i, b] = 0.0",
        "                    KC[b] -= 1",
        "                    ST[o] = -1",
        "                    done = True",
        "                else:",
        "                    hitb = (up and g0 < 0.0 and g1 >= 0.0) or (down and g0 > 0.0 and g1 <= 0.0)",
        "                    if hitb:",
        f"                        for i in range({n}):",
        "                            YC[i] = Zc[i, b] + Ec[i, b]",
        "                        s, gs, scale = locate(h, A, anorm, b0, xtol, g0, g1, YSc[:, b], YC)",
        "                        c = CNT[o]",
        f"                        for i in range({n}):",
        "                            PTS[o, c, i] = YC[i]",
        "                        TS[o, c] = t0 + (KC[b] - 1)*h + s",
        "                        CNT[o] = c + 1",
        "                        if abs(gs)/scale > RES[o]:",
        "                            RES[o] = abs(gs)/scale",
        "                    if KC[b] >= nsteps or CNT[o] >= cap or CNT[o] >= MAXC[o]:",
        "                        done = True",
        "                if done:",
        f"                    for i in range({n}):",
        "                        Z[o, i] = Zc[i, b]; E[o, i] = Ec[i, b]",
        "                    K[o] = KC[b]",
        "                    LIVE[b] = False; nlive -= 1",
        "                    while nxt < hi:",
        "                        o = IDX[nxt]; nxt += 1",
        "                        CNT[o] = 0; ST[o] = 0; RES[o] = 0.0",
        "                        if K[o] >= nsteps or MAXC[o] <= 0:",
        "                            continue",
        "                        ORB[b] = o; LIVE[b] = True; nlive += 1; KC[b] = K[o]",
        f"                        for i in range({n}):",
        "                            Zc[i, b] = Z[o, i]; Ec[i, b] = E[o, i]",
        "                        G0[b] = " + " + ".join(f"A[{i}]*(Zc[{i}, b] + Ec[{i}, b])" for i in range(n)) + " - b0",
        "                        break",
    ]
    return locate_source(st, tab, lie, terms) + "\n".join(w) + "\n"
