"""The code writer of a forced coadjoint problem's Lie-group steps: generators in g x g*, the affine action.

A forced problem z' = ad*_{w(z)} z + f(z), with the multiplier force f(z) = -P ad*_{w(z)} z that
:func:`integrators.geometry.recognition.multiplier_projector` recognises (servo-constraints of the first kind,
several constraints, Suslov's problem), is moved by the Lie-group methods (RKMK, commutator-free) of
:class:`integrators.geometry.spaces.AffineCoadjointSpace`, and this writer writes the same mathematics:

* the generator is the pair xi(z) = (w, f) = (W z + c, -P ad*_w z) in the semidirect product g x g*
  (2n components);
* its action for unit time is the exact flow of the frozen affine field z' = ad*_x z + v,
  act((x, v), z) = exp(M) (z, 1) = e^A z + phi_1(A) v, M = [[A, v], [0, 0]], A = ad(x)^T: in closed form where
  ad_x^3 = q ad_x (so(3), the 3-dimensional "ad3" algebras, so(4)-like sums of two; :meth:`AffineSource._act_cubic`),
  else as the scaled Taylor series
  of that action (Al-Mohy and Higham 2011), s substeps of exp(M/s) with ||M/s||_1 <= 1/2 and as many terms
  as a truncation below 2^-54 needs (``tplan``), ||M||_1 = max(||A||_1, |v|_1); with M (y, 1) =
  (A y + v, 0) the series of one substep is y + (A y + v) + sum_{k >= 2} A^(k-1) (A y + v) / k!, so the
  increment is summed from its terms (no cancellation). The reference (numpy) takes exp of the (n+1) x
  (n+1) matrix M by :func:`integrators.geometry.spaces.expm_small` (or Rodrigues' formula on so(3)); both are
  the exponential to round-off, so the generated steps agree with the reference to round-off;
* dexp^-1 is the Bernoulli series (truncated after the method's number of terms, as
  :func:`integrators.geometry.spaces.dexpinv_series`) with the bracket of the space,
  [(x1, v1), (x2, v2)] = (-[x1, x2], ad*_{x1} v2 - ad*_{x2} v1) (Munthe-Kaas 1999).

The stage recurrence (:func:`integrators.codegen.step_source.stages`) and the commutator-free update
(:mod:`integrators.codegen.fixed_programs`) are the ones of the unforced problems: only the generator,
its action and its bracket differ; an adaptive RKMK pair maps its error estimate to the state by
ad*_x z + v (:meth:`AffineSource.to_state`) and projects every accepted step onto the linear invariants
(:mod:`integrators.codegen.linear_projection`).
"""

from __future__ import annotations

import numpy as np

from liegroups.closed_forms import bernoulli_coefficients

from ..geometry.recognition import ideal_split, killing_half
from ..geometry.sparse_basis import sparse_basis
from ..geometry.spaces import AFFINE_SCALE_FLOOR, ROUNDOFF_TERMS, adnorm_form
from . import orbit_source
from .source_text import lin
from .writer import Source


def affine_adnorm_form(C):
    """F (2n x 2n) with (x, u)^T F (x, u) = ||ad_(x, u)||_F^2 in g x g*, ad_(x, u)(y, r) = (-[x, y], ad*_x r - ad*_y u):
    the columns (y, r) = (e_i, 0) give |[x, e_i]|^2 + |ad*_(e_i) u|^2, the columns (0, e_i) |ad*_x e_i|^2, so
    F = diag(2 G, H), G = :func:`integrators.geometry.spaces.adnorm_form` (sum_i |[x, e_i]|^2 = sum_i |ad*_x e_i|^2
    = x^T G x) and H_kl = sum_ij C[i, j, k] C[i, j, l] (sum_i |ad*_(e_i) u|^2 = u^T H u)."""
    C = np.asarray(C, dtype=float)
    n = C.shape[0]
    F = np.zeros((2 * n, 2 * n))
    F[:n, :n] = 2.0 * adnorm_form(C)
    F[n:, n:] = np.einsum("ijk,ijl->kl", C, C)
    return F


