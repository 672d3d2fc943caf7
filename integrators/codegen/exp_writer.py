"""The exponential part of the code writer: exp(ad x)^T z, and exp(ad x)^T z - z without cancellation.

* Closed forms, chosen by the kind the structure constants admit
  (:func:`integrators.geometry.recognition.closed_form`): Rodrigues' formula on so(3); Ad^T of exp(omega, v)
  on se(3); exp(ad x) = 1 + s1(q) ad x + s2(q) (ad x)^2 on a 3-dimensional algebra with
  ad_x^3 = q(x) ad_x (Cayley-Hamilton; Iserles, Munthe-Kaas, Norsett and Zanna 2000); the sum of two
  such formulas on so(4)-like algebras.
* Otherwise the Taylor series of the action exp(A) z = sum_k A^k z / k!, A = ad(x)^T, on A / s with
  ||A / s||_1 <= TAYLOR_RADIUS (s substeps), with as many terms as a truncation below TAYLOR_STOP |z|
  needs (Al-Mohy and Higham 2011, "Computing the action of the matrix exponential"); folded by the
  relation of ad_x (:func:`integrators.geometry.relations.ad_relation`) into d - 1 products per substep when
  C has one.

:class:`ExponentialWriter` is a mixin of :class:`integrators.codegen.writer.Source`: it writes through the
source's ``emit`` / ``assign`` / ``fresh``, its coadjoint products (``coad``) and its invariant forms
(``_invariants``).
"""

from __future__ import annotations

import math

import numpy as np

from ..geometry.almost_abelian import almost_abelian
from ..geometry.sparse_basis import sparse_basis
from ..geometry.recognition import ideal_split, killing_half
from ..geometry.relations import ad_relation
from .source_text import assigned_names, lin, num, quadratic_source

#: a Taylor term below this fraction of |z|_1 ends the series of the generic exponential
TAYLOR_STOP = 2.0 ** -54
#: the generic exponential takes s substeps with ||ad(x)^T / s||_1 <= TAYLOR_RADIUS
TAYLOR_RADIUS = 0.5


