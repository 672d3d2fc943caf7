"""Integer Kovalevskaya exponents decided exactly at Darboux points with irrational (algebraic) coordinates.

For rational Q the Darboux points are the non-zero solutions of v(eta) = -eta, the points of the
zero-dimensional ideal I = < v_i(eta) + eta_i > of Q[eta] (eta = 0 is one more point). At a point d,
K(d) = Id + 2 A(d), A(d)_ij = sum_k Q[i,j,k] d_k (servo.quadratic.kovalevskaya), so an integer n is an exponent
at d iff P_n(d) = det(K(d) - n Id) = 0, a polynomial with rational coefficients in d. The decision, exact:

* u = r . eta (small integers r) with characteristic polynomial g_I of multiplication by u on Q[eta] / I
  (Stickelberger: its roots are the u(P), P in V(I)); u separates V(I) when the number of distinct roots of g_I
  equals the rank of the Hermite form of I (polynomials.hermite_counts).
* the irreducible factor phi of g_I (over QQ) with phi(u(d)) = 0 is the only one whose value on the proved
  ball of u(d) contains 0 (all others are proved non-zero there).
* J = I + < P_n >, g_J the characteristic polynomial of u on Q[eta] / J (J = <1>: n is an exponent nowhere).
  phi divides g_J: u(d) is a root of g_J, so some point of V(J), a Darboux point with exponent n, has the value
  u(d), and by the separation that point is d: n is an exponent at d. phi does not divide g_J: phi is
  irreducible, so phi and g_J have no common root and u(d) is not a root of g_J: d is not in V(J), n is not an
  exponent at d (this direction needs no separation).

(Cox, Little and O'Shea, "Using Algebraic Geometry", ch. 2, sections 4-5.) Groebner bases over QQ: p <= 3 in
practice (p = 4 takes about a minute).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from ..krawczyk import require_flint
from ..polynomials import RationalTensor, hermite_counts, multiplication_matrix, quadratic_fields, standard_monomials

__all__ = ["DarbouxIdeal"]


class DarbouxIdeal:
    """The ideal I = < v(eta) + eta > of a rational system, for exact questions at its points.

    ``has_integer_exponent(d, n)``: True / False (proved) or None (not decided: I not zero-dimensional, no
    separating form found, or the ball of d too wide to single out its factor)."""

    def __init__(self, R: RationalTensor, seed: int = 0) -> None:
        self.p = p = len(R)
        self.eta = sp.symbols(f"eta1:{p + 1}")
        self.R = R
        v = quadratic_fields(R, self.eta)
        self.eqs = [sp.expand(v[i] + self.eta[i]) for i in range(p)]
        self.G = sp.groebner(self.eqs, *self.eta, order="grevlex")
        self.ok = bool(self.G.is_zero_dimensional)
        self.lam = sp.Symbol("lam")
        self.sep: list[int] | None = None
        self.factors: list[sp.Poly] = []
        self._cache: dict[int, sp.Poly | None] = {}
        if not self.ok:
            return
        std = standard_monomials(self.G, self.eta)
        Mgens = [multiplication_matrix(self.G, self.eta, std, g) for g in self.eta]
        rank, _ = hermite_counts(Mgens, std)
        rng = np.random.default_rng([seed, 7])
        for _ in range(4):
            sep = [int(a) for a in rng.integers(-9, 10, size=p)]
            if not any(sep):
                continue
            u = sum(r * g for r, g in zip(sep, self.eta))
            gI = sp.Poly(multiplication_matrix(self.G, self.eta, std, u).charpoly(self.lam).as_expr(), self.lam)
            if sp.Poly(sp.quo(gI, sp.gcd(gI, gI.diff(self.lam))), self.lam).degree() == rank:
                self.sep = sep
                self.factors = [sp.Poly(f, self.lam) for f, _ in sp.factor_list(gI.as_expr())[1]]
                break

    def _gJ(self, n: int) -> sp.Poly | None:
        """Characteristic polynomial of u on Q[eta] / (I + < det(K - n Id) >), None if that ideal is <1>."""
        if n not in self._cache:
            p = self.p
            K = sp.eye(p) + sp.Matrix(p, p, lambda i, j: 2 * sum(self.R[i][j][k] * self.eta[k] for k in range(p)))
            Pn = sp.expand((K - n * sp.eye(p)).det())
            GJ = sp.groebner(self.eqs + [Pn], *self.eta, order="grevlex")
            if GJ.exprs == [1]:
                self._cache[n] = None
            else:
                std = standard_monomials(GJ, self.eta)
                u = sum(r * g for r, g in zip(self.sep, self.eta))
                self._cache[n] = sp.Poly(multiplication_matrix(GJ, self.eta, std, u).charpoly(self.lam).as_expr(),
                                         self.lam)
        return self._cache[n]

    def has_integer_exponent(self, d: list[Any], n: int) -> bool | None:
        """Is the integer n a Kovalevskaya exponent at the Darboux point d (a list of flint acb balls proved to hold
        it, at the current flint precision)? True / False proved, None undecided."""
        fl = require_flint("exact exponents at algebraic Darboux points")
        if not self.ok or self.sep is None:
            return None
        ud = sum((int(r) * x for r, x in zip(self.sep, d)), fl.acb(0))
        hits = []
        for f in self.factors:
            val = fl.acb(0)
            for a in f.all_coeffs():                      # Horner in ball arithmetic, exact rational coefficients
                a = sp.Rational(a)
                val = val * ud + fl.acb(fl.arb(fl.fmpq(int(a.p), int(a.q))))
            if val.real.contains(0) and val.imag.contains(0):
                hits.append(f)
        if len(hits) != 1:
            return None
        gJ = self._gJ(int(n))
        if gJ is None:
            return False
        return bool(sp.rem(gJ, hits[0]).is_zero)
