"""servo.quadratic.kovalevskaya: Kovalevskaya exponents at the Darboux points of x' = v(x), and the obstructions
to polynomial first integrals.

Darboux points. Every invariant line x = s xi, v(xi) = c xi with c != 0, carries one Darboux point
d = -xi / c: v(d) = v(xi) / c^2 = xi / c = -d, so x(t) = d / t is a solution. The Kovalevskaya matrix is
K = Dv(d) + Id. Euler's identity Dv(x) x = 2 v(x) gives K d = -d; the other p - 1 eigenvalues of K
(those of the map K induces on C^p / C d, with algebraic multiplicity) are the Kovalevskaya exponents
rho_1..rho_{p-1}. Since Dv is linear, Dv(d) = -J / c with J = Dv(xi), so K = Id - J / c and
rho_k = 1 - lambda_k / c, lambda_k the eigenvalues of J other than 2 c; for a real line this is
rho_k = -s_k / c with s_k = lambda_k - c the eigenvalues of the flow on the sphere of directions
(``InvariantLine.sphere_eigenvalues``). The line has multiplicity > 1 exactly when K is singular
(D(v - Id)(-d) = -K), i.e. when 0 is an exponent.

Theorem (the gradient case is Yoshida's (1983) condition, the resonance form Furta's (1996), cf. Goriely
(2001), here for weight 1; proved below in exactly the form implemented). Let d be a Darboux point at
which -1 is a SIMPLE eigenvalue of K (no exponent equals -1), with exponents rho_1..rho_{p-1}. If x' = v(x) has a non-zero homogeneous polynomial first
integral F of degree m >= 1 (complex coefficients allowed, products of integrals included), then

    m = k_1 rho_1 + ... + k_{p-1} rho_{p-1}   for some integers k_i >= 0 with 1 <= k_1 + ... + k_{p-1} <= m.

If moreover grad F(d) != 0, then K^T grad F(d) = m grad F(d): m itself is an exponent (|k| = 1).

Proof. (i) Gradient case: differentiate grad F(x) . v(x) = 0: Hess F(x) v(x) + Dv(x)^T grad F(x) = 0.
At d, v(d) = -d and Euler's identity for the degree m - 1 field grad F give Hess F(d) d = (m - 1) grad F(d),
so Dv(d)^T grad F(d) = (m - 1) grad F(d), i.e. K^T grad F(d) = m grad F(d).
(ii) General case: put x = y / t, tau = ln t. Then x' = v(x) becomes dy/dtau = W(y) = v(y) + y with
W(d) = 0, DW(d) = K, and F(x) = t^-m F(y) constant gives W . grad F = m F (also directly: grad F . v = 0
and grad F . y = m F). At y = d this reads 0 = m F(d), so F(d) = 0. Let V be the sum of the generalised
eigenspaces of K for the eigenvalues != -1 (K-invariant, C^p = C d + V because -1 is simple) and write
y = (1 + a) d + w, w in V. Homogeneity gives F((1 + a) d + w) = sum_j (1 + a)^(m - j) f_j(w), where
f(w) = F(d + w) = f_j0(w) + ... + f_m(w) (f_j homogeneous of degree j, f_j0 != 0, 1 <= j0 <= m since
f(0) = F(d) = 0). So the lowest-order part of F at d is f_j0(w), which does not depend on a, and the
lowest-order part of W . grad F = m F reads grad f_j0(w) . K_V w = m f_j0(w), K_V = K restricted to V.
The derivation P -> grad P . K_V w on homogeneous polynomials of degree j0 on V has the eigenvalues
sum k_i rho_i with |k| = j0 (triangularise K_V and order the monomials), and f_j0 is an eigenvector
for m. QED.

So a Darboux point with -1 simple and NO such resonance for m proves that no homogeneous polynomial
first integral of degree m exists; one Darboux point suffices (the set of lines need not be complete).
Nothing is claimed at Darboux points where an exponent equals -1, nor for non-polynomial integrals.

The numeric test (``integrability_obstructions``) declares "no resonance" for m only when
min over 1 <= |k| <= m of |sum k_i rho_i - m| exceeds rtol (1 + m)(1 + max |rho|) (exponents from the
homotopy are accurate to ~1e-13 relative), and it uses only lines of multiplicity 1 (a multiple root
gives exponents accurate to ~sqrt(eps) only). The exact path (``exact_kovalevskaya_exponents``, rational
Q) gives the exponents as sympy algebraic numbers and decides the resonances exactly
(``sympy.minimal_polynomial`` of sum k_i rho_i - m).

``polynomial_first_integrals`` is the exact search the test is checked against: the coefficients of a
homogeneous F of degree m with grad F . v = 0 form the null space of a rational matrix (DomainMatrix over QQ).

One job per file:

* ``exponents``: the numeric exponents at the Darboux points (batched) and the Darboux point of a line;
* ``resonances``: the resonance margins min |sum k_i rho_i - m| (numeric) and the exact resonance decision;
* ``obstructions``: the theorem applied: ``integrability_obstructions`` and its certificates;
* ``exact_exponents``: the exponents as exact algebraic numbers (rational Q, p <= 4);
* ``first_integrals``: the exact search for homogeneous polynomial first integrals;
* ``enclosures``: the exponents as proved discs (ball arithmetic, python-flint) and the obstructions proved
  with them (a degree ruled out only when every resonance is excluded by the discs).

References (full entries in ``catalog.bibliography``): Yoshida (1983), Furta (1996), Goriely (2001),
Kovacs, Silver and Williams (1999).
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from .exponents import attach_exponents, darboux_point, kovalevskaya_exponents
    from .resonances import resonances
    from .obstructions import IntegrabilityObstructions, ObstructionCertificate, integrability_obstructions
    from .first_integrals import polynomial_first_integrals
    from .exact_exponents import AlgebraicExponent, ExactDarbouxPoint, exact_kovalevskaya_exponents
    from .enclosures import ExponentEnclosure, certified_exponents, proved_obstructions

exports(__name__, __file__)

__all__ = ["kovalevskaya_exponents", "attach_exponents", "darboux_point", "resonances",
           "ObstructionCertificate", "IntegrabilityObstructions", "integrability_obstructions",
           "polynomial_first_integrals", "ExactDarbouxPoint", "AlgebraicExponent", "exact_kovalevskaya_exponents",
           "ExponentEnclosure", "certified_exponents", "proved_obstructions"]
