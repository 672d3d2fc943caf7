"""Source text: numbers, linear combinations and :class:`Lines`, the base of the one code writer
(:class:`integrators.codegen.writer.Source` extends it; the Casimir projection's own functions and the
ensemble modules of :mod:`integrators.codegen.ensemble_source` write through it directly)."""

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
