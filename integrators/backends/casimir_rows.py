"""Polynomial Casimirs at the rows of an array of states, compiled once per machine: the end-of-run check of
:mod:`integrators.engine.guard` evaluates a run's declared Casimirs on its saved states here.

The formulas are those of :func:`liegroups.monomials.monomial_sum` (the monomials below the top degree built block
by block, the values as sum_j z_j (H m)_j), as the generic kernels compute them: the ensemble kernel's lanes,
``gl_casimirs``, on blocks of states (:data:`integrators.codegen.generic_ensemble_source.ROWS_TEXT`; the tables
from :func:`tables`); the values agree with numpy's to round-off. At the 1001 saved states of ``simulate``'s
default grid (timeit, one core): the two Casimirs of sl(3) 0.05 ms against 0.23 ms in numpy, so(5)'s in a random
basis (a 714-term quartic) 0.31 ms against 0.91 ms.

The module is small and never compiled during a run: :func:`warm` compiles it into numba's disk cache (the
Makefile's install step and :func:`integrators.backends.generic_kernel.warm` call it), :func:`values` answers None
until it is loaded in this process, and the guard's first check that finds it on disk has it loaded in liedyn's
background thread (:func:`integrators.backends.background.submit`) for the later runs.
"""

from __future__ import annotations

import sys

import numpy as np

from liegroups.monomials import monomial_tables

from ..codegen.generic_ensemble_source import ROWS_FUNCTIONS, ROWS_TEXT
from . import numba_kernels

#: the states of a block of gk_casimir_rows (its monomials: low x BLOCK floats, 286 x 128 for so(5)'s quartic)
BLOCK = 128
_NS = {}
#: (ids of the polynomials, n) -> (the polynomials, their tables, the length of the monomials' work vector)
_TABLES = {}


def tables(polys, n, grad=True):
    """Polynomials in n variables (``polys``: a list of [(coefficient, exponents), ...], e.g. the ``terms`` of a
    :class:`liegroups.casimirs.Casimir`; None: none) as ``gk_casimirs`` reads them: the tables of
    :func:`liegroups.monomials.monomial_tables` with the rows H of the values and D of the gradients as one sparse
    table -> (qb (blocks, 4): first monomial, count, parent, variable; qp (2 p n + 1): the row pointers, H's rows
    then D's; qi, qv: the columns and values of the entries; qc (p,): the constants). Only the monomials the rows
    read are formed; without ``grad`` D's rows are empty and the values need fewer (so(5)'s quartic in its own basis
    54 of the 286 below degree 4, 140 with the gradients)."""
    if polys is None:
        return (np.zeros((0, 4), np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0),
                np.zeros(0))
    blocks, H, D, const, low, _ = monomial_tables([[(ex, cf) for cf, ex in poly] for poly in polys], n, grad=grad)
    H, D = (M.toarray() if hasattr(M, "toarray") else M for M in (H, D))     # dense or CSR
    qb = np.array([(c0, c1 - c0, p0, j) for c0, c1, p0, _, j in blocks if c0 < c1 <= low] or np.zeros((0, 4)),
                  dtype=np.int64).reshape(-1, 4)
    rows = np.concatenate([H, D])
    nz = rows != 0.0
    qp = np.ascontiguousarray(np.concatenate([[0], np.cumsum(nz.sum(axis=1))]), dtype=np.int64)
    qi = np.ascontiguousarray(np.nonzero(nz)[1], dtype=np.int64)     # row by row, columns increasing
    return qb, qp, qi, np.ascontiguousarray(rows[nz], dtype=float), np.ascontiguousarray(const[:, 0], dtype=float)


def monomials(qb):
    """The length of gk_casimirs' work vector of monomials for the blocks qb of :func:`tables`: m_0 and every
    block's rows."""
    return int(max([1] + [first + count for first, count, _, _ in qb.tolist()]))


