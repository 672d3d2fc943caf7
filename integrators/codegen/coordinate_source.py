"""Generated whole-run loops of the coordinate schemes ``mp_lda`` and ``nh_rattle`` (no gauge term) in
straight-line scalar code: the problem's grad V(q), A(q) and dA/dq written into the step as expressions (the
source text the problem carries, e.g. printed by servo.coordinates from its symbolic equations), M^-1 folded
in as literals (its zero entries skipped), every component a local variable, no array in the step but the
saved states. The maps are those of :mod:`integrators.reference.nonholonomic.coordinate_kernels` (``mp_run``,
``rattle_run``; the equations there), which stay as the generic loops and the reference of the tests.

**mp_lda** (McLachlan and Perlmutter 2006, eq. (4.18)): Newton in the k multipliers, residual
r(lambda) = -A(q_1) v_1 with v_1 = v_0 - h M^-1 grad V(q_1/2) + h M^-1 A(q_1/2)^T lambda and
q_1 = q_1/2 + h v_1 / 2; its k x k Jacobian (A_1 + h/2 dA_1[v_1]) h M^-1 A_1/2^T comes with the residual
(the same A_1, dA_1), so each iteration is a Newton step with the exact Jacobian. The predictor is the
quadratic extrapolation of the last three multipliers. The stop (Hairer and Wanner 1996, IV.8, eq. (8.10)):
the error left after an increment de is estimated as rho / (1 - rho) |de| with the contraction
rho = kq |de| of Newton's quadratic convergence, kq = max |de_(j+1)| / |de_j|^2 measured over the run on
increments above round-off (10 kq used); below the tolerance of the generic loop the step ends without the
residual that would confirm it. Until kq is measured (the first steps) and whenever the estimate is not
small enough, the iteration goes on to an increment at round-off, as the generic loop does. Where the
residual is linear in lambda (the contact oscillator: A = [1, 0, y] and y_1 does not depend on lambda) one
Newton iteration a step remains. Failure (no convergence in MAX_ITER, a singular Jacobian, a non-finite
increment) ends the run there, as in the generic loop.

**nh_rattle** (Ferraro, Iglesias and Martin de Diego 2008): explicit; grad V and A at q_(k+1) are those at the
start of the next step, so the loop evaluates them once a step (the generic loop twice).

The k x k solves are written for k = 1, 2 (Cramer); :func:`coordinate_text` returns None above.
"""

from __future__ import annotations

import numpy as np

from ..reference.nonholonomic.kernels import MAX_ITER, TOL
from .source_text import Lines, num

#: the largest number of constraints the straight-line solve is written for
MAX_K = 2


def _sum(terms):
    """Source of the sum of the non-empty product strings ``terms`` ("0.0" when none)."""
    terms = [t for t in terms if t]
    return " + ".join(terms) if terms else "0.0"


def _mul(c, v):
    """c * v for a float literal c ('' when c == 0)."""
    if c == 0.0:
        return ""
    return v if c == 1.0 else f"{num(c)}*{v}"


def _zero(e):
    try:
        return float(e) == 0.0
    except (TypeError, ValueError):
        return False


