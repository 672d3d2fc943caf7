"""Source text: numbers, linear combinations and :class:`Lines`, the base of the one code writer
(:class:`integrators.codegen.writer.Source` extends it; the Casimir projection's own functions and the
ensemble modules of :mod:`integrators.codegen.ensemble_source` write through it directly)."""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

#: NaN in generated code (inf * 0, folded by the compiler)
NAN = "(1e308*1e308*0.0)"


def num(c: float) -> str:
    """A float as source text that reads back exactly (repr)."""
    return repr(float(c))


#: a sum of more terms than this is written as parenthesised partial sums of this many (see :func:`lin`)
LIN_CHUNK = 64


def lin(terms: Iterable[tuple[float, str]]) -> str:
    """Source of sum c * v over (c, v) with c != 0 (1 and -1 written without a product); "0.0" if empty. More
    than :data:`LIN_CHUNK` terms are summed as (t_1 + .. + t_64) + (t_65 + ..) + ..: a flat sum of m terms
    parses into a tree of depth m, and numba's parfor analysis walks it recursively (the Casimir of degree 4
    of so(5) in a random basis, 714 monomials, in the parallel ensemble kernel: RecursionError)."""
    parts = []
    for c, v in terms:
        c = float(c)
        if c == 0.0:
            continue
        mag = abs(c)
        parts.append((c > 0, v if mag == 1.0 else f"{num(mag)}*{v}"))
    if not parts:
        return "0.0"

    def flat(ps):
        out = ps[0][1] if ps[0][0] else f"-{ps[0][1]}"
        return out + "".join(f" + {t}" if pos else f" - {t}" for pos, t in ps[1:])

    if len(parts) <= LIN_CHUNK:
        return flat(parts)
    return " + ".join(f"({flat(parts[i:i + LIN_CHUNK])})" for i in range(0, len(parts), LIN_CHUNK))


def assigned_names(line: str) -> set:
    """The names a generated line assigns to (each statement of ``a, b = ...; c += ...``)."""
    out = set()
    for stmt in line.split(";"):
        m = _ASSIGN.match(stmt)
        if m:
            out.update(t.strip() for t in m.group(1).split(","))
    return out


_ASSIGN = re.compile(r"\s*([A-Za-z_][\w\s,\[\]]*?)\s*[-+*/]?=(?!=)")


def quadratic_terms(F, tol=1e-13):
    """[(d_k, m_k)] with F = sum_k d_k m_k m_k^T (symmetric pivoted LDL^T: the largest remaining
    diagonal entry as pivot, m_k its column over it, so m_k has a 1 at the pivot); None when a
    pivot would be zero while the rest is not (an indefinite form with a zero diagonal, sl(2)'s
    h^2 + e f in its own basis). For a semidefinite F the terms have one sign: no cancellation
    between them (Higham 2002, *Accuracy and Stability of Numerical Algorithms*, 10.3)."""
    R = np.array(F, dtype=float)
    scale = float(np.max(np.abs(R))) if R.size else 0.0
    out = []
    while scale > 0.0:
        d = np.abs(np.diag(R))
        p = int(np.argmax(d))
        if np.max(np.abs(R)) <= tol * scale:
            break
        if d[p] <= tol * scale:
            return None
        m = R[:, p] / R[p, p]
        m[np.abs(m) <= tol] = 0.0
        out.append((float(R[p, p]), m))
        R = R - R[p, p] * np.outer(m, m)
        R[p, :] = R[:, p] = 0.0
    return out


def _ops(terms):
    return sum(1 + (abs(c) != 1.0) for c, _ in terms)


def quadratic_source(F, x, fresh):
    """(lines, expression) of x^T F x: the expansion sum_{i<=j} (2 -) F_ij x_i x_j, or, when it
    takes fewer operations, sum_k d_k l_k^2 with the linear forms l_k = m_k . x written first
    (:func:`quadratic_terms`; a form that is one name is not written)."""
    n = len(x)
    full = [((F[i, i] if i == j else 2.0 * F[i, j]), f"{x[i]}*{x[j]}") for i in range(n) for j in range(i, n)
            if (F[i, i] if i == j else F[i, j]) != 0.0]
    ldl = quadratic_terms(F)
    if ldl is not None:
        forms = [[(float(c), x[i]) for i, c in enumerate(m) if c != 0.0] for _, m in ldl]
        cost = sum(_ops(f) + 1 + (abs(d) != 1.0) for (d, _), f in zip(ldl, forms))
        if cost < _ops(full):
            lines, parts = [], []
            for (d, _), f in zip(ldl, forms):
                if len(f) == 1 and f[0][0] == 1.0:
                    name = f[0][1]
                else:
                    name = fresh("l")
                    lines.append(f"{name} = {lin(f)}")
                parts.append((d, f"{name}*{name}"))
            return lines, lin(parts)
    return [], lin(full)


class Lines:
    """The lines of one generated function body: ``emit`` a line at the current ``indent`` (four spaces
    a level, starting at ``indent``), ``fresh`` a new variable name, ``assign`` a vector of expressions
    to fresh names (returned as a list)."""

    def __init__(self, indent: int = 1):
        self.lines: list[str] = []
        self.count = 0
        self.indent = indent

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}_"

    def assign(self, prefix: str, exprs: Iterable[str]) -> list[str]:
        exprs = list(exprs)
        base = self.fresh(prefix)
        names = [f"{base}{i}" for i in range(len(exprs))]
        for nm, e in zip(names, exprs):
            self.emit(f"{nm} = {e}")
        return names

    def text(self) -> str:
        """The lines joined, with a final newline."""
        return "\n".join(self.lines) + "\n"
