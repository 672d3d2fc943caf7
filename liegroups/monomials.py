"""Values and gradients of polynomials on arrays of points from their monomials, without sympy: the tables
(:func:`monomial_tables`) built once per polynomial, the sums (:func:`monomial_sum`) per call. The Casimirs
(:class:`liegroups.casimirs.Casimir`) and the Casimir projection of the generated integrators evaluate through them."""

from __future__ import annotations

import numpy as np
import scipy  # scipy.sparse loads on first use (scipy's lazy submodules: ~0.2 s on its own)

__all__ = ["monomial_tables", "monomial_sum"]


def monomial_tables(terms, n, grad=True):
    """For a polynomial sum c_e m^e (``terms``: (exponents, c); or a list of such lists, several
    polynomials on the same monomials) of degree D: every monomial of degree <= D,
    degree by degree, each degree's ordered by its last variable j, so that the monomials of degree d with
    last variable j are those of degree d - 1 with last variable <= j (a prefix of that degree's rows)
    times m_j; as (rows, parent prefix) slices per (d, j); the monomials below degree D are what the
    values and gradients read (their number ``low``): the gradients' coefficient rows G (p n, low; row
    k n + j: d/dm_j of polynomial k), and the values as P_k(m) = c_k + sum_j m_j H_kj(m), each term
    c m^e written as m_j (c m^(e - e_j)) with j its last variable (rows H (p n, low), constants c (p, 1)):
    the top degree's monomials are never formed; H and G as CSR matrices when mostly zeros. For a few points
    the same rows are also read off the Kronecker powers 1, m, m (x) m, ... of degree < D (``kron``: H and G with one column per tensor index, the
    monomial's coefficient at its sorted index, zeros elsewhere; None when they would exceed _KRON_COLUMNS):
    four array operations instead of n a degree. Only the monomials the rows read are formed, with their ancestors
    (:func:`_pruned`: so(5)'s quartic in its own basis, 30 terms, 140 of the 286 monomials below degree 4 for values
    and gradients, 54 with ``grad`` False, whose tables give the values only: G is then zero; at 1001 points its
    values 260 -> 83 us, its gradients 257 -> 175 us)."""
    polys = [terms] if not terms or isinstance(terms[0][0][0], (int, np.integer)) else list(terms)
    D = max((sum(ex) for poly in polys for ex, _ in poly), default=0)
    order, blocks = [(0,) * n], []
    prev, prev_last = [(0,) * n], [-1]
    low = 1
    for _ in range(D):
        low = len(order)          # the monomials below the top degree: the rows the gradients read
        cur, cur_last = [], []
        start = len(order)
        for j in range(n):
            stop = sum(1 for lv in prev_last if lv <= j)      # parents with last variable <= j: a prefix
            rows = [ex[:j] + (ex[j] + 1,) + ex[j + 1:] for ex in prev[:stop]]
            blocks.append((len(order) + len(cur), len(order) + len(cur) + len(rows), start - len(prev),
                           start - len(prev) + stop, j))
            cur += rows
            cur_last += [j] * len(rows)
        order += cur
        prev, prev_last = cur, cur_last
    index = {e: i for i, e in enumerate(order)}
    p = len(polys)
    H, G, const = np.zeros((p * n, low)), np.zeros((p * n, low)), np.zeros((p, 1))
    for k, poly in enumerate(polys):
        for ex, c in poly:
            if not any(ex):
                const[k, 0] += c
                continue
            last = max(i for i, e in enumerate(ex) if e)      # c m^e = m_last (c m^(e - e_last))
            H[k * n + last, index[ex[:last] + (ex[last] - 1,) + ex[last + 1:]]] += c
            for j in range(n):
                if ex[j]:
                    G[k * n + j, index[ex[:j] + (ex[j] - 1,) + ex[j + 1:]]] += c * ex[j]
    if not grad:
        G[:] = 0.0
    blocks, keep = _pruned(blocks, low, np.flatnonzero(np.any(H != 0.0, axis=0) | np.any(G != 0.0, axis=0)))
    H, G, low = H[:, keep], G[:, keep], len(keep)
    order = [order[i] for i in keep]
    kron = None
    ncols = sum(n ** d for d in range(D))
    if 1 <= D and ncols <= _KRON_COLUMNS:
        pos = [0] * len(order)                  # each monomial's column: its sorted tensor index
        for i, ex in enumerate(order[:low]):
            idx = [j for j in range(n) for _ in range(ex[j])]
            flat = 0
            for j in idx:
                flat = flat * n + j
            pos[i] = sum(n ** d for d in range(len(idx))) + flat
        Hk, Gk = np.zeros((p * n, ncols)), np.zeros((p * n, ncols))
        Hk[:, pos[:low]], Gk[:, pos[:low]] = H, G
        kron = (Hk, Gk, D - 1)
    M = G if grad else H     # (the rows the products read)
    if M.size and np.count_nonzero(M) <= _SPARSE * M.size:    # the many-point products skip the zeros
        H, G = scipy.sparse.csr_matrix(H), scipy.sparse.csr_matrix(G)
    return blocks, H, G, const, low, kron


