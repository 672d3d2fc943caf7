"""Realizability as an exact rational where the data are rational, and the right name for k > 1 constraints.

Expected values: det(A I^-1 B^T) computed here in exact arithmetic (fractions.Fraction, Gauss-Jordan
written below) from the entry's documented parameters as written (0.2 -> 1/5), independently of sympy
and of servo; the label follows Kozlov's realizability matrix R_ij = (I^-1 a_i, b_j), R = A I^-1 B^T.
"""

from fractions import Fraction

import pytest

import catalog
from catalog.cli.show import show_data
from catalog.output import describe
from catalog.output.report import _realizability_html


def _F(x):
    return Fraction(str(x))


def _inverse(M):
    """Gauss-Jordan inverse of a square matrix of Fractions."""
    n = len(M)
    A = [list(row) + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(M)]
    for c in range(n):
        p = next(r for r in range(c, n) if A[r][c] != 0)
        A[c], A[p] = A[p], A[c]
        piv = A[c][c]
        A[c] = [x / piv for x in A[c]]
        for r in range(n):
            if r != c and A[r][c] != 0:
                f = A[r][c]
                A[r] = [x - f * y for x, y in zip(A[r], A[c])]
    return [row[n:] for row in A]


def _det(M):
    if len(M) == 1:
        return M[0][0]
    return M[0][0] * M[1][1] - M[0][1] * M[1][0]  # k <= 2 here


def _realizability(p, A, B):
    I = [[p["I11"], p["I12"], p["I13"]], [p["I12"], p["I22"], p["I23"]], [p["I13"], p["I23"], p["I33"]]]
    Ii = _inverse([[_F(x) for x in row] for row in I])
    A = [[_F(x) for x in a] for a in A]
    B = [[_F(x) for x in b] for b in B]
    R = [[sum(a[i] * Ii[i][j] * b[j] for i in range(3) for j in range(3)) for b in B] for a in A]
    return _det(R)


CASES = {
    "beghin_body": lambda p: ([p["l"]], [p["n"]]),
    "suslov": lambda p: ([p["l"]], [p["l"]]),
    "two_axis_beghin_body": lambda p: ([p["l1"], p["l2"]], [p["n1"], p["n2"]]),
    "two_axis_vakonomic_body": lambda p: ([p["l1"], p["l2"]], [p["l1"], p["l2"]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_exact_rational_matches_fractions(name):
    p = catalog.defaults(name)
    A, B = CASES[name](p)
    expected = _realizability(p, A, B)
    assert expected.denominator > 1  # a genuine fraction, so a float print could not pass
    entry = catalog.get(name)
    q = describe.realizability_exact(entry)
    assert (q.p, q.q) == (expected.numerator, expected.denominator)
    v = describe.realizability_verdict(entry)
    assert v["exact"] == f"{expected.numerator}/{expected.denominator}"
    assert v["formula"].startswith(f"{expected} \u2248 ")
    assert abs(v["value"] - float(expected)) <= 1e-14 * abs(float(expected))
    label = "(I^-1 a, b)" if len(A) == 1 else "det(A I^-1 B^T)"
    assert v["expr"] == label
    line = describe.realizability_line(entry)
    assert line.startswith(f"realizability {label} = {expected} \u2248 ")
    d = show_data(entry)
    assert d["realizability_exact"] == str(expected) and d["realizability_line"] == line
    html, _ = _realizability_html(entry)
    assert str(expected) in html
    md = entry.system._repr_markdown_()
    tex_label = r"(I^{-1} a, b)" if len(A) == 1 else r"\det(A I^{-1} B^{T})"
    assert f"${tex_label} = \\frac{{{expected.numerator}}}{{{expected.denominator}}} \\approx" in md


def test_several_constraints_are_not_labelled_as_one():
    for name in ("two_axis_beghin_body", "two_axis_vakonomic_body"):
        entry = catalog.get(name)
        assert "(I^-1 a, b)" not in describe.realizability_line(entry)
        assert r"(I^{-1} a, b)" not in entry.system._repr_markdown_()


def test_irrational_data_fall_back_to_the_float():
    """0.1234567891234 is no short rational: no exact value, the decimal number is printed."""
    entry = catalog.get("beghin_body", I12=0.1234567891234)
    assert describe.realizability_exact(entry) is None
    v = describe.realizability_verdict(entry)
    assert v["exact"] is None and "/" not in v["formula"]
    assert float(v["formula"]) == pytest.approx(v["value"], rel=1e-11)


def test_show_cli_prints_the_rational(capsys):
    from catalog.cli.main import main

    p = catalog.defaults("beghin_body")
    expected = _realizability(p, [p["l"]], [p["n"]])
    main(["show", "beghin_body"])
    out = capsys.readouterr().out
    assert f"realizability (I^-1 a, b) = {expected} \u2248 {float(expected):.12g}  (realizable)" in out
