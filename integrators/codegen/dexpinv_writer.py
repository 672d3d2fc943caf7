"""The dexp^-1 part of the code writer (:class:`integrators.codegen.writer.Source` mixes it in):
dexp^-1_theta(v) = sum_k B_k/k! A^k v, A = -ad_theta (the Bernoulli series with the matching bracket
-[x, y]; Munthe-Kaas 1999), as :func:`integrators.geometry.spaces.dexpinv_series` defines it for the
method's number of terms:

* truncated after that many terms, the powers A^k, k >= d, folded into A^0..A^(d-1) by the relation
  A^d = sum_{j<d} c_j(x) A^j of :func:`integrators.geometry.relations.ad_relation` (9 terms for rkmk853:
  4 brackets on so(4), se(3) instead of 8);
* summed to round-off: in closed form where ad_x has few eigenvalues (so(3), ad^3 = q ad, so(4)-like
  sums of two, se(3); the coefficients and their proofs in :mod:`integrators.geometry.closed_dexpinv`),
  else to the K the size of ad_x asks for (a runtime loop of brackets, or of scalars on the relation).

The same polynomials as the plain series, so the generated code agrees with the reference to round-off.
"""

from __future__ import annotations

import numpy as np

from liegroups.closed_forms import bernoulli_coefficients

from ..geometry.almost_abelian import almost_abelian
from ..geometry.closed_dexpinv import (TIERS_X2, cubic_bound, economized, pair_bound, pair_form,
                                       quadratic_interval)
from ..geometry.recognition import ideal_split, killing_half
from ..geometry.relations import _padd, _pmul, ad_relation
from ..geometry.spaces import DEXPINV_KMAX, DEXPINV_TOL, DEXPINV_X2MAX, ROUNDOFF_TERMS, adnorm_form
from .source_text import NAN, lin, num


#: the lanes refuse an attempt whose ``_big`` exceeds this (the exponential's t^2 > 16^2: batchgen)
LANE_BIG = 256.0


