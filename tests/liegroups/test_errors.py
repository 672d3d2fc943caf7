"""Error paths of liegroups: every bad input raises a ValueError subclass that names the identity or
condition, where it fails and by how much (expected residuals computed by hand below)."""

import numpy as np
import pytest

from liegroups import SE3, SO3, LieAlgebra, LieAlgebraError, StructureConstantsError, from_bivectors, named


def _eps():
    C = np.zeros((3, 3, 3))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        C[i, j, k], C[j, i, k] = 1.0, -1.0
    return C


@pytest.mark.parametrize("C", [np.zeros((2, 3, 3)), np.zeros((3, 3)), np.zeros((0, 0, 0)), [["a"]]])
def test_wrong_shape(C):
    with pytest.raises(StructureConstantsError, match="shape") as err:
        LieAlgebra(C)
    assert err.value.identity == "shape"
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite(bad):
    C = _eps()
    C[0, 1, 2] = bad
    with pytest.raises(StructureConstantsError, match=r"finite.*C\[0,1,2\]") as err:
        LieAlgebra(C)
    assert err.value.identity == "finite" and err.value.indices == (0, 1, 2)


def test_antisymmetry_failure_names_indices_and_residual():
    C = _eps()
    C[1, 0, 2] = -0.5  # C[0,1,2] + C[1,0,2] = 1 - 0.5 = 0.5
    with pytest.raises(StructureConstantsError, match="antisymmetry") as err:
        LieAlgebra(C)
    e = err.value
    assert e.identity == "antisymmetry"
    assert sorted(e.indices[:2]) == [0, 1] and e.indices[2] == 2
    assert e.residual == pytest.approx(0.5)
    assert "5.000e-01" in str(e)


def test_jacobi_failure_names_triple_component_and_residual():
    # [e1, e2] = e3, [e1, e3] = e1: by hand, [e1,[e2,e3]] + [e2,[e3,e1]] + [e3,[e1,e2]]
    # = 0 + [e2, -e1] + [e3, e3] = [e1, e2] = e3, so the residual is 1 in the e3 component (index 2).
    C = np.zeros((3, 3, 3))
    C[0, 1, 2], C[1, 0, 2] = 1.0, -1.0
    C[0, 2, 0], C[2, 0, 0] = 1.0, -1.0
    with pytest.raises(StructureConstantsError, match="Jacobi") as err:
        LieAlgebra(C)
    e = err.value
    assert e.identity == "jacobi"
    assert sorted(e.indices[:3]) == [0, 1, 2] and e.indices[3] == 2
    assert e.residual == pytest.approx(1.0)
    assert "1.000e+00" in str(e) and "e_2 component" in str(e)


def test_tiny_violations_within_tolerance_are_accepted_and_input_is_not_frozen():
    C = _eps()
    C[0, 1, 2] += 1e-13
    g = LieAlgebra(C)
    assert C.flags.writeable  # the caller's array is copied, not frozen
    assert not g.structure_constants.flags.writeable


def test_basis_length_mismatch():
    with pytest.raises(LieAlgebraError, match="basis has 2 names"):
        LieAlgebra(_eps(), basis=("a", "b"))


def test_from_matrices_dependent():
    X = np.array([[0.0, 1.0], [0.0, 0.0]])
    Y = np.array([[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(LieAlgebraError, match=r"linearly dependent \(rank 2"):
        LieAlgebra.from_matrices([X, 2 * X, Y])


def test_from_matrices_not_closed():
    # [E12, E21] = diag(1, -1), orthogonal to span{E12, E21}: the residual is 1 (max entry)
    X = np.array([[0.0, 1.0], [0.0, 0.0]])
    Y = np.array([[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(LieAlgebraError, match=r"not closed.*\[X_0, X_1\].*1\.000e\+00"):
        LieAlgebra.from_matrices([X, Y])


@pytest.mark.parametrize("mats", [np.zeros((2, 2, 3)), np.zeros((0, 2, 2)), np.full((1, 2, 2), np.nan)])
def test_from_matrices_bad_input(mats):
    with pytest.raises(LieAlgebraError):
        LieAlgebra.from_matrices(mats)


@pytest.mark.parametrize("args, match", [
    (("X",), "unknown Bianchi type"),
    (("VI",), "needs the parameter a"),
    (("VII",), "needs the parameter a"),
    (("II", 1.0), "takes no parameter"),
    (("VI", 1.0), "not in"),
    (("VI", 0), "not in"),
    (("VI", -1), "not in"),
    (("VII", 0.0), "a > 0"),
    (("VII", -2.0), "a > 0"),
    (("VI", float("nan")), "finite"),
    (("VII", "abc"), "real number"),
])
def test_bad_bianchi(args, match):
    with pytest.raises(LieAlgebraError, match=match):
        named.bianchi(*args)


def test_unknown_named_algebra():
    with pytest.raises(LieAlgebraError, match="unknown algebra"):
        named.get("so7")


def test_wrong_vector_shapes():
    g = named.so3()
    with pytest.raises(LieAlgebraError, match="last axis of length 3"):
        g.bracket(np.ones(4), np.ones(3))
    with pytest.raises(LieAlgebraError, match="m must have"):
        g.coad(np.ones(3), np.ones((5, 2)))
    with pytest.raises(LieAlgebraError):
        named.se3().coadjoint_exp(np.ones(3), np.ones(6))
    with pytest.raises(LieAlgebraError):
        SO3.exp(np.ones(4))
    with pytest.raises(LieAlgebraError, match=r"\(4, 4\) matrices"):
        SE3.log(np.eye(3))


@pytest.mark.parametrize("order", [0, -1, 1.5])
def test_bad_series_order(order):
    g = named.se2()
    with pytest.raises(LieAlgebraError, match="order"):
        g.dexp(np.ones(3), np.ones(3), order=order)
    with pytest.raises(LieAlgebraError, match="order"):
        g.dexpinv(np.ones(3), np.ones(3), order=order)


def test_change_basis_singular_or_wrong_shape():
    g = named.so3()
    with pytest.raises(LieAlgebraError, match="singular"):
        g.change_basis(np.array([[1.0, 0, 0], [2.0, 0, 0], [0, 0, 1.0]]))
    with pytest.raises(LieAlgebraError, match="matrix"):
        g.change_basis(np.eye(2))


@pytest.mark.parametrize("sig", [(3,), (-1, 2), (3, 0, 3), (5, 2), (1, 0), "ab", (2.5, 1)])
def test_bad_bivector_signature(sig):
    with pytest.raises(LieAlgebraError):
        from_bivectors(sig)


def test_small_jacobi_violation_is_caught_at_the_documented_tolerance():
    # [e1, e2] = e3 + d e1 in so(3): by hand the Jacobi sum for (e1, e2, e3) is [e3, d e1] = d e2
    for d, rejected in [(1e-6, True), (1e-9, True), (1e-11, False)]:  # tolerance 1e-10 * n * max|C|^2
        C = _eps()
        C[0, 1, 0], C[1, 0, 0] = d, -d
        if rejected:
            with pytest.raises(StructureConstantsError, match="Jacobi") as err:
                LieAlgebra(C)
            assert err.value.residual == pytest.approx(d) and err.value.indices[3] == 1
        else:
            LieAlgebra(C)
