"""Mathematics drawn without a network: a LaTeX formula as an SVG file by matplotlib's mathtext.

mathtext understands the subset of TeX the equations use (fractions, dots, subscripts, Greek letters,
``\\left( ... \\right)``, ``\\sin``, ``\\geq``, ``\\operatorname``); a formula it cannot draw (e.g. sympy's
``\\begin{cases}``) raises :class:`MathRenderError` and the report shows the text instead.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib import mathtext  # noqa: E402
from matplotlib.font_manager import FontProperties  # noqa: E402

from ..errors import CatalogError  # noqa: E402

__all__ = ["MathRenderError", "svg_of", "write_svg"]


class MathRenderError(CatalogError):
    """mathtext could not draw a formula (the message names it)."""


def svg_of(latex: str, size: float = 13.0) -> str:
    """The SVG text of ``$latex$`` in Computer Modern at ``size`` points (no date or random ids, so the
    same formula gives the same file)."""
    if not latex.strip():
        raise MathRenderError("empty formula")
    buf = io.BytesIO()
    try:
        with matplotlib.rc_context({"svg.fonttype": "path"}):  # glyphs as paths: Computer Modern needs no font
            mathtext.math_to_image(f"${latex}$", buf, prop=FontProperties(size=size, math_fontfamily="cm"),
                                   format="svg")
    except Exception as exc:  # mathtext's parser raises ValueError (and sometimes others) on unknown TeX
        raise MathRenderError(f"mathtext cannot draw {latex[:80]!r}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    text = buf.getvalue().decode("utf-8")
    return re.sub(r"<dc:date>.*?</dc:date>", "", text, flags=re.S)


def write_svg(latex: str, path: Path, size: float = 13.0) -> Path:
    """Write the SVG of ``latex`` to ``path``; return the path."""
    path.write_text(svg_of(latex, size), encoding="utf-8")
    return path