class CoordinateSource:
    """The text of the loop of ``scheme`` ("mp" or "rattle") for expressions ``source`` = {"grad_V": n
    strings, "A": k x n, "dA": k x n x n (dA_ij / dq_l)} in the names q0 .. q(n-1) (numpy and math calls by
    their module names) and the inverse mass matrix ``Minv``."""

    def __init__(self, scheme, source, Minv):
        self.scheme = scheme
        self.g = list(source["grad_V"])
        self.A = [list(r) for r in source["A"]]
        self.dA = [[list(c) for c in r] for r in source.get("dA") or []]
        self.Minv = np.asarray(Minv, dtype=float)
        self.n, self.k = len(self.g), len(self.A)
        if scheme == "mp" and not self.dA:
            raise ValueError("mp_lda's generated loop needs dA in the problem's source")

    # ------------------------------------------------------------------ pieces
    def _at(self, L, pt):
        """Bind q0.. to the point names pt (the expressions read q0..)."""
        L.emit("; ".join(f"q{i} = {pt[i]}" for i in range(self.n)))

    def _minv(self, i, vec):
        return _sum(_mul(float(self.Minv[i, j]), vec[j]) for j in range(self.n))

    def _solve(self, L, J, r, out):
        """out = J^-1 r (k = 1, 2); sets sing = True when J is singular."""
        if self.k == 1:
            L.emit(f"sing = {J[0][0]} == 0.0")
            L.emit(f"{out[0]} = {r[0]} / {J[0][0]} if not sing else 0.0")
        else:
            L.emit(f"det = {J[0][0]} * {J[1][1]} - {J[0][1]} * {J[1][0]}")
            L.emit("sing = det == 0.0")
            L.emit("idet = 1.0 / det if not sing else 0.0")
            L.emit(f"{out[0]} = ({J[1][1]} * {r[0]} - {J[0][1]} * {r[1]}) * idet")
            L.emit(f"{out[1]} = ({J[0][0]} * {r[1]} - {J[1][0]} * {r[0]}) * idet")

    # ------------------------------------------------------------------ the loops
    def text(self):
        return self._mp() if self.scheme == "mp" else self._rattle()

    def _head(self, L, args):
        L.indent = 0
        L.emit("import math")
        L.emit("import numpy")
        L.emit("import numpy as np")
        L.emit("")
        L.emit("@numba.njit(**JIT)")
        L.emit(f"def run({args}):")
        L.indent = 1
        L.emit("B = Y0.shape[0]")
        L.emit(f"ys = np.empty((K, B, {2 * self.n}))")
        L.emit("ys[0] = Y0")
        L.emit("done = nsteps")
        L.emit(f"TOL = {num(TOL)}")

    def _save(self, L, vel):
        L.emit("if kstep == tosave or kstep == nsteps:")
        for i in range(self.n):
            L.emit(f"    ys[jsave, b, {i}] = x{i}")
        for i in range(self.n):
            L.emit(f"    ys[jsave, b, {self.n + i}] = {vel[i]}")
        L.emit("    jsave += 1")
        L.emit("    tosave += save_every")

    def _mp(self):
        n, k, h2 = self.n, self.k, "0.5 * h"
        L = Lines(indent=0)
        self._head(L, "Y0, h, nsteps, save_every, K")
        L.emit("iters = 0")
        L.emit("kq = -1.0")                      # Newton's quadratic constant, unknown until measured
        L.emit("for b in range(B):")
        L.indent = 2
        for i in range(n):
            L.emit(f"x{i} = Y0[b, {i}]; v{i} = Y0[b, {n + i}]")
        for c in range(k):
            L.emit(f"l{c} = m1_{c} = m2_{c} = m3_{c} = 0.0")
        L.emit("jsave = 1")
        L.emit("tosave = save_every")
        L.emit("for kstep in range(1, nsteps + 1):")
        L.indent = 3
        L.emit("if kstep > done:")
        L.emit("    break")
        for i in range(n):
            L.emit(f"xh{i} = x{i} + {h2} * v{i}")
        self._at(L, [f"xh{i}" for i in range(n)])
        for i in range(n):
            L.emit(f"g{i} = {self.g[i]}")
        for c in range(k):
            for j in range(n):
                L.emit(f"ah{c}_{j} = {self.A[c][j]}")
        for i in range(n):                      # h M^-1 A_1/2^T and v_1 without the constraint force
            for c in range(k):
                L.emit(f"mt{i}_{c} = h * ({self._minv(i, [f'ah{c}_{j}' for j in range(n)])})")
            L.emit(f"f{i} = v{i} - h * ({self._minv(i, [f'g{j}' for j in range(n)])})")
        L.emit("if kstep > 3:")
        for c in range(k):
            L.emit(f"    l{c} = 3.0 * m1_{c} - 3.0 * m2_{c} + m3_{c}")
        L.emit("elif kstep > 1:")
        for c in range(k):
            L.emit(f"    l{c} = m1_{c}")
        L.emit("sc = 1.0")
        for i in range(n):
            L.emit(f"sc = max(sc, abs(x{i}))")
        L.emit("ok = False")
        L.emit("prev = 1e308")
        L.emit(f"for it in range({MAX_ITER}):")
        L.indent = 4
        for i in range(n):
            L.emit(f"w{i} = f{i} + {_sum(f'mt{i}_{c} * l{c}' for c in range(k))}")
        self._at(L, [f"xh{i} + {h2} * w{i}" for i in range(n)])
        for c in range(k):
            for j in range(n):
                if not _zero(self.A[c][j]):
                    L.emit(f"a{c}_{j} = {self.A[c][j]}")
            L.emit(f"r{c} = -({_sum(f'a{c}_{j} * w{j}' for j in range(n) if not _zero(self.A[c][j]))})")
            for i in range(n):                  # d r_c / d w_i (with the minus sign of r: J de = r)
                terms = [f"a{c}_{i}"] if not _zero(self.A[c][i]) else []
                terms += [f"{h2} * ({self.dA[c][l][i]}) * w{l}" for l in range(n) if not _zero(self.dA[c][l][i])]
                L.emit(f"j{c}_{i} = {_sum(terms)}")
            for d in range(k):
                L.emit(f"J{c}_{d} = {_sum(f'j{c}_{i} * mt{i}_{d}' for i in range(n))}")
        self._solve(L, [[f"J{c}_{d}" for d in range(k)] for c in range(k)], [f"r{c}" for c in range(k)],
                    [f"de{c}" for c in range(k)])
        L.emit("if sing:")
        L.emit("    break")
        L.emit("dn = 0.0")
        for c in range(k):
            L.emit(f"l{c} += de{c}")
            L.emit(f"dn = max(dn, abs(de{c}))")
        L.emit("scw = sc")
        for i in range(n):
            L.emit(f"scw = max(scw, abs(w{i}))")
        L.emit("iters += 1")
        L.emit("if not math.isfinite(dn):")
        L.emit("    break")
        L.emit("if it > 0 and prev * h > 1e3 * TOL * scw:")    # Newton's constant from increments above round-off
        L.emit("    kq = max(kq, dn / (prev * prev))")
        L.emit("if dn * h <= TOL * scw or (dn >= prev and dn * h <= 1e3 * TOL * scw):")
        L.emit("    ok = True")
        L.emit("    break")
        L.emit("if kq >= 0.0:")                 # the error left, rho / (1 - rho) |de|, rho = 10 kq |de|
        L.emit("    rho = 10.0 * kq * dn")
        L.emit("    if rho < 0.5 and rho * dn * h <= (1.0 - rho) * TOL * scw:")
        L.emit("        ok = True")
        L.emit("        break")
        L.emit("prev = dn")
        L.indent = 3
        L.emit("if not ok:")
        L.emit("    done = kstep - 1")
        L.emit("    break")
        for i in range(n):
            L.emit(f"v{i} = f{i} + {_sum(f'mt{i}_{c} * l{c}' for c in range(k))}")
            L.emit(f"x{i} = xh{i} + {h2} * v{i}")
        for c in range(k):
            L.emit(f"m3_{c} = m2_{c}; m2_{c} = m1_{c}; m1_{c} = l{c}")
        self._save(L, [f"v{i}" for i in range(n)])
        L.indent = 1
        L.emit("return ys, done, iters")
        return "\n".join(L.lines) + "\n"

    def _rattle(self):
        n, k, h2 = self.n, self.k, "0.5 * h"
        M = np.linalg.inv(self.Minv)
        L = Lines(indent=0)
        self._head(L, "Y0, L0, h, nsteps, save_every, K")
        L.emit(f"Lend = np.empty((B, {k}))")
        L.emit("for b in range(B):")
        L.indent = 2
        for i in range(n):
            L.emit(f"x{i} = Y0[b, {i}]")
        for i in range(n):
            L.emit(f"p{i} = {_sum(_mul(float(M[i, j]), f'Y0[b, {n + j}]') for j in range(n))}")
        for c in range(k):
            L.emit(f"l{c} = L0[b, {c}]")
        self._at(L, [f"x{i}" for i in range(n)])
        for i in range(n):
            L.emit(f"g{i} = {self.g[i]}")
        for c in range(k):
            for j in range(n):
                L.emit(f"a{c}_{j} = {self.A[c][j]}")
        L.emit("jsave = 1")
        L.emit("tosave = save_every")
        L.emit("for kstep in range(1, nsteps + 1):")
        L.indent = 3
        for i in range(n):                       # grad V, A at q_k: from the end of the last step
            L.emit(f"ph{i} = p{i} - {h2} * g{i} + {h2} * ({_sum(f'a{c}_{i} * l{c}' for c in range(k))})")
        for i in range(n):
            L.emit(f"x{i} += h * ({self._minv(i, [f'ph{j}' for j in range(n)])})")
        self._at(L, [f"x{i}" for i in range(n)])
        for i in range(n):
            L.emit(f"g{i} = {self.g[i]}")
        for c in range(k):
            for j in range(n):
                L.emit(f"a{c}_{j} = {self.A[c][j]}")
        for i in range(n):
            L.emit(f"pt{i} = ph{i} - {h2} * g{i}")
        for c in range(k):                       # (h/2) A M^-1 A^T lambda = -A M^-1 pt
            for i in range(n):
                L.emit(f"u{c}_{i} = {self._minv(i, [f'a{c}_{j}' for j in range(n)])}")
            L.emit(f"r{c} = -({_sum(f'u{c}_{i} * pt{i}' for i in range(n))})")
            for d in range(k):
                L.emit(f"G{c}_{d} = {h2} * ({_sum(f'u{c}_{i} * a{d}_{i}' for i in range(n))})")
        self._solve(L, [[f"G{c}_{d}" for d in range(k)] for c in range(k)], [f"r{c}" for c in range(k)],
                    [f"l{c}" for c in range(k)])
        L.emit("if sing:")
        L.emit("    done = min(done, kstep - 1)")
        L.emit("    break")
        for i in range(n):
            L.emit(f"p{i} = pt{i} + {h2} * ({_sum(f'a{c}_{i} * l{c}' for c in range(k))})")
        self._save(L, [f"({self._minv(i, [f'p{j}' for j in range(n)])})" for i in range(n)])
        L.indent = 2
        for c in range(k):
            L.emit(f"Lend[b, {c}] = l{c}")
        L.indent = 1
        L.emit("return ys, Lend, done")
        return "\n".join(L.lines) + "\n"


def coordinate_text(scheme, source, Minv):
    """The loop's text, or None when the problem has more than MAX_K constraints."""
    if len(source["A"]) > MAX_K:
        return None
    return CoordinateSource(scheme, source, Minv).text()
