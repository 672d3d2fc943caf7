"""How a catalog entry shows itself in a notebook: a Markdown summary (no simulation is run).

Name and description, model, the equations as an ``aligned`` block (:func:`describe.equations`),
realizability (:func:`describe.realizability_line`), the claimed first integrals, parameters and
references.
"""

from __future__ import annotations

__all__ = ["entry_markdown"]


def _aligned(latex):
    return latex.replace("\\begin{align}", "\\begin{aligned}").replace("\\end{align}", "\\end{aligned}")


def entry_markdown(entry) -> str:
    """Markdown for Jupyter: what ``liedyn show NAME`` prints, with the equations typeset."""
    from . import describe  # sympy: imported when an entry is shown, not when the registry loads

    text, latex = describe.equations(entry)
    parts = [f"**{entry.name}** ({entry.model}, {entry.kind})", "", entry.description, ""]
    model = describe.model_text(entry)
    if model:
        parts += [f"Model: `{model}`", ""]
    if latex:
        parts += ["$$" + _aligned(latex) + "$$", ""]
    elif text:
        parts += ["```", *text, "```", ""]
    line = describe.realizability_line(entry)
    if line:
        parts += [line.replace("realizability", "Realizability:", 1), ""]
    claimed = list(entry.first_integrals or {})
    parts.append("Claimed first integrals: " + (", ".join(f"`{k}`" for k in claimed) if claimed else "none"))
    if entry.parameters:
        parts += ["", "Parameters: " + ", ".join(f"`{k}={v}`" for k, v in entry.parameters.items())]
    if entry.references:
        parts += ["", "References:", *[f"- {r}" for r in entry.references]]
    return "\n".join(parts)
