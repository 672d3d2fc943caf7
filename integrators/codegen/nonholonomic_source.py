"""Generated whole-run loops of the discrete Lagrange-d'Alembert-Suslov map (``dlas_exp``, ``dlas_cay``) and of
the Lie-group nonholonomic RATTLE (``lie_rattle_*``) in straight-line scalar code: every component a local
variable, only the non-zero entries of the structure constants (literals) and of the problem's matrices
(read once from a constant vector ``cst``, so problems with the same sparsity share one compiled text)
written out, no array in the step but the saved states.

The map is that of :mod:`integrators.reference.nonholonomic.kernels` (``dlas_run``; the equations there):
the p = n - k unknowns eta (xi = N eta, x = h xi, w = I xi) solve r(eta) = -N^T (D_x w - m) = 0 with

    D_x w = w - u1/2 + beta(s) ad_x^T u1   (exp: u1 = ad_x^T w, s = theta^2 = x^T Q x, Q = -Killing/2)
    D_x w = w - u1/2 - S(x, ., x)^T w / 4   (cay),

and the new state is m_{k+1} = Pc (m_k + u1): at the solution D_x w - m_k lies in the range of A^T
(N^T of it vanishes), Pc A^T = 0 and D_{-x} w = D_x w + u1 (the odd part of D changes sign with x), so the
output needs u1 at the solution only, not a second evaluation of dtau^-1. The RATTLE runs the same loop with
N = 1 (no constraint on xi), Pc = 2 P - 1 and the saved Pout = P.

**Simplified Newton** (Hairer and Wanner 1996, *Solving ODEs II*, IV.8): the inverse of the p x p Jacobian
is kept across iterations and steps (p^2 scalars) and refreshed only when the contraction
theta_j = |de_j| / |de_{j-1}| measured in a step exceeds ``THETA_REFRESH[stride]`` (for the next step) or the
iteration does not contract (theta >= 1/2: the step restarts from its predictor with a fresh Jacobian); a
Newton failure with a fresh Jacobian ends the run there (the caller's status). The Jacobian is analytic,
derived by sympy when the text is written (:meth:`DlasSource.jacobian`, cse over its entries; beta'(s) generated
beside beta): on the sleigh and Suslov's problem the RATTLE's exp loop 0.061-0.066 -> 0.050-0.051 us a step
against forward differences of r (p more residuals), interleaved A/B in CPU time. The stop: the increment at
round-off (|de| <= TOL max(1, |eta|)), or the error
left after it estimated as theta/(1 - theta) |de| (theta measured in this step, or 10x the last step's
for the first increment) below TOL max(1, |eta|); the increment on the round-off floor (not decreasing,
below 1e3 TOL) ends it too. The predictor is the quadratic extrapolation of the last three solutions
(:mod:`integrators.reference.nonholonomic.kernels`); for the RATTLE, whose solutions alternate step to step
(its parasitic mode), the polynomial extrapolation of degree ``PARITY_DEGREE`` of the solutions of the same
parity (steps k-2, k-4, ...: the smooth and the alternating part extrapolated together; the solutions kept in
a doubled ring, so a step stores 2p scalars and shifts none), with one Jacobian per parity. One step then
costs the predictor, one residual where the predictor is at round-off (the steady motions)
and two or three while the motion moves, a p x p product per residual, and the output u1. Components of the
state and of eta below 1e-250 of its size are set to zero (below round-off; without it the sleigh's decaying
omega sticks at the smallest subnormal number, where each product costs ~100 cycles).
"""

from __future__ import annotations

from math import comb

import numpy as np

from liegroups._lazy import lazy_module

from ..reference.nonholonomic.kernels import MAX_ITER, TOL
from .source_text import Lines, num

sp = lazy_module("sympy")  # the residual's Jacobian derived once, when the text is written

def parity_extrapolation(d):
    """Coefficients c_j of eta_k = sum_j c_j eta_{k-1-j} that extrapolate the solutions of the same parity as k
    (steps k-2, k-4, ..., k-2(d+1)) by the polynomial of degree d through them: c_{2i+1} = (-1)^i binom(d+1, i+1)
    (the (d+1)-th difference of that subsequence set to zero), c_{2i} = 0. Exact for P(k) + (-1)^k Q(k) with P, Q
    of degree d: the smooth and the alternating part of the RATTLE's solutions extrapolated together."""
    c = [0.0] * (2 * (d + 1))
    for i in range(d + 1):
        c[2 * i + 1] = float((-1) ** i * comb(d + 1, i + 1))
    return tuple(c)


