"""Lie algebras of bivectors of a (possibly degenerate) geometric algebra Cl(p, q, r), via galgebra.

The bivectors of Cl(p, q) are closed under the commutator product A x B = (AB - BA)/2 and form
so(p, q); with one null generator (r = 1, the projective/plane-based algebras Cl(2,0,1), Cl(3,0,1)) they
form the Euclidean algebras se(2), se(3) (Hestenes and Sobczyk (1984),
*Clifford Algebra to Geometric Calculus*, ch. 8; Doran and Lasenby (2003), *Geometric Algebra for
Physicists*, sections 11.1-11.4; Gunn (2017), "Geometric algebras for Euclidean geometry", for
Cl(3,0,1)).
With the half commutator the map B -> (v -> B x v) on vectors is a Lie-algebra homomorphism, and the
bivector e_a e_b acts by e_b -> g_b e_a, e_a -> -g_a e_b (g the metric), i.e. as g_b E_ab - g_a E_ba; for
a Euclidean metric that is the generator L_ab = E_ab - E_ba of :func:`liegroups.named.so4`.

Generators and explicit basis (independent of galgebra's internal blade order):

* the generators are ``e0`` (null, when r = 1), then ``e1 .. ep`` (square +1), then ``e{p+1} .. e{p+q}``
  (square -1); a metric with r null vectors lists them first as ``e0``, ``e0b``, ... (r <= 2);
* the basis of the Lie algebra is the bivectors e_a e_b for a < b in that generator order, named
  ``"e01"``, ``"e12"``, ...; each coefficient is read with ``Mv.blade_coefs`` against the blade built from
  the same two generator symbols, so galgebra's lexicographic ordering never leaks into the result.

Structure constants: [B_i, B_j] = (B_i B_j - B_j B_i)/2 = sum_k C[i,j,k] B_k. Results are cached per
signature; galgebra is imported on the first call only (never on ``import liegroups``), and its printed
warning on degenerate metrics ("If I**2 = 0, I cannot be normalized") is captured and dropped.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from .algebra import LieAlgebra
from .errors import LieAlgebraError

#: largest number of generators accepted (Cl with 6 generators has 64 blades; beyond, galgebra is slow)
MAX_GENERATORS = 6


def _normalise(signature):
    try:
        sig = tuple(int(s) for s in signature)
        ok = all(int(s) == s for s in signature)
    except (TypeError, ValueError):
        raise LieAlgebraError(f"signature must be a tuple (p, q) or (p, q, r) of integers, got {signature!r}") from None
    if not ok or len(sig) not in (2, 3) or min(sig) < 0:
        raise LieAlgebraError(f"signature must be (p, q) or (p, q, r) with non-negative integers, got {signature!r}")
    p, q, r = sig + (0,) * (3 - len(sig))
    n = p + q + r
    if r > 2:
        raise LieAlgebraError(f"at most 2 null generators are supported (r = {r})")
    if n < 2 or n > MAX_GENERATORS:
        raise LieAlgebraError(
            f"Cl{(p, q, r)} has {n} generators; bivectors need 2 <= p + q + r <= {MAX_GENERATORS}"
        )
    return p, q, r


def _generator_names(p, q, r):
    null = ["e0", "e0b"][:r]
    return null + [f"e{i}" for i in range(1, p + q + 1)]


def _name(p, q, r):
    if r == 0:
        return f"so({p},{q}) from bivectors of Cl({p},{q})"
    if (p, q, r) in ((2, 0, 1), (3, 0, 1)):
        return f"se({p}) from bivectors of Cl({p},0,1)"
    return f"bivectors of Cl({p},{q},{r})"


@lru_cache(maxsize=None)
def _bivector_structure(p, q, r):
    """Structure constants (nested tuples) and basis names of the bivector algebra of Cl(p, q, r)."""
    names = _generator_names(p, q, r)
    metric = [0] * r + [1] * p + [-1] * q
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from galgebra.ga import Ga

        ga, *gens = Ga.build(" ".join(names), g=metric)
        pairs = [(a, b) for a in range(len(names)) for b in range(a + 1, len(names))]
        biv = [gens[a] * gens[b] for a, b in pairs]        # e_a e_b = e_a ^ e_b (orthogonal metric)
        blades = [gens[a] ^ gens[b] for a, b in pairs]
        N = len(pairs)
        C = np.zeros((N, N, N))
        for i in range(N):
            for j in range(i + 1, N):
                comm = (biv[i] * biv[j] - biv[j] * biv[i]) / 2
                rest = comm - comm.get_grade(2)
                if not rest.is_zero():
                    raise LieAlgebraError(f"commutator of bivectors {i}, {j} has non-bivector part {rest}")
                coefs = comm.blade_coefs(blades)
                C[i, j] = [float(c) for c in coefs]
                C[j, i] = -C[i, j]
        # check the read-back: sum_k C[i,j,k] B_k must reproduce every commutator
        for i in range(N):
            for j in range(i + 1, N):
                back = sum((C[i, j, k] * blades[k] for k in range(N) if C[i, j, k]), 0 * blades[0])
                diff = (biv[i] * biv[j] - biv[j] * biv[i]) / 2 - back
                if not diff.is_zero():
                    raise LieAlgebraError(f"bivector basis read-back failed for pair ({i}, {j}): {diff}")
    basis = tuple("e" + names[a][1:] + names[b][1:] for a, b in pairs)
    return tuple(map(tuple, C.reshape(N, -1))), basis


@lru_cache(maxsize=None)
def _cached(p, q, r):
    rows, basis = _bivector_structure(p, q, r)
    N = len(basis)
    C = np.array(rows, dtype=float).reshape(N, N, N)
    return LieAlgebra(C, basis=basis, name=_name(p, q, r))


def from_bivectors(signature: Sequence[int]) -> LieAlgebra:
    """The Lie algebra of bivectors of Cl(p, q) or Cl(p, q, r) under [A, B] = (AB - BA)/2.

    ``signature`` is (p, q) or (p, q, r): (3, 0) -> so(3), (2, 1) -> so(2,1), (4, 0) -> so(4),
    (2, 0, 1) -> se(2), (3, 0, 1) -> se(3). The basis is the bivectors e_a e_b (a < b) in the generator
    order e0 (null), e1..ep (+1), e{p+1}..e{p+q} (-1), named e.g. ``("e01", "e02", "e12")``. The result is
    cached (the same object is returned for the same signature). Raises LieAlgebraError on a bad signature.

    Explicit isomorphisms with the named algebras (checked in the tests): so(3) basis e1, e2, e3 =
    -e23, e13, -e12; so(4) L_ab = e_ab; se(2) (u, v, w) = (-e01, -e02, -e12); se(3) (R1, R2, R3, T1, T2,
    T3) = (-e23, e13, -e12, -e01, -e02, -e03).
    """
    return _cached(*_normalise(signature))
