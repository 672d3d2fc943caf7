"""servo.quadratic: homogeneous quadratic systems x' = v(x) and their invariant lines.

These are the reduced systems of the Lie-group systems (Kozlov's lectures on servo-constraints), but
nothing here depends on where a system came from:

* ``system``: :class:`QuadraticSystem` (Q, v, the Jacobian, sympy export);
* ``protocol``: :class:`QuadraticField`, what the solvers below read from a system;
* ``homotopy``: batched homotopy continuation for v(xi) = c xi;
* ``invariant_lines``: the solver of all invariant lines x = s xi, v(xi) = c xi; ``line_types``: its
  results (multiplicity, reality, stability; a Markdown table); ``families``: the local dimension test
  for positive-dimensional solution sets and the exact proofs of a family or of isolation at a witness;
  ``dimension``: the exact dimension of the solution set; ``line_fallbacks``: what is tried when double
  precision does not decide (exact path, exact dimension, tracking in higher precision); ``completeness``:
  the verdict of what was proved;
* ``certify``: equilibration and the a posteriori certificates (Smale's alpha test, exact singular roots);
* ``krawczyk``: the Krawczyk test in ball arithmetic (python-flint, the ``certify`` extra) and the grouping of
  proved roots; ``certify_roots``: its front end for any square polynomial system (sympy) and given points;
  ``certify_lines``: the invariant lines proved in higher precision where double precision does not decide;
* ``exact``: the exact (sympy) cross-check for rational Q; ``polynomials``: the exact polynomial algebra
  over Q it shares with ``kovalevskaya`` (rational Q, standard monomials, multiplication matrices);
* ``kovalevskaya``: Kovalevskaya exponents at the Darboux points and the obstructions to polynomial
  first integrals (a subpackage, one file per job);
* ``display``: numbers and vectors as text;
* ``integrals``: linear and quadratic first integrals, time change to a linear system;
* ``claims``: the six general properties of reduced systems as checks;
* ``plot``: phase portraits (matplotlib, imported on use).
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from .system import QuadraticSystem
    from .invariant_lines import FamilyWitness, InvariantLine, InvariantLines, invariant_lines
    from .certify_roots import CertifiedRoots, RootCertificate, certify_roots

exports(__name__, __file__)

__all__ = ["QuadraticSystem", "FamilyWitness", "InvariantLine", "InvariantLines", "invariant_lines",
           "certify_roots", "CertifiedRoots", "RootCertificate"]