class DexpinvWriter:
    """dexp^-1 of :class:`integrators.codegen.writer.Source` (module docstring); uses its brackets,
    matrices and the names of the exponential the same stage wrote (``half_angle``, ``rodrigues``)."""

    def dexpinv(self, theta, v, terms):
        """dexp^-1_theta(v) = sum_k B_k/k! A^k v, A = -ad_theta, as :func:`integrators.geometry.spaces.dexpinv_series`
        defines it for ``terms``: truncated (terms < ROUNDOFF_TERMS, :meth:`_dexpinv_truncated`) or
        summed to round-off (:meth:`_dexpinv_roundoff`)."""
        if int(terms) >= ROUNDOFF_TERMS:
            return self._dexpinv_roundoff(theta, v)
        return self._dexpinv_truncated(theta, v, terms)

    # ------------------------------------------------------------ dexp^-1 summed to round-off
    def _dexpinv_roundoff(self, theta, v):
        """dexp^-1 summed to round-off: the K of :func:`integrators.geometry.spaces.dexpinv_order` from
        x^2 = theta^T G theta / (2 pi)^2 (G: :func:`adnorm_form`, ||ad_theta||_F^2), NaN beyond
        DEXPINV_X2MAX. Written as

        * a closed form when ad_theta^3 = q ad_theta (so(3), "ad3") or on two such ideals ("ad3x2"):
          1 - A/2 + E(q) A^2 (:meth:`_dexpinv_cubic`), exact, so equal to the series to round-off;
        * a closed form when A (A^2 - s)^2 = 0 (se(3) in any basis): 1 - A/2 + alpha(s) A^2 +
          beta(s) A^4 (:meth:`_dexpinv_pair`); the coefficients of both closed forms are polynomials
          exact to round-off where x^2 <= DEXPINV_X2MAX (:mod:`integrators.geometry.closed_dexpinv`);
        * a closed form on an almost abelian algebra (:meth:`_dexpinv_almost_abelian`);
        * with a relation A^d = sum_{j<d} c_j A^j (:func:`ad_relation`): the coefficients of
          A^0..A^(d-1) summed in a runtime loop over k <= K (scalars only), then d - 1 brackets;
        * otherwise a runtime loop of K brackets.
        """
        kind = self.st.closed
        if kind == "almost_abelian":
            return self._dexpinv_almost_abelian(theta, v)
        S = None if kind in ("so3", "ad3", "ad3x2") else pair_form(self.st.C)
        if kind in ("so3", "ad3", "ad3x2") or S is not None:
            return self._dexpinv_closed(theta, v, kind if S is None else "pair", S)
        x2, bad = self._dexpinv_size(theta)
        rel = ad_relation(self.st.C, self.n)
        if rel is not None and 2 < rel[0] <= self.n:
            out = self._dexpinv_folded_loop(theta, v, x2, rel)
        else:
            out = self._dexpinv_bracket_loop(theta, v, x2)
        return out if bad is None else self.assign("k", [f"{out[i]} + {bad}" for i in range(self.n)])

    def _dexpinv_almost_abelian(self, theta, v):
        """dexp^-1_theta(v) = f(-ad_theta) v, f(l) = l / (e^l - 1), on an almost abelian algebra
        (:mod:`integrators.geometry.almost_abelian`), NaN beyond x^2 = DEXPINV_X2MAX as the series.

        Derivation. In the adapted basis theta = a f0 + t, v = b f0 + w, and -ad_theta = [[0, 0], [D t, -a D]]
        (:meth:`ExponentialWriter._act_almost_abelian`). For N = [[0, 0], [c, K]], f(N) = [[f(0), 0],
        [q(K) c, f(K)]] with q(K) = (f(K) - f(0)) K^-1 (the powers N^k = [[0, 0], [K^(k-1) c, K^k]]), so

            dexp^-1 v = (b, f(-a D) w + b q(-a D) D t),

        blockwise: (f, q) = bern(-a lambda) on a real block; on a pair D acts on w_i + i w_(i+1) as
        sigma = alpha - i beta, (f, q) = bernc(-a sigma) complex and the block's part is
        f w + b (q sigma) t. Back with T. f and q are analytic for |mu| < 2 pi, where the bound on
        ||ad_theta||_F (>= the spectral radius |a lambda|) keeps them."""
        form = almost_abelian(self.st.C)
        _, bad = self._dexpinv_size(theta)
        th = self.adapted("Tinv", theta, "ta")
        vh = self.adapted("Tinv", v, "va")
        a, b = th[0], vh[0]
        out = [b] + [None] * (self.n - 1)
        for i, lam in form.reals:
            F, Q = self.fresh("f"), self.fresh("q")
            self.emit(f"{F}, {Q} = bern({num(-lam)}*{a})")
            out[i] = f"{F}*{vh[i]} + {num(lam)}*{b}*{Q}*{th[i]}"
        for i, al, be in form.pairs:
            j = i + 1
            Fr, Fi, Qr, Qi = (self.fresh(p) for p in ("fr", "fi", "qr", "qi"))
            self.emit(f"{Fr}, {Fi}, {Qr}, {Qi} = bernc({num(-al)}*{a}, {num(be)}*{a})")
            sr, si = self.assign("s", [f"({num(al)}*{Qr} + {num(be)}*{Qi})*{b}",
                                       f"({num(al)}*{Qi} - {num(be)}*{Qr})*{b}"])
            out[i] = f"{Fr}*{vh[i]} - {Fi}*{vh[j]} + {sr}*{th[i]} - {si}*{th[j]}"
            out[j] = f"{Fr}*{vh[j]} + {Fi}*{vh[i]} + {sr}*{th[j]} + {si}*{th[i]}"
        res = self.adapted("T", self.assign("ka", out), "k")
        return res if bad is None else self.assign("k", [f"{res[i]} + {bad}" for i in range(self.n)])

    def _dexpinv_size(self, theta):
        """Names of x^2 = ||ad_theta||_F^2 / (2 pi)^2 (largest over an ensemble) and of 0.0, or NaN
        when x^2 > DEXPINV_X2MAX."""
        x2 = self._dexpinv_x2(theta)
        return x2, self._dexpinv_bad(x2)

    def _dexpinv_x2(self, theta, known=()):
        """Name of x^2 = ||ad_theta||_F^2 / (2 pi)^2 (largest over an ensemble); ``known``: (expression,
        name) of sums of squares already written (a group of squares with one coefficient that is one
        of them is read from its name)."""
        G = adnorm_form(self.st.C) / (2.0 * np.pi) ** 2
        n = self.n
        x2 = self.fresh("x2")
        # squares with the same coefficient summed first (se(3): two products by a constant, not six)
        groups = {}
        for i in range(n):
            if G[i, i] != 0.0:
                groups.setdefault(float(G[i, i]), []).append(f"{theta[i]}*{theta[i]}")
        known = dict(known)
        form = lin([(c, sq[0] if len(sq) == 1 else known.get(' + '.join(sq), f"({' + '.join(sq)})"))
                    for c, sq in groups.items()]
                   + [(2.0 * G[i, j], f"{theta[i]}*{theta[j]}") for i in range(n) for j in range(i + 1, n)]) or "0.0"
        self.emit(f"{x2} = {form}" if self.lanes or self.floats else f"{x2} = bmax({form})")
        return x2

    def _dexpinv_bad(self, x2):
        """Name of 0.0, or NaN when x^2 > DEXPINV_X2MAX. The lanes (no branch) record x^2 in ``_big`` instead,
        scaled so that x^2 > DEXPINV_X2MAX reads as the exponential's t > 16 the caller already refuses
        (an adaptive attempt rejected, a fixed-step trajectory run again by the one-trajectory code: what the
        NaN does on the other paths); None then (nothing to add)."""
        if self.lanes:
            self.emit(f"_big = max(_big, {LANE_BIG / DEXPINV_X2MAX!r}*{x2})")
            return None
        bad = self.fresh("nan")
        self.emit(f"{bad} = 0.0 if {x2} <= {DEXPINV_X2MAX!r} else {NAN}")
        return bad

    def _dexpinv_order(self, x2):
        """Emit K (a float name), the last k of the round-off sum for x^2 (dexpinv_order; at most
        DEXPINV_KMAX)."""
        K, xk, lim = self.fresh("K"), self.fresh("xk"), self.fresh("lim")
        self.emit(f"{lim} = {num(DEXPINV_TOL * 3.0 / np.pi ** 2)}*(1.0 - {x2})")
        self.emit(f"{K} = 2.0; {xk} = {x2}*{x2}")
        self.emit(f"while {xk} > {lim} and {K} < {float(DEXPINV_KMAX)!r}:")
        self.emit(f"    {K} = {K} + 2.0; {xk} = {xk}*{x2}")
        return K

    def _dexpinv_bracket_loop(self, theta, v, x2, app=None):
        """v - A v / 2 + sum_{even k <= K} B_k/k! A^k v, two brackets per even k in a runtime loop; ``app``:
        u -> A u (default: the bracket -[theta, u] of g; the forced writer passes its bracket of g x g*)."""
        n = len(v)
        K = self._dexpinv_order(x2)
        bc = self.fresh("bc")
        coeffs = bernoulli_coefficients(DEXPINV_KMAX + 1)
        self.emit(f"{bc} = ({', '.join(repr(float(c)) for c in coeffs[2::2])},)")
        if app is None:
            dense = self.dense()
            A = self.matrix(theta, bracket=True) if dense else None

            def app(u):
                return self.matvec(A, u, "q") if dense else self.neg_bracket(theta, u)

        t1 = app(v)
        out = self.assign("k", [f"{v[i]} - 0.5*{t1[i]}" for i in range(n)])
        t = self.assign("tq", list(t1))
        self.emit(f"for _m in range(int({K}) // 2):")
        self.indent += 1
        t2 = app(t)
        for i in range(n):
            self.emit(f"{out[i]} = {out[i]} + {bc}[_m]*{t2[i]}")
        t3 = app(t2)
        for i in range(n):
            self.emit(f"{t[i]} = {t3[i]}")
        self.indent -= 1
        return out

    def _dexpinv_folded_loop(self, theta, v, x2, rel):
        """The round-off sum with the relation A^d = sum_{j<d} c_j A^j: a_j = sum_{k<=K} B_k/k! r_kj
        (r_k: A^k = sum_j r_kj A^j, r_(k+1),j = r_k,(j-1) + r_k,(d-1) c_j) in a runtime loop of
        scalars, then sum_j a_j A^j v (d - 1 brackets)."""
        d, gens, poly = rel
        g = self._invariants(theta, gens)
        c = [None] * d
        for j, terms in poly.items():
            c[j] = self.assign("cr", [lin([(a, "*".join(g[i] for i in mono) or "1.0") for mono, a in terms])])[0]
        K = self._dexpinv_order(x2)
        bcf = self.fresh("bf")
        coeffs = bernoulli_coefficients(DEXPINV_KMAX + 1)
        self.emit(f"{bcf} = ({', '.join(repr(float(x)) for x in coeffs)},)")
        a = [self.fresh("aa") for _ in range(d)]
        r = [self.fresh("rr") for _ in range(d)]
        for j in range(d):
            self.emit(f"{a[j]} = {num(coeffs[j])}")
            self.emit(f"{r[j]} = {c[j] if c[j] is not None else '0.0'}")
        self.emit(f"for _k in range({d}, int({K}) + 1):")
        self.indent += 1
        self.emit(f"_b = {bcf}[_k]")
        self.emit(", ".join(a) + " = " + ", ".join(f"{a[j]} + _b*{r[j]}" for j in range(d)))
        rhs = [" + ".join(([r[j - 1]] if j > 0 else []) + ([f"{r[d - 1]}*{c[j]}"] if c[j] is not None else [])) or "0.0"
               for j in range(d)]
        self.emit(", ".join(r) + " = " + ", ".join(rhs))
        self.indent -= 1
        pairs = [(a[0], v)]
        term = v
        dense = self.dense() and d > 2
        A = self.matrix(theta, bracket=True) if dense else None
        for j in range(1, d):
            term = self.matvec(A, term, "q") if dense else self.neg_bracket(theta, term)
            pairs.append((a[j], term))
        return self.assign("k", [" + ".join(f"{cj}*{V[i]}" for cj, V in pairs) for i in range(self.n)])

    def _dexpinv_closed(self, theta, v, kind, S):
        """The closed forms: the variables q = theta^T S theta of :meth:`_closed_variable` first (x^2 of
        :meth:`_dexpinv_x2` reuses a sum of squares among them), then E (:meth:`_dexpinv_cubic`) or
        alpha and beta (:meth:`_dexpinv_pair`): shorter polynomials when x^2 is at most a tier of
        TIERS_X2 (branches on x^2, the largest over an ensemble), else the full ones with 0.0 or NaN
        (x^2 > DEXPINV_X2MAX) added; the lanes of batch_kernels (no branch) take the full ones. On the
        pair form the size read is |s| / pi^2 instead of x^2 (:func:`integrators.geometry.closed_dexpinv.pair_size`:
        the polynomials depend on s alone; one product instead of a second sum of squares)."""
        if kind == "so3" and self.lanes and tuple(theta) in self.half_angle:
            return self._dexpinv_so3_lanes(theta, v, *self.half_angle[tuple(theta)])
        known = self.rodrigues.get(tuple(theta)) if kind == "so3" and not self.lanes else None
        if known is not None and self._in_scope(known[0], known[1], theta):
            return self._dexpinv_so3_trig(theta, v, *known[2:])
        if kind == "pair":
            forms, bound, names = [S], pair_bound, ("alpha", "beta")
        else:
            Q = -np.eye(3) if kind == "so3" else killing_half(self.st.C)
            if kind == "ad3x2":
                P1 = ideal_split(self.st.C)
                P2 = np.eye(self.n) - P1
                forms = [P1.T @ Q @ P1, P2.T @ Q @ P2]
            else:
                forms = [Q]
            bound, names = cubic_bound, ("E",)
        variables = [self._closed_variable(theta, F) for F in forms]
        if kind == "pair" and variables[0][2][1]:
            # the pair form's rule reads its spectrum: |s| / pi^2 in place of x^2 (closed_dexpinv.pair_size)
            x2 = self.fresh("sz")
            form = f"{1.0 / np.pi ** 2!r}*{variables[0][0]}"
            self.emit(f"{x2} = {form}" if self.lanes or self.floats else f"{x2} = bmax({form})")
        else:
            x2 = self._x2_from_variables(variables) or self._dexpinv_x2(theta, known=[(expr, u) for u, expr, _ in variables])
        coeffs = [[self.fresh(name[0]) for name in names] for _ in forms]
        if not self.lanes:
            for k, tier in enumerate(TIERS_X2):
                self.emit(f"{'el' if k else ''}if {x2} <= {tier!r}:")
                self.indent += 1
                for (u, _, F), out in zip(variables, coeffs):
                    self._closed_coefficients(u, F, bound(tier), names, out, None)
                self.indent -= 1
            self.emit("else:")
            self.indent += 1
        bad = self._dexpinv_bad(x2)
        for (u, _, F), out in zip(variables, coeffs):
            self._closed_coefficients(u, F, bound(DEXPINV_X2MAX), names, out, bad)
        if not self.lanes:
            self.indent -= 1
        if kind == "pair":
            return self._dexpinv_pair(theta, v, *coeffs[0])
        return self._dexpinv_cubic(theta, v, kind, [c[0] for c in coeffs])

    def _dexpinv_so3_lanes(self, theta, v, t2, s, c):
        """dexp^-1 on so(3) in the lanes, where the stage's exponential of the same theta has already
        given t^2 = |theta|^2, s = sin(t/2)/(t/2) and c = cos(t/2): E = (1 - (t/2) cot(t/2))/t^2
        (:meth:`_dexpinv_cubic`) is (s - c)/(s t^2), since (t/2) cot(t/2) = c/s. Four operations
        instead of E's polynomial, and no second |theta|^2.

        Round-off: s and c carry absolute errors of a few ulps, so E has an absolute error of a few
        ulps over t^2 (the difference s - c ~ t^2/12 cancels as t -> 0); E multiplies A^2 v, of size
        t^2 |v|, so the error of dexp^-1 stays a few ulps of |v|, as with the polynomial. At t = 0
        the tiny constant in the denominator gives E = 0 where A^2 v = 0. Past DEXPINV_X2MAX the
        lanes record the size in ``_big`` as :meth:`_dexpinv_bad` does (x^2 = g t^2 on so(3))."""
        G = adnorm_form(self.st.C) / (2.0 * np.pi) ** 2
        g = float(G[0, 0])
        E = self.fresh("E")
        self.emit(f"_big = max(_big, {LANE_BIG * g / DEXPINV_X2MAX!r}*{t2})")
        self.emit(f"{E} = ({s} - {c})/({s}*{t2} + 1e-300)")
        return self._dexpinv_cubic(theta, v, "so3", [E])

    def _dexpinv_so3_trig(self, theta, v, t2, a, b):
        """dexp^-1 on so(3) after the stage's exponential of the same theta gave t^2 = |theta|^2 and
        Rodrigues' a = sin t / t, b = (1 - cos t)/t^2 (genhelpers co2): (t/2) cot(t/2) = a / (2 b), so
        E = (1 - a/(2b))/t^2 = (2b - a)/(2b t^2) (:meth:`_dexpinv_so3_lanes` with s c = a, s^2 = 2b; the
        same round-off argument: E's absolute error of a few ulps over t^2 meets A^2 v of size t^2 |v|),
        NaN when x^2 = g t^2 > DEXPINV_X2MAX (the largest over an ensemble), as :meth:`_dexpinv_bad`."""
        G = adnorm_form(self.st.C) / (2.0 * np.pi) ** 2
        x2 = self.fresh("x2")
        self.emit(f"{x2} = {float(G[0, 0])!r}*{t2}" if self.floats else f"{x2} = bmax({float(G[0, 0])!r}*{t2})")
        bad = self._dexpinv_bad(x2)
        E = self.fresh("E")
        self.emit(f"{E} = (2.0*{b} - {a})/(2.0*{b}*{t2} + 1e-300) + {bad}")
        return self._dexpinv_cubic(theta, v, "so3", [E])

    def _x2_from_variables(self, variables):
        """Name of x^2 = theta^T G theta / (2 pi)^2 (G: :func:`adnorm_form`) written as sum_k c_k u_k when G is
        a combination of the forms of the closed variables u_k (so(4) = so(3) + so(3): ||ad_theta||_F^2 is
        a combination of the two ideals' q_k; no second sum of squares), else None. Checked exactly as
        matrices (least squares with a zero residual to round-off)."""
        G = adnorm_form(self.st.C) / (2.0 * np.pi) ** 2
        Fs = [(-S if flip else S) for _, _, (S, flip) in variables]
        A = np.stack([F.ravel() for F in Fs], axis=1)
        c, *_ = np.linalg.lstsq(A, G.ravel(), rcond=None)
        if np.max(np.abs(A @ c - G.ravel())) > 1e-13 * max(1.0, np.max(np.abs(G))):
            return None
        x2 = self.fresh("x2")
        form = lin([(float(ck), u) for ck, (u, _, _) in zip(c, variables)]) or "0.0"
        self.emit(f"{x2} = {form}" if self.lanes or self.floats else f"{x2} = bmax({form})")
        return x2

    def _closed_variable(self, theta, S):
        """(name, expression, (S, flip)) of the variable of the closed coefficients at q = theta^T S
        theta: u = q, or u = -q = theta^T (-S) theta (``flip``) when S is negative semidefinite (so(3):
        u = |theta|^2, no negation)."""
        flip = quadratic_interval(S, 1.0)[1] == 0.0
        F = -S if flip else S
        n = self.n
        expr = lin([((F[i, i] if i == j else 2.0 * F[i, j]), f"{theta[i]}*{theta[j]}")
                    for i in range(n) for j in range(i, n)])
        return self.quadratic(theta, F, "u"), expr, (S, flip)

    def _closed_coefficients(self, u, form, qmax, names, out, bad):
        """Emit ``out`` = the coefficients ``names`` ("E", or "alpha" and "beta") of
        :mod:`integrators.geometry.closed_dexpinv` in the variable u of :meth:`_closed_variable` (``form``
        = (S, flip)): the economized polynomials on the interval of q = theta^T S theta with
        |q| <= qmax (:func:`quadratic_interval`; odd powers negated when u = -q), by Horner's rule,
        with ``bad`` (0.0 or NaN) added unless None."""
        S, flip = form
        lo, hi = quadratic_interval(S, qmax)
        pw = None
        for name, e in zip(names, out):
            c = [(-x if flip and j % 2 else x) for j, x in enumerate(economized(name, lo, hi))]
            if self.lanes:   # the lanes: Estrin's scheme (a chain of log2(degree) levels, not one of degree)
                if pw is None:
                    pw = [u]
                    while 2 ** len(pw) < len(c):
                        pw.append(self.assign("pw", [f"{pw[-1]}*{pw[-1]}"])[0])
                expr = _estrin(c, pw)
            else:
                expr = _horner(u, c)
            self.emit(f"{e} = {expr}" + ("" if bad is None else f" + {bad}"))

    def _dexpinv_cubic(self, theta, v, kind, E):
        """dexp^-1 = 1 - A/2 + E(q) A^2 when A^3 = q A (A = -ad_theta; A^3 = -ad^3 = -q ad = q A):
        the Bernoulli series with B_k = 0 for odd k >= 3 sums to v - A v / 2 + sum_{k>=1} B_2k/(2k)!
        q^(k-1) A^2 v (so(3): q = -|theta|^2, E = (1 - (t/2) cot(t/2))/t^2; the derivation and the
        polynomial for E in :mod:`integrators.geometry.closed_dexpinv`). On g = I1 + I2 ("ad3x2",
        A_1 A_2 = 0): 1 - A/2 + E(q1) A_1^2 + E(q2) A_2^2 with A_k^2 v = A (P_k A v) (P_1 the
        projection onto I1 along I2, :func:`ideal_split`). Three brackets at most, no call; ``E``: the
        names of E(q) (two on "ad3x2"), NaN beyond the bound (then every component is NaN)."""
        n = self.n
        if kind == "so3":
            q1 = self._cross(theta, v)          # A v = -[theta, v] = -(theta x v): -q1
            q2 = self._cross(theta, q1)         # A^2 v = theta x (theta x v)
            return self.assign("k", [f"{v[i]} + 0.5*{q1[i]} + {E[0]}*{q2[i]}" for i in range(3)])
        u = self.neg_bracket(theta, v)
        if kind == "ad3":
            u2 = self.neg_bracket(theta, u)
            return self.assign("k", [f"{v[i]} - 0.5*{u[i]} + {E[0]}*{u2[i]}" for i in range(n)])
        P1 = ideal_split(self.st.C)
        u1 = self.assign("t", [lin([(P1[i, j], u[j]) for j in range(n)]) for i in range(n)])
        u2 = self.assign("t", [f"{u[i]} - {u1[i]}" for i in range(n)])
        w1, w2 = self.neg_bracket(theta, u1), self.neg_bracket(theta, u2)
        return self.assign("k", [f"{v[i]} - 0.5*{u[i]} + {E[0]}*{w1[i]} + {E[1]}*{w2[i]}" for i in range(n)])

    def _dexpinv_pair(self, theta, v, al, be):
        """dexp^-1 = 1 - A/2 + alpha(s) A^2 + beta(s) A^4 when A (A^2 - s)^2 = 0, s = theta^T S theta
        (se(3) in any basis, s = -|omega|^2; :func:`integrators.geometry.closed_dexpinv.pair_form`, where
        alpha, beta are derived): four brackets (or one matrix -ad_theta and four products in a dense
        basis), two polynomials (``al``, ``be``: their names), no loop."""
        n = self.n
        dense = self.dense()
        A = self.matrix(theta, bracket=True) if dense else None
        terms = [v]
        for _ in range(4):
            terms.append(self.matvec(A, terms[-1], "q") if dense else self.neg_bracket(theta, terms[-1]))
        return self.assign("k", [f"{v[i]} - 0.5*{terms[1][i]} + {al}*{terms[2][i]} + {be}*{terms[4][i]}"
                                 for i in range(n)])

    # ------------------------------------------------------------ the truncated series
    def _dexpinv_truncated(self, theta, v, terms):
        """v + sum_{k=1}^{terms-1} B_k/k! A^k v, A = -ad_theta (Bernoulli series), with the powers
        A^k, k >= d, folded into A^0..A^(d-1) by the relation of :func:`integrators.geometry.relations.ad_relation` when C has one
        with d below the number of brackets (the same polynomial in A: fewer brackets, a few scalars)."""
        coeffs = list(bernoulli_coefficients(int(terms)))
        while len(coeffs) > 1 and coeffs[-1] == 0.0:  # B_3 = B_5 = 0: no bracket for a zero last term
            coeffs.pop()
        rel = ad_relation(self.st.C, len(coeffs) - 2) if len(coeffs) > 2 else None
        if rel is not None:
            coeffs = self._fold(theta, coeffs, rel)
        pairs = [(coeffs[0], v)]
        term = v
        last = max((k for k, c in enumerate(coeffs) if c != 0.0), default=0)
        dense = self.dense() and last > 1
        if dense:  # one matrix -ad(theta), then matrix-vector products
            A = self.matrix(theta, bracket=True)
        for c in coeffs[1:last + 1]:
            term = self.matvec(A, term, "q") if dense else self.neg_bracket(theta, term)
            if c != 0.0:
                pairs.append((c, term))
        if pairs == [(1.0, v)]:
            return v
        if all(not isinstance(c, str) for c, _ in pairs):
            return self.combo("k", pairs)
        named_c = [(c, V) for c, V in pairs if isinstance(c, str)]
        plain = [(c, V) for c, V in pairs if not isinstance(c, str)]
        return self.assign("k", [" + ".join([lin([(c, V[i]) for c, V in plain])] * bool(plain)
                                            + [f"{c}*{V[i]}" for c, V in named_c]) for i in range(self.n)])

    def _fold(self, x, coeffs, rel):
        """Coefficients a_0..a_(d-1) (floats or names of scalars) with sum_k coeffs[k] A^k =
        sum_{j<d} a_j A^j, from A^d = sum_{j<d} c_j(x) A^j: A^k = sum_j r_kj A^j with r_d = c and
        r_(k+1),j = r_k,(j-1) + r_k,(d-1) c_j, reduced here as polynomials in the invariants; the
        generated code evaluates the invariants and one polynomial per a_j."""
        d, gens, poly = rel
        g = self._invariants(x, gens)
        c = [{mono: a for mono, a in poly.get(j, [])} for j in range(d)]
        a = [{(): float(coeffs[j])} if j < len(coeffs) else {} for j in range(d)]
        r = c
        for k in range(d, len(coeffs)):
            if k > d:
                r = [_padd(r[j - 1] if j > 0 else {}, _pmul(r[d - 1], c[j])) for j in range(d)]
            for j in range(d):
                a[j] = _padd(a[j], {m: coeffs[k] * v for m, v in r[j].items()})
        out = []
        for j in range(d):
            terms = [(v, "*".join(g[i] for i in m) or "1.0") for m, v in sorted(a[j].items(), key=lambda t: len(t[0]))]
            terms = [(v, t) for v, t in terms if v != 0.0]
            if not terms:
                out.append(0.0)
            elif len(terms) == 1 and terms[0][1] == "1.0":
                out.append(terms[0][0])
            else:
                out.append(self.assign("aa", [lin(terms).replace("*1.0", "")])[0])
        return out

    def _invariants(self, x, gens):
        """Names of the invariant forms (1, f): f.x and (2, Q): x^T Q x at x (written once per x: the
        stage exponential and dexp^-1 of a stage share them)."""
        cache = self.__dict__.setdefault("_inv_cache", {})
        key = (tuple(x), id(gens))
        if key in cache:
            return cache[key]
        n = self.n
        g = []
        for kind, F in gens:
            if kind == 1:
                g.append(self.assign("gi", [lin([(F[i], x[i]) for i in range(n)])])[0])
            else:
                g.append(self.assign("gi", [lin([(F[i, i], f"{x[i]}*{x[i]}") for i in range(n)]
                                                 + [(2.0 * F[i, j], f"{x[i]}*{x[j]}")
                                                    for i in range(n) for j in range(i + 1, n)])])[0])
        cache[key] = g
        return g


def _estrin(coeffs, pw):
    """Source of sum_j coeffs[j] u^j by Estrin's scheme: low + u^m high with m the largest power of two
    below len(coeffs), recursively; ``pw[k]``: the name of u^(2^k). The same polynomial as Horner's
    rule (rounded differently, by a few ulp at most on these series of decreasing terms), with a chain of
    dependent operations log2(degree) long: the lanes of the batch kernels run it vectorized and
    latency-bound."""
    if len(coeffs) == 1:
        return num(coeffs[0])
    k = 0
    while 2 ** (k + 1) < len(coeffs):
        k += 1
    m = 2 ** k
    return f"({_estrin(coeffs[:m], pw)} + {pw[k]}*{_estrin(coeffs[m:], pw)})"


def _horner(u, coeffs):
    """Source of sum_j coeffs[j] u^j by Horner's rule."""
    out = num(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = f"({num(c)} + {u}*{out})"
    return out
