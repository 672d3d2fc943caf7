"""Sphinx configuration of the liedyn documentation (``make docs``; offline, built with -W in CI).

Why Sphinx: the docstrings are numpydoc-formatted (Parameters / Returns / Raises sections), Sphinx's
autodoc reads them from the packages without a second source of truth, and MathJax is served from a
local copy (the PyPI package ``sphinx-mathjax-offline`` vendors MathJax 3), so the pages need no network.
The numpydoc format is read by ``sphinx.ext.napoleon`` (numpy style) rather than the numpydoc
extension: the same sections, but napoleon does not turn a docstring's informal section (e.g. "Raises
UnrealizableConstraintError if ...") into a build warning, and the build runs with -W.

Generated at build time, so nothing can drift from the code: one page per catalog entry (from the
registry), the bibliography (from ``catalog.bibliography``), the gallery of ``examples/*.py``
(sphinx-gallery runs every script and shows its output and figures) and the notebook
``examples/tour.ipynb`` and the MyST pages with code cells (executed by myst-nb).

The layout follows the Diataxis split that diffrax, scipy and sympy.physics.mechanics use: getting
started, how-to guides, theory (explanation), and the API reference with one page per module.
"""

import ast
import os
import re
import shutil
import sys
import time
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the tomli backport, a dependency of liedyn there
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
# the kernels that execute the pages start in docs/, where the generated folder docs/catalog would shadow
# the catalog package (as a namespace package): the project root goes first on their path too
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import matplotlib  # noqa: E402
import matplotlib.figure  # noqa: E402

# this process (sphinx-gallery runs the example scripts in it) draws with Agg; the kernels that execute the
# notebook and the MyST pages draw inline, as SVG with the text as text (`make docs` exports MPLBACKEND=Agg,
# which a kernel would obey and show no figure at all). IPYTHONDIR holds the kernels' inline-backend config.
matplotlib.use("Agg")
_IPYTHONDIR = HERE / "_build" / "ipython"
(_IPYTHONDIR / "profile_default").mkdir(parents=True, exist_ok=True)
(_IPYTHONDIR / "profile_default" / "ipython_kernel_config.py").write_text(
    "c.InlineBackend.figure_formats = {'svg'}\n"
    "c.InlineBackend.rc = {'svg.fonttype': 'none', 'svg.hashsalt': 'liedyn', 'font.size': 10}\n",
    encoding="utf-8")
os.environ["IPYTHONDIR"] = str(_IPYTHONDIR)
os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"


