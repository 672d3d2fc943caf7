"""How numbers of servo.quadratic show themselves in text: a real or complex number, a vector.

Used by the Markdown table of the invariant lines (``line_types``) and by the certificates of the
Kovalevskaya test (``kovalevskaya``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["format_number", "format_vector"]


def format_number(x: complex, digits: int = 6) -> str:
    """A real or complex number in ``digits`` significant digits: "1.5", "2-0.5i"; the imaginary part is
    dropped when it is at most 1e-12 of max(1, |x|), and -0 prints as 0."""
    x = complex(x)
    x = complex(x.real + 0.0, x.imag + 0.0)          # no "-0"
    if abs(x.imag) <= 1e-12 * max(1.0, abs(x)):
        return f"{x.real:.{digits}g}"
    return f"{x.real:.{digits}g}{x.imag:+.{digits}g}i"


def format_vector(z: ArrayLike, digits: int = 4) -> str:
    """"(a, b, ...)": the entries of z (real parts only when all imaginary parts are within 10^6 machine
    epsilons, ``np.real_if_close``), each by ``format_number``."""
    z = np.real_if_close(np.asarray(z), tol=1e6)
    return "(" + ", ".join(format_number(a, digits) for a in np.ravel(z)) + ")"
