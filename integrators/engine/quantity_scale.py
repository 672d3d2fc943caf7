"""The scale of a declared quantity at a state, S(y) = sum_i |q(r e_i)|, r = |y|_inf (q on the coordinate axes at
the size of y: the size of the round-off in q(y)), for the end-of-run check of :mod:`integrators.engine.guard`,
and the reductions over a short last axis that the check's arrays need.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

#: the highest polynomial_degree whose scale comes from its coefficients on the axes (:func:`scales`)
POLY_MAX = 8


def fold_last(a, ufunc, whole):
    """``whole(a, axis=-1)`` (np.max, np.sum) as a chain of ``ufunc`` (np.maximum, np.add) over the
    columns when the axis is short (the algebra index, a batch of one), since numpy's reduction along a
    short contiguous axis costs ~20x more on the (K, n) arrays of a run (NaN propagates as in np.max)."""
    d = a.shape[-1]
    if d > 16:
        return whole(a, axis=-1)
    out = a[..., 0].copy()
    for i in range(1, d):
        ufunc(out, a[..., i], out=out)
    return out


def max_last(a):
    """max over the last axis (:func:`fold_last`)."""
    return fold_last(a, np.maximum, np.max)


def sum_last(a):
    """sum over the last axis (:func:`fold_last`)."""
    return fold_last(a, np.add, np.sum)


def absmax_last(a):
    """max_i |a_i| over the last axis (see :func:`max_last`)."""
    return max_last(np.abs(a))


def scales(qs, r, n):
    """S(y) = sum_i |q(r e_i)|, r = |y|_inf, of every quantity q in ``qs`` at the sizes ``r`` (m, ...)
    (one per probe and trajectory) in dimension ``n`` -> (Q, m, ...); a quantity that does not return
    one value per row gets S = 0, a non-finite value counts 0. Call under np.errstate(all="ignore").

    * A quantity with an integer ``homogeneous_degree`` d (a homogeneous polynomial, e.g. a
      :class:`liegroups.casimirs.Casimir`) is called once, on the unit rows: q(r e_i) = r^d q(e_i).
    * One with an integer ``polynomial_degree`` d (:func:`integrators.core.quantities.polynomial_quantity`: a
      polynomial of total degree <= d, e.g. an energy (z, W z)/2 + (c, z)) is called on the rows k e_i,
      k = 0..d: on each axis q(r e_i) = sum_k a_ik r^k, whose coefficients the (d + 1) x (d + 1)
      Vandermonde system of the nodes 0..d gives; S is then Horner's sum at every r (n (d + 1) rows
      instead of n per trajectory: an ensemble of 10^4 states of dimension 6 called a 60,000-row q).
    * Any other is called on the rows r e_i of every r (the probe, as one (M, n) array: a quantity of the
      state row by row gives the same values, and numpy's matmul of a stack (m, ..., n, n) @ (n, k) costs
      a call per n x n matrix), or on the probe (m, ..., n, n) as it is when it refuses the flat rows."""
    r = np.asarray(r, dtype=float)
    want = r.shape
    eye = np.eye(n)
    probe = None
    out = np.zeros((len(qs),) + want)
    for a, q in enumerate(qs):
        d = getattr(q, "homogeneous_degree", None)   # q(r e_i) = r^d q(e_i): one call on the unit rows
        if isinstance(d, int) and not isinstance(d, bool) and d >= 0:
            unit = _axes(q, n, d, True)
            if unit is not None:
                out[a] = r ** d * unit
                continue
        d = getattr(q, "polynomial_degree", None)    # q(r e_i) a polynomial of degree <= d in r
        if isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= POLY_MAX:
            coef = _axes(q, n, d, False)
            if coef is not None:
                v = np.broadcast_to(coef[d], want + (n,))
                for k in range(d - 1, -1, -1):
                    v = v * r[..., None] + coef[k]
                out[a] = finite_abs_sum(v)
                continue
        if probe is None:
            probe = r[..., None, None] * eye
        rows = probe.reshape(-1, n)
        try:
            v = np.asarray(q(rows), dtype=float)
            flat = v.shape == rows.shape[:1]
        except Exception:       # noqa: BLE001 (not one row per state: called on the probe as it is)
            flat = False
        v = v.reshape(want + (n,)) if flat else np.asarray(q(probe), dtype=float)
        if v.shape == want + (n,):
            out[a] = finite_abs_sum(v)
    out[~(out < np.inf)] = 0.0
    return out


def scales_at(qs, rs, n):
    """:func:`scales` at a few sizes ``rs`` (floats) as Python floats, [[S(r) for r in rs] for q in qs]: a declared
    polynomial from its values on the axes (cached, :func:`_axes`) in floats, without the ~10 numpy calls on arrays
    of a few numbers that :func:`scales` makes per quantity (one trajectory's check reads two sizes); any other
    quantity through :func:`scales`. A non-finite term or S counts 0, as there."""
    out = []
    for q in qs:
        row = None
        d = getattr(q, "homogeneous_degree", None)
        if isinstance(d, int) and not isinstance(d, bool) and d >= 0:
            unit = _axes(q, n, d, True)
            if unit is not None:
                row = [r ** d * unit for r in rs]
        d = getattr(q, "polynomial_degree", None)
        if row is None and isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= POLY_MAX:
            coef = _axes(q, n, d, False)
            if coef is not None:
                cols = coef.tolist()
                row = []
                for r in rs:
                    v = cols[d]
                    for k in range(d - 1, -1, -1):
                        v = [x * r + c for x, c in zip(v, cols[k])]
                    row.append(sum(abs(x) for x in v if abs(x) < math.inf))
        if row is None:
            row = scales([q], np.array(rs, dtype=float), n)[0].tolist()
        out.append([x if x < math.inf else 0.0 for x in row])
    return out


#: quantity -> {(n, d, homogeneous): what :func:`_axes` computed}: a declared polynomial is a fixed function, so its
#: values on the axes are computed once (a Casimir's two calls a run were a third of a short run's check)
_AXES = weakref.WeakKeyDictionary()


def _axes(q, n, d, homogeneous):
    """What :func:`scales` reads of a declared polynomial q on the axes of R^n, cached per q: with ``homogeneous``
    (degree d) sum_i |q(e_i)| (non-finite terms 0), else the coefficients a (d + 1, n) of q(r e_i) = sum_k a_ki r^k
    (the Vandermonde system of q at r = 0..d on each axis); None when q does not return one value per row."""
    try:
        memo = _AXES.setdefault(q, {})
    except TypeError:          # not weakly referable (or unhashable): computed every call
        memo = {}
    key = (n, d, homogeneous)
    if key not in memo:
        eye = np.eye(n)
        if homogeneous:
            unit = np.abs(np.asarray(q(eye), dtype=float))
            memo[key] = float(np.sum(unit[unit < np.inf])) if unit.shape == (n,) else None
        else:
            nodes = np.arange(d + 1.0)
            at = np.asarray(q((nodes[:, None, None] * eye).reshape(-1, n)), dtype=float)
            memo[key] = (np.linalg.solve(np.vander(nodes, increasing=True), at.reshape(d + 1, n))
                         if at.shape == ((d + 1) * n,) else None)
    return memo[key]


def finite_abs_sum(v):
    """sum_i |v_i| over the last axis, a non-finite term counted 0."""
    v = np.abs(v)
    v[~(v < np.inf)] = 0.0
    return sum_last(v)
