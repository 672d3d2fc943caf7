"""The generated whole-run loops of the discrete schemes compiled by numba, loaded once per text (numba's disk
cache keys on it; problems with the same sparsity share it): the Lie-group schemes (``dlas_*``, ``lie_rattle_*``;
text of :mod:`integrators.codegen.nonholonomic_source`) and the coordinate schemes (``mp_lda``, ``nh_rattle``; text
of :mod:`integrators.codegen.coordinate_source` from the problem's expression source) and ``dvak_mid`` (text of
:mod:`integrators.codegen.vakonomic_source`, from the problem's L* and phi as text). The engine hands
:func:`maker` 's choice to the steppers of :mod:`integrators.reference.nonholonomic` (``generated=``), which fall
back to the generic compiled loops when it returns None."""

from __future__ import annotations

from ..codegen.coordinate_source import coordinate_text
from ..codegen.nonholonomic_source import DlasSource, DvakSource
from ..codegen.vakonomic_source import vakonomic_text
from . import numba_kernels

#: the largest algebra the straight-line code is written for (se(3)); beyond it the generic loop
MAX_DIM = 6


def dlas_loop(mode, C, S, N, Pc, Pout, I, Iinv, stride, theta_refresh=None):
    """(run, cst) of the generated loop for the dlas data (see
    :class:`integrators.codegen.nonholonomic_source.DlasSource`), or None above MAX_DIM."""
    if C.shape[0] > MAX_DIM:
        return None
    src = DlasSource(mode, C, S, N, Pc, Pout, I, Iinv, stride, theta_refresh)
    ns = numba_kernels.load_module(src.text(), "liedyn_nh")
    return ns["run"], src.cst


def coordinate_loop(scheme, source, Minv):
    """The generated loop of the coordinate ``scheme`` ("mp" or "rattle") on the problem's expression source
    (:mod:`integrators.codegen.coordinate_source`), or None where it is not written (k > 2)."""
    text = coordinate_text(scheme, source, Minv)
    if text is None:
        return None
    return numba_kernels.load_module(text, "liedyn_nhc")["run"]


def maker(stepper):
    """The maker of generated loops for ``stepper``: :func:`coordinate_loop` on the coordinate schemes (their
    data of structure "lagrange_dalembert"), :func:`dvak_loop` on the second-kind ones,
    :func:`vakonomic_loop` on ``dvak_mid`` 's, :func:`dlas_loop` on the other Lie-group ones."""
    d = getattr(stepper, "d", None)
    if getattr(d, "structure", None) == "lie_second_kind":
        return dvak_loop
    if getattr(d, "structure", None) == "vakonomic_coordinates":
        return vakonomic_loop
    return coordinate_loop if getattr(d, "structure", None) == "lagrange_dalembert" else dlas_loop


def dvak_loop(mode, C, S, N, I, B, G0, theta_refresh=None):
    """(run, cst) of the generated loop of the discrete vakonomic / second-kind map (``dvak_exp``, ``dvak_cay``;
    :class:`integrators.codegen.nonholonomic_source.DvakSource`), or None above MAX_DIM."""
    if C.shape[0] > MAX_DIM:
        return None
    src = DvakSource(mode, C, S, N, I, B, G0, theta_refresh)
    ns = numba_kernels.load_module(src.text(), "liedyn_nhv")
    return ns["run"], src.cst


#: the most unknowns (n + k) the straight-line dvak_mid loop is written for (its eliminations grow as (n + k)^3
#: lines); beyond it the loop on the problem's scalar functions
MAX_VAKONOMIC_UNKNOWNS = 12


def vakonomic_loop(source, n, k, theta_refresh=None):
    """(run, cst) of the generated dvak_mid loop on the problem's expression ``source`` (L*, phi as text;
    :mod:`integrators.codegen.vakonomic_source`), or None above MAX_VAKONOMIC_UNKNOWNS."""
    if n + k > MAX_VAKONOMIC_UNKNOWNS:
        return None
    text, cst = vakonomic_text(source, n, k, theta_refresh)
    return numba_kernels.load_module(text, "liedyn_nhq")["run"], cst