def _smallest_text(fig):
    """The smallest font size (pt) of the text a figure shows (None without text)."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes) if sizes else None


_savefig = matplotlib.figure.Figure.savefig


def _savefig_noting_text(self, fname, *args, **kwargs):
    """While the docs are built, a PNG a script writes carries its smallest text and its dpi in its metadata
    ("liedyn:text-pt", "liedyn:dpi"): tests/test_docs_site.py reads them to check that every figure's text
    is drawn at 8 px or more on the page (font pt x dpi / 72 x drawn width / pixel width)."""
    is_png = kwargs.get("format") == "png" or str(fname).lower().endswith(".png")
    if is_png:
        pt = _smallest_text(self)
        dpi = kwargs.get("dpi") or matplotlib.rcParams["savefig.dpi"]
        dpi = self.dpi if dpi == "figure" else float(dpi)
        kwargs["metadata"] = {**(kwargs.get("metadata") or {}), "liedyn:dpi": f"{dpi:g}",
                              **({"liedyn:text-pt": f"{pt:g}"} if pt is not None else {})}
    return _savefig(self, fname, *args, **kwargs)


matplotlib.figure.Figure.savefig = _savefig_noting_text

import gen_api  # noqa: E402
import gen_bibliography  # noqa: E402
import gen_catalog  # noqa: E402
import gen_cli  # noqa: E402

project = "liedyn"
author = "liedyn authors"
copyright = "2026, liedyn authors"
# the version shown on every page is the one pyproject.toml declares (one source of truth)
release = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx-mathjax-offline",
    "myst_nb",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "jupyter_execute", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.md5", "auto_examples/*.json",
                    "api/methods_table.rst", "api/intro/*"]
root_doc = "index"

# --- MyST and notebooks --------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
# the objects' _repr_markdown_ writes pipe tables and $...$ math: render it as MyST (the default,
# CommonMark, shows both raw); text/latex becomes a MathJax block
nb_render_markdown_format = "myst"
nb_merge_streams = True

# --- sphinx-gallery: examples/*.py, executed while the docs are built -------------------------------
# Every script runs (about 45 s in all on one core); the sweep scripts get --serial, so no dask
# cluster is started inside the build (their --full sizes are never run here).


def _gallery_argv(gallery_conf, script_vars):
    """The command line of each script; also gives the script its ``__file__`` (the scripts write their
    figures beside themselves, ``examples/output/``, as when run by hand; sphinx-gallery leaves
    ``__file__`` undefined and ``__doc__`` empty, and this hook runs after the script's globals exist, before its code)."""
    src = Path(script_vars["src_file"])
    _started[0] = time.time()
    script_vars["example_globals"]["__file__"] = str(src)
    script_vars["example_globals"]["__doc__"] = ast.get_docstring(ast.parse(src.read_text(encoding="utf-8")))
    return ["--serial"] if Path(script_vars["src_file"]).name.startswith("sweep_") else []


_started = [0.0]


def _saved_figures(block, block_vars, gallery_conf):
    """Image scraper for the scripts that save their figures and close them (through
    ``catalog.output.plots.save`` or ``SweepResult.save``): the PNG files the script wrote under
    ``examples/output/`` since it started. Runs before matplotlib's scraper and only when no figure is
    left open, so a figure is never shown twice."""
    import matplotlib.pyplot as plt
    from sphinx_gallery.scrapers import figure_rst

    if plt.get_fignums():
        return ""
    out_dir = Path(block_vars["src_file"]).parent / "output"
    new = sorted(p for p in out_dir.rglob("*.png") if p.stat().st_mtime >= _started[0] - 1e-3)
    names = []
    for png, target in zip(new, block_vars["image_path_iterator"]):
        shutil.copyfile(png, target)
        names.append(target)
    _started[0] = time.time() + 1e9       # each file once, in the block that wrote it
    # one figure under the other at the page's width (sphinx-gallery's row of several shrinks each to a
    # third of the column, its text below 8 px)
    return "".join(figure_rst([n], gallery_conf["src_dir"]) for n in names)


sphinx_gallery_conf = {
    "image_scrapers": (_saved_figures, "matplotlib"),
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",        # execute every script
    "ignore_pattern": r"__init__\.py$",
    "reset_argv": _gallery_argv,
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "min_reported_time": 1,
    "write_computation_times": False,
    "show_signature": False,
    "within_subsection_order": "FileNameSortKey",
    "image_srcset": ["2x"],
    "matplotlib_animations": False,
    "default_thumb_file": None,
}

# --- autodoc ---------------------------------------------------------------------------------------
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True
napoleon_preprocess_types = False
# type aliases stay names: numpy's ArrayLike is a 200-character Union once expanded
autodoc_type_aliases = {
    "ArrayLike": "numpy.typing.ArrayLike",
    "NDArray": "numpy.typing.NDArray",
    "DTypeLike": "numpy.typing.DTypeLike",
}
napoleon_type_aliases = {"ArrayLike": "numpy.typing.ArrayLike", "array_like": "numpy.typing.ArrayLike"}
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented_params"
autodoc_typehints_format = "short"
autodoc_member_order = "bysource"
autodoc_preserve_defaults = True
autosummary_generate = False
add_module_names = False
python_maximum_signature_line_length = 100

# --- HTML ------------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"liedyn {release}"
html_static_path = ["_static"]
html_css_files = ["liedyn.css"]
html_theme_options = {
    "source_repository": "",
    "navigation_with_keys": True,
    "top_of_page_buttons": [],
}
html_show_sourcelink = False
pygments_style = "friendly"
pygments_dark_style = "monokai"

# short attribute names (t, dim) exist on several classes; an ambiguous cross-reference is not an error
# here; myst.header: the generated catalog pages start at level 2 in places
suppress_warnings = ["myst.header", "misc.highlighting_failure", "ref.python", "config.cache"]
rst_epilog = f"""
.. |liedyn_version| replace:: {release}
"""


def _prepare(app):
    """Write the generated pages: one per catalog entry, the bibliography, and the notebook copy."""
    gen_catalog.write(HERE / "catalog")
    gen_api.write(HERE / "api")
    gen_cli.write(HERE / "cli.md")
    gen_bibliography.write(HERE / "bibliography.md")
    ex = HERE / "notebooks"
    ex.mkdir(exist_ok=True)
    shutil.copyfile(ROOT / "examples" / "tour.ipynb", ex / "tour.ipynb")


_BAR = re.compile(r"(?<!\\)\|")


def _plain_bars(app, what, name, obj, options, lines):
    """Docstrings write norms as |x| (plain text, not reStructuredText substitutions): escape the bars
    outside math (``:math:`` roles and ``.. math::`` blocks keep theirs)."""
    in_math = False
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(".. math::"):
            in_math, indent = True, len(line) - len(stripped)
            continue
        if in_math:
            if stripped and len(line) - len(stripped) <= indent:
                in_math = False
            else:
                continue
        if "|" in line and not stripped.startswith(("+", "|=")):
            parts = re.split(r"(:math:`[^`]*`|``[^`]*``)", line)
            lines[i] = "".join(p if p.startswith((":math:`", "``")) else _BAR.sub(r"\\|", p) for p in parts)


def _gallery_text(app, docname, source):
    """The example scripts' docstrings are plain text read in a terminal as much as on the page: in
    the generated gallery pages escape the bars of norms (|v|) and lone asterisks outside code."""
    if not docname.startswith("auto_examples/") or docname.endswith("index"):
        return
    out, in_block, indent = [], False, 0
    for line in source[0].split("\n"):
        stripped = line.lstrip()
        ind = len(line) - len(stripped)
        if in_block and stripped and ind <= indent:
            in_block = False
        if not in_block and stripped.startswith(".. ") and "::" in stripped:
            in_block, indent = True, ind
            out.append(line)
            continue
        if not in_block and not stripped.startswith((".. ", "=", "-" * 4)):
            line = _BAR.sub(r"\\|", line)
            line = re.sub(r"(?<=\s)\*(?=\s)", r"\\*", line)
        out.append(line)
    source[0] = "\n".join(out)


def _no_object_base(app, name, obj, options, bases):
    """"Bases: object" says nothing: show a class's bases only when it has real ones."""
    if object in bases:
        bases.remove(object)


def setup(app):
    app.connect("builder-inited", _prepare)
    app.connect("autodoc-process-bases", _no_object_base)
    app.connect("autodoc-process-docstring", _plain_bars)
    app.connect("source-read", _gallery_text)