class ExponentialWriter:
    """The exponentials of :class:`integrators.codegen.writer.Source` (module docstring)."""

    def quadratic(self, x, F, prefix="q"):
        """Name of x^T F x (F symmetric), written once per x and form: a later request for the same
        form, or for -F (the exponential's q = tr(ad_x^2)/2 and the closed dexp^-1's u = -q of the
        same stage), reads the name (or its negation) while it is still in scope: no line since
        it was written is less indented (a branch left, or a sibling branch) and none assigns to
        a name of x. The form is written as sum_k d_k (m_k . x)^2 (:func:`quadratic_terms`) when
        that takes fewer operations than the expansion (so(4)'s ideals: three squares of sums of
        two, not nine products)."""
        F = np.asarray(F, dtype=float) + 0.0      # -0.0 -> 0.0: the bytes key the form
        memo = self.__dict__.setdefault("_quadratics", {})
        for G, sign in ((F, ""), (-F + 0.0, "-")):
            hit = memo.get((tuple(x), G.tobytes()))
            if hit is not None and self._in_scope(hit[1], hit[2], x):
                if not sign:
                    return hit[0]
                out = self.fresh(prefix)
                self.emit(f"{out} = -{hit[0]}")
                return out
        lines, expr = quadratic_source(F, x, self.fresh)
        for ln in lines:
            self.emit(ln)
        out = self.fresh(prefix)
        self.emit(f"{out} = {expr}")
        memo[(tuple(x), F.tobytes())] = (out, len(self.lines), self.indent)
        return out

    def _in_scope(self, at, indent, x):
        """Is a name written at line ``at - 1`` with ``indent`` still valid here (see :meth:`quadratic`)?"""
        if self.indent < indent:
            return False
        names = set(x)
        for ln in self.lines[at:]:
            if len(ln) - len(ln.lstrip(" ")) < 4 * indent or names & assigned_names(ln):
                return False
        return True


    def stage_act(self, x, z):
        """exp(ad x)^T z for a stage value Y_i (the update of the step keeps :meth:`act`).

        With no closed form, B = ad(x)^T obeys B^d = sum_j (-1)^(d-j) c_j(x) B^j (the relation of
        -ad_x from :func:`integrators.geometry.relations.ad_relation`, transposed), so the Taylor sum of the action over s substeps
        of exp(B/s), with the same (s, m) as :meth:`_act_taylor` (``tplan``), folds into
        exp(B/s) u = sum_{j<d} f_j B^j u, f_j = sum_{k<=m} r_kj / k! (r_k: B^k = sum_j r_kj B^j, a
        scalar recurrence): d - 1 products with B per substep instead of m. The same truncated
        series, so the stages agree with :meth:`act` to round-off."""
        return self.fold_act(x, z, delta=False) if self.foldable() else self.act(x, z, delta=False)

    def foldable(self):
        """True when the exponential has no closed form and C has a relation of degree <= n."""
        if self.st.closed is not None:
            return False
        rel = ad_relation(self.st.C, self.n)
        return rel is not None and 0 < rel[0] <= self.n

    def fold_act(self, x, z, delta):
        """:meth:`stage_act`'s folded Taylor action; with ``delta`` the increment exp(B) z - z,
        accumulated over the substeps from the terms j >= 1 (no cancellation), as in
        :meth:`_act_taylor`."""
        d, gens, poly = ad_relation(self.st.C, self.n)
        n = self.n
        bound = lin([(nr, f"abs({x[i]})") for i, nr in enumerate(self.st.norms)])
        s, bd, inv, bad, rb = (self.fresh(p) for p in ("s", "bd", "r", "nan", "rb"))
        # the plan of tplan without its call: s substeps with r = bound / s < TAYLOR_RADIUS, the
        # terms counted in the loop of _taylor_fold; NaN (carried by f_1) beyond 1e5 or for NaN
        # (tbound: numpy columns take the largest bound within range, and NaN only in the columns beyond
        # it, so one overflowing trajectory of an ensemble does not poison the others)
        self.emit(f"{bd}, {bad} = tbound({bound})")
        self.emit(f"{s} = int({num(1.0 / TAYLOR_RADIUS)}*{bd}) + 1 if {bd} <= 1e5 else 1")
        self.emit(f"{inv} = 1.0/{s}")
        self.emit(f"{rb} = {bd}*{inv} if {bd} <= 1e5 else 0.0")
        g = self._invariants(x, gens)
        # c'_j of B = ad(x/s)^T: (-1)^(d-j) c_j(x) s^-(d-j) (c_j is homogeneous of degree d - j)
        c = [None] * d
        for j, terms in poly.items():
            sign = -1.0 if (d - j) % 2 else 1.0
            c[j] = self.assign("cb", ["*".join([f"({lin([(sign * a, '*'.join(g[i] for i in mono)) for mono, a in terms])})"]
                                               + [inv] * (d - j))])[0]
        f = self._taylor_fold(c, rb, 0.0 if delta else 1.0)
        # B(x/s)^j = s^-j B(x)^j: the scaling goes into f_j, the products below are with B(x)
        # bad (0.0 or NaN from tplan) rides on f_1: a NaN f_1 makes every component NaN
        if d > 1:
            self.emit(", ".join(f[1:]) + " = " + ", ".join(f"{f[j]}*{'*'.join([inv] * j)}" + (f" + {bad}" if j == 1 else "")
                                                       for j in range(1, d)))
        def substep(u, prefix):  # f_0 u + sum_{j>=1} f_j B^j u ((f_0 - 1) u + ... with delta)
            acc = [[f"{f[0]}*{u[i]}"] if c[0] is not None else ([] if delta else [u[i]]) for i in range(n)]
            for j in range(1, d):
                u = self.coad(x, u, prefix="t")
                for i in range(n):
                    acc[i].append(f"{f[j]}*{u[i]}")
            return self.assign(prefix, [" + ".join(a) or "0.0" for a in acc])

        # the first substep from z, the other s - 1 in a loop (no copies when s = 1)
        out = substep(list(z), "d" if delta else "y")
        self.emit(f"for _ in range({s} - 1):")
        self.indent += 1
        if delta:  # the state of the substep z + (increment so far); the increments are summed
            u = self.assign("u", [f"{z[i]} + {out[i]}" for i in range(n)])
            inc = substep(u, "v")
            for i in range(n):
                self.emit(f"{out[i]} = {out[i]} + {inc[i]}")
        else:
            nxt = substep(out, "v")
            for i in range(n):
                self.emit(f"{out[i]} = {nxt[i]}")
        self.indent -= 1
        return out if d > 1 else self.assign("y", [f"{out[i]} + {bad}" for i in range(n)])

    def _taylor_fold(self, c, rb, f0):
        """Names f_0..f_(d-1) with sum_{k<=m} B^k / k! = sum_j f_j B^j (f_0 offset by f0 - 1: 0.0 for
        an increment), given B^d = sum_j c_j B^j (names, None for 0): f_j = sum_k r_kj / k! with
        r_d = c, r_(k+1),j = r_k,(j-1) + r_k,(d-1) c_j, in a runtime loop over k that adds the term
        k while e^r r^k / k! > 2^-54 (e^r <= 1.65 for r <= 1/2; ``rb`` names the bound r of the
        substep: the m of ``tplan``, at most 30; Al-Mohy and Higham 2011). The supports of r_k (which
        j can be non-zero) are followed at generation time: when they alternate (a relation with only
        even or only odd gaps d - j, as on so(4), se(3), sl(2)) the loop takes two k per pass and
        writes only the live entries (it may add the term m + 1, below the truncation)."""
        d = len(c)
        f = [self.fresh("f") for _ in range(d)]
        for j in range(d):  # k < d: B^k itself
            self.emit(f"{f[j]} = {num(f0 if j == 0 else 1.0 / math.factorial(j))}")
        S0 = {j for j in range(d) if c[j] is not None}
        if not S0:
            return f

        def step(S):
            return {j for j in range(d) if j - 1 in S or (d - 1 in S and c[j] is not None)}

        S1 = step(S0)
        if S1 <= S0:
            period = [S0]
        elif step(S1) <= S0:
            period = [S0, S1]
        else:
            U = set(S0)
            while not step(U) <= U:
                U |= step(U)
            period = [U]
        r = [self.fresh("rk") for _ in range(d)]
        fac, tail, kk = self.fresh("fac"), self.fresh("tail"), self.fresh("kf")
        for j in sorted(period[0]):
            self.emit(f"{r[j]} = {c[j] if c[j] is not None else '0.0'}")
        self.emit(f"{fac} = {num(1.0 / math.factorial(d))}")
        self.emit(f"{tail} = {num(1.65 / math.factorial(d))}*{'*'.join([rb] * d)}")  # 1.65 r^d / d!
        self.emit(f"{kk} = {float(d)!r}")
        self.emit(f"while {tail} > {TAYLOR_STOP!r} and {kk} <= 30.0:")
        self.indent += 1
        for t, S in enumerate(period):
            nxt = sorted(period[(t + 1) % len(period)])
            live = sorted(S)
            self.emit(", ".join(f[j] for j in live) + " = " + ", ".join(f"{f[j]} + {fac}*{r[j]}" for j in live))
            self.emit(f"{fac} = {fac}/({kk} + {float(t + 1)!r})")
            rhs = []
            for j in nxt:
                parts = ([r[j - 1]] if j - 1 in S else []) + \
                        ([f"{r[d - 1]}*{c[j]}"] if d - 1 in S and c[j] is not None else [])
                rhs.append(" + ".join(parts) or "0.0")
            self.emit(", ".join(r[j] for j in nxt) + " = " + ", ".join(rhs))
        p = len(period)
        self.emit(f"{tail} = {tail}*{'*'.join([rb] * p)}/({' * '.join(f'({kk} + {float(t + 1)!r})' for t in range(p))})")
        self.emit(f"{kk} = {kk} + {float(p)!r}")
        self.indent -= 1
        return f

    # ---------------------------------------------------------------- closed forms and the Taylor action
    def act(self, x, z, delta):
        """exp(ad x)^T z (delta False) or exp(ad x)^T z - z (delta True), without cancellation."""
        kind = self.st.closed
        if kind == "so3":
            return self._act_so3(x, z, delta)
        if kind == "se3":
            return self._act_se3(x, z, delta)
        if kind == "ad3":
            return self._act_ad3(x, z, delta)
        if kind == "ad3x2":
            return self._act_ad3x2(x, z, delta)
        if kind == "almost_abelian":
            return self._act_almost_abelian(x, z, delta)
        return self._act_taylor(x, z, delta)

    def adapted(self, which, v, prefix):
        """Names of M v for a matrix of the sparse basis T (:func:`integrators.geometry.sparse_basis.sparse_basis`:
        the adapted basis of an almost abelian algebra, or a root basis): ``which`` is "Tinv" (coordinates of an
        algebra element), "TT" (of a covector), "TinvT" (a covector back) or "T" (an element back). Written
        once per (which, v) while in scope (:meth:`_in_scope`, and no loop begun since): a stage's exponential
        and its dexp^-1 read the same T^-1 theta."""
        memo = self.__dict__.setdefault("_adapted", {})
        hit = memo.get((which, tuple(v)))
        if hit is not None and self._in_scope(hit[1], hit[2], v) and \
                not any(ln.lstrip().startswith(("while ", "for ")) for ln in self.lines[hit[1]:]):
            return hit[0]   # (no loop began since: its later passes would reassign v after this line)
        out = self._adapted_map(which, v, prefix)
        memo[(which, tuple(v))] = (out, len(self.lines), self.indent)
        return out

    def _adapted_map(self, which, v, prefix):
        """:meth:`adapted`'s map, one linear combination per component (the basis of
        :func:`integrators.geometry.sparse_basis.sparse_basis`)."""
        form = sparse_basis(self.st.C)
        M = {"Tinv": form.Tinv, "TT": form.T.T, "TinvT": form.Tinv.T, "T": form.T}[which]
        return self.assign(prefix, [lin([(M[i, j], v[j]) for j in range(self.n)]) for i in range(self.n)])

    def _act_almost_abelian(self, x, z, delta):
        """exp(ad x)^T z (``delta``: minus z) on an almost abelian algebra (:func:`closed_form`
        "almost_abelian", :mod:`integrators.geometry.almost_abelian`).

        Derivation. In the adapted basis (f0, the block basis of h), x = a f0 + v and ad_x = [[0, 0], [c, B]]
        with c = -D v, B = a D (D block diagonal: lambda, or [[alpha, beta], [-beta, alpha]] acting on
        v_i + i v_(i+1) as multiplication by sigma = alpha - i beta). From N^k = [[0, 0], [B^(k-1) c, B^k]],
        exp(ad x) = [[1, 0], [phi_1(B) c, e^B]], phi_1(B) c = -(e^(a D) - 1)/a v =: -u, so for a covector
        z = (z0, zeta) in the dual coordinates (z0 + ..., pairing preserved: zhat = T^T z)

            exp(ad x)^T z - z = (-u . zeta, (e^(a D^T) - 1) zeta),

        blockwise: u_i = G v_i, (e^(a lambda) - 1) zeta_i with (E, G) = aexp(a, lambda); on a pair D^T acts on
        zeta_i + i zeta_(i+1) as conj(sigma) = alpha + i beta, so with (E, G) = aexpc(a, alpha, beta) (complex
        E = e^(a conj sigma) - 1, G = E / a): the increment E zeta, and u = conj(G) v (the pair's parts of
        u . zeta are Re(u conj(zeta))). Back with T^-T. No cancellation: E and G come from expm1 and half
        angles, and the increment is summed from its own terms. Exact up to the rounding of three n x n maps
        (~cond(T) eps, cond(T) <= COND_MAX)."""
        xh = self.adapted("Tinv", x, "xa")
        zh = self.adapted("TT", z, "za")
        dh, gs = self.scaling_increment(xh[0], zh)
        d0 = []
        for i, G in gs:
            if len(G) == 1:
                d0.append(f"{G[0]}*{xh[i]}*{zh[i]}")
                continue
            j = i + 1
            Gr, Gi = G
            ur, ui = self.assign("u", [f"{Gr}*{xh[i]} + {Gi}*{xh[j]}", f"{Gr}*{xh[j]} - {Gi}*{xh[i]}"])
            d0 += [f"{ur}*{zh[i]}", f"{ui}*{zh[j]}"]
        dh[0] = f"-({' + '.join(d0)})" if d0 else "0.0"
        d = self.adapted("TinvT", self.assign("da", dh), "d")
        return d if delta else self.assign("y", [f"{z[i]} + {d[i]}" for i in range(self.n)])

    def scaling_increment(self, a, zh):
        """(e^(a D^T) - 1) zeta blockwise on an almost abelian algebra's adapted coordinates zh = (z0, zeta)
        (:mod:`integrators.geometry.almost_abelian`): the list of n expressions (index 0 left None) and, per block,
        (its first index, the names of G = (e^(a lambda) - 1)/a, or of its real and imaginary parts on a pair), from
        ``aexp`` / ``aexpc`` (expm1 and half angles, NaN beyond |a lambda| = 700). On a pair D^T acts on
        zeta_i + i zeta_(i+1) as alpha + i beta, so the increment is E zeta with E = e^(a (alpha + i beta)) - 1."""
        form = almost_abelian(self.st.C)
        dh, gs = [None] * self.n, []
        for i, lam in form.reals:
            E, G = self.fresh("e"), self.fresh("g")
            self.emit(f"{E}, {G} = aexp({a}, {num(lam)})")
            dh[i] = f"{E}*{zh[i]}"
            gs.append((i, (G,)))
        for i, al, be in form.pairs:
            j = i + 1
            Er, Ei, Gr, Gi = (self.fresh(p) for p in ("er", "ei", "gr", "gi"))
            self.emit(f"{Er}, {Ei}, {Gr}, {Gi} = aexpc({a}, {num(al)}, {num(be)})")
            dh[i] = f"{Er}*{zh[i]} - {Ei}*{zh[j]}"
            dh[j] = f"{Er}*{zh[j]} + {Ei}*{zh[i]}"
            gs.append((i, (Gr, Gi)))
        return dh, gs

    def _cross(self, a, b, prefix="c"):
        return self.assign(prefix, [f"{a[1]}*{b[2]} - {a[2]}*{b[1]}", f"{a[2]}*{b[0]} - {a[0]}*{b[2]}",
                                    f"{a[0]}*{b[1]} - {a[1]}*{b[0]}"])

    def _act_so3(self, x, z, delta):
        # exp(ad x)^T z = R(-x) z = z - a x cross z + b x cross (x cross z) (Rodrigues)
        ca, cb = self.so3_ab(x)
        return self._rodrigues(ca, cb, x, z, delta)

    def _rodrigues(self, ca, cb, x, z, delta):
        """z - a x cross z + b x cross (x cross z) (or only the increment, with ``delta``), given the
        names of Rodrigues' coefficients a = sin t / t, b = (1 - cos t)/t^2."""
        c1 = self._cross(x, z)
        c2 = self._cross(x, c1)
        base = "" if delta else "{z} "
        return self.assign("y", [(base.format(z=z[i]) + f"- {ca}*{c1[i]} + {cb}*{c2[i]}").lstrip()
                                 for i in range(3)])

    def _act_se3(self, x, z, delta):
        # Ad_g^T z = (R^T (M - p x P), R^T P), g = exp(x) = (R, p), R = exp(hat w), p = V(w) v,
        # V = I + b W + c W^2 (W = hat w); R^T y = y - a w x y + b w x (w x y)
        w, v, M, Pm = x[:3], x[3:], z[:3], z[3:]
        # |w|^2 as a quadratic form of x: the closed dexp^-1 of the same x reads it (its s = -|w|^2)
        t2 = self.quadratic(x, np.diag([1.0, 1.0, 1.0] + [0.0] * (len(x) - 3)), "t2")
        ca, cb, cc = self.fresh("a"), self.fresh("b"), self.fresh("c")
        self.emit(f"{ca}, {cb}, {cc} = co3({t2})")
        wv = self._cross(w, v)
        wwv = self._cross(w, wv)
        p = self.assign("p", [f"{v[i]} + {cb}*{wv[i]} + {cc}*{wwv[i]}" for i in range(3)])
        pP = self._cross(p, Pm)
        # M1 = R^T (M - p x P), P1 = R^T P with R^T y = y - a w x y + b w x (w x y); with delta the
        # increments dM = rho(M - p x P) - p x P, dP = rho(P), rho(y) = R^T y - y (no cancellation)
        u = self.assign("u", [f"{M[i]} - {pP[i]}" for i in range(3)])
        c1 = self._cross(w, u)
        c2 = self._cross(w, c1)
        d1 = self.assign("y", [f"{cb}*{c2[i]} - {ca}*{c1[i]} - {pP[i]}" if delta else
                               f"{u[i]} - {ca}*{c1[i]} + {cb}*{c2[i]}" for i in range(3)])
        e1 = self._cross(w, Pm)
        e2 = self._cross(w, e1)
        d2 = self.assign("y", [f"{cb}*{e2[i]} - {ca}*{e1[i]}" if delta else
                               f"{Pm[i]} - {ca}*{e1[i]} + {cb}*{e2[i]}" for i in range(3)])
        return d1 + d2

    def _act_ad3(self, x, z, delta):
        """exp(ad x)^T z = z + s1(q) A z + s2(q) A^2 z, A = ad(x)^T, q = tr(ad_x^2)/2, on a
        3-dimensional algebra with ad_x^3 = q ad_x (:func:`closed_form` "ad3").

        Derivation. ad_x is a 3 x 3 matrix with ad_x x = [x, x] = 0, so det ad_x = 0, and on a
        unimodular algebra tr ad_x = 0. Cayley-Hamilton, A^3 - (tr A) A^2 + c_2 A - det A = 0 with
        c_2 = ((tr A)^2 - tr A^2)/2, then reads ad_x^3 = q ad_x, q = tr(ad_x^2)/2 = K(x, x)/2 (K the
        Killing form). Hence ad_x^(2k+1) = q^k ad_x and ad_x^(2k+2) = q^k ad_x^2 (k >= 0), and
        summing the exponential series,

            exp(ad_x) = 1 + s1 ad_x + s2 ad_x^2,  s1 = sum_k q^k/(2k+1)! = sinh(r)/r,
                                                  s2 = sum_k q^k/(2k+2)! = (cosh r - 1)/r^2, r^2 = q,

        (for q = -t^2 < 0: sin t / t and (1 - cos t)/t^2). The summation needs only ad_x^3 = q ad_x,
        which :func:`cubic_ad` checks (it also holds on Bianchi V, where ad_x^2 = -x_3 ad_x). The
        transpose A = ad_x^T satisfies the same identity. On so(3) (K = -2 I, q = -|x|^2) this is Rodrigues' formula; on sl(2) and
        so(2,1) q takes both signs (elliptic, parabolic and hyperbolic elements). The Cayley-Hamilton
        route to closed-form exponentials of low-dimensional algebras: Iserles, Munthe-Kaas, Norsett
        and Zanna (2000), "Lie-group methods", Acta Numerica 9; the Cayley-Hamilton theorem itself is
        in any linear-algebra text.
        Coefficients: genhelpers cq2 (half-angle forms, series near q = 0). The result is exactly on
        the coadjoint orbit up to the rounding of two matrix-vector products: a relative error e in
        s1 moves z along ad*_x z (tangent to the orbit: the Casimirs do not see it to first order),
        one in s2 changes the Casimirs by O(e |A z|^2), second order in the step.
        """
        c1, c2, g1, g2 = self._cubic(x, z)
        base = "" if delta else "{z} + "
        return self.assign("y", [base.format(z=z[i]) + f"{c1}*{g1[i]} + {c2}*{g2[i]}" for i in range(self.n)])

    def _coefficients(self, x, Q):
        """Names of s1(q), s2(q) (genhelpers cq2) for q = x^T Q x, Q symmetric."""
        return self._q_coefficients(x, Q)[1:]

    def _q_coefficients(self, x, Q):
        """Names of q = x^T Q x and of s1(q), s2(q) (genhelpers cq2)."""
        q = self.quadratic(x, Q)
        c1, c2 = self.fresh("a"), self.fresh("b")
        self.emit(f"{c1}, {c2} = cq2({q})")
        return q, c1, c2

    def _cubic(self, x, z):
        """(names of s1(q), s2(q), lists A z, A^2 z) for A = ad(x)^T, q = x^T Q x (Q: killing_half)."""
        c1, c2 = self._coefficients(x, killing_half(self.st.C))
        if self.dense():
            A = self.matrix(x)
            g1 = self.matvec(A, z, "t")
            g2 = self.matvec(A, g1, "t")
        else:
            g1 = self.coad(x, z, prefix="t")
            g2 = self.coad(x, g1, prefix="t")
        return c1, c2, g1, g2

    def _act_ad3x2(self, x, z, delta):
        """exp(ad x)^T z on g = I1 + I2 (two 3-dimensional ideals with the cubic identity,
        :func:`ideal_split`, P1 the projection onto I1 along I2, P2 = 1 - P1).

        With x = x1 + x2, x_k = P_k x: ad_{x1} ad_{x2} = ad_{x2} ad_{x1} = 0 ([I1, [I2, g]] = 0), and
        ad_{x_k}^3 = q_k ad_{x_k} with q_k = tr(ad_{x_k}^2)/2 = x^T P_k^T Q P_k x (Q: killing_half;
        ad_{x_k} vanishes on the other ideal, so the trace is the ideal's). Hence
        exp(ad x) = exp(ad x1) exp(ad x2) = 1 + s1(q1) ad x1 + s2(q1) ad_{x1}^2 + s1(q2) ad x2 +
        s2(q2) ad_{x2}^2 (the cross terms vanish): two Rodrigues-like formulas (:meth:`_act_ad3`
        derives s1, s2) instead of the Taylor series. P_k commutes with every ad_y (it is in the
        commutant), so with A = ad(x)^T: A_k = ad(x_k)^T = P_k^T A, A_k z = P_k^T (A z) and
        A_k^2 z = A (A_k z) (A_1 A_2 = 0): one product A z and two more, no matrix per ideal. On so(4)
        the ideals are the self-dual and anti-self-dual bivectors (so(4) = so(3) + so(3)).
        """
        P1 = ideal_split(self.st.C)
        n = self.n
        P2 = np.eye(n) - P1
        Q = killing_half(self.st.C)
        a1, b1 = self._coefficients(x, P1.T @ Q @ P1)
        a2, b2 = self._coefficients(x, P2.T @ Q @ P2)
        A = self.matrix(x) if self.dense() else None

        def apply(v):
            return self.matvec(A, v, "t") if A is not None else self.coad(x, v, prefix="t")

        g = apply(z)
        g1 = self.assign("t", [lin([(P1[j, i], g[j]) for j in range(n)]) for i in range(n)])
        g2 = self.assign("t", [f"{g[i]} - {g1[i]}" for i in range(n)])
        h1, h2 = apply(g1), apply(g2)
        base = "" if delta else "{z} + "
        return self.assign("y", [base.format(z=z[i]) + f"{a1}*{g1[i]} + {b1}*{h1[i]} + {a2}*{g2[i]} + {b2}*{h2[i]}"
                                 for i in range(n)])

    def _act_taylor(self, x, z, delta):
        """Scaled Taylor series of the action: s substeps of exp(A/s), A = ad(x)^T, each summed to m
        terms, (s, m) from the bound r = ||A||_1 / s <= TAYLOR_RADIUS with e^r r^(m+1)/(m+1)! <=
        TAYLOR_STOP; the increment is accumulated from the terms k >= 1 (no cancellation)."""
        n = self.n
        bound = lin([(nr, f"abs({x[i]})") for i, nr in enumerate(self.st.norms)])
        s, m, inv, bad = self.fresh("s"), self.fresh("m"), self.fresh("r"), self.fresh("nan")
        self.emit(f"{s}, {m}, {bad} = tplan({bound})")
        self.emit(f"{inv} = 1.0/{s}")
        xs = self.assign("x", [f"{inv}*{x[i]}" for i in range(n)])
        Ax = self.matrix(xs) if self.dense() else None

        def apply(u):
            return self.matvec(Ax, u, "t") if Ax is not None else self.coad(xs, u, prefix="t")
        return self.taylor_substeps(z, apply, s, m, bad, delta)

    def taylor_substeps(self, z, apply, s, m, bad, delta, shift=None):
        """The text of s substeps of the Taylor series of exp(M) on (z, 1), M = [[A, v], [0, 0]] with A y =
        apply(y) (already divided by s) and v = shift (None: v = 0, the linear action e^A z): per substep the
        terms t_1 = A y + v, t_k = A t_(k-1) / k, k = 2..m, their sum the substep's increment (accumulated from
        the terms: no cancellation); ``bad`` (NaN when the plan refused the bound) is added to the increment.
        Returns the increment (delta) or the state z + increment."""
        n = self.n
        cur = self.assign("z", list(z))            # state at the start of the substep
        tot = self.assign("d", ["0.0"] * n)        # increment over all substeps
        self.emit(f"for _ in range({s}):")
        self.indent += 1
        u, acc, kk = self.fresh("u"), self.fresh("v"), self.fresh("k")
        g = apply(cur)
        for i in range(n):   # the term k = 1: A y + v
            self.emit(f"{u}{i} = {g[i]}" + ("" if shift is None else f" + {shift[i]}"))
            self.emit(f"{acc}{i} = {u}{i}")
        self.emit(f"{kk} = 1.0")
        self.emit(f"for _k in range({m} - 1):")
        self.indent += 1
        self.emit(f"{kk} = {kk} + 1.0")
        g = apply([f"{u}{i}" for i in range(n)])
        for i in range(n):
            self.emit(f"{u}{i} = {g[i]}/{kk}")
            self.emit(f"{acc}{i} = {acc}{i} + {u}{i}")
        self.indent -= 1
        for i in range(n):
            self.emit(f"{tot[i]} = {tot[i]} + {acc}{i}")
            self.emit(f"{cur[i]} = {cur[i]} + {acc}{i}")
        self.indent -= 1
        for i in range(n):
            self.emit(f"{tot[i]} = {tot[i]} + {bad}")
        if delta:
            return tot
        return self.assign("y", [f"{z[i]} + {tot[i]}" for i in range(n)])
