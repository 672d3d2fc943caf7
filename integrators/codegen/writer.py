"""The code writer: straight-line source, component by component, for the pieces of a step.

:class:`Source` emits one line per component (every component a separate variable; only the non-zero
entries of the structure constants C, of W and of the tableau appear), and the same text runs on
Python floats (one trajectory: no numpy call at all), on numpy arrays of shape (B,) (an ensemble: one
ufunc call per term) and, jitted by numba, as compiled code. What it writes from a recognised
:class:`integrators.geometry.recognition.Structure`:

* the velocity w = W z + c, the coadjoint action ad*_w z, the multiplier projection of a forced
  problem, a plain right-hand side;
* exp(ad x)^T z (and exp(ad x)^T z - z without cancellation): Rodrigues' formula on so(3), Ad^T of
  exp(omega, v) on se(3), exp(ad x) = 1 + s1(q) ad x + s2(q) (ad x)^2 on a 3-dimensional algebra with
  ad_x^3 = q(x) ad_x (Cayley-Hamilton, :meth:`ExponentialWriter._act_ad3`; Iserles, Munthe-Kaas, Norsett and
  Zanna 2000), the sum of two such formulas on so(4)-like algebras (:meth:`ExponentialWriter._act_ad3x2`);
  otherwise a Taylor series of the action exp(A) z = sum_k A^k z / k!, A = ad(x)^T, on A / s with
  ||A / s||_1 <= 1/2 (s substeps), with as many terms as a truncation below 2^-54 |z| needs (Al-Mohy
  and Higham 2011, "Computing the action of the matrix exponential");
* dexp^-1 as the Bernoulli series with the matching bracket -[x, y] (x -> ad*_x is an
  anti-homomorphism), truncated after the method's number of terms (Munthe-Kaas 1999), or summed to
  round-off: in closed form where ad_x has few eigenvalues (so(3), ad^3 = q ad, se(3);
  :mod:`integrators.geometry.closed_dexpinv`), else to the K the size of ad_x asks for.

Both series are polynomials in one operator (A = -ad_x for dexp^-1, B = ad(x)^T for the Taylor
action), and ad_x obeys a relation A^d = sum_{j<d} c_j(x) A^j (:func:`integrators.geometry.relations.ad_relation`):
every power A^k, k >= d, is folded into A^0..A^(d-1) when the source is written, so the series costs
d - 1 brackets and a few scalars whatever its number of terms (9 terms of dexp^-1 for rkmk853: 4
brackets on so(4), se(3) instead of 8), and the Taylor action costs d - 1 coadjoint products per
substep. These are the same polynomials as the plain series, so the generated code agrees with the
generic reference to round-off. The programs built from these pieces (one step, the fixed loop, the
adaptive loop) are in :mod:`integrators.codegen.programs`; the exponentials are written by the mixin
:class:`integrators.codegen.exp_writer.ExponentialWriter`, dexp^-1 by the mixin
:class:`integrators.codegen.dexpinv_writer.DexpinvWriter`.
"""

from __future__ import annotations

import numpy as np

from ..geometry.sparse_basis import sparse_basis
from .dexpinv_writer import DexpinvWriter
from .exp_writer import ExponentialWriter
from .source_text import Lines, lin


