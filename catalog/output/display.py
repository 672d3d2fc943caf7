"""How a catalog entry shows itself in a notebook: a Markdown summary (no simulation is run).

Name and description, model, the equations as an ``aligned`` block (:func:`describe.equations`),
realizability (:func:`describe.realizability_line`), the claimed first integrals, parameters and
references.
"""

from __future__ import annotations

__all__ = ["entry_markdown", "entry_text"]

#: the most lines ``print(entry)`` writes (the Interface contract of issue 28: at most 30)
MAX_LINES = 30


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


def _clip(line, width=110):
    return line if len(line) <= width else line[:width - 3] + "..."


def entry_text(entry) -> str:
    """Plain text for ``print(entry)`` and the REPL: at most :data:`MAX_LINES` lines of at most 110
    characters (name, model, description, equations, realizability, claims, parameters, run defaults,
    references); long parts are cut with a line saying how much was left out."""
    import textwrap

    from . import describe

    lines = [f"Entry {entry.name!r} ({entry.model}, {entry.kind})"]
    lines += textwrap.wrap(" ".join(str(entry.description).split()), 108, max_lines=2, placeholder=" ...")
    try:
        eqs = list(describe.equations(entry)[0])
    except Exception as exc:  # a display never raises: say why the equations are missing
        eqs = [f"(equations not available: {type(exc).__name__}: {exc})"]
    shown = eqs[:8]
    lines += ["equations:"] + ["  " + e for e in shown]
    if len(eqs) > len(shown):
        lines.append(f"  ... {len(eqs) - len(shown)} more (liedyn show / entry.system.equations())")
    try:
        r = describe.realizability_line(entry)
    except Exception:
        r = None
    if r:
        lines.append(r)
    claims = list(entry.first_integrals or {}) + list(entry.extras.get("constraints", {}))
    if entry.exact_solution is not None:
        claims.append("exact solution")
    lines.append("claims: " + (", ".join(claims) if claims else "none"))
    if entry.parameters:
        items = [f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in entry.parameters.items()]
        par = textwrap.wrap("parameters: " + ", ".join(items), 108, max_lines=4, placeholder=" ...")
        lines += par
    state = entry.initial_state
    if isinstance(state, dict):
        st = ", ".join(f"{k}={list(v) if v is not None else None}" for k, v in state.items())
    else:
        st = ", ".join(f"{lab}={float(v):.6g}" for lab, v in zip(entry.labels or (), state)) or str(state)
    lines.append(f"initial state: {st}")
    lines.append(f"run: t_end={entry.t_end:g}, steps={entry.steps}, method={entry.method or 'default'}")
    if entry.references:
        lines += textwrap.wrap("references: " + ", ".join(map(str, entry.references)), 108, max_lines=2,
                               placeholder=" ...")
    lines = [_clip(x) for x in lines]
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES - 1] + [f"... ({len(lines) - MAX_LINES + 1} more lines)"]
    return "\n".join(lines)
