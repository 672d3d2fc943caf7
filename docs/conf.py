"""Sphinx configuration of the liedyn documentation (``make docs``; offline, built with -W in CI).

Why Sphinx: the docstrings are numpydoc-formatted (Parameters / Returns / Raises sections), Sphinx's
autodoc reads them from the installed packages without a second source of truth, and MathJax can be
served from a local copy (the PyPI package ``sphinx-mathjax-offline`` vendors MathJax 3), so the pages
need no network. The numpydoc format is read by ``sphinx.ext.napoleon`` (numpy style) rather than the
numpydoc extension: the same sections, but napoleon does not turn a docstring's informal section (e.g.
"Raises UnrealizableConstraintError if ...") into a build warning, and the build runs with -W. The
catalog pages are generated at build time from the registry (equations, references)
and the example notebook is executed by myst-nb, so neither can drift from the code.
"""

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
os.environ.setdefault("MPLBACKEND", "Agg")

import gen_catalog  # noqa: E402

project = "liedyn"
author = "liedyn authors"
copyright = "2026, liedyn authors"
release = "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.napoleon",
    "sphinx-mathjax-offline",
    "myst_nb",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
myst_enable_extensions = ["dollarmath", "amsmath"]
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
exclude_patterns = ["_build", "jupyter_execute"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
html_theme = "alabaster"
html_static_path = []
# short attribute names (t, dim) exist on several classes; an ambiguous cross-reference is not an error here
suppress_warnings = ["myst.header", "misc.highlighting_failure", "ref.python"]


def _prepare(app):
    """Write the generated pages: one per catalog entry, and a copy of the example notebook."""
    gen_catalog.write(HERE / "catalog")
    ex = HERE / "examples"
    ex.mkdir(exist_ok=True)
    shutil.copyfile(ROOT / "examples" / "tour.ipynb", ex / "tour.ipynb")
    scripts = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
    lines = ["# Examples", "", "The notebook below is executed while the documentation is built; the scripts are "
             "in `examples/` of the source tree.", "", "```{toctree}", ":maxdepth: 1", "", "tour", "```", ""]
    for name in scripts:
        lines += [f"## {name}", "", f"```{{literalinclude}} ../../examples/{name}", ":language: python", "```", ""]
    (ex / "index.md").write_text("\n".join(lines), encoding="utf-8")


def _plain_bars(app, what, name, obj, options, lines):
    """Docstrings write norms as |x| (plain text, not reStructuredText substitutions): escape the bars."""
    for i, line in enumerate(lines):
        if "|" in line and not line.lstrip().startswith(("+", "|=")):
            lines[i] = line.replace("\\|", "|").replace("|", "\\|")


def setup(app):
    app.connect("builder-inited", _prepare)
    app.connect("autodoc-process-docstring", _plain_bars)
