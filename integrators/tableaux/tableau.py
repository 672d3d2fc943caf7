"""The one tableau type: the coefficients of an explicit Runge-Kutta method, its embedded error
estimate and its continuous extension, checked when it is created.

A tableau (Butcher 1963; Hairer, Norsett and Wanner, *Solving ODEs I*, II.1-II.6) with s stages is

    k_i = f(t + c_i h, y + h sum_{j<i} a_ij k_j),   y1 = y + h sum_i b_i k_i,

``A`` (s, s) strictly lower triangular, ``b`` and ``c`` (s,). An embedded pair adds error weight vectors
``E`` (one, or two for Hairer's DOP853 norm), each over the s stages and, when ``fsal``, the stage
h f(t + h, y1) of the next step as an (s+1)-th entry; err = h sum_i E_i k_i estimates the local error of
a method of order ``err_order``. A continuous extension (dense output) of order ``dense_order`` is

    y(t + theta h) ~ y + h sum_i b_i(theta) k_i,   b_i(theta) = sum_{q>=1} P[i, q-1] theta^q,

its rows over the s stages, the FSAL stage and ``extra`` stages (rows ``extra_A`` over all the stages
before them, nodes ``extra_c``) computed only when output is wanted.

Checks at creation (:class:`TableauError`, naming the tableau and the entry): shapes, A strictly lower
triangular, the row-sum condition c_i = sum_j a_ij, sum b_i = 1, every error weight vector summing to 0
(both solutions of the pair are consistent), b_i(1) = b_i (0 for the FSAL and extra stages). The order
conditions up to ``order`` are checked by :func:`order_defects` (in the tests, over every tableau: the
rooted trees up to order 8 cost a few milliseconds each).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..core.errors import IntegratorError

#: tolerance of the creation checks (the coefficients are floats rounded from exact or 16-digit values)
TOL = 1e-13


class TableauError(IntegratorError):
    """A tableau whose coefficients fail a consistency condition (the message names which, where, by how much)."""


def _frozen(x, shape, what, name):
    a = np.array(x, dtype=float)
    if a.shape != shape:
        raise TableauError(f"tableau {name!r}: {what} must have shape {shape}, got {a.shape}")
    a.flags.writeable = False
    return a


def _square(rows, s, name, what="A"):
    A = np.zeros((s, s))
    if len(rows) != s:
        raise TableauError(f"tableau {name!r}: {what} must have {s} rows, got {len(rows)}")
    for i, row in enumerate(rows):
        row = np.asarray(row, dtype=float).ravel()
        if row.size > s:
            raise TableauError(f"tableau {name!r}: row {i} of {what} has {row.size} entries for {s} stages")
        A[i, :row.size] = row
    return A


@dataclass(frozen=True, eq=False)
class Tableau:
    """Coefficients of an explicit Runge-Kutta method (see the module docstring). ``A`` may be given as
    ragged rows (row i with at most s entries, the rest 0); every array is stored read-only."""

    name: str
    A: np.ndarray
    b: np.ndarray
    c: np.ndarray
    order: int
    reference: str
    E: tuple = ()
    err_order: int | None = None
    fsal: bool = False
    P: np.ndarray | None = None
    dense_order: int | None = None
    extra_A: tuple = ()
    extra_c: tuple = ()
    #: the stage count, set from b
    s: int = field(init=False)

    def __post_init__(self):
        name = self.name
        b = np.array(self.b, dtype=float).ravel()
        s = b.size
        set_ = object.__setattr__
        set_(self, "s", s)
        A = self.A if isinstance(self.A, np.ndarray) and self.A.shape == (s, s) else _square(self.A, s, name)
        set_(self, "A", _frozen(A, (s, s), "A", name))
        set_(self, "b", _frozen(b, (s,), "b", name))
        set_(self, "c", _frozen(self.c, (s,), "c", name))
        if not (isinstance(self.order, int) and 1 <= self.order <= 12):
            raise TableauError(f"tableau {name!r}: order must be an integer 1..12, got {self.order!r}")
        upper = np.triu(self.A)
        if np.any(upper != 0.0):
            i, j = np.argwhere(upper != 0.0)[0]
            raise TableauError(f"tableau {name!r}: A must be strictly lower triangular (explicit); "
                               f"a[{i}][{j}] = {self.A[i, j]!r}")
        rows = np.abs(self.A.sum(axis=1) - self.c)
        if rows.max() > TOL:
            i = int(np.argmax(rows))
            raise TableauError(f"tableau {name!r}: row-sum condition c_i = sum_j a_ij fails at row {i}: "
                               f"c = {self.c[i]!r}, sum = {self.A[i].sum()!r} (off by {rows[i]:.2e})")
        if abs(self.b.sum() - 1.0) > TOL:
            raise TableauError(f"tableau {name!r}: the weights b must sum to 1 (consistency), they sum to "
                               f"{self.b.sum()!r}")
        width = s + (1 if self.fsal else 0)
        E = tuple(_frozen(np.pad(np.asarray(e, dtype=float), (0, width - len(e))), (width,), f"E[{k}]", name)
                  for k, e in enumerate(self.E))
        set_(self, "E", E)
        for k, e in enumerate(E):
            if abs(e.sum()) > TOL:
                raise TableauError(f"tableau {name!r}: error weights E[{k}] must sum to 0 (both solutions "
                                   f"consistent), they sum to {e.sum():.3e}")
        if E and not (isinstance(self.err_order, int) and 1 <= self.err_order < self.order):
            raise TableauError(f"tableau {name!r}: an embedded pair needs err_order in 1..order-1, got "
                               f"{self.err_order!r}")
        if len(self.extra_A) != len(self.extra_c):
            raise TableauError(f"tableau {name!r}: extra_A has {len(self.extra_A)} rows for "
                               f"{len(self.extra_c)} nodes extra_c")
        if self.P is not None:
            P = np.asarray(self.P, dtype=float)
            rows_expected = width + len(self.extra_c)
            if P.ndim != 2 or P.shape[0] != rows_expected:
                raise TableauError(f"tableau {name!r}: P must have {rows_expected} rows (stages, FSAL stage, "
                                   f"extra stages), got shape {P.shape}")
            P = _frozen(P, P.shape, "P", name)
            set_(self, "P", P)
            at1 = P.sum(axis=1) - np.concatenate([self.b, np.zeros(rows_expected - s)])
            if np.abs(at1).max() > 1e-12:
                i = int(np.argmax(np.abs(at1)))
                raise TableauError(f"tableau {name!r}: the continuous extension must match the step at "
                                   f"theta = 1: b_{i}(1) is off by {at1[i]:.2e}")
            if not (isinstance(self.dense_order, int) and 1 <= self.dense_order <= self.order):
                raise TableauError(f"tableau {name!r}: dense_order must be in 1..order, got {self.dense_order!r}")

    @property
    def adaptive(self) -> bool:
        """Whether the tableau is an embedded pair (has error weights)."""
        return bool(self.E)

    def weights(self, theta):
        """b_i(theta) of the continuous extension at the points theta (m,): shape (m, rows of P)."""
        if self.P is None:
            raise TableauError(f"tableau {self.name!r} has no continuous extension")
        th = np.asarray(theta, dtype=float)[:, None]
        out = np.zeros((th.shape[0], self.P.shape[0]))
        for q in range(self.P.shape[1] - 1, -1, -1):     # Horner in theta, then one factor theta
            out = (out + self.P[:, q]) * th
        return out

    def __repr__(self):
        pair = f", pair {self.order}({self.err_order})" if self.E else ""
        return f"Tableau({self.name!r}, {self.s} stages, order {self.order}{pair})"


# ---- the order conditions (Butcher's rooted trees) ------------------------------------------------------

@lru_cache(maxsize=None)
def rooted_trees(n):
    """The rooted trees with n vertices, each a sorted tuple of its subtrees (a leaf is ()); 1, 1, 2, 4, 9,
    20, 48, 115 of them for n = 1..8 (OEIS A000081)."""
    if n == 1:
        return ((),)
    out = set()
    # children: a multiset of trees with n - 1 vertices in total
    for parts in _partitions(n - 1):
        for kids in _choose(parts):
            out.add(tuple(sorted(kids)))
    return tuple(sorted(out))


def _partitions(n, largest=None):
    largest = n if largest is None else largest
    if n == 0:
        yield ()
        return
    for k in range(min(n, largest), 0, -1):
        for rest in _partitions(n - k, k):
            yield (k,) + rest


def _choose(sizes):
    if not sizes:
        yield ()
        return
    for t in rooted_trees(sizes[0]):
        for rest in _choose(sizes[1:]):
            yield (t,) + rest


def _order(t):
    return 1 + sum(_order(k) for k in t)


def _gamma(t):
    g = _order(t)
    for k in t:
        g *= _gamma(k)
    return g


def order_defects(tab: Tableau, order: int | None = None):
    """[(tree, b . Phi(tree) - 1/gamma(tree))] over the rooted trees up to ``order`` (default the
    tableau's), Butcher's order conditions: the method has order p iff every defect up to p is 0."""
    p = tab.order if order is None else order
    A, b = tab.A, tab.b
    memo = {}

    def g(t):   # the stage vector of a tree: prod over the children of A g(child)
        v = memo.get(t)
        if v is None:
            v = np.ones(tab.s)
            for k in t:
                v = v * (A @ g(k))
            memo[t] = v
        return v

    return [(t, float(b @ g(t)) - 1.0 / _gamma(t)) for n in range(1, p + 1) for t in rooted_trees(n)]


def dense_defects(tab: Tableau, order: int | None = None, thetas=(0.3, 0.7)):
    """Order conditions of the continuous extension at theta: sum_i b_i(theta) Phi_i(tree) =
    theta^|t| / gamma(tree) for every tree up to ``order`` (default ``dense_order``), over the stages of
    the step, the FSAL stage (node 1, row b) and the extra stages."""
    p = tab.dense_order if order is None else order
    s, fs, ne = tab.s, (1 if tab.fsal else 0), len(tab.extra_c)
    m = s + fs + ne
    A = np.zeros((m, m))
    A[:s, :s] = tab.A
    if fs:
        A[s, :s] = tab.b
    for k, row in enumerate(tab.extra_A):
        A[s + fs + k, :len(row)] = row
    memo = {}

    def g(t):
        v = memo.get(t)
        if v is None:
            v = np.ones(m)
            for k in t:
                v = v * (A @ g(k))
            memo[t] = v
        return v

    out = []
    for th in thetas:
        w = tab.weights(np.array([th]))[0]
        for n in range(1, p + 1):
            for t in rooted_trees(n):
                out.append(((th, t), float(w @ g(t)) - th ** n / _gamma(t)))
    return out

