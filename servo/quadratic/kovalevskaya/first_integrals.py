"""The exact search for homogeneous polynomial first integrals F of one degree (rational Q): the check that the
Kovalevskaya obstructions are tested against (a degree ruled out there has no integral here)."""
from __future__ import annotations

import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

from ..polynomials import check_degree, monomial_exponents, rational_tensor
from ..protocol import QuadraticField

__all__ = ["polynomial_first_integrals"]


def polynomial_first_integrals(q: QuadraticField, degree: int) -> list[sp.Expr]:
    """Exact basis of the homogeneous polynomial first integrals of degree ``degree`` (rational Q).

    F = sum_a f_a x^a over the monomials of degree m; grad F . v = sum_a f_a sum_j a_j x^(a - e_j)
    sum_{k,l} Q[j,k,l] x_k x_l = 0 is a linear system over QQ in the f_a (one row per monomial of degree
    m + 1); its null space (sympy DomainMatrix, exact) is returned as sympy polynomials in q's variables.
    Products of lower-degree integrals are included (they are integrals of degree m too).
    """
    m = check_degree(degree, "degree")
    Qq = [[[QQ(int(x.p), int(x.q)) for x in row] for row in mat] for mat in rational_tensor(q, snap=True)]
    p = len(Qq)
    cols = monomial_exponents(p, m)
    rows = {mon: i for i, mon in enumerate(monomial_exponents(p, m + 1))}
    nz = [(j, k, l, Qq[j][k][l]) for j in range(p) for k in range(p) for l in range(p) if Qq[j][k][l]]
    data = {}
    for ci, a in enumerate(cols):
        for j, k, l, c in nz:
            if a[j] == 0:
                continue
            t = list(a)
            t[j] -= 1
            t[k] += 1
            t[l] += 1
            ri = rows[tuple(t)]
            r = data.setdefault(ri, {})
            r[ci] = r.get(ci, QQ(0)) + a[j] * c
    data = {i: {j: x for j, x in r.items() if x} for i, r in data.items()}
    data = {i: r for i, r in data.items() if r}
    M = DomainMatrix(data, (len(rows), len(cols)), QQ)
    null = M.nullspace().to_Matrix() if len(cols) else sp.zeros(0, 0)
    xs = [sp.Symbol(str(v)) for v in getattr(q, "variables", [f"x{i + 1}" for i in range(p)])]
    monos = [sp.Mul(*[x ** e for x, e in zip(xs, a)]) for a in cols]
    return [sp.expand(sum(null[r, j] * monos[j] for j in range(len(cols)) if null[r, j]))
            for r in range(null.rows)]