class AffineSource(Source):
    """:class:`integrators.codegen.writer.Source` for the Lie-group steps of a forced problem (module
    docstring): generator vectors have 2n names (x, then v), states n."""

    def velocity(self, z, scale=None):
        """xi(z) = (w, f), w = W z + c, f = -P ad*_w z (scale * xi with ``scale``: h w, h f after rounding
        w and f, as the reference's h * field)."""
        w = super().velocity(z)
        g = self.coad(w, z)
        P = self.st.P
        f = self.assign("f", [lin([(-P[i, j], g[j]) for j in range(self.n)]) for i in range(self.n)])
        if scale is None:
            return w + f
        return self.assign("w", [f"{scale}*{u}" for u in w + f])

    @property
    def gdim(self):
        """A generator (w, f) has 2n components."""
        return 2 * self.n

    def to_state(self, xi, z):
        """The state change of a generator (x, v) to leading order, ad*_x z + v (d/ds of the affine action at
        s = 0; the error estimate of an RKMK pair, as :meth:`integrators.geometry.spaces.AffineCoadjointSpace.to_state`)."""
        n = self.n
        g = self.coad(xi[:n], z, prefix="ez")
        return self.assign("ez", [f"{g[i]} + {xi[n + i]}" for i in range(n)])

    def foldable(self):
        """The folded action of the unforced writer has no affine term: the affine action is always the Taylor
        series of :meth:`act`."""
        return False

    def act(self, xi, z, delta):
        """exp(M) (z, 1) (``delta``: minus z), M = [[ad(x)^T, v], [0, 0]]: in closed form where ad_x^3 = q ad_x
        (so(3), the "ad3" algebras) or on two such ideals ("ad3x2": so(4)) (:meth:`_act_cubic`), else the
        Taylor series (:meth:`_act_series`)."""
        if self.st.closed in ("so3", "ad3", "ad3x2"):
            return self._act_cubic(xi, z, delta)
        return self._act_series(xi, z, delta)

    def _act_cubic(self, xi, z, delta):
        """exp(A) z + phi_1(A) v with A = ad(x)^T, A^3 = q A: e^A = 1 + s1 A + s2 A^2 and phi_1(A) = (e^A - 1)/A =
        sum_k A^k/(k+1)! = 1 + s2 A + s3 A^2 (A^(2j+1) = q^j A, A^(2j+2) = q^j A^2; s1, s2 of
        :meth:`integrators.codegen.exp_writer.ExponentialWriter._act_ad3`, s3 = sum_j q^j/(2j+3)!, genhelpers cq3),
        so the action is z + v + A u1 + A^2 u2 with u1 = s1 z + s2 v, u2 = s2 z + s3 v. On g = I1 + I2 ("ad3x2",
        A = A1 + A2, A1 A2 = A2 A1 = 0, A_k = P_k^T A) e^A - 1 and phi_1(A) - 1 are the sums over the ideals, each
        with its own q_k = x^T P_k^T Q P_k x, and A_k^2 w = A (A_k w) (:meth:`~integrators.codegen.exp_writer.
        ExponentialWriter._act_ad3x2`)."""
        n = self.n
        x, v = xi[:n], xi[n:]
        Q = killing_half(self.st.C)
        A = self.matrix(x) if self.dense() else None

        def apply(u):
            return self.matvec(A, u, "t") if A is not None else self.coad(x, u, prefix="t")

        def coefficients(F):
            q, c1, c2 = self._q_coefficients(x, F)
            c3 = self.fresh("c")
            self.emit(f"{c3} = cq3({q}, {c1})")
            return c1, c2, c3

        def pieces(c1, c2, c3, part):
            """A_k u1 + A_k^2 u2 of one ideal (``part``: w -> P_k^T w, None for the whole algebra)."""
            u1 = self.assign("u", [f"{c1}*{z[i]} + {c2}*{v[i]}" for i in range(n)])
            u2 = self.assign("u", [f"{c2}*{z[i]} + {c3}*{v[i]}" for i in range(n)])
            g = apply(u1)
            g = g if part is None else part(g)
            h = apply(u2)
            h = apply(h if part is None else part(h))
            return [f"{g[i]} + {h[i]}" for i in range(n)]

        if self.st.closed == "ad3x2":
            P1 = ideal_split(self.st.C)
            P2 = np.eye(n) - P1

            def first(w):
                return self.assign("t", [lin([(P1[j, i], w[j]) for j in range(n)]) for i in range(n)])

            def second(w):
                w1 = first(w)
                return self.assign("t", [f"{w[i]} - {w1[i]}" for i in range(n)])

            one = self.assign("t", pieces(*coefficients(P1.T @ Q @ P1), first))
            two = self.assign("t", pieces(*coefficients(P2.T @ Q @ P2), second))
            d = [f"{v[i]} + {one[i]} + {two[i]}" for i in range(n)]
        else:
            d = [f"{v[i]} + {e}" for i, e in enumerate(pieces(*coefficients(Q), None))]
        return self.assign("y", d if delta else [f"{z[i]} + ({d[i]})" for i in range(n)])

    def _act_series(self, xi, z, delta):
        """exp(M) (z, 1) by the scaled Taylor series (module docstring), the increment summed from its terms.

        The plan (substeps, terms) is tplan's for max(||A||_1, min(|v|_1, 1/2)): the 1-norm of
        M' = D M D^-1 = [[A, v / mu], [0, 0]], D = diag(I, mu), mu = max(1, 2 |v|_1), whose
        series on (z, mu) is term for term the one of M on (z, 1) (M^k (y, 1) = (A^(k-1) (A y + v), 0) whatever
        mu). Its truncation bound, 2^-54 (|z|_1 + mu) a substep, is round-off of the increment's scale
        (mu <= 1 + 2 |v|_1), where ||M||_1 itself asked for |v|_1 / (1/2) substeps: under a force growing as
        |z|^2 near a blow-up, tens of substeps a stage for a step the exponential of A takes in one."""
        n = self.n
        x, v = xi[:n], xi[n:]
        bx = lin([(nr, f"abs({x[i]})") for i, nr in enumerate(self.st.norms)])
        bv = " + ".join(f"abs({v[i]})" for i in range(n))
        s, m, inv, bad = self.fresh("s"), self.fresh("m"), self.fresh("r"), self.fresh("nan")
        # the plan of ||M'||_1 = max(||A||_1, min(|v|_1, 1/2)), M' = D M D^-1, D = diag(I, max(1, 2 |v|_1)): the
        # same series (docstring)
        self.emit(f"{s}, {m}, {bad} = tplan(mx({bx}, -mx(-({bv}), -0.5)))")
        self.emit(f"{inv} = 1.0/{s}")
        xs = self.assign("x", [f"{inv}*{x[i]}" for i in range(n)])
        vs = self.assign("x", [f"{inv}*{v[i]}" for i in range(n)])
        Ax = self.matrix(xs) if self.dense() else None

        def apply(u):
            return self.matvec(Ax, u, "t") if Ax is not None else self.coad(xs, u, prefix="t")

        return self.taylor_substeps(z, apply, s, m, bad, delta, shift=vs)

    def bracket(self, xi, eta, C=None):
        """[(x1, v1), (x2, v2)] = (-[x1, x2], ad*_{x1} v2 - ad*_{x2} v1); with ``C`` the structure constants of
        the coordinates xi and eta are in (:meth:`dexpinv` in a sparse basis), else the algebra's."""
        n = self.n
        x1, v1, x2, v2 = xi[:n], xi[n:], eta[:n], eta[n:]
        if C is None:
            q, a, b = self.neg_bracket(x1, x2), self.coad(x1, v2, prefix="g"), self.coad(x2, v1, prefix="g")
        else:
            q, a, b = self.neg_bracket_with(C, x1, x2), self.coad_with(C, x1, v2), self.coad_with(C, x2, v1)
        return q + self.assign("g", [f"{a[i]} - {b[i]}" for i in range(n)])

    def _sum_basis(self):
        """The sparse basis T (:func:`integrators.geometry.sparse_basis.sparse_basis`) :meth:`dexpinv` sums its
        series in, or None: when C has more non-zero entries than its constants there plus 2 n^2 (the maps in and
        out of one dexp^-1 cost 6 n^2 products, a bracket of g x g* 3 nnz(C)). The map (x, v) -> (T^-1 x, T^T v)
        is an isomorphism of g x g* (the pairing is kept: T^T ad*_x v = ad*_(T^-1 x) T^T v), so the series
        B_k/k! ad_theta^k v is the same sum, and a bracket costs 3 nnz(Chat) instead of 3 nnz(C): so(4) in a
        random basis, 216 against 24 products a term."""
        form = sparse_basis(self.st.C)
        n = self.n
        if form is None or int(np.count_nonzero(self.st.C)) <= int(np.count_nonzero(form.constants())) + 2 * n * n:
            return None
        return form

    def dexpinv(self, theta, v, terms):
        """dexp^-1_theta(v) with the bracket of g x g*, as :func:`integrators.geometry.spaces.dexpinv_series`
        defines it: sum_{k < terms} B_k/k! ad_theta^k v (every power taken, as there), or for the adaptive pairs
        (terms >= ROUNDOFF_TERMS) summed to round-off, to the K of
        :func:`integrators.geometry.spaces.dexpinv_order` for x^2 = ||ad_theta||_F^2 / (2 pi)^2 (NaN beyond
        DEXPINV_X2MAX: the step is rejected, as on the unforced path), ||ad_theta||_F^2 in g x g* from
        :func:`affine_adnorm_form`, after a rescaling of the dual part.

        The rescaling: S(x, u) = (x, lam u) is an automorphism of g x g* (the bracket's dual part is linear in
        the dual parts), so ad_(S^-1 theta) = S^-1 ad_theta S and the sum to any K at S^-1 theta, S^-1 v, mapped
        back by S, is the same sum at theta, v: only the bound that picks K (and rejects the step) is taken at
        S^-1 theta. ad_theta is block triangular, [[-ad_x, 0], [B_u, ad*_x]]: its spectrum, hence the radius of
        the series, is ad_x's alone, while its Frobenius norm grows with u. Under a force growing as |z|^2 (a
        servo-constraint's multiplier) u = h f(z) outgrows x = h w(z), and the norm at theta itself rejected
        every step above h ~ 1/|z|^2: near a finite-time blow-up the steps collapsed that way (rkmk853 on a
        servo-constraint of the first kind on so(4) in a random basis, rtol 1e-9, to |z| = 3241 just before the
        singularity: 15,200 attempts in 17 s, now 166 in 0.35 s; through it, more than 100 s, now 0.8 s to
        status -1 at the singularity, as DOP853). With lam^2 = max(1, hu / gx) (gx = x^T F_xx x, hu = u^T F_uu u,
        the blocks of :func:`affine_adnorm_form` over (2 pi)^2; gx floored at AFFINE_SCALE_FLOOR hu) x^2 at S^-1 theta
        is gx + hu / lam^2 <= 2 gx, and the bound on the rest there, 2^-53 |S^-1 v|, maps back to
        2^-53 (lam |v_x| + |v_u|) in the dual part, the scale of its ad*_(v_x) u terms (lam ~ |u| / |x|). In a
        dense basis the terms are summed in the sparse basis of :meth:`_sum_basis` (theta and v mapped in, the
        sum mapped out)."""
        x2 = bad = None
        n = self.n
        if int(terms) >= ROUNDOFF_TERMS:   # the order of the sum from theta in the algebra's own basis
            F = affine_adnorm_form(self.st.C) / (2.0 * np.pi) ** 2
            gx = self.quadratic(list(theta[:n]), F[:n, :n], "gx")
            hu = self.quadratic(list(theta[n:]), F[n:, n:], "hu")
            # ||ad||_F^2 / (2 pi)^2 at S^-1 theta, S(x, u) = (x, lam u), lam^2 = l2 (docstring)
            l2 = self.assign("l2", [f"mx(1.0, {hu}/mx({gx}, {AFFINE_SCALE_FLOOR!r}*{hu} + 1e-300))"])[0]
            q = f"({gx} + {hu}/{l2})"
            x2 = self.assign("x2", [q if self.floats else f"bmax({q})"])[0]
            bad = self._dexpinv_bad(x2)
        form = self._sum_basis()
        C = None
        if form is not None:
            theta = self.adapted("Tinv", theta[:n], "xa") + self.adapted("TT", theta[n:], "ma")
            v = self.adapted("Tinv", v[:n], "xa") + self.adapted("TT", v[n:], "ma")
            C = form.constants()
        if x2 is not None:
            out = self._dexpinv_bracket_loop(theta, v, x2, app=lambda u: self.bracket(theta, u, C))
            out = self.assign("k", [f"{out[i]} + {bad}" for i in range(len(out))])
        else:
            coeffs = bernoulli_coefficients(int(terms))
            out, term = list(v), list(v)
            for c in coeffs[1:]:
                term = self.bracket(theta, term, C)
                if c != 0.0:
                    out = self.assign("dv", [f"{out[i]} + {float(c)!r}*{term[i]}" for i in range(len(out))])
        if form is None:
            return out
        return self.adapted("T", out[:n], "k") + self.adapted("TinvT", out[n:], "k")


def writer_for(st, lie):
    """The code writer of a step on structure ``st``: :class:`AffineSource` for the Lie-group steps (``lie``) of a
    forced problem (st.P: generators (w, f) in g x g*), :class:`integrators.codegen.orbit_source.OrbitSource` for
    those of an unforced problem on an almost abelian algebra (generators in R^2 acting on the orbits), else
    :class:`integrators.codegen.writer.Source`."""
    if orbit_source.applies(st, lie):
        return orbit_source.OrbitSource(st)
    return AffineSource(st) if lie and st.P is not None else Source(st)