def _pruned(blocks, low, used):
    """The monomials below ``low`` that the rows read (``used``, indices in the order of :func:`monomial_tables`) and
    their ancestors (a monomial is its parent, without one of its last variable, times that variable), in that order
    (a parent before its children, the constant first) -> (blocks of the kept monomials: runs of consecutive ones
    whose parents are consecutive and share the variable, as (c0, c1, p0, p1, j) in the new numbering; the kept
    old indices)."""
    parent = {}
    for c0, c1, p0, _, j in blocks:
        if c0 < c1 <= low:
            for i in range(c1 - c0):
                parent[c0 + i] = (p0 + i, j)
    kept, stack = {0}, [int(u) for u in used]
    while stack:
        m = stack.pop()
        if m not in kept:
            kept.add(m)
            stack.append(parent[m][0])
    keep = sorted(kept)
    new = {m: i for i, m in enumerate(keep)}
    out = []
    for m in keep[1:]:
        p, j = parent[m]
        c, q = new[m], new[p]
        if out and out[-1][4] == j and out[-1][1] == c and out[-1][3] == q:
            out[-1][1] += 1
            out[-1][3] += 1
        else:
            out.append([c, c + 1, q, q + 1, j])
    return [tuple(b) for b in out], keep


#: coefficient rows with at most this fraction of non-zero entries are kept sparse (CSR). Measured at 1001
#: points, n = 10, 286 monomials (timeit): so(5)'s quartic in its own basis (G 2% non-zero) 770 -> 370 us a
#: gradient, in its root basis (4%) 760 -> 380 us; in a random basis (40%) the sparse product is slower (920 us)
_SPARSE = 0.1


#: the largest number of Kronecker columns (sum of n^d, d < D) of the few-point path of :func:`monomial_sum`
_KRON_COLUMNS = 4096
#: up to this many points :func:`monomial_sum` reads the Kronecker powers (numpy calls dominate there)
_KRON_POINTS = 8


def monomial_sum(tables, cols, grad):
    """The values (p, N) or gradients (p n, N) of the polynomials of ``tables`` (:func:`monomial_tables`) at the
    points whose coordinates are ``cols`` (n, ...): the monomials below the top degree, those of degree d
    with last variable j as one product of a block of rows of degree d - 1 and the row of m_j (n array
    operations a degree), then one matrix product with the coefficients (:func:`monomial_tables`), in
    chunks of points; up to _KRON_POINTS points from the Kronecker powers instead (the same rows, fewer calls). The quartic Casimir of so(5) in a random basis (~700 terms) at 1001 points: value
    1.5 ms, gradient 1.2 ms, against 20-25 and 28-39 ms for the lambdified expanded expression (~4 array
    operations a term; timeit, load ~10 on 2 cores)."""
    blocks, H, G, const, low, kron = tables
    flat = np.asarray(cols, dtype=float).reshape(len(cols), -1)
    n, p = flat.shape[0], const.shape[0]
    if kron is not None and flat.shape[1] <= _KRON_POINTS:
        Hk, Gk, top = kron
        powers, pw = [np.ones((1, flat.shape[1])), flat], flat
        for _ in range(top - 1):
            pw = (pw[:, None, :] * flat[None, :, :]).reshape(-1, flat.shape[1])
            powers.append(pw)
        K = np.concatenate(powers[:top + 1])
        if grad:
            return Gk @ K
        return const + np.einsum("kjw,jw->kw", (Hk @ K).reshape(p, n, -1), flat)
    out = np.empty((p * n if grad else p, flat.shape[1]))
    width = max(16, _MONOMIAL_FLOATS // low)
    mon = np.empty((low, min(width, flat.shape[1])))
    for a in range(0, flat.shape[1], width):
        f = flat[:, a:a + width]
        m = mon[:, :f.shape[1]]
        m[0] = 1.0
        for c0, c1, p0, p1, j in blocks:
            if c0 < c1 <= low:
                np.multiply(m[p0:p1], f[j], out=m[c0:c1])
        if grad:
            out[:, a:a + width] = G @ m
        else:
            out[:, a:a + width] = const + np.einsum("kjw,jw->kw", (H @ m).reshape(p, n, -1), f)
    return out


#: the monomials of one chunk of points in :func:`monomial_sum` (floats; 2 MB)
_MONOMIAL_FLOATS = 1 << 18
