"""The quadratic forms x^T F x of the code writer (integrators.codegen.source_text.quadratic_source and
ExponentialWriter.quadratic): the value against F evaluated by numpy, the LDL^T form where it is
shorter, and the reuse of a written form (or of its negation) only while the name is in scope.

Expected values: x @ F @ x by numpy; so(4)'s ideal forms are minus half the Killing form on each ideal,
-((x0 + x5)^2 + (x1 - x4)^2 + (x2 + x3)^2) on the first in the named basis (by hand from the ideal's
projection), so three squares of sums of two.
"""

import re

import numpy as np
import pytest

from integrators.codegen import writer as codegen
from integrators.codegen.source_text import Lines, quadratic_source, quadratic_terms
from integrators.geometry import recognition
from liegroups import named


def _value(F, x):
    src = Lines()
    names = [f"x{i}" for i in range(len(x))]
    lines, expr = quadratic_source(F, names, src.fresh)
    env = dict(zip(names, map(float, x)))
    for ln in lines:
        exec(ln, env)
    return eval(expr, env), lines, expr


@pytest.mark.parametrize("kind", ["psd", "nsd", "indefinite", "rank1", "zero-diagonal", "zero"])
def test_quadratic_source_is_the_form(kind):
    rng = np.random.default_rng(3)
    n = 6
    B = rng.standard_normal((n, 3))
    F = {"psd": B @ B.T, "nsd": -B @ B.T, "indefinite": B @ np.diag([1.0, -2.0, 0.5]) @ B.T,
         "rank1": np.outer(B[:, 0], B[:, 0]), "zero": np.zeros((n, n)),
         "zero-diagonal": np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])}[kind]
    for _ in range(20):
        x = rng.standard_normal(len(F)) * 10.0 ** rng.uniform(-5, 5)
        got, _, _ = _value(F, x)
        ex = x @ F @ x
        assert abs(got - ex) <= 1e-14 * (np.abs(x) @ np.abs(F) @ np.abs(x) + 1e-300), kind


def test_ldl_terms_and_their_refusal():
    rng = np.random.default_rng(4)
    B = rng.standard_normal((5, 2))
    F = B @ B.T
    terms = quadratic_terms(F)
    assert len(terms) == 2 and all(d > 0 for d, _ in terms)
    assert np.allclose(sum(d * np.outer(m, m) for d, m in terms), F, atol=1e-14)
    # a zero pivot with the rest non-zero: h^2 + e f of sl(2) has no LDL^T with diagonal pivots
    assert quadratic_terms(np.array([[0.0, 0.5], [0.5, 0.0]])) is None


def test_so4_ideal_form_is_three_squares():
    g = named.so4()
    P1 = recognition.ideal_split(g.structure_constants)
    Q = recognition.killing_half(g.structure_constants)
    F1 = P1.T @ Q @ P1
    x = np.random.default_rng(1).standard_normal(6)
    got, lines, expr = _value(F1, x)
    assert len(lines) == 3 and expr.count("*") == 3                 # three squares of sums of two
    q_hand = [-((x[0] + x[5]) ** 2 + (x[1] - x[4]) ** 2 + (x[2] + x[3]) ** 2),
              -((x[0] - x[5]) ** 2 + (x[1] + x[4]) ** 2 + (x[2] - x[3]) ** 2)]
    assert min(abs(got - q) for q in q_hand) <= 1e-14 * np.sum(x * x)


def _source():
    g = named.so4()
    st = recognition.Structure(g.structure_constants, np.eye(6), np.zeros(6))
    st.closed = recognition.closed_form(g.structure_constants)
    return codegen.Source(st)


def test_written_form_is_reused_only_in_scope():
    F = np.diag([1.0, 2.0, 3.0])
    x = ["a", "b", "c"]
    src = _source()
    q = src.quadratic(x, F)
    assert src.quadratic(x, F) == q                              # the same form: the same name
    neg = src.quadratic(x, -F)                                   # its negation: one line "n = -q"
    assert src.lines[-1].strip() == f"{neg} = -{q}"
    src.emit("b = 2.0*b")                                        # x reassigned: written anew
    q2 = src.quadratic(x, F)
    assert q2 != q and re.search(r"a\*a", src.lines[-1])
    src.emit("if a > 0.0:")
    src.indent += 1
    q3 = src.quadratic(x, 2.0 * F)                               # written inside a branch
    src.indent -= 1
    src.emit("else:")
    src.indent += 1
    assert src.quadratic(x, 2.0 * F) != q3                       # a sibling branch does not read it
    src.indent -= 1
    assert src.quadratic(x, F) == q2                             # still in scope after the branch


def test_generated_so4_stage_reads_the_exponentials_q():
    # the closed dexp^-1 of so(4) takes u = -q of the stage's exponential of the same theta: the
    # two ideal forms are written once per stage, not twice
    src = _source()
    x, z, v = [f"x{i}" for i in range(6)], [f"z{i}" for i in range(6)], [f"v{i}" for i in range(6)]
    src.act(x, z, delta=False)
    src.dexpinv(x, v, 100)
    text = "\n".join(src.lines)
    assert len(re.findall(r"= -?l\d+_\*l\d+_", text)) == 2
    assert len(re.findall(r"^ *u\d+_ = -q\d+_$", text, re.M)) == 2
