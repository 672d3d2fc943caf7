"""The notebook summary of a Lie algebra: its type, read off the structure constants, against the
textbook classification (so(3), so(2,1), sl(2) simple; e(2) solvable, not nilpotent; the Heisenberg
algebra nilpotent; Bianchi I abelian; e(3) = so(3) semidirect R^3 neither solvable nor semisimple)."""

import pytest

from liegroups import named
from liegroups.display import algebra_markdown, algebra_type


@pytest.mark.parametrize("g, kind", [
    (named.so3(), "semisimple"), (named.so21(), "semisimple"), (named.sl2(), "semisimple"),
    (named.so4(), "semisimple"), (named.se2(), "solvable"), (named.heisenberg(), "nilpotent"),
    (named.bianchi("I"), "abelian"), (named.bianchi("VI", a=2.0), "solvable"),
    (named.se3(), "neither solvable nor semisimple"),
])
def test_algebra_type(g, kind):
    assert algebra_type(g) == kind


def test_markdown_lists_dimension_basis_and_casimirs():
    md = named.sl2()._repr_markdown_()
    assert md == algebra_markdown(named.sl2())
    # sl(2) in the basis (h, e, f), [h, e] = 2e, [h, f] = -2f, [e, f] = h: Casimir h^2 + 4 e f (m = (m_h, m_e, m_f))
    assert "| dimension | 3 |" in md and "`h`, `e`, `f`" in md
    assert "$C_{1} = m_{1}^{2} + 4 m_{2} m_{3}$" in md
    assert "| Casimirs (degree ≤ 4) | none |" in named.bianchi("VI", a=2.0)._repr_markdown_()
