"""The basis of the Levi decomposition (integrators.geometry.levi_basis) of an algebra with an abelian radical given
in a dense basis: se(3) and the affine algebra sl(2) + R^2 in random bases. Expected values come from the
construction of the algebras here: the radical is the span of the translations, mapped by the change of basis,
and the standard bases' constant counts."""

import numpy as np
import pytest

from integrators import integrate
from integrators.geometry.levi_basis import levi_basis
from integrators.geometry.root_basis import COND_MAX, root_basis
from integrators.geometry.sparse_basis import sparse_basis
from liegroups import LieAlgebra, named
from servo import EulerPoincare


def _affine_sl2():
    """sl(2) + R^2: e0 = h, e1 = e, e2 = f ([h, e] = 2e, [h, f] = -2f, [e, f] = h) acting on R^2 = span(e3, e4)
    by the matrices h = diag(1, -1), e = E12, f = E21."""
    C = np.zeros((5, 5, 5))

    def put(i, j, k, c):
        C[i, j, k] += c
        C[j, i, k] -= c
    put(0, 1, 1, 2.0)
    put(0, 2, 2, -2.0)
    put(1, 2, 0, 1.0)
    mats = {0: np.diag([1.0, -1.0]), 1: np.array([[0.0, 1.0], [0.0, 0.0]]), 2: np.array([[0.0, 0.0], [1.0, 0.0]])}
    for i, M in mats.items():
        for a in range(2):
            for b in range(2):
                if M[b, a]:
                    put(i, 3 + a, 3 + b, M[b, a])
    return LieAlgebra(C, name="sl(2) + R^2")


def _in_random_basis(alg, seed):
    rng = np.random.default_rng(seed)
    P = np.linalg.qr(rng.standard_normal((alg.dim, alg.dim)))[0] * rng.uniform(0.5, 2.0, alg.dim)[None, :]
    return alg.change_basis(P), P


CASES = [(named.se3, 3, 18)] + [(_affine_sl2, 2, None)]


@pytest.mark.parametrize("make, nr, count", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_basis_is_the_levi_decomposition_and_sparse(make, nr, count, seed):
    base = make()
    alg, P = _in_random_basis(base, seed)
    C = alg.structure_constants
    form = levi_basis(C)
    assert form is not None
    # se(3) has no root basis (Jordan blocks): the Levi basis is the sparse one; sl(2) + R^2 has one (its weights
    # are real), taken first
    assert (root_basis(C) is None and sparse_basis(C) is form) if make is named.se3 else sparse_basis(C) is not None
    n = alg.dim
    m = n - nr
    Ch = form.constants()
    # se(3): as sparse as its own basis (18 entries), against ~200 in the random one
    if count is not None:
        assert np.count_nonzero(Ch) <= count
    assert np.count_nonzero(C) > 3 * np.count_nonzero(Ch)
    assert np.linalg.cond(form.T) <= COND_MAX
    # the constants are those of the basis T: [T_a, T_b] = sum_c Ch[a, b, c] T_c, from C
    lhs = np.einsum("ia,jb,ijk->abk", form.T, form.T, C)
    assert np.max(np.abs(lhs - np.einsum("abc,kc->abk", Ch, form.T))) <= 1e-12 * np.max(np.abs(C))
    # the last nr columns span the radical: the translations e_m.., whose coordinates in the new basis are
    # x' = P^-T x (change_basis: x = P^T x')
    rad = np.linalg.solve(P.T, np.eye(n)[:, m:])
    both = np.hstack([rad, form.T[:, m:]])
    assert np.linalg.matrix_rank(both, tol=1e-9) == nr
    # an abelian ideal, and the first m columns a subalgebra (a Levi factor)
    assert np.all(Ch[m:, m:] == 0.0)
    assert np.all(Ch[:m, m:, :m] == 0.0)
    assert np.all(Ch[:m, :m, m:] == 0.0)


def test_refused_without_an_abelian_radical():
    # semisimple (so(5): the root basis's case), solvable (the Heisenberg algebra: its radical is g)
    heis = np.zeros((3, 3, 3))
    heis[0, 1, 2], heis[1, 0, 2] = 1.0, -1.0
    for C in (named.so(5).structure_constants, _in_random_basis(LieAlgebra(heis), 3)[0].structure_constants):
        assert levi_basis(C) is None
    # the standard basis of se(3) is already as sparse: nothing is gained there
    assert levi_basis(named.se3().structure_constants) is None


def test_the_rigid_body_in_se3_random_basis_on_the_generated_path_is_the_reference():
    """The heavy-top-like free system on se(3) in a random basis (the generated texts now take their coadjoint
    products and Casimirs through the Levi basis): rk853_projected with numpy against the reference loop, and
    its two Casimirs kept to round-off."""
    alg, _ = _in_random_basis(named.se3(), 4)
    rng = np.random.default_rng(8)
    B = rng.standard_normal((6, 6))
    s = EulerPoincare(alg, B @ B.T / 6 + np.eye(6))
    z0 = rng.standard_normal(6)
    P = s.problem()
    gen = integrate(P, z0, (0.0, 5.0), method="rk853_projected", rtol=1e-10, atol=1e-12, backend="numpy")
    ref = integrate(P, z0, (0.0, 5.0), method="rk853_projected", rtol=1e-10, atol=1e-12, fast=False)
    scale = np.max(np.abs(ref.y))
    assert np.max(np.abs(gen.y[-1] - ref.y[-1])) <= 1e-9 * scale
    for name, vals in gen.invariants.items():
        if name.startswith("casimir"):
            v = np.asarray(vals)
            assert np.max(np.abs(v - v[0])) <= 1e-13 * max(1.0, np.max(np.abs(v)))
