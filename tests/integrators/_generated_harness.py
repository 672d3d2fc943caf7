"""Shared harness of the tests of the generated nonholonomic loops (test_nonholonomic_generated.py,
test_dvak_generated.py, test_nonholonomic_dvak_mid_generated.py): a generated source's residual and analytic
Jacobian run as plain Python, and central differences to check a Jacobian against. Independent of the code under
test but for the source object's text and line emitters (``text``, ``consts``, ``p``, ``n``, ``residual``,
``jacobian``: DlasSource and DvakSource of integrators.codegen.nonholonomic_source)."""

import math
import types

import numpy as np


def residual_and_jacobian(src):
    """The namespace of ``src``'s generated text run as plain Python (numba's decorator stubbed out, no cache), with
    ``f(e, h, m) -> (r, Jm)`` added: the generated lines of the residual r(e) and of the analytic Jacobian
    Jm = -dr/de at the unknowns e (length src.p), the step h and the momentum m (length src.n)."""
    from integrators.codegen.source_text import Lines
    ns = {"math": math, "np": np, "CACHE": False, "JIT": {}, "LANE_JIT": {}, "numba": types.SimpleNamespace(njit=lambda *a, **k: (lambda f: f))}
    exec(src.text(), ns)
    q = src.p
    L = Lines(indent=0)
    L.emit("def f(e, h, m):")
    L.indent = 1
    for nm, val in src.consts.values:
        L.emit(f"{nm} = {val!r}")
    for a in range(q):
        L.emit(f"e{a} = e[{a}]")
    for i in range(src.n):
        L.emit(f"m{i} = m[{i}]")
    r, _ = src.residual(L, [f"e{a}" for a in range(q)], "")
    J = src.jacobian(L, "j_")
    L.emit("return np.array([" + ", ".join(r) + "]), np.array([[" + "], [".join(", ".join(row) for row in J) + "]])")
    exec(L.text(), ns)
    return ns


def central_jacobian(g, x, dd):
    """dg/dx at x by central differences, column c = (g(x + dd e_c) - g(x - dd e_c)) / (2 dd) (error ~ dd^2 |g'''|)."""
    cols = []
    for c in range(len(x)):
        xp, xm = x.copy(), x.copy()
        xp[c] += dd
        xm[c] -= dd
        cols.append((g(xp) - g(xm)) / (2 * dd))
    return np.stack(cols, axis=1)
