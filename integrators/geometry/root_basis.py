"""A sparse basis of a Lie algebra given in a dense one: the root basis of a regular element, in which the
compiled code takes the coadjoint products and the Casimirs' gradients.

In a random basis the structure constants of so(5) have 900 non-zero entries and its quartic Casimir 714
terms; a coadjoint product costs one product per entry and a projection onto the Casimirs one per term of
the gradient. Both are properties of the basis, not of the algebra: in a basis adapted to a Cartan
subalgebra they are sparse.

Construction (the root space decomposition; Humphreys 1972, *Introduction to Lie Algebras and Representation
Theory*, 8.1, 15.3). For a regular element x (a seeded random one: regular ones are dense), ad_x is
diagonalisable when g is reductive; its kernel is a Cartan subalgebra h (the centraliser of x) and its other
eigenvectors are root vectors, g = h + sum_a g_a with [h, g_a] in g_a and [g_a, g_b] in g_(a+b). A real basis:
an orthonormal basis of ker ad_x, each real eigenvector, and the real and imaginary parts of one of each
complex pair (for lambda = alpha + i beta with eigenvector v, ad_x acts on (Re v, Im v) as a rotation-dilation),
each of unit length. In it [f_a, f_b] has at most four non-zero components for root vectors (the parts of
g_(+-a+-b)) and the invariant polynomials only monomials of weight zero. With the phases of the complex root
vectors fixed by brackets (e_(a+b) along [e_a, e_b], as in a Chevalley basis) and the Cartan part spanned by
coroots, fewer still (the sparser of the two bases is kept): so(5) in a random basis 900 -> 84 entries of C,
714 -> 89 terms of the quartic; sp(4) 900 -> 60, 714 -> 37; sl(3) 448 -> 44, 120 -> 12 (its own basis's
counts); so(4) 180 -> 12.

The basis is kept only when it is well conditioned (cond(T) <= :data:`COND_MAX`: the round-off of a quantity
taken through it is ~cond(T) eps) and sparser than the given one; a defective ad_x (se(3), whose generic
ad_x has Jordan blocks; nilpotent and most solvable algebras) shows as an ill-conditioned eigenvector matrix
and gives None. The constants in the new basis are computed, entries below 1e-12 of the largest set to zero
(the exact ones are zero: the weights forbid them) and checked: mapped back they give C to 1e-11 of its size.

The almost abelian algebras keep their own adapted basis (:mod:`integrators.geometry.almost_abelian`), whose
exponential is a closed form, and an algebra with an abelian radical (se(3)) the basis of its Levi decomposition
(:mod:`integrators.geometry.levi_basis`); :func:`integrators.geometry.sparse_basis.sparse_basis` returns whichever
applies.
"""

from __future__ import annotations

import numpy as np

#: the largest condition number of a root basis kept (its round-off is ~cond(T) eps)
COND_MAX = 100.0
#: entries of the new structure constants below this fraction of the largest are the zeros of the weights
CLEAN = 1e-12


class RootBasis:
    """A basis f_a = sum_i T[i, a] e_i (``T``, ``Tinv``) in which the structure constants ``constants()`` are
    sparse (module docstring); ``rank`` and ``blocks`` say which columns span the Cartan subalgebra and each
    root plane. Coordinates: an element x = T xhat (xhat = Tinv x); a covector zhat = T^T z
    (zhat_a = (z, f_a), the pairing kept)."""

    def __init__(self, T, Ch, rank, blocks):
        self.T = T
        self.Tinv = np.linalg.inv(T)
        self._Ch = Ch
        self.rank = rank          # the first ``rank`` columns span the Cartan subalgebra ker ad_x
        self.blocks = blocks      # (first column, 1 or 2): a real root vector, or the pair Re v, Im v

    def constants(self):
        """The structure constants in this basis, [f_a, f_b] = sum_c Ch[a, b, c] f_c (cleaned of round-off)."""
        return self._Ch


