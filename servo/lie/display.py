"""How a Lie-group system shows itself in a notebook (``_repr_markdown_``; math typeset by the front end).

The summary has the class and algebra, the model in vector notation, the equations as an ``aligned``
block (:meth:`servo.lie.symbolic.Equations.latex`), the realizability number (I^-1 a, b) (det(A I^-1 B^T)
for several constraints; an exact rational when the data are rational) with its verdict
(Kozlov: realizable iff it is not zero) and the first integrals with exact coefficients.
"""

from __future__ import annotations

import sympy as sp

from .printing import exact

__all__ = ["system_markdown"]


def _realizability_line(system):
    r = system.realizability()
    label = system.realizability_latex
    if isinstance(r, float):
        verdict = "realizable" if r != 0 else "not realizable"
        q = system.realizability_exact()
        value = f"{r:.12g}" if q is None else (sp.latex(q) if q.q == 1 else f"{sp.latex(q)} \\approx {r:.12g}")
        return f"${label} = {value}$: **{verdict}**"
    return f"${label} = {sp.latex(exact(r))}$: realizable wherever this is not zero"


def system_markdown(system) -> str:
    """Markdown for Jupyter: name, model, equations, realizability, first integrals."""
    eq = system.equations()
    parts = [f"**{type(system).__name__}** on {system.algebra.name} ({system.name})", ""]
    if eq.model_latex:
        parts += [f"Model: ${eq.model_latex}$", ""]
    parts += ["$$" + eq.latex(env="aligned") + "$$", ""]
    if hasattr(system, "realizability") and system.kind != "free":
        parts += ["Realizability: " + _realizability_line(system), ""]
    ints = system.first_integrals()
    if ints:
        parts.append("First integrals:")
        parts += [f"- `{f.name}`: ${sp.latex(exact(f.expr))}$" for f in ints]
    else:
        parts.append("First integrals: none found")
    return "\n".join(parts)
