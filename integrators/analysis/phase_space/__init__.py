"""integrators.analysis.phase_space: Lyapunov spectra (with MEGNO) and Poincare sections.

* ``tangent``: the vector field, its Jacobian (closed form from the structure constants for coadjoint
  problems) and the leaf's normals;
* ``lyapunov``: :func:`lyapunov_spectrum` (Benettin's QR method, running estimates, MEGNO);
* ``poincare``: :func:`poincare_section` (hyperplanes, functions of the state, stroboscopic maps).
"""

from typing import TYPE_CHECKING

from liegroups._lazy import exports

if TYPE_CHECKING:
    from .lyapunov import LyapunovResult, lyapunov_spectrum
    from .poincare import PoincareResult, poincare_section

exports(__name__, __file__)

__all__ = ["lyapunov_spectrum", "LyapunovResult", "poincare_section", "PoincareResult"]