_FORMS = {}


def root_basis(C):
    """The :class:`RootBasis` of structure constants C when one is well conditioned and has fewer non-zero
    constants than C, else None (module docstring); cached per C."""
    C = np.asarray(C, dtype=float)
    key = (C.shape, C.tobytes())
    if key not in _FORMS:
        _FORMS[key] = _recognise(C)
    return _FORMS[key]


def _recognise(C):
    n = C.shape[0]
    size = float(np.max(np.abs(C))) if C.size else 0.0
    if n < 3 or size == 0.0:
        return None
    best = None
    for x in _regular(C, size):
        for aligned in (False, True):
            form = _candidate(C, x, size, aligned)
            if form is not None and (best is None or _rank(form) < _rank(best)):
                best = form
    if best is None or np.count_nonzero(best.constants()) >= np.count_nonzero(C):
        return None
    return best


def _regular(C, size, cartans=8, tries=6):
    """Regular elements, one in each of a few Cartan subalgebras (ker ad_x0 of seeded random x0: a real form
    has several classes of them, sl(3, R) a split one with real roots, whose basis is sparser, and one with a
    complex pair), each the one of a few seeded draws in it whose ad has its non-zero eigenvalues farthest
    apart: the eigenvectors of ad_x are accurate to ~eps |ad_x| / gap, and two roots whose values at x
    nearly coincide would mix their vectors."""
    n = C.shape[0]
    rng = np.random.default_rng(0)
    out = []
    for _ in range(cartans):
        A0 = np.einsum("j,jik->ki", rng.standard_normal(n), C)
        _, sv, Vt = np.linalg.svd(A0)
        if sv[0] == 0.0:
            return []
        r = int(np.sum(sv <= 1e-9 * float(sv[0])))
        if r == 0:
            return []
        H = Vt[n - r:]
        best = None
        for _ in range(tries):
            x = rng.standard_normal(r) @ H
            lam = np.linalg.eigvals(np.einsum("j,jik->ki", x, C))
            scale = float(np.max(np.abs(lam)))
            if scale == 0.0:
                continue
            nz = lam[np.abs(lam) > 1e-9 * scale]
            # (a complex pair's two members are apart by 2 |Im|, whatever the gap to the others)
            gap = min((abs(a - b) for i, a in enumerate(nz) for b in nz[i + 1:]
                       if abs(a.imag) <= 1e-9 * scale or abs(a - np.conj(b)) > 1e-9 * scale), default=scale)
            if best is None or gap / scale > best[0]:
                best = (gap / scale, x)
        if best is not None:
            out.append(best[1])
    return out


def _rank(form):
    """Fewer non-zero constants first, then the better conditioned basis (its round-off)."""
    return (int(np.count_nonzero(form.constants())), float(np.linalg.cond(form.T)))