class Source(Lines, ExponentialWriter, DexpinvWriter):
    """Accumulates the lines of one generated function (:class:`Lines`); vectors are lists of variable
    names."""

    #: code for the lanes of batch_kernels (no call, no branch; :class:`integrators.codegen.batchgen.EnsembleSource`)
    lanes = False
    #: the text runs on floats only (one trajectory, or one at a time: the adaptive loops but those on numpy
    #: columns): dexp^-1's x^2 then needs no largest over an ensemble (a NaN x^2 fails every test anyway)
    floats = False

    def __init__(self, st):
        super().__init__()
        self.st = st
        self.n = st.n
        #: x names -> (t^2, sin(t/2)/(t/2), cos(t/2)) of an so(3) exponential the lanes wrote (t = |x|)
        self.half_angle = {}
        #: x names -> (line, indent, t^2, a, b) of an so(3) exponential's Rodrigues coefficients (:meth:`so3_ab`)
        self.rodrigues = {}

    @property
    def gdim(self):
        """The number of components of a generator (n: w in g; 2n for the forced writer's (w, f) in g x g*)."""
        return self.n

    def to_state(self, x, z):
        """The state change of a generator to leading order, ad*_x z (the error estimate of an RKMK pair)."""
        return self.coad(x, z, prefix="ez")

    def at_time(self, expr, stage=None):
        """The time of the next field evaluation (``expr``, source text; ``stage``: the tableau's stage it
        belongs to, when it is one): nothing for an autonomous field; the writers of
        :mod:`integrators.codegen.timed_source` evaluate their coefficients there."""

    # ---------------------------------------------------------------- algebra
    def combo(self, prefix, pairs, scale=None):
        """scale * sum_j c_j V_j for pairs (c_j, V_j); None when every c_j vanishes."""
        pairs = [(float(c), V) for c, V in pairs if float(c) != 0.0]
        if not pairs:
            return None
        exprs = []
        for i in range(len(pairs[0][1])):
            e = lin([(c, V[i]) for c, V in pairs])
            exprs.append(e if scale is None else f"{scale}*({e})")
        return self.assign(prefix, exprs)

    def velocity(self, z, scale=None):
        """w = W z + c, or scale*(W z + c) (the same rounding as w, then scale*w)."""
        W, c = self.st.W, self.st.c
        exprs = [lin([(W[i, j], z[j]) for j in range(self.n)] + [(c[i], "1.0")]) for i in range(self.n)]
        return self.assign("w", exprs if scale is None else [f"{scale}*({e})" for e in exprs])

    def coad(self, x, m, prefix="g"):
        """(ad*_x m)_j = sum_{i,k} x_i C[i, j, k] m_k, from the non-zero entries of C; through a sparse basis
        (:func:`integrators.geometry.sparse_basis.sparse_basis`: the adapted basis of an almost abelian algebra,
        the root basis of a reductive one) when C has more entries than that route costs (:meth:`_coad_adapted`)."""
        C = self.st.C
        form = sparse_basis(C)
        if form is not None and int(np.count_nonzero(C)) > 3 * self.n * self.n + int(np.count_nonzero(form.constants())):
            return self._coad_adapted(x, m, prefix)
        return self.coad_with(C, x, m, prefix)

    def coad_with(self, C, x, m, prefix="g"):
        """(ad*_x m)_j = sum_{i,k} x_i C[i, j, k] m_k for the structure constants C given (the algebra's own in
        :meth:`coad`, a sparse basis's in the forced writer's dexp^-1), one product per non-zero entry."""
        out = []
        for j in range(self.n):
            terms = [(C[i, j, k], f"{x[i]}*{m[k]}") for i in range(self.n) for k in range(self.n)
                     if C[i, j, k] != 0.0]
            out.append(lin(terms))
        return self.assign(prefix, out)

    def _coad_adapted(self, x, m, prefix):
        """ad*_x m = T^-T ad*_xhat mhat with xhat = T^-1 x, mhat = T^T m (the pairing is kept) and the structure
        constants of the sparse basis T (:func:`integrators.geometry.sparse_basis.sparse_basis`; an almost abelian
        algebra's are the 2 x 2 and 1 x 1 blocks of D): three n x n maps and one product per entry of the sparse
        constants instead of one per entry of C (~n^3 in a random basis: 729 at n = 9 against 3 x 81 + 30 for
        R x_D R^8; 900 at n = 10 against 3 x 100 + 84 for so(5))."""
        xh = self.adapted("Tinv", x, "xa")
        mh = self.adapted("TT", m, "ma")
        rh = self.coad_with(sparse_basis(self.st.C).constants(), xh, mh, "ga")
        return self.adapted("TinvT", rh, prefix)

    def dense(self):
        """True when C has more non-zero entries than n^2 (a generic basis): then repeated products
        with the same x go through the matrix of ad(x)."""
        return int(np.count_nonzero(self.st.C)) > self.n * self.n

    def matrix(self, x, bracket=False):
        """Names of the entries of ad(x)^T, (A y)_j = (ad*_x y)_j = sum_{i,k} x_i C[i, j, k] y_k, or
        with ``bracket`` of -ad(x), (A y)_j = -[x, y]_j = -sum_{i,k} x_i y_k C[i, k, j]."""
        C, n = self.st.C, self.n
        rows = []
        for j in range(n):
            if bracket:  # (-[x, y])_j = -sum_{i,k} x_i y_k C[i, k, j]
                exprs = [lin([(-C[i, k, j], x[i]) for i in range(n)]) for k in range(n)]
            else:        # (ad*_x m)_j = sum_{i,k} x_i C[i, j, k] m_k
                exprs = [lin([(C[i, j, k], x[i]) for i in range(n)]) for k in range(n)]
            rows.append(self.assign("A", exprs))
        return rows

    def matvec(self, A, v, prefix):
        return self.assign(prefix, [lin([(1.0, f"{A[j][k]}*{v[k]}") for k in range(self.n) if A[j][k]])
                                    for j in range(self.n)])

    def neg_bracket(self, x, y):
        """-[x, y]_k = -sum_{i,j} x_i y_j C[i, j, k] (the bracket matching the coadjoint action)."""
        return self.neg_bracket_with(self.st.C, x, y)

    def neg_bracket_with(self, C, x, y):
        """-[x, y] for the structure constants C given (:meth:`coad_with`)."""
        out = []
        for k in range(self.n):
            out.append(lin([(-C[i, j, k], f"{x[i]}*{y[j]}") for i in range(self.n) for j in range(self.n)
                            if C[i, j, k] != 0.0]))
        return self.assign("q", out)

    def field(self, z):
        """Ambient right-hand side (I - P) ad*_{W z + c} z."""
        g = self.coad(self.velocity(z), z)
        P = self.st.P
        if P is None:
            return g
        return self.assign("f", [lin([((1.0 if i == j else 0.0) - P[i, j], g[j]) for j in range(self.n)])
                                 for i in range(self.n)])

    def so3_ab(self, x):
        """Names of Rodrigues' a = sin t / t, b = (1 - cos t)/t^2 at t = |x| (x of so(3))."""
        ca, cb, t2 = self.fresh("a"), self.fresh("b"), self.fresh("t2")
        self.emit(f"{t2} = {x[0]}*{x[0]} + {x[1]}*{x[1]} + {x[2]}*{x[2]}")
        self.emit(f"{ca}, {cb} = co2({t2})")
        # the closed dexp^-1 of the same x reads them (:meth:`_dexpinv_so3_trig`)
        self.rodrigues[tuple(x)] = (len(self.lines), self.indent, t2, ca, cb)
        return ca, cb