#: the degree of the RATTLE's same-parity extrapolation. Its alternating mode keeps the solutions far from
#: smooth (|eta_k - 2 eta_(k-1) + eta_(k-2)| ~ 1e-3 on the sleigh, 2e-4 on Suslov's problem at h = 0.05): the
#: error of the extrapolation of degree d over the subsequence of step 2h falls ~8x per degree (benchmarks on
#: the sleigh: median 4e-5 at d = 2, 1e-8 at d = 6), and with it the residuals a step; at d = 8 the sum of
#: |c_j| is 2^9 - 1, the round-off it adds (~5e-14) far below the distances it removes.
PARITY_DEGREE = 8
#: the predictor: eta_k = sum_j c_j eta_{k-1-j}, exact for polynomials (stride 1) of degree 2, and (stride 2,
#: the RATTLE's alternating solutions) for P(k) + (-1)^k Q(k), P and Q of degree PARITY_DEGREE; in the first
#: steps, where fewer solutions are kept, the same-parity extrapolation of the highest degree they allow
PREDICTORS = {1: (3.0, -3.0, 1.0), 2: parity_extrapolation(PARITY_DEGREE)}
#: the contraction rate above which the Jacobian is refreshed for the next step (per stride: the RATTLE's
#: Jacobian of each parity moves by O(2h |eta'|) between its steps; a refresh costs p + 1 residuals, an
#: iteration with theta ~ 1e-3 gains 3 digits: refreshing at 3e-3 costs the fewest residuals a step, measured
#: 2.7-2.8 on the sleigh and 1.7-1.8 on Suslov's problem against 3.6-3.9 and 2.6-2.7 at 1e-4)
THETA_REFRESH = {1: 1e-4, 2: 3e-3}
#: the contraction assumed for the first increment after a refresh (kept from the forward-difference Jacobian,
#: whose error was ~1e-8; conservative for the analytic one)
FRESH_THETA = 1e-6


#: the generated loops' p x p inverse (Gauss-Jordan with partial pivoting), jitted beside them
INVERSE_SOURCE = '''\
@numba.njit(**JIT)
def inverse(J, Ji):
    """Ji = J^-1 (Gauss-Jordan, partial pivoting; J overwritten); False when singular."""
    p = J.shape[0]
    for i in range(p):
        for j in range(p):
            Ji[i, j] = 1.0 if i == j else 0.0
    for c in range(p):
        piv, best = c, abs(J[c, c])
        for i in range(c + 1, p):
            if abs(J[i, c]) > best:
                piv, best = i, abs(J[i, c])
        if not best > 0.0:
            return False
        for j in range(p):
            J[c, j], J[piv, j] = J[piv, j], J[c, j]
            Ji[c, j], Ji[piv, j] = Ji[piv, j], Ji[c, j]
        f = 1.0 / J[c, c]
        for j in range(p):
            J[c, j] *= f
            Ji[c, j] *= f
        for i in range(p):
            if i != c:
                g = J[i, c]
                for j in range(p):
                    J[i, j] -= g * J[c, j]
                    Ji[i, j] -= g * Ji[c, j]
    return True

'''


class _Consts:
    """The problem's matrix entries as names of a constant vector (zero entries: None)."""

    def __init__(self, rel=1e-15):
        self.values, self.rel = [], rel

    def matrix(self, M, tag):
        M = np.asarray(M, dtype=float)
        big = max(1.0, float(np.max(np.abs(M)))) if M.size else 1.0
        out = np.empty(M.shape, dtype=object)
        for idx in np.ndindex(M.shape):
            v = float(M[idx])
            if abs(v) <= self.rel * big:
                out[idx] = None
            elif v == 1.0:
                out[idx] = 1.0
            else:
                out[idx] = f"{tag}{'_'.join(map(str, idx))}"
                self.values.append((out[idx], v))
        return out


def _tidy(T):
    """The algebra's constant tensor with the round-off of its construction (vee by least squares) removed:
    entries within 1e-13 of a multiple of 2^-20 (the structure constants and S of so(3), se(2), se(3) are
    0, +-1, +-1/2, +-1/4) are put on it."""
    T = np.asarray(T, dtype=float)
    R = np.round(T * 2.0 ** 20) / 2.0 ** 20
    return np.where(np.abs(R - T) <= 1e-13, R, T)


def _slin(terms):
    """Source of sum c * v over (c, v); c a name, a float, or None (skipped)."""
    parts = []
    for c, v in terms:
        if c is None or (isinstance(c, float) and c == 0.0):
            continue
        if isinstance(c, float):
            t = v if abs(c) == 1.0 else f"{num(abs(c))}*{v}"
            parts.append((c < 0, t))
        else:
            parts.append((False, f"{c}*{v}"))
    if not parts:
        return "0.0"
    out = ("-" if parts[0][0] else "") + parts[0][1]
    for neg, t in parts[1:]:
        out += f" - {t}" if neg else f" + {t}"
    return out


