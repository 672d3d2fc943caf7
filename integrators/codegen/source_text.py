"""Numbers and linear combinations as Python source text, for the code writers of
:mod:`integrators.codegen.writer` and :mod:`integrators.codegen.exp_writer`."""

from __future__ import annotations

from collections.abc import Iterable

#: NaN in generated code (inf * 0, folded by the compiler)
NAN = "(1e308*1e308*0.0)"


def num(c: float) -> str:
    """A float as source text that reads back exactly (repr)."""
    return repr(float(c))


def lin(terms: Iterable[tuple[float, str]]) -> str:
    """Source of sum c * v over (c, v) with c != 0 (1 and -1 written without a product); "0.0" if empty."""
    out = ""
    for c, v in terms:
        c = float(c)
        if c == 0.0:
            continue
        mag = abs(c)
        t = v if mag == 1.0 else f"{num(mag)}*{v}"
        if not out:
            out = t if c > 0 else f"-{t}"
        else:
            out += f" + {t}" if c > 0 else f" - {t}"
    return out or "0.0"