def _candidate(C, x, size, aligned=False):
    """The real root basis of ad_x (module docstring), or None when ad_x is not diagonalisable with a
    well-conditioned basis or the cleaned constants do not give C back. ``aligned``: the phase of each complex
    root vector fixed by the bracket of two earlier ones when its root is their sum (e_(a+b) along [e_a, e_b],
    as in a Chevalley basis: the brackets then land on fewer of the real parts), and the Cartan part spanned by
    coroots [Re v, Im v] (or [v, v'] for a pair of real roots +-a) where r independent ones exist."""
    n = C.shape[0]
    A = np.einsum("j,jik->ki", x, C)                  # ad_x: column i is [x, e_i]
    lam, V = np.linalg.eig(A)
    if not (np.all(np.isfinite(lam)) and np.all(np.isfinite(V))):
        return None
    scale = float(np.max(np.abs(lam)))
    if scale == 0.0 or np.linalg.cond(V) > COND_MAX ** 2:
        return None
    zero = np.abs(lam) <= 1e-9 * scale
    r = int(np.sum(zero))
    _, sv, Vt = np.linalg.svd(A)
    if r == 0 or np.any(sv[n - r:] > 1e-8 * sv[0]):
        return None                                    # the kernel is not r-dimensional: not semisimple
    reals, pairs = [], []                              # (eigenvalue, vector): real roots; complex, Im > 0
    used = zero.copy()
    for k in np.argsort(np.abs(lam.imag), kind="stable"):
        if used[k]:
            continue
        used[k] = True
        if abs(lam[k].imag) <= 1e-12 * scale:
            v = V[:, k].real if np.linalg.norm(V[:, k].real) >= np.linalg.norm(V[:, k].imag) else V[:, k].imag
            reals.append((lam[k].real, v / np.linalg.norm(v)))
            continue
        rest = [j for j in range(n) if not used[j]]
        if not rest:
            return None
        j = min(rest, key=lambda j: abs(lam[j] - np.conj(lam[k])))
        used[j] = True
        kk = k if lam[k].imag > 0 else j
        pairs.append((lam[kk], V[:, kk] / np.linalg.norm(V[:, kk])))
    cartan = list(Vt[n - r:])                          # orthonormal basis of ker ad_x
    if aligned:
        pairs.sort(key=lambda t: abs(t[0]))
        for i, (mu, v) in enumerate(pairs):
            for (ma, va), (mb, vb) in ((a, b) for ia, a in enumerate(pairs[:i]) for b in pairs[ia + 1:i]):
                if abs(ma + mb - mu) <= 1e-8 * scale:
                    w = np.einsum("i,j,ijk->k", va, vb, C)
                    if np.linalg.norm(w) > 1e-6 * size:
                        pairs[i] = (mu, w / np.linalg.norm(w))
                        break
        cor = [np.einsum("i,j,ijk->k", v.real, v.imag, C) for _, v in pairs]
        cor += [np.einsum("i,j,ijk->k", v, w, C) for a, v in reals for b, w in reals if a > 0 and abs(a + b) <= 1e-8 * scale]
        chosen = []
        for w in cor:
            if np.linalg.norm(w) > 1e-6 * size and np.linalg.matrix_rank(np.array(chosen + [w / np.linalg.norm(w)]), tol=1e-6) > len(chosen):
                chosen.append(w / np.linalg.norm(w))
        if len(chosen) == r:
            cartan = chosen
    cols, blocks = list(cartan), []
    for _, v in reals:
        blocks.append((len(cols), 1))
        cols.append(v)
    for _, v in pairs:
        if min(np.linalg.norm(v.real), np.linalg.norm(v.imag)) <= 1e-8 * np.linalg.norm(v):
            return None
        blocks.append((len(cols), 2))
        cols += [v.real / np.linalg.norm(v.real), v.imag / np.linalg.norm(v.imag)]
    T = np.array(cols).T
    Ch = constants_in(C, T, size)
    return None if Ch is None else RootBasis(T, Ch, r, blocks)


def constants_in(C, T, size):
    """The structure constants in the basis of the columns of T, [f_a, f_b] = sum_c Ch[a, b, c] f_c, cleaned
    (entries below CLEAN of the largest: the zeros of the weights) and checked (mapped back they give C to
    1e-13 COND_MAX of its size ``size``); None when T is not a well-conditioned (n, n) basis (cond(T) > COND_MAX)
    or the check fails."""
    n = C.shape[0]
    if T.shape != (n, n) or np.linalg.cond(T) > COND_MAX:
        return None
    Tinv = np.linalg.inv(T)
    Ch = np.einsum("ia,jb,ijk,ck->abc", T, T, C, Tinv, optimize=True)
    Ch[np.abs(Ch) <= CLEAN * float(np.max(np.abs(Ch)))] = 0.0
    back = np.einsum("ai,bj,abc,kc->ijk", Tinv, Tinv, Ch, T, optimize=True)
    if np.max(np.abs(back - C)) > 1e-13 * COND_MAX * size:
        return None
    return Ch
