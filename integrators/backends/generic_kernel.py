"""The generic compiled kernel: the text of :mod:`integrators.codegen.generic_source` turned into one
callable for every algebra, with a plan's structure, tableau and projection passed as arrays.

:func:`kernel` jits the text with numba's disk cache (the module file in the cache directory of
:mod:`integrators.backends.numba_kernels`, ``$LIEDYN_CACHE_DIR`` or ``~/.cache/liedyn``, named by the hash of
the text and of the helpers it calls), so it compiles once per machine and numba version whatever
the algebra; ``mode="python"`` runs the same text on Python floats (slow; for the tests without numba).
:func:`function` gives the adaptive loop of a structure and method with the call signature of the generated one
(``run(t0, t1, h, rtol, atol, max_step, save_every, max_steps, since, ts, ys, z..., e..., cz...[, te, ye, GI])``,
:func:`integrators.codegen.programs.adaptive_source`; with the output grid's arrays it fills them as the "adaptive_grid"
loop does), so the engine drives either the same way; the kernel itself has one signature (an empty grid when there
is none), so no call compiles again.
:func:`data` builds the arrays: C as index triples sorted by (j, i, k) (the order in which the generated
code sums ad*), W, c, P, ||ad_theta||_F^2 / (2 pi)^2 as a quadratic form (in g x g* for the RKMK steps of a
forced problem, :func:`integrators.codegen.affine_source.affine_adnorm_form`), B_k/k!, the tableau with the
FSAL stage as the last column of its error rows, its continuous extension (the extra stages' rows ``extra_A`` and
the weights' monomial coefficients P over the kernel's stage rows), the Casimirs' monomials of a projected pair or
the rows L and (L L^T)^-1 L of a forced problem's linear invariants
(:class:`integrators.codegen.linear_projection.LinearProjection`).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np

from liegroups.closed_forms import bernoulli_coefficients

from ..codegen import generic_source, orbit_source
from ..codegen.affine_source import affine_adnorm_form
from ..codegen.linear_projection import LinearProjection
from ..core import controller
from ..core.errors import MethodError
from ..geometry.recognition import Structure
from ..geometry.spaces import DEXPINV_KMAX, adnorm_form
from ..reference import genhelpers
from ..tableaux.dormand_prince import DP5
from . import casimir_rows, numba_kernels

_KERNELS = {}
_DATA = {}
_NO_TIMES = np.zeros(0)


def _text(mode):
    text = generic_source.text()
    if mode == "numba":   # every function but those that allocate (the entry, gk_work) without reference counting
        free = numba_kernels.no_refcount_option()
        text += "\n" + "".join(f"{name} = numba.njit({'' if name in generic_source.ALLOCATING else free}nogil=True, "
                               f"**JIT)({name})\n" for name in generic_source.FUNCTIONS)
    return text


def kernel(mode="numba"):
    """The entry point of the generic kernel (:data:`integrators.codegen.generic_source.ENTRY`), jitted
    (``mode`` "numba": MethodError without numba) or as Python ("python"), once per process."""
    fn = _KERNELS.get(mode)
    if fn is None:
        if mode == "numba":
            ns = numba_kernels.load_module(_text(mode), "liedyn_generic", "the generic kernel")
        else:
            ns = dict(genhelpers.SCALAR, np=np, math=math)
            exec(compile(_text(mode), "<liedyn generic kernel>", "exec"), ns)
        fn = _KERNELS[mode] = ns[generic_source.ENTRY]
    return fn


def compiled():
    """True when the numba kernel is compiled or loaded in this process (a call then needs no compiler)."""
    fn = _KERNELS.get("numba")
    return fn is not None and bool(fn.signatures)


def _marker():
    """The file that says the kernel was compiled into the disk cache (per text, numba and Python version),
    or None when the cache directory is not writable."""
    return numba_kernels.kernel_marker(_text("numba"), "liedyn_generic", "the generic kernel")


def on_disk():
    """True when numba's disk cache holds the kernel (a marker written after its first compile): loading
    it takes a fraction of a second, no compile."""
    m = _marker()
    return m is not None and m.exists()


def covers(pl):
    """True when the generic kernel runs plan ``pl``'s method: every plan but the Lie-group steps on an almost abelian
    algebra's orbits (:mod:`integrators.codegen.orbit_source`, R^2 acting; the kernel's steps are those of the
    coadjoint action, another method of the same order)."""
    return not orbit_source.applies(pl.st, pl.lie)


def data(st, tab, lie, terms, proj=None):
    """The arrays of the generic kernel for a recognised structure, a tableau, its form and the Casimir
    projection of a projected pair (or None), cached."""
    key = (st.key, tab.name, lie, terms, None if proj is None else proj.key)
    out = _DATA.get(key)
    if out is None:
        if len(_DATA) >= 256:
            _DATA.clear()
        out = _DATA[key] = _build(st, tab, lie, terms, proj)
    return out


def _arr(a, dtype=float):
    """A writable C-ordered copy: numba types a read-only or Fortran-ordered array apart (another compile)."""
    return np.array(a, dtype=dtype, order="C")


def _build(st, tab, lie, terms, proj):
    n = st.n
    C = np.asarray(st.C, dtype=float)
    jj, ii, kk = np.nonzero(C.transpose(1, 0, 2))            # sorted by (j, i, k)
    ci, cj, ck = (_arr(a, np.int64) for a in (ii, jj, kk))
    cv = _arr(C[ii, jj, kk])
    hasP = st.P is not None
    P = _arr(st.P if hasP else np.zeros((n, n)))
    # ||ad_theta||_F^2 / (2 pi)^2 in g, or in g x g* for the generators (w, f) of a forced problem's RKMK steps
    G2 = _arr((affine_adnorm_form(C) if lie and hasP else adnorm_form(C)) / (2.0 * np.pi) ** 2)
    bern = _arr(bernoulli_coefficients(DEXPINV_KMAX + 1))
    s = len(tab.b)
    E = np.zeros((len(tab.E), s + 1))
    for r, row in enumerate(tab.E):
        E[r, :len(row)] = row
    XA, PD = _dense_rows(tab)
    qb, qp, qi, qv, qc = _casimir_tables(None if isinstance(proj, LinearProjection) else proj, n)
    pL = pG = np.zeros((0, n))
    if isinstance(proj, LinearProjection):    # the linear invariants of a forced problem: L and (L L^T)^-1 L
        pL, pG = _arr(proj.L), _arr(proj.G)
    return (bool(lie), int(terms), ci, cj, ck, cv, _arr(st.W), _arr(st.c), P, hasP, G2, bern,
            _arr(tab.A), _arr(tab.b), _arr(E), bool(tab.fsal), int(controller.estimate_order(tab, lie)), XA, PD,
            qb, qp, qi, qv, qc, pL, pG)


def _casimir_tables(proj, n):
    """The Casimirs of a projected pair (``proj``; None: none) as the kernel's gk_casimirs reads them
    (:func:`integrators.backends.casimir_rows.tables`)."""
    return casimir_rows.tables(None if proj is None else proj.polys, n)


def _dense_rows(tab):
    """The continuous extension as the kernel's rows K (0..s-1 the stages, s the FSAL stage, s + 1 + x the extra
    stage x): XA (extra stages, rows) the extra stages' coefficients ``tab.extra_A`` over those rows, PD (rows,
    degree) the weights' monomial coefficients ``tab.P`` (a zero row s without FSAL); one zero row of PD and no
    extra stage for a tableau without a continuous extension (:func:`function` refuses a grid then)."""
    s, fs = len(tab.b), 1 if tab.fsal else 0
    if tab.P is None:
        return np.zeros((0, s + 1)), np.zeros((s + 1, 1))
    nx = len(tab.extra_c)
    rows = np.r_[np.arange(s + fs), s + 1 + np.arange(nx)]     # P's rows (stages, FSAL, extra) -> rows of K
    P = np.asarray(tab.P, dtype=float)
    PD = np.zeros((s + 1 + nx, P.shape[1]))
    PD[rows] = P
    XA = np.zeros((nx, s + 1 + nx))
    for x, row in enumerate(tab.extra_A):
        XA[x, rows[:len(row)]] = row
    return _arr(XA), _arr(PD)


def function(st, tab, lie, terms, proj=None, mode="numba"):
    """The adaptive loop of a structure and method by the generic kernel, with the signature and results of the generated
    ``run`` (:func:`integrators.codegen.programs.adaptive_source`, one trajectory): the state and its
    compensation as floats in and out, the arguments coerced to the kernel's one signature (so a call
    never compiles again). After z..., e..., cz... optionally the output grid's ``te, ye, GI``
    (:meth:`integrators.backends.output_grid.OutputGrid.args` "numba", as the generated "adaptive_grid"
    loop takes them); without them an empty grid."""
    kern = kernel(mode)
    arrays = data(st, tab, lie, terms, proj)
    n = st.n
    p = 0 if proj is None else proj.p

    def run(t0, t1, h, rtol, atol, max_step, save_every, max_steps, since, ts, ys, *zec):
        z = np.array(zec[:n], dtype=float)
        e = np.array(zec[n:2 * n], dtype=float)
        cz = np.array(zec[2 * n:2 * n + p], dtype=float)
        grid = zec[2 * n + p:]
        if grid:
            te, ye, GI = grid
            if tab.P is None:
                raise MethodError(f"tableau {tab.name!r} has no continuous extension: no output grid")
            if not (ye.flags.c_contiguous and ye.dtype == np.float64 and ye.shape[1:] == (n,)
                    and GI.dtype == np.int64 and GI.shape == (1,)):
                raise ValueError("the generic kernel fills a C-ordered float (G, n) grid with an int64 index GI")
        else:
            te, ye, GI = _NO_TIMES, np.empty((0, n)), np.zeros(1, np.int64)
        out = kern(float(t0), float(t1), float(h), float(rtol), float(atol), float(max_step), int(save_every),
                   int(max_steps), int(since), _arr(ts), _arr(ys), z, e, cz, _arr(te), ye, GI, *arrays)
        return tuple(out[:8]) + tuple(z.tolist()) + tuple(e.tolist()) + tuple(out[8:])

    return run


def warm_elsewhere():
    """Compile the numba kernel into its disk cache in a child process at nice 10 and return when it is done
    (:func:`warm` there): a compile in a thread of the caller's process holds the interpreter lock in long
    stretches and starves the caller's Python loop (measured: a numpy run 6-9 s took 53 s beside it); the
    child also finishes when the caller exits first. In this process the kernel is then loaded from disk
    (:func:`on_disk`). Without a writable cache directory: :func:`warm` here."""
    if numba_kernels.cache_dir() is None:
        warm()
        return
    root = str(Path(__file__).resolve().parents[2])
    code = ("import os, sys\ntry:\n    os.nice(10)\nexcept (AttributeError, OSError):\n    pass\n"
            f"sys.path.insert(0, {root!r})\nfrom integrators.backends import generic_kernel\ngeneric_kernel.warm()\n")
    subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, start_new_session=True, check=True)


def warm():
    """Compile (or load from the disk cache) the numba kernel with its one signature by a run of no step
    on the Heisenberg algebra, and write the disk-cache marker (:func:`on_disk`); returns the kernel."""
    kern = kernel("numba")
    n = 3
    C = np.zeros((n, n, n))
    C[0, 1, 2], C[1, 0, 2] = 1.0, -1.0
    arrays = _build(Structure(C, np.eye(n), np.zeros(n)), DP5, False, 1, None)
    kern(0.0, 0.0, 1.0, 1e-6, 1e-6, math.inf, 1, 1, 0, np.empty(4), np.empty((4, n)), np.zeros(n), np.zeros(n),
         np.zeros(0), np.zeros(0), np.empty((0, n)), np.zeros(1, np.int64), *arrays)
    numba_kernels.write_marker(_marker())
    casimir_rows.warm()       # the compiled Casimirs of the end-of-run check: compiled wherever this kernel is
    return kern
