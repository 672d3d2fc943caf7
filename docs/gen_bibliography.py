"""Generate the bibliography page from ``catalog.bibliography`` (one entry per work, under its key), so
the page cannot drift from what the library cites. Each work gets a target ``bib-KEY`` for the theory
pages, its BibTeX record, and the catalog entries that cite it."""

from __future__ import annotations

from pathlib import Path

import catalog
from catalog import bibliography

SOURCES = ("kozlov2019", "kozlov2008", "talamucci2025", "salnikova2023", "kozlov_servo_lectures")


def _cited_by():
    out: dict[str, list[str]] = {}
    for name in catalog.names():
        for ref in catalog.get(name).references:
            if bibliography.is_key(ref):
                out.setdefault(ref, []).append(name)
    return out


def _entry(key, cited_by):
    w = bibliography.get(key)
    lines = [f"({'bib-' + key})=", "", f"**`{key}`** {w.text()}"]
    if cited_by.get(key):
        lines[-1] += " Cited by the catalog entries " + ", ".join(
            f"[{n}](catalog/{n}.md)" for n in cited_by[key]) + "."
    lines += ["", ":::{code-block} bibtex", ":class: bibtex", w.bibtex(), ":::", ""]
    return lines


def page():
    cited_by = _cited_by()
    others = sorted((k for k in bibliography.keys() if k not in SOURCES),
                    key=lambda k: (bibliography.get(k).surnames()[0].lower(), bibliography.get(k).year or 0))
    lines = ["# Bibliography", "",
             "Every work the library cites, generated from `catalog.bibliography` while the documentation is "
             "built. Docstrings, the command line and the report cite a work by author and year; the key in "
             "bold is what a catalog entry or a TOML file writes in its `references`. "
             "`liedyn cite --all --bibtex` prints the same records.", "",
             "## The sources", "",
             "The five texts the science of the library comes from; where the library's derivation "
             "disagrees with them, see [](theory/corrections.md).", ""]
    for k in SOURCES:
        lines += _entry(k, cited_by)
    lines += ["## Other works", "", "Mechanics, Lie theory, numerical integration and polynomial systems, "
              "by first author.", ""]
    for k in others:
        lines += _entry(k, cited_by)
    return "\n".join(lines)


def write(path):
    Path(path).write_text(page(), encoding="utf-8")
