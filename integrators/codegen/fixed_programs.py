"""The fixed-step programs: the loop of n fixed steps and the one-step map (events), written by
:class:`integrators.codegen.writer.Source` for a Runge-Kutta tableau in rk or rkmk form, a commutator-free
method (Celledoni, Marthinsen and Owren 2003; Crouch and Grossman 1993: every stage and the update a
product of exponentials of combinations of the stage velocities, the update as the sum of its
exponentials' increments, as :class:`integrators.reference.stepping.CFStepper`) or McLachlan's splitting
of the free rigid body on so(3)* (McLachlan 1993: exact rotations about the two non-middle principal axes,
each increment ((c - 1) m_p + s m_q, (c - 1) m_q - s m_p), c - 1 = -2 sin^2(ang/2), added with its own
compensated sum), with Kahan's compensated summation of the increments (Hairer, McLachlan and
Razakarivony 2008)."""

from __future__ import annotations

import numpy as np

from ..methods import CommutatorFree, Splitting
from . import step_source
from .affine_source import AffineSource, writer_for
from .matrix_source import MatrixSource, matrix_form, preamble
from .source_text import lin


def writes(st, scheme):
    """True when the generated programs cover ``scheme`` (a tableau, a :class:`CommutatorFree` or a
    :class:`Splitting`) on the structure ``st``: McLachlan's splitting needs the free rigid body on so(3)
    (closed form "so3", a diagonal W, no affine term, no forcing); the others any recognised structure."""
    if not isinstance(scheme, Splitting):
        return True
    W = st.W
    return (st.closed == "so3" and st.P is None and not np.any(st.c)
            and not np.any(W - np.diag(np.diag(W))))


def _step_increment(src, scheme, z, h, lie, terms):
    """Emit one step of ``scheme`` (a tableau or a :class:`CommutatorFree`) from z with step ``h``;
    return the names of its increment z1 - z. The Lie-group step of a forced problem (:class:`AffineSource`)
    keeps its linear invariants L by the increment's projection (I - Pi) d, Pi = L^T (L L^T)^-1 L: from a
    state on {L z = L z0} the same point as the reference's projection of z + d onto that level set
    (:class:`integrators.reference.stepping.ProjectedStepper`)."""
    if isinstance(scheme, CommutatorFree):
        d = _commutator_free(src, scheme, z, h)
    else:
        Ks = step_source.stages(src, scheme, z, h, lie, terms)
        d = step_source.increment(src, Ks, scheme.b, z, lie)[1]
    if not isinstance(src, AffineSource):
        return d
    Pi, n = src.st.Pi, src.n
    return src.assign("dp", [f"{d[i]} - ({lin([(Pi[i, j], d[j]) for j in range(n)])})" for i in range(n)])


def _commutator_free(src, cf, z, h):
    """The increment of a commutator-free step: Y_i = prod_e exp(h sum_j c_ej F_j) . z, F_i = w(Y_i),
    z1 - z = sum_e d_e, d_e = exp(x_e)^T U_(e-1) - U_(e-1), U_e = U_(e-1) + d_e (U_0 = z) over the
    exponentials x_e = h sum_j c_ej F_j of the update (:class:`integrators.reference.stepping.CFStepper`)."""
    Fs = []
    for exps in cf.stages:
        cur = z
        for coeffs in exps:
            x = src.combo("x", list(zip(coeffs, Fs)), scale=h)
            if x is not None:
                cur = src.stage_act(x, cur)
        Fs.append(src.velocity(cur))
    cur, total = z, None
    for coeffs in cf.update:
        x = src.combo("x", list(zip(coeffs, Fs)), scale=h)
        if x is None:
            continue
        d = step_source.act_delta(src, x, cur)
        cur = src.assign("U", [f"{cur[j]} + {d[j]}" for j in range(src.n)])
        total = d if total is None else src.assign("T", [f"{total[j]} + {d[j]}" for j in range(src.n)])
    return total if total is not None else ["0.0"] * src.n