def _text():
    free = numba_kernels.no_refcount_option()        # no array is allocated inside: no reference counting
    jit = f"numba.njit({free}nogil=True, **JIT)"
    return ROWS_TEXT + "\n" + "".join(f"{name} = {jit}({name})\n" for name in ROWS_FUNCTIONS)


def _marker():
    if "marker" not in _NS:      # once per process (it hashes the text and reads genhelpers' file)
        _NS["marker"] = numba_kernels.kernel_marker(_text(), "liedyn_casimir_rows", "the compiled Casimirs")
    return _NS["marker"]


def loaded():
    """True when the compiled evaluator is loaded in this process."""
    return "gk_casimir_rows" in _NS


def warm():
    """Compile (or load from numba's disk cache) the evaluator by one evaluation, and write its disk-cache marker."""
    ns = numba_kernels.load_module(_text(), "liedyn_casimir_rows", "the compiled Casimirs")
    n = 3
    tb = tables([[(1.0, (2, 0, 0))]], n)
    ns["gk_casimir_rows"](*tb, np.zeros((n, 1)), np.empty((1, 1)), *_work(1, n, monomials(tb[0])))
    numba_kernels.write_marker(_marker())
    _NS["gk_casimir_rows"] = ns["gk_casimir_rows"]


def on_disk():
    """True when numba is imported in this process (a numpy run never imports it here) and its disk cache holds the
    evaluator (a marker :func:`warm` wrote): loading it then takes no compile."""
    if not (numba_kernels.available() and "numba" in sys.modules):
        return False
    m = _marker()
    return m is not None and m.exists()


def values(casimirs, Z, basis=None):
    """The values (p, K) of polynomials (``casimirs``: objects with ``terms`` [(coefficient, exponents), ...] in
    n = Z.shape[1] variables, :class:`liegroups.casimirs.Casimir`) at the rows of Z (K, n), compiled; None when
    the evaluator is not loaded in this process (this never loads or compiles it: the caller may have
    :func:`warm` run in the background when :func:`on_disk`) or a polynomial has no terms. With ``basis`` = (T, Chat)
    (:func:`integrators.codegen.projection.sparse_polynomials`: C_k(z) = Chat_k(T^T z), Chat sparse) the values are
    Chat's at the rows of Z T: so(5)'s quartic in a random basis, 714 terms, is 89 there (0.16 -> 0.05 ms at 1001
    states); they agree with C's to the ~1e-12 of the terms' sizes that the change of basis costs."""
    fn = _NS.get("gk_casimir_rows")      # set by warm once loaded
    if fn is None:
        return None
    Z = np.asarray(Z, dtype=float)
    key = (tuple(id(c) for c in casimirs), Z.shape[1], id(basis))
    hit = _TABLES.get(key)
    if hit is None or hit[3] is not basis or any(a is not b for a, b in zip(hit[0], casimirs)):
        polys = [list(p) for p in basis[1]] if basis is not None else \
            [list(getattr(c, "terms", None) or ()) for c in casimirs]
        if not all(polys):
            return None
        if len(_TABLES) >= 64:
            _TABLES.clear()
        tb = tables(polys, Z.shape[1], grad=False)
        T = None if basis is None else np.array(basis[0], dtype=float)
        hit = _TABLES[key] = (tuple(casimirs), tb, monomials(tb[0]), basis, T)
    _, tb, nm, _, T = hit
    ZT = np.ascontiguousarray(Z.T) if T is None else T.T @ Z.T      # zhat = T^T z, as columns
    out = np.empty((len(casimirs), Z.shape[0]))
    fn(*tb, ZT, out, *_work(len(casimirs), Z.shape[1], nm))
    return out


def _work(p, n, nm):
    """gk_casimir_rows' work arrays for p polynomials in n variables with nm monomials below the top degree: the
    gradients' G (p, n, BLOCK) (not computed), the monomials (nm, BLOCK), two (BLOCK,) vectors."""
    return np.empty((p, n, BLOCK)), np.empty((nm, BLOCK)), np.empty(BLOCK), np.empty(BLOCK)
