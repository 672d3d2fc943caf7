"""Long generated sums (:func:`integrators.codegen.source_text.lin`) are written as partial sums of at most
LIN_CHUNK terms: the same value, and an expression tree shallow enough for numba's parfor analysis (a flat sum of
714 terms, the quartic Casimir of so(5) in a random basis, raised RecursionError in the parallel ensemble
kernel; numba walks the tree one Python frame a level, so the depth is what the test bounds: compiling such a
kernel takes minutes, too long for the suite)."""

import ast

import numpy as np

from integrators.codegen.source_text import LIN_CHUNK, lin


def _depth(node):
    kids = list(ast.iter_child_nodes(node))
    return 1 + (max(map(_depth, kids)) if kids else 0)


def test_long_sum_value_and_depth():
    rng = np.random.default_rng(3)
    c = rng.standard_normal(714)
    c[::17] = 0.0                                          # zero coefficients are left out
    c[5], c[6] = 1.0, -1.0                                 # unit coefficients without a product
    x = rng.standard_normal(714)
    text = lin([(ck, f"x[{k}]") for k, ck in enumerate(c)])
    assert np.isclose(eval(text, {"x": x}), float(c @ x), rtol=1e-13, atol=1e-13)
    assert _depth(ast.parse(text, mode="eval")) < 3 * LIN_CHUNK + 40     # a flat sum: depth ~ 3 * 714
    short = lin([(2.0, "a"), (-1.0, "b")])
    assert short == "2.0*a - b" and lin([]) == "0.0"

