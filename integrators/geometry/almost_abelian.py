"""Almost abelian Lie algebras g = R f0 + h (h an abelian ideal of codimension one), recognised in any basis,
with the adapted basis in which their exponential and dexp^-1 are closed forms.

An almost abelian algebra is fixed by the matrix D of ad_{f0} restricted to h: [f0, w] = D w, [w, w'] = 0
(R x_D R^(n-1), the "almost abelian" algebras; Bianchi III, V, VI_h, VII_h among the 3-dimensional ones).
With x = a f0 + v and y = b f0 + w (v, w in h),

    ad_x y = a D w - b D v,   so   ad_x = [[0, 0], [-D v, a D]]

in a basis (f0, basis of h): block lower triangular, and every analytic f of ad_x is

    f(ad_x) = [[f(0), 0], [f[0, a D] (-D v), f(a D)]],   f[0, K] = (f(K) - f(0)) K^-1,

(the powers are N^k = [[0, 0], [K^(k-1) c, K^k]] for N = [[0, 0], [c, K]]; the divided difference of a
function of a block triangular matrix, Higham 2008, *Functions of Matrices*, ch. 1). When D is diagonalisable, a real
basis of h in which D is block diagonal (1 x 1 blocks lambda and 2 x 2 blocks [[alpha, beta], [-beta, alpha]]
for the pairs alpha -+ i beta) turns f(a D) into scalar functions of a lambda, or of a complex number on each
pair: exp(ad_x) and dexp^-1 cost O(n) scalar functions and three n x n linear maps instead of the Taylor
series' n^2 products per term (:meth:`integrators.codegen.exp_writer.ExponentialWriter._act_almost_abelian`,
:meth:`integrators.codegen.dexpinv_writer.DexpinvWriter._dexpinv_almost_abelian` derive the two formulas).

Recognition (:func:`almost_abelian`): the derived algebra [g, g] lies in every such h, and any subspace of
codimension one that contains [g, g] is an ideal; h is the kernel of a covector phi annihilating [g, g] (the
only one when [g, g] has codimension one, else a seeded random one of them) and must be abelian. D is
diagonalised with numpy; a defective or badly conditioned D (Bianchi IV, a Jordan block: the eigenvector
matrix is singular) gives None (the Taylor series), as does an adapted basis whose condition number exceeds
:data:`COND_MAX` (its round-off, cond(T) eps, would show in the Casimirs). The result is checked against
scipy's expm on probes.
"""

from __future__ import annotations

import numpy as np

#: the largest condition number of the adapted basis T (the closed form's round-off is ~cond(T) eps)
COND_MAX = 1e3


class AlmostAbelian:
    """The adapted basis of an almost abelian algebra: ``T`` (n x n, columns f0 then the block basis of h),
    ``Tinv``; ``reals``: [(i, lambda)] the 1 x 1 blocks at coordinate i of the adapted basis (i >= 1);
    ``pairs``: [(i, alpha, beta)] the 2 x 2 blocks [[alpha, beta], [-beta, alpha]] on coordinates i, i + 1
    (D acts on w_i + i w_(i+1) as multiplication by alpha - i beta)."""

    def __init__(self, T, reals, pairs):
        self.T = T
        self.Tinv = np.linalg.inv(T)
        self.reals = reals
        self.pairs = pairs

    def block_matrix(self):
        """D in the adapted basis of h: block diagonal (n-1 x n-1)."""
        m = self.T.shape[0] - 1
        Dh = np.zeros((m, m))
        for i, lam in self.reals:
            Dh[i - 1, i - 1] = lam
        for i, al, be in self.pairs:
            Dh[i - 1:i + 1, i - 1:i + 1] = [[al, be], [-be, al]]
        return Dh

    def constants(self):
        """The structure constants in the adapted basis: [f0, f_k] = sum_l D[l, k] f_l, exactly the blocks'
        entries (3n - 2 non-zero pairs at most, against ~n^3 in a random basis)."""
        n = self.T.shape[0]
        C, Dt = np.zeros((n, n, n)), self.block_matrix().T
        C[0, 1:, 1:] = Dt
        C[1:, 0, 1:] = -Dt
        return C

    def adapted_ad(self, x):
        """ad_x in the adapted coordinates of x (reference for the tests and the recognition's check)."""
        n = self.T.shape[0]
        xh = self.Tinv @ x
        Dh = self.block_matrix()
        A = np.zeros((n, n))
        A[1:, 0] = -Dh @ xh[1:]
        A[1:, 1:] = xh[0] * Dh
        return A


_FORMS = {}