def _splitting(src, sp, z, e, h):
    """Emit a step of McLachlan's splitting of the free rigid body H = sum a_i m_i^2 / 2 (W = diag(a);
    :class:`integrators.reference.stepping.SplittingStepper`): Strang steps R_i(g h/2) R_k(g h) R_i(g h/2)
    for the fractions g of ``sp.gammas`` (adjacent rotations about the same axis merged: m_axis is fixed
    along them), R_axis a rotation of (m_p, m_q) by ang = (a_axis - a_j) h m_axis (j the middle axis).
    Each rotation's increment is added to the state (z, e) (names, updated in place) by Kahan's
    compensated sum. The temporaries of every rotation reuse the same names: on numpy columns each
    rebinding frees the previous array, so the step works in a few cache-resident buffers."""
    a = np.diag(src.st.W).astype(float)
    j = int(np.argsort(a)[1])
    i, k = [q for q in range(3) if q != j]
    al = {i: float(a[i] - a[j]), k: float(a[k] - a[j])}
    seq = []
    for gam in sp.gammas:
        for axis, frac in ((i, 0.5), (k, 1.0), (i, 0.5)):
            if seq and seq[-1][0] == axis:
                seq[-1] = (axis, seq[-1][1] + gam * frac)
            else:
                seq.append((axis, gam * frac))
    for axis, frac in seq:
        p, q = (axis + 1) % 3, (axis + 2) % 3
        # (m_p, m_q) += ((c - 1) m_p + s m_q, (c - 1) m_q - s m_p), c - 1 = -2 sin^2(ang/2)
        src.emit(f"_ang = {frac * al[axis]!r}*{h}*{z[axis]}")
        src.emit("_sh = sin(0.5*_ang); _cm = -2.0*_sh*_sh; _sn = sin(_ang)")
        src.emit(f"_dp = _cm*{z[p]} + _sn*{z[q]}; _dq = _cm*{z[q]} - _sn*{z[p]}")
        for r, dr in ((p, "_dp"), (q, "_dq")):
            src.emit(f"_y = {dr} + {e[r]}; _s = {z[r]} + _y; {e[r]} = ({z[r]} - _s) + _y; {z[r]} = _s")


def fixed_source(st, tab, lie, terms, columns=False):
    """Source of run(h, n, save_every, ts, ys, t0, z..., e...): n Kahan-compensated steps of ``tab`` (a
    tableau, a :class:`CommutatorFree` or a :class:`Splitting`), the state
    z + e stored in ys[j] (j-th save); returns (steps done, saves, z..., e...). A step whose state is
    not finite stops the loop (scalar modes); ensembles (``columns``: the numpy columns of mode "array")
    are checked by the caller on the saved states, so their loop has no test per step. The columns of
    dense structure constants (:func:`integrators.codegen.matrix_source.matrix_form`) take the products in matrix
    form over their stack (the constants in the text's preamble), as the adaptive loops of an ensemble do."""
    matrix = columns and matrix_form(st, lie) and not isinstance(tab, Splitting)
    src = MatrixSource(st) if matrix else writer_for(st, lie)
    n = st.n
    z = [f"z{i}" for i in range(n)]
    e = [f"e{i}" for i in range(n)]
    head = f"def run(h, nsteps, save_every, ts, ys, t0, {', '.join(z + e)}):"
    src.emit("j = 1")
    src.emit("done = 0")
    src.emit("for k in range(1, nsteps + 1):")
    src.indent += 1
    d = None   # the increment (a splitting updates z, e itself)
    if isinstance(tab, Splitting):
        if not columns:  # the state before the step, kept when the step is not finite
            src.emit(", ".join(f"_p{i}" for i in range(2 * n)) + " = " + ", ".join(z + e))
        _splitting(src, tab, z, e, "h")
        if not columns:
            src.emit("_chk = " + " + ".join(z))
            src.emit("if not fin(_chk):")
            src.emit("    " + ", ".join(z + e) + " = " + ", ".join(f"_p{i}" for i in range(2 * n)))
            src.emit("    break")
    else:
        d = _step_increment(src, tab, z, "h", lie, terms)
    step_source.fixed_step_end(src, z, e, d, check=not columns)
    text = head + "\n" + "\n".join(src.lines) + "\n"
    return preamble(st) + text if matrix else text


def trial_source(st, tab, lie, terms):
    """Source of one step (no error estimate) from z with step h: step(h, z...) -> z1 (a tuple), for
    event location by the method's own continuous extension."""
    src = writer_for(st, lie)
    n = st.n
    z = [f"z{i}" for i in range(n)]
    head = f"def step(h, {', '.join(z)}):"
    if isinstance(tab, Splitting):
        e = [f"e{i}" for i in range(n)]
        src.emit(", ".join(e) + " = " + ", ".join(["0.0"] * n))
        _splitting(src, tab, z, e, "h")
        src.emit("return (" + ", ".join(f"{z[i]} + {e[i]}" for i in range(n)) + ",)")
    else:
        d = _step_increment(src, tab, z, "h", lie, terms)
        src.emit("return (" + ", ".join(f"{z[i]} + {d[i]}" for i in range(n)) + ",)")
    return head + "\n" + "\n".join(src.lines) + "\n"