class DlasSource:
    """The text of ``run(M0, Y0, h, nsteps, save_every, K, cst)`` for the data of
    :func:`integrators.reference.nonholonomic.compiled.dlas_data` (module docstring) and ``cst``, the vector
    of constants it reads (the refresh threshold ``theta_refresh``, then the problem's matrix entries)."""

    def __init__(self, mode, C, S, N, Pc, Pout, I, Iinv, stride, theta_refresh=None):
        self.mode, self.stride = int(mode), int(stride)
        self.theta_refresh = THETA_REFRESH[self.stride] if theta_refresh is None else float(theta_refresh)
        self.C, self.S = _tidy(C), _tidy(S)
        self.n, self.p = self.C.shape[0], np.shape(N)[1]
        k = _Consts()
        self.identity_N = self.p == self.n and np.array_equal(np.asarray(N), np.eye(self.n))
        self.N = k.matrix(N, "N")
        self.I = k.matrix(I, "I")
        self.NI = k.matrix(np.asarray(N).T @ np.asarray(Iinv), "G")      # first guess eta = N^T I^-1 m
        self.Pc = k.matrix(Pc, "P")
        self.Pout = k.matrix(Pout, "Q")
        self.consts = k
        Pc_, Po_ = np.asarray(Pc, dtype=float), np.asarray(Pout, dtype=float)
        self.same = np.array_equal(Pc_, Po_)
        self.reflection = (not self.same) and np.allclose(Pc_, 2.0 * Po_ - np.eye(self.n), rtol=0.0,
                                                                         atol=1e-15)
        if self.mode == 0:
            E = np.einsum("aij,bji->ab", np.swapaxes(self.C, 1, 2), np.swapaxes(self.C, 1, 2))
            self.Q = -0.5 * E                                          # s = x^T Q x = -tr(ad_x^2)/2

    @property
    def cst(self):
        return np.array([self.theta_refresh] + [v for _, v in self.consts.values], dtype=float)

    # ------------------------------------------------------------ pieces
    def _ad_T(self, L, x, w, tag):
        """(ad_x^T w)_j = sum_{i,k} x_i C[i, j, k] w_k."""
        n, C = self.n, self.C
        out = []
        for j in range(n):
            terms = [(float(C[i, j, kk]), f"{x[i]}*{w[kk]}") for i in range(n) for kk in range(n) if C[i, j, kk] != 0.0]
            out.append(f"{tag}{j}")
            L.emit(f"{tag}{j} = {_slin(terms) if terms else '0.0'}")
        return out

    def _dxw_minus_z(self, L, x, w, tag):
        """Lines of u1 = ad_x^T w and R = D_x w - z at the names x, w (z: the locals m): exp, D_x w = w - u1/2 +
        beta(s) ad_x^T u1 with s = x^T Q x; cay, D_x w = w - u1/2 - S(x, ., x)^T w / 4. Returns (u1, R) names."""
        n = self.n
        u1 = self._ad_T(L, x, w, f"{tag}u")
        R = [f"{tag}R{j}" for j in range(n)]
        if self.mode == 0:
            Q = self.Q
            terms = [((Q[i, i] if i == j else 2.0 * Q[i, j]), f"{x[i]}*{x[j]}") for i in range(n) for j in range(i, n)
                     if Q[i, j] != 0.0]
            L.emit(f"{tag}s = {_slin(terms)}")
            L.emit(f"{tag}bt = beta({tag}s)")
            u2 = self._ad_T(L, x, u1, f"{tag}v")
            for j in range(n):
                L.emit(f"{R[j]} = {w[j]} - 0.5*{u1[j]} + {tag}bt*{u2[j]} - m{j}")
        else:
            S = self.S
            for j in range(n):
                terms = []
                for i in range(n):
                    for l in range(i, n):
                        for kk in range(n):
                            c = S[i, j, l, kk] if i == l else S[i, j, l, kk] + S[l, j, i, kk]
                            if c != 0.0:
                                terms.append((-0.25 * c, f"{x[i]}*{x[l]}*{w[kk]}"))
                cub = _slin(terms)
                L.emit(f"{R[j]} = {w[j]} - 0.5*{u1[j]}" + ("" if cub == "0.0" else f" + {cub}") + f" - m{j}")
        return u1, R

    def residual(self, L, e, tag):
        """Lines of r = -N^T (D_x w - m) at the names ``e``; returns (r names, u1 names)."""
        n, p = self.n, self.p
        xi = list(e) if self.identity_N else [f"{tag}xi{i}" for i in range(n)]
        if not self.identity_N:
            for i in range(n):
                L.emit(f"{xi[i]} = {_slin([(self.N[i, a], e[a]) for a in range(p)])}")
        x = [f"{tag}x{i}" for i in range(n)]
        w = [f"{tag}w{i}" for i in range(n)]
        for i in range(n):
            L.emit(f"{x[i]} = h*{xi[i]}")
        for i in range(n):
            L.emit(f"{w[i]} = {_slin([(self.I[i, j], xi[j]) for j in range(n)])}")
        u1, R = self._dxw_minus_z(L, x, w, tag)
        r = [f"{tag}r{a}" for a in range(p)]
        for a in range(p):
            if self.identity_N:
                L.emit(f"{r[a]} = -{R[a]}")
            else:
                L.emit(f"{r[a]} = -({_slin([(self.N[j, a], R[j]) for j in range(n)])})")
        return r, u1

    def _xw_sym(self, e, h, val):
        """x = h xi and w = I xi as sympy expressions of the unknowns e (xi = N e), for :meth:`jacobian`."""
        n, p = self.n, self.p
        xi = list(e) if self.identity_N else [sum((val(self.N[i, a]) * e[a] for a in range(p)), sp.Integer(0))
                                              for i in range(n)]
        x = [h * v for v in xi]
        w = [sum((val(self.I[i, j]) * xi[j] for j in range(n)), sp.Integer(0)) for i in range(n)]
        return x, w

    def _project_sym(self, D, val):
        """N^T D: the components of D_x w the residual keeps, for :meth:`jacobian`."""
        n, p = self.n, self.p
        return [D[a] if self.identity_N else sum((val(self.N[j, a]) * D[j] for j in range(n)), sp.Integer(0))
                for a in range(p)]

    def jacobian(self, L, tag):
        """Lines of the residual's Jacobian Jm[a, c] = -dr_a/de_c = (N^T d(D_x w)/d eta)_{ac} at the names e0..
        (the matrix the forward differences (r(e) - r(e + d e_c))/d approximated), derived by sympy here, once,
        from the same expressions as :meth:`residual` (exp: D_x w = w - u1/2 + beta(s) u2, u2 = ad_x^T u1, with
        d beta(s)/de = beta'(s) ds/de; cay: w - u1/2 - S(x, ., x)^T w / 4) and written after cse; the
        problem's matrix entries stay names of ``cst``. Returns the p x p names."""
        n, p = self.n, self.p
        e = sp.symbols(f"e0:{p}")
        h = sp.Symbol("h")

        def val(c):
            if c is None:
                return sp.Integer(0)
            if isinstance(c, float):
                return sp.Rational(c) if c == round(c * 2.0 ** 20) / 2.0 ** 20 else sp.Float(c, 17)
            return sp.Symbol(c)

        def const(v):
            return sp.Rational(float(v)) if float(v) == round(float(v) * 2.0 ** 20) / 2.0 ** 20 else sp.Float(v, 17)

        x, w = self._xw_sym(e, h, val)

        def adT(xv, wv):
            return [sum((const(self.C[i, j, kk]) * xv[i] * wv[kk] for i in range(n) for kk in range(n)
                         if self.C[i, j, kk] != 0.0), sp.Integer(0)) for j in range(n)]

        u1 = adT(x, w)
        bt, dbt = sp.Symbol(f"{tag}bt"), sp.Symbol(f"{tag}dbt")
        if self.mode == 0:
            s = sum((const(self.Q[i, j]) * x[i] * x[j] for i in range(n) for j in range(n) if self.Q[i, j] != 0.0),
                    sp.Integer(0))
            u2 = adT(x, u1)
            D = [w[j] - u1[j] / 2 + bt * u2[j] for j in range(n)]
        else:
            D = [w[j] - u1[j] / 2 - sum((const(self.S[i, j, l, kk]) * x[i] * x[l] * w[kk] for i in range(n)
                                         for l in range(n) for kk in range(n) if self.S[i, j, l, kk] != 0.0),
                                        sp.Integer(0)) / 4 for j in range(n)]
        G = sp.Matrix(self._project_sym(D, val))
        J = G.jacobian(sp.Matrix(e))
        if self.mode == 0:       # beta(s(e)): the chain rule by hand (beta is the generated function, not sympy's)
            J = J + G.diff(bt) * dbt * sp.Matrix([[sp.diff(s, ea) for ea in e]])
            L.emit(f"{tag}s = {sp.pycode(sp.expand(s))}")
            L.emit(f"{tag}bt = beta({tag}s)")
            L.emit(f"{tag}dbt = dbeta({tag}s)")
        entries = [J[a, c] for a in range(p) for c in range(p)]
        subs, red = sp.cse(entries, symbols=sp.numbered_symbols(f"{tag}c"), optimizations="basic")
        for sym, ex in subs:
            L.emit(f"{sym} = {sp.pycode(ex)}")
        out = [[f"{tag}J{a}_{c}" for c in range(p)] for a in range(p)]
        for a in range(p):
            for c in range(p):
                L.emit(f"{out[a][c]} = {sp.pycode(red[a * p + c])}")
        return out

    def output(self, L, e):
        """Lines of u1 at the solution ``e`` (the output m + u1)."""
        n, p = self.n, self.p
        xi = list(e) if self.identity_N else [f"oxi{i}" for i in range(n)]
        if not self.identity_N:
            for i in range(n):
                L.emit(f"{xi[i]} = {_slin([(self.N[i, a], e[a]) for a in range(p)])}")
        x = [f"ox{i}" for i in range(n)]
        w = [f"ow{i}" for i in range(n)]
        for i in range(n):
            L.emit(f"{x[i]} = h*{xi[i]}")
        for i in range(n):
            L.emit(f"{w[i]} = {_slin([(self.I[i, j], xi[j]) for j in range(n)])}")
        return self._ad_T(L, x, w, "ou")

    # ------------------------------------------------------------ the program
    def text(self):
        n, p, st = self.n, self.p, self.stride
        L = Lines(indent=0)
        L.emit("@numba.njit(inline='always', **JIT)")
        L.emit("def beta(s):")
        L.emit("    if s < 1e-30:")                 # the series' next term below round-off (and no subnormal products)
        L.emit("        return 1.0 / 12")
        L.emit("    if s < 0.04:")
        # the series by Estrin's scheme: the same terms, three dependent operations instead of Horner's five (beta
        # lies on the chain residual -> increment -> residual of every Newton iteration)
        L.emit("        s2 = s * s")
        L.emit("        return ((1.0 / 12 + s * (1.0 / 720))"
               " + s2 * ((1.0 / 30240 + s * (1.0 / 1209600)) + s2 * (1.0 / 47900160)))")
        L.emit("    th = math.sqrt(s)")
        L.emit("    return (1.0 - 0.5 * th * math.cos(0.5 * th) / math.sin(0.5 * th)) / s")
        L.emit("")
        # beta'(s), for the analytic Jacobian: the series' derivative below s = 0.04 (truncation < 1e-14), else
        # with f = 1 - (t/2) cot(t/2), t = sqrt(s): beta' = (f'(t)/(2t) - f/s)/s, f'(t) = -cot(t/2)/2 + t/(4 sin^2(t/2))
        L.emit("@numba.njit(inline='always', **JIT)")
        L.emit("def dbeta(s):")
        L.emit("    if s < 1e-30:")
        L.emit("        return 1.0 / 720")
        L.emit("    if s < 0.04:")
        L.emit("        return (1.0 / 720 + s * (2.0 / 30240)) + s * s * (3.0 / 1209600 + s * (4.0 / 47900160))")
        L.emit("    th = math.sqrt(s)")
        L.emit("    sn = math.sin(0.5 * th)")
        L.emit("    ct = math.cos(0.5 * th) / sn")
        L.emit("    f = 1.0 - 0.5 * th * ct")
        L.emit("    return ((-0.5 * ct + 0.25 * th / (sn * sn)) / (2.0 * th) - f / s) / s")
        L.emit("")
        L.lines.extend(INVERSE_SOURCE.splitlines())
        L.emit("@numba.njit(**JIT)")
        L.emit("def run(M0, Y0, h, nsteps, save_every, K, cst):")
        L.indent = 1
        L.emit("THETA_REFRESH = cst[0]")
        for j, (name, _) in enumerate(self.consts.values):
            L.emit(f"{name} = cst[{j + 1}]")
        L.emit("B = M0.shape[0]")
        L.emit(f"ys = np.empty((K, B, {n}))")
        L.emit("ys[0] = Y0")
        L.emit(f"Mend = np.empty((B, {n}))")
        L.emit(f"Jm = np.empty(({p}, {p}))")
        L.emit(f"Jim = np.empty(({p}, {p}))")
        L.emit("done = nsteps")
        L.emit("iters = 0")
        L.emit("njac = 0")
        L.emit(f"TOL = {num(TOL)}")
        e = [f"e{a}" for a in range(p)]
        coef = PREDICTORS[st]
        nh = len(coef)                                  # history: the solutions the predictor combines
        ring = st == 2       # the RATTLE's long history in a doubled ring (a step stores 2p, not shifts nh p locals)
        if ring:             # HB[i + nh] = HB[i]; the last solution at hp: the one j + 1 steps back at hp + nh - j
            L.emit(f"HB = np.zeros(({2 * nh}, {p}))")
            hist = [[f"HB[hp + {nh - j}, {a}]" for a in range(p)] for j in range(nh)]
        else:
            hist = [[f"h{j}_{a}" for a in range(p)] for j in range(nh)]   # hist[j]: the solution j + 1 steps back
        ji = [[f"ji{a}_{c}" for c in range(p)] for a in range(p)]
        jk = [[f"jk{a}_{c}" for c in range(p)] for a in range(p)]     # stride 2: the other parity's
        L.emit("for b in range(B):")
        L.indent = 2
        for i in range(n):
            L.emit(f"m{i} = M0[b, {i}]")
        for a in range(p):
            L.emit(f"{e[a]} = {_slin([(self.NI[a, i], f'm{i}') for i in range(n)])}")
        if ring:
            L.emit("hp = 0")
        else:
            for row in hist:
                L.emit(" = ".join(row) + " = 0.0")
        for row in ji + (jk if st == 2 else []):
            L.emit(" = ".join(row) + " = 0.0")
        L.emit("fresh_needed = True")
        L.emit("theta_old = 1.0")
        if st == 2:
            L.emit("fresh_other = True")
            L.emit("theta_other = 1.0")
        L.emit("jsave = 1")
        L.emit("tosave = save_every")
        L.emit("for kstep in range(1, nsteps + 1):")
        L.indent = 3
        L.emit("if kstep > done:")
        L.emit("    break")
        L.emit(f"if kstep > {nh}:")
        for a in range(p):
            L.emit(f"    {e[a]} = {_slin([(float(c), hist[j][a]) for j, c in enumerate(coef)])}")
        if st == 2:          # the first steps: the same-parity extrapolation of the degree the kept solutions allow
            for dd in range(len(coef) // 2 - 2, -1, -1):
                L.emit(f"elif kstep > {2 * (dd + 1)}:")
                for a in range(p):
                    cs = parity_extrapolation(dd)
                    L.emit(f"    {e[a]} = {_slin([(float(c), hist[j][a]) for j, c in enumerate(cs)])}")
        L.emit("elif kstep > 1:")
        for a in range(p):
            L.emit(f"    {e[a]} = {hist[0][a]}")
        for a in range(p):
            L.emit(f"p{a} = {e[a]}")
        L.emit("ok = False")
        L.emit("theta = 0.0")
        L.emit("for attempt in range(2):")
        L.indent = 4
        L.emit("fresh = False")
        L.emit("if fresh_needed or attempt == 1:")
        L.indent = 5
        for a in range(p):
            L.emit(f"{e[a]} = p{a}")
        # the analytic Jacobian at the predictor (its residual not kept for the first iteration: measured slower,
        # sleigh exp 0.051 -> 0.063 us a step, the residual's values live across the refresh branch)
        JJ = self.jacobian(L, "j_")
        for a in range(p):
            L.emit("; ".join(f"Jm[{a}, {c}] = {JJ[a][c]}" for c in range(p)))
        L.emit("if not inverse(Jm, Jim):")
        L.emit("    break")
        for a in range(p):
            L.emit("; ".join(f"{ji[a][c]} = Jim[{a}, {c}]" for c in range(p)))
        L.emit("njac += 1")
        L.emit("fresh = True")
        L.emit("fresh_needed = False")
        L.emit(f"theta_old = {num(FRESH_THETA)}")
        L.indent = 4
        L.emit("prev = np.inf")
        L.emit("conv = False")
        L.emit("exact = False")
        L.emit(f"for it in range({MAX_ITER}):")
        L.indent = 5
        r, u1r = self.residual(L, e, "")
        for a in range(p):
            L.emit(f"de{a} = {_slin([(ji[a][c], r[c]) for c in range(p)])}")
        for a in range(p):
            L.emit(f"{e[a]} += de{a}")
        L.emit("dn = max(" + ", ".join([f"abs(de{a})" for a in range(p)] + ["0.0"]) + ")")
        L.emit("sc = max(" + ", ".join([f"abs({e[a]})" for a in range(p)] + ["1.0"]) + ")")
        L.emit("iters += 1")
        L.emit("if not math.isfinite(dn):")
        L.emit("    break")
        L.emit("if dn <= TOL * sc:")
        L.emit("    conv = True")
        L.emit("    exact = True")
        L.emit("    break")
        L.emit("if it == 0:")
        L.emit("    if 10.0 * theta_old * dn <= (1.0 - 10.0 * theta_old) * TOL * sc:")
        L.emit("        conv = True")
        L.emit("        break")
        L.emit("else:")
        L.emit("    th = dn / prev")
        L.emit("    if th >= 0.5:")
        L.emit("        if dn <= 1e3 * TOL * sc:")     # on the round-off floor: no better iterate to come
        L.emit("            conv = True")
        L.emit("        break")
        L.emit("    if dn > 1e3 * TOL * sc:")
        L.emit("        theta = max(theta, th)")
        L.emit("    if th * dn <= (1.0 - th) * TOL * sc:")
        L.emit("        conv = True")
        L.emit("        break")
        L.emit("prev = dn")
        L.indent = 4
        L.emit("if conv:")
        L.emit("    ok = True")
        L.emit("    break")
        L.emit("if fresh:")
        L.emit("    break")
        L.indent = 3
        L.emit("if not ok:")
        L.emit("    done = kstep - 1")
        L.emit("    break")
        L.emit("if theta > 0.0:")
        L.emit("    theta_old = theta")
        L.emit("if theta_old > THETA_REFRESH:")
        L.emit("    fresh_needed = True")
        if st == 2:      # the solutions alternate from step to step: one Jacobian per parity, swapped
            for a in range(p):
                L.emit("; ".join(f"{ji[a][c]}, {jk[a][c]} = {jk[a][c]}, {ji[a][c]}" for c in range(p)))
            L.emit("theta_old, theta_other = theta_other, theta_old")
            L.emit("fresh_needed, fresh_other = fresh_other, fresh_needed")
        # subnormal flush: a component below 1e-250 of the state's size is below round-off and is set to 0 (the
        # sleigh's omega decays to the smallest subnormal and stays there, where every product costs ~100 cycles)
        L.emit("fl = 1e-250 * sc")
        for a in range(p):
            L.emit(f"if abs({e[a]}) < fl:")
            L.emit(f"    {e[a]} = 0.0")
        if ring:
            L.emit(f"hp = 0 if hp == {nh - 1} else hp + 1")
            L.emit("; ".join(f"HB[hp, {a}] = {e[a]}; HB[hp + {nh}, {a}] = {e[a]}" for a in range(p)))
        else:
            for j in range(nh - 1, 0, -1):
                L.emit("; ".join(f"{hist[j][a]} = {hist[j - 1][a]}" for a in range(p)))
            L.emit("; ".join(f"{hist[0][a]} = {e[a]}" for a in range(p)))
        # the output u1 at the solution: the last residual's where its increment was at round-off (u1 is
        # bilinear in x and w, so it moves by O(h |de| |w|) = O(TOL)), else evaluated there
        L.emit("if exact:")
        for j in range(n):
            L.emit(f"    mn{j} = m{j} + {u1r[j]}")
        L.emit("else:")
        L.indent = 4
        u1 = self.output(L, e)
        for j in range(n):
            L.emit(f"mn{j} = m{j} + {u1[j]}")
        L.indent = 3
        mn = [f"mn{j}" for j in range(n)]
        same, refl = self.same, self.reflection
        for i in range(n):
            L.emit(f"m{i} = {_slin([(self.Pc[i, j], mn[j]) for j in range(n)])}")
        L.emit("fl = 1e-250 * (" + " + ".join(f"abs(m{i})" for i in range(n)) + ")")
        for i in range(n):
            L.emit(f"if abs(m{i}) < fl:")
            L.emit(f"    m{i} = 0.0")
        L.emit("tosave -= 1")
        L.emit("if tosave == 0 or kstep == nsteps:")
        for i in range(n):
            if same:
                val = f"m{i}"
            elif refl:                                    # Pc = 2 Pout - 1: Pout mn = (Pc mn + mn)/2
                val = f"0.5*(m{i} + mn{i})"
            else:
                val = _slin([(self.Pout[i, j], mn[j]) for j in range(n)])
            L.emit(f"    ys[jsave, b, {i}] = {val}")
        L.emit("    jsave += 1")
        L.emit("    tosave = save_every")
        L.indent = 2
        for i in range(n):
            L.emit(f"Mend[b, {i}] = m{i}")
        L.indent = 1
        L.emit("return ys, done, iters, Mend, njac")
        return L.text()


# ---------------------------------------------------------------- the discrete vakonomic / second-kind map
#: dvak's refresh threshold: its motions are not steady (the vakonomic rigid body rotates on), the quadratic
#: predictor leaves ~3-4 residuals a step; at 1e-4 a Jacobian every second step (0.50 a step, n + 1 residuals
#: each), at 3e-3 0.18 a step and the fewest residuals in all (Vakonomic so(3), h = 0.05, 2e4 steps: the loop
#: 0.112 -> 0.098 us a step exp, 0.097 -> 0.082 cay, CPU time; 1e-2 and 3e-2 slower; predictors of degree 3-5
#: gained <= 5%)
DVAK_THETA_REFRESH = 3e-3


class DvakSource(DlasSource):
    """The text of the same ``run(M0, Y0, h, nsteps, save_every, K, cst)`` for the discrete vakonomic /
    second-kind map (``dvak_exp``, ``dvak_cay``; eq. (2) of :mod:`integrators.reference.nonholonomic.lie_schemes`)

        D_x w = z_k,   w = I xi + B^T lambda,   A xi = 0,   x = h xi,   z_{k+1} = Ad*_x z_k,

    with the n unknowns e = (eta, lambda) (xi = N eta, N an orthonormal basis of ker A): the residual
    r = -(D_x w - z) in all n components (no projection), D_x w as in :class:`DlasSource`. The output needs u1
    only: Ad*_x D_x = D_{-x} for exp and cay (Bou-Rabee and Marsden 2009) and D_{-x} w = D_x w + u1
    (u1 = ad_x^T w, the odd part of D_x is -u1/2), so at the root z_{k+1} = z_k + u1; no projection
    (Pc = 1). ``G0`` maps z to the first guess of e (the numpy stepper's xi0 = W z, lambda0 = R^-1 A I^-1 z).
    The same simplified Newton, predictor (stride 1) and stop as the dlas loop; the Jacobian refreshed above
    ``DVAK_THETA_REFRESH``."""

    def __init__(self, mode, C, S, N, I, B, G0, theta_refresh=None):
        self.mode, self.stride = int(mode), 1
        self.theta_refresh = DVAK_THETA_REFRESH if theta_refresh is None else float(theta_refresh)
        self.C, self.S = _tidy(C), _tidy(S)
        n = self.n = self.C.shape[0]
        self.p = n
        N, I, B = (np.asarray(a, dtype=float) for a in (N, I, B))
        pn = N.shape[1]
        Xm = np.zeros((n, n))
        Xm[:, :pn] = N
        Wm = np.concatenate([I @ N, B.T], axis=1)
        k = _Consts()
        self.identity_N = False
        self.Xm = k.matrix(Xm, "X")
        self.Wm = k.matrix(Wm, "W")
        self.NI = k.matrix(G0, "G")
        self.Pc = k.matrix(np.eye(n), "P")
        self.Pout = self.Pc
        self.consts = k
        self.same, self.reflection = True, False
        if self.mode == 0:
            E = np.einsum("aij,bji->ab", np.swapaxes(self.C, 1, 2), np.swapaxes(self.C, 1, 2))
            self.Q = -0.5 * E

    def _xw(self, L, e, tag):
        n = self.n
        x = [f"{tag}x{i}" for i in range(n)]
        w = [f"{tag}w{i}" for i in range(n)]
        for i in range(n):
            L.emit(f"{x[i]} = h*({_slin([(self.Xm[i, a], e[a]) for a in range(n)])})")
        for i in range(n):
            L.emit(f"{w[i]} = {_slin([(self.Wm[i, a], e[a]) for a in range(n)])}")
        return x, w

    def _xw_sym(self, e, h, val):
        """x = h X e and w = W e (X = [N 0], W = [I N, B^T]) as sympy expressions, for the inherited analytic
        :meth:`DlasSource.jacobian`."""
        n = self.n
        x = [h * sum((val(self.Xm[i, a]) * e[a] for a in range(n)), sp.Integer(0)) for i in range(n)]
        w = [sum((val(self.Wm[i, a]) * e[a] for a in range(n)), sp.Integer(0)) for i in range(n)]
        return x, w

    def _project_sym(self, D, val):
        """All n components of D_x w (the residual is not projected)."""
        return list(D)

    def residual(self, L, e, tag):
        """Lines of r = -(D_x w - z) at the names ``e`` (z: the locals m); returns (r names, u1 names)."""
        n = self.n
        x, w = self._xw(L, e, tag)
        u1, R = self._dxw_minus_z(L, x, w, tag)
        r = [f"{tag}r{a}" for a in range(n)]
        for a in range(n):
            L.emit(f"{r[a]} = -{R[a]}")
        return r, u1

    def output(self, L, e):
        """Lines of u1 = ad_x^T w at the solution ``e`` (the output z + u1)."""
        x, w = self._xw(L, e, "o")
        return self._ad_T(L, x, w, "ou")
