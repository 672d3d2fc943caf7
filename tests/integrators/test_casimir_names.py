"""The Casimir invariants of a CoadjointProblem are named "casimir:<expr>" (sympy's printing of the
Casimir), printed once per Casimir and not at every problem built on the algebra.

Expected values: sympy's own str() of each Casimir expression, taken before the printer is disabled.
"""

import numpy as np
import pytest
import sympy

from integrators import CoadjointProblem
from liegroups import named


@pytest.mark.parametrize("alg", [named.so3(), named.so4(), named.se3()], ids=["so3", "so4", "se3"])
def test_names_are_sympys_and_printed_once(alg, monkeypatch):
    expected = {f"casimir:{sympy.sstr(c.expr, order=None)}" for c in alg.casimirs()}
    assert len(expected) == len(alg.casimirs()) >= 1
    first = CoadjointProblem(alg, lambda z: z)
    assert {k for k in first.invariants if k.startswith("casimir:")} == expected

    def refuse(*args, **kwargs):
        raise AssertionError("the Casimir names were printed again")

    monkeypatch.setattr(sympy.Basic, "__str__", refuse)
    monkeypatch.setattr(sympy.Expr, "__format__", refuse)
    second = CoadjointProblem(alg, lambda z: 2.0 * z)
    assert {k for k in second.invariants if k.startswith("casimir:")} == expected
    z = np.linspace(0.3, 1.1, alg.dim)
    for k in expected:   # the same callables: F(z) of the algebra's Casimirs
        assert second.invariants[k](z) == first.invariants[k](z)


def test_forced_or_unrecorded_problems_have_no_casimir_names():
    alg = named.so3()
    assert not [k for k in CoadjointProblem(alg, lambda z: z, forcing=lambda z: 0 * z).invariants
                if k.startswith("casimir:")]
    assert not [k for k in CoadjointProblem(alg, lambda z: z, record_casimirs=False).invariants
                if k.startswith("casimir:")]


def test_problem_copies_its_matrices():
    W = np.diag([1.0, 2.0, 3.0])
    L = np.array([[0.0, 0.0, 1.0]])
    P = CoadjointProblem(named.so3(), lambda z: z @ W.T, velocity_matrix=W, linear_invariants=L,
                         forcing=lambda z: 0.0 * z)
    P.velocity_matrix[0, 0] = 7.0
    P.linear_invariants[0, 0] = 5.0
    assert W[0, 0] == 1.0 and L[0, 0] == 0.0
