"""Generate one documentation page per catalog entry (description, model, equations, realizability,
claimed first integrals, parameters, references) from the registry, so the catalog pages cannot drift
from the code."""

from __future__ import annotations

from pathlib import Path

import catalog
from catalog.output import describe


def _aligned(latex):
    return latex.replace("\\begin{align}", "\\begin{aligned}").replace("\\end{align}", "\\end{aligned}")


def page(name):
    e = catalog.get(name)
    spec = catalog.registry.specs()[name]
    text, latex = describe.equations(e)
    lines = [f"# {name}", "", f"*{spec.title}* (family: {spec.family}; model: {e.model}; kind: {e.kind})", "",
             e.description, "", "## Equations", ""]
    model = describe.model_text(e)
    if model:
        lines += [f"Model: `{model}`", ""]
    if latex:
        lines += ["$$", _aligned(latex), "$$", ""]
    lines += ["```text", *(text or ["(not available)"]), "```", ""]
    r = describe.realizability_line(e)
    if r:
        lines += ["## Realizability", "", r, ""]
    claimed = list(e.first_integrals or {})
    lines += ["## First integrals claimed", "", *([f"- `{k}`" for k in claimed] or ["none"]), ""]
    if e.parameters:
        lines += ["## Parameters (defaults)", "", "| name | value |", "|---|---|",
                  *[f"| `{k}` | `{v}` |" for k, v in e.parameters.items()], ""]
    lines += ["## References", "", *[f"- {r}" for r in e.references], ""]
    return "\n".join(lines)


def write(directory):
    directory = Path(directory)
    directory.mkdir(exist_ok=True)
    names = catalog.names()
    for n in names:
        (directory / f"{n}.md").write_text(page(n), encoding="utf-8")
    index = ["# Catalog", "", "Every named system of `catalog`, with its equations as `liedyn show NAME` prints "
             "them, its realizability and its sources.", "", "```{toctree}", ":maxdepth: 1", "", *names, "```", ""]
    (directory / "index.md").write_text("\n".join(index), encoding="utf-8")