def almost_abelian(C, rtol=1e-10):
    """The :class:`AlmostAbelian` form of structure constants C ([e_i, e_j] = sum_k C[i, j, k] e_k) when g
    has an abelian ideal of codimension one and a diagonalisable D with a basis of condition <= COND_MAX,
    else None (module docstring); cached per C."""
    C = np.asarray(C, dtype=float)
    key = (C.shape, C.tobytes())
    if key not in _FORMS:
        _FORMS[key] = _recognise(C, rtol)
    return _FORMS[key]


def _recognise(C, rtol):
    n = C.shape[0]
    size = float(np.max(np.abs(C))) if C.size else 0.0
    if n < 3 or size == 0.0:
        return None
    # [g, g]: the span of the brackets [e_i, e_j]; its annihilator holds phi
    _, sv, Vt = np.linalg.svd(C.reshape(n * n, n))
    rank = int(np.sum(sv > rtol * sv[0]))
    ann = Vt[rank:]
    if ann.shape[0] == 0:
        return None
    # phi: the one annihilator, else a seeded random one, else the normal of the centraliser of [g, g]
    # when that has codimension one (Bianchi III: h = span(e2, e3) is the only abelian choice)
    cands = [ann[0] if ann.shape[0] == 1 else np.random.default_rng(7).standard_normal(ann.shape[0]) @ ann]
    if ann.shape[0] > 1:
        M = np.concatenate([np.einsum("j,ijk->ki", d, C) for d in Vt[:rank]])   # y -> [y, d] for d in [g, g]
        _, sz, Zt = np.linalg.svd(M)
        if int(np.sum(sz > rtol * sz[0])) == 1:
            cands.append(Zt[0])
    for phi in cands:
        phi = phi / np.linalg.norm(phi)
        H = np.linalg.svd(phi[None, :])[2][1:].T      # orthonormal basis of h = ker phi (n x n-1)
        contains = np.max(np.abs(Vt[:rank] @ phi)) <= 1e-9         # [g, g] in h: h is an ideal
        if contains and np.max(np.abs(np.einsum("ia,jb,ijk->abk", H, H, C))) <= rtol * size:
            break
    else:
        return None                                   # no abelian ideal of codimension one
    ad0 = np.einsum("i,ikj->jk", phi, C)              # ad_{f0}, f0 = phi (phi is not in h)
    D = H.T @ ad0 @ H
    if np.max(np.abs(ad0 @ H - H @ D)) > rtol * size:
        return None
    lam, V = np.linalg.eig(D)
    if not np.all(np.isfinite(V)) or np.linalg.cond(V) > COND_MAX:
        return None
    scale = max(float(np.max(np.abs(lam))), 1e-300)
    cols, reals, pairs = [], [], []
    used = np.zeros(lam.size, dtype=bool)
    for k in np.argsort(np.abs(lam.imag), kind="stable"):         # real eigenvalues first
        if used[k]:
            continue
        used[k] = True
        if abs(lam[k].imag) <= 1e-12 * scale:
            v = V[:, k].real if np.linalg.norm(V[:, k].real) >= np.linalg.norm(V[:, k].imag) else V[:, k].imag
            reals.append((1 + len(cols), float(lam[k].real)))
            cols.append(v / np.linalg.norm(v))
            continue
        # the conjugate partner: the unused eigenvalue nearest conj(lambda)
        rest = [j for j in range(lam.size) if not used[j]]
        if not rest:
            return None
        j = min(rest, key=lambda j: abs(lam[j] - np.conj(lam[k])))
        used[j] = True
        kk = k if lam[k].imag > 0 else j
        v, al, be = V[:, kk], lam[kk].real, lam[kk].imag
        # D (vr + i vi) = (al + i be)(vr + i vi): D vr = al vr - be vi, D vi = be vr + al vi, so in the basis
        # (vr, vi) D is [[al, be], [-be, al]]
        s = np.linalg.norm(v)
        pairs.append((1 + len(cols), float(al), float(be)))
        cols.append(v.real / s)
        cols.append(v.imag / s)
    B = np.array(cols).T                               # basis of h's coordinates (n-1 x n-1)
    T = np.concatenate([phi[:, None], H @ B], axis=1)
    if np.linalg.cond(T) > COND_MAX:
        return None
    form = AlmostAbelian(T, reals, pairs)
    return form if _checked(form, C) else None


def _checked(form, C):
    """The adapted ad_x against ad_x from C at three seeded probes (to 1e-9 of its size)."""
    n = C.shape[0]
    for x in np.random.default_rng(11).standard_normal((3, n)):
        A = np.einsum("i,ikj->jk", x, C)
        B = form.T @ form.adapted_ad(x) @ form.Tinv
        if np.max(np.abs(A - B)) > 1e-9 * max(1.0, float(np.max(np.abs(A)))):
            return False
    return True
