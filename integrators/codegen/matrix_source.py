"""The code writer's matrix form, for structure constants with many non-zero entries (an algebra in a
random basis): the products with C as a few numpy calls on the vectors instead of one Python term per
non-zero entry.

:class:`integrators.codegen.writer.Source` writes (ad*_x m)_j = sum_{i,k} x_i C[i, j, k] m_k as one
term per non-zero C[i, j, k]: straight-line Python that costs 0.1-0.5 us a term on floats and one or two
ufunc calls a term on numpy columns. In a generic basis C has ~n^3 non-zero entries (729 at n = 9, 1000
at n = 10), so every coadjoint product of a stage costs 100-300 us on floats, and the generated text of
an adaptive loop grows to ~10^6 characters. :class:`MatrixSource` writes the same products with the
structure constants as arrays of the generated module (its preamble, :func:`preamble`):

    ad*_x m   = MC @ vec(x m^T),    MC[j, i n + k] = C[i, j, k]
    -[x, y]   = MN @ vec(x y^T),    MN[k, i n + j] = -C[i, j, k]
    ad(x)^T   = (x @ MA).reshape(n, n),   MA[i, j n + k] = C[i, j, k]    (the Taylor action's matrix)
    -ad(x)    = (x @ MB).reshape(n, n),   MB[i, j n + k] = -C[i, k, j]   (dexp^-1's matrix)
    w         = W @ z + c

on one trajectory's floats (a (n,) array built from the names, the result unpacked with tolist: ~3 us a
product whatever n; :data:`MATRIX_TERMS`) and on numpy columns (the dense output's evaluator: (n, G) stacks, one matrix product
over all columns). An unpacked result keeps its array for the next product, and a step's state is stacked
once for its stages (:meth:`MatrixSource._stack`). With no closed form, a stage's exponential and its
dexp^-1 share exp(A) - I and phi_1(A) of one matrix function (genhelpers.expphi, genhelpers.pdinv); the
dense output's points, which need no phi_1, take the Taylor series of the action on the columns
(genhelpers.taction). A forced field (I - P) g is g - P g (one product with P); on columns a stage sum is a
sum of stacked vectors; the Casimir projection's polynomials are monomial tables
(:meth:`MatrixSource.casimir_polynomials`, in the root basis where the projection has one). Everything else
(the stage sums on floats, the controller, the closed forms' scalars, the projection's Newton iteration) is
the scalar writer's text, unchanged. The same sums in exact arithmetic; the rounding differs from the scalar
text (BLAS order, the products x_i m_k formed before the coefficient) at round-off
(tests/integrators/test_matrix_source.py).

:func:`use_matrix` chooses the form by the generated term count: the matrix form when the coadjoint
product has more than :data:`MATRIX_TERMS` terms, for the numpy backend only (compiled code runs the
scalar terms at ~1 ns each and keeps them).
"""

from __future__ import annotations

import numpy as np

from ..geometry.almost_abelian import almost_abelian
from ..geometry.closed_dexpinv import pair_form
from ..geometry.spaces import ROUNDOFF_TERMS
from . import orbit_source
from .projection import text_cost
from .writer import Source

#: the scalar text is kept up to this many non-zero structure constants (terms of one coadjoint product).
#: Measured (one coadjoint product on Python floats, n = 8, timeit, load ~7 on 2 cores): the scalar text
#: 13.8 / 40.6 / 63.5 / 136 / 260 us at 50 / 100 / 150 / 300 / 512 terms, the matrix product 4.9-6.9 us
#: at every count. The named algebras in their own bases (so(3) 6, se(3) 18, so(4) 24, sl(3) 44, so(5)
#: and sp(4) 60 terms) keep the scalar text, whose closed forms and folded series they use; a random basis
#: (hundreds of terms) takes the matrix form.
MATRIX_TERMS = 100
#: on one trajectory's floats the projection's polynomials are the scalar text up to this many products (the
#: monomial tables cost ~20 us a call on one point whatever the polynomial; the two dense quadratic Casimirs of
#: se(3) in a random basis, 109 products, ~3 us as text: its projected servo2 call 4.52 -> 4.21 ms)
FLOAT_TEXT_COST = 400


def use_matrix(st):
    """True when the numpy-backend text of structure ``st`` is written in matrix form (C has more than
    :data:`MATRIX_TERMS` non-zero entries)."""
    return int(np.count_nonzero(st.C)) > MATRIX_TERMS


def matrix_form(st, lie):
    """True when the numpy-backend texts (the one-trajectory adaptive loop, the dense output's evaluators) of
    structure ``st`` are written in matrix form: dense structure constants (:func:`use_matrix`), except the
    RKMK pairs of a forced problem (the matrix form writes no forced generator) and the Lie-group steps on an
    almost abelian algebra's orbits (:mod:`integrators.codegen.orbit_source`: no n x n map but one a stage)."""
    return use_matrix(st) and not (lie and st.P is not None) and not orbit_source.applies(st, lie)


def _array(a):
    a = np.ascontiguousarray(a, dtype=float)
    return f"np.array({a.ravel().tolist()!r}).reshape({a.shape!r})"


def preamble(st, proj=None):
    """The module-level constants of the matrix form of structure ``st`` (and of the Casimir projection
    ``proj``) (source text)."""
    C, n = st.C, st.n
    consts = {
        "_MC": C.transpose(1, 0, 2).reshape(n, n * n),
        "_MN": -C.transpose(2, 0, 1).reshape(n, n * n),
        "_MA": C.reshape(n, n * n),
        "_MB": -C.transpose(0, 2, 1).reshape(n, n * n),
        "_MW": st.W,
        "_Mc": st.c,
    }
    if st.P is not None:   # the forced field's projection (MatrixSource.field)
        consts["_MP"] = st.P
    if st.closed == "almost_abelian":   # the adapted basis of the closed form (MatrixSource.adapted)
        form = almost_abelian(C)
        consts.update({"_AATinv": form.Tinv, "_AATT": form.T.T, "_AATinvT": form.Tinv.T, "_AAT": form.T})
    text = "".join(f"{k} = {_array(v)}\n" for k, v in consts.items())
    if proj is not None:   # the Casimirs' monomial tables, built when the module is loaded (genhelpers.ptables)
        polys = [[(ex, c) for c, ex in poly] for poly in proj.polys]
        text += f"_PTAB = ptables({polys!r}, {proj.n})\n"
        if proj.basis is not None:    # zhat = T^T z, the coordinates of the sparse polynomials, and their tables
            T = np.array(proj.basis[0], dtype=float)
            hat = [[(ex, c) for c, ex in poly] for poly in proj.basis[1]]
            text += f"_PT = {_array(T)}\n_PTT = {_array(T.T)}\n_PTABH = ptables({hat!r}, {proj.n})\n"
    return text


class MatrixSource(Source):
    """:class:`Source` with the products with C (and W) as numpy matrix products (module docstring).
    ``floats`` (set by the program writer) says whether the names are Python floats (one trajectory) or
    numpy columns of one length."""

    def dense(self):
        return True

    def _stack(self, v):
        """Name of the array of the names v: the array they were unpacked from (:meth:`_unpack`) or an earlier
        stack of them while in scope (:meth:`_array_in_scope`: a step's state is stacked once for its stages),
        else a new np.array."""
        memo = self.__dict__.setdefault("_arrays", {})
        hit = memo.get(tuple(v))
        if hit is not None and self._array_in_scope(hit[1], hit[2], v):
            return hit[0]
        name = self.fresh("V")
        if self.floats:
            self.emit(f"{name} = np.array(({', '.join(v)},))")
        else:   # a literal or a float among the columns is broadcast to their length
            self.emit(f"{name} = np.array(np.broadcast_arrays({', '.join(v)}))")
        memo[tuple(v)] = (name, len(self.lines), self.indent)
        return name

    def _unpack(self, prefix, expr):
        """Names of the n components of the array ``expr`` (Python floats by tolist on floats, its rows on
        columns), the array kept under a name for :meth:`_stack`."""
        base, arr = self.fresh(prefix), self.fresh("R")
        names = [f"{base}{i}" for i in range(self.n)]
        self.emit(f"{arr} = {expr}")
        self.emit(f"{', '.join(names)}, = {arr}{'.tolist()' if self.floats else ''}")
        self.__dict__.setdefault("_arrays", {})[tuple(names)] = (arr, len(self.lines), self.indent)
        return names

    def _array_in_scope(self, at, indent, names):
        """Is an array of ``names`` written at line ``at - 1`` still theirs here: in scope as a quadratic form
        is (:meth:`ExponentialWriter._in_scope`: no branch left, no name reassigned) and no loop begins in
        between (a loop's later passes reassign its carried names, a step's state, after this line)."""
        if not self._in_scope(at, indent, names):
            return False
        return not any(ln.lstrip().startswith(("while ", "for ")) for ln in self.lines[at:])

    def _outer(self, a, b):
        X, Y = self._stack(a), self._stack(b)
        n = self.n
        if self.floats:
            return f"np.multiply.outer({X}, {Y}).ravel()"
        return f"({X}[:, None]*{Y}[None, :]).reshape({n * n}, -1)"

    def coad(self, x, m, prefix="g"):
        """(ad*_x m)_j = sum_{i,k} x_i C[i, j, k] m_k = (MC @ vec(x m^T))_j."""
        return self._unpack(prefix, f"_MC @ {self._outer(x, m)}")

    def neg_bracket(self, x, y):
        """-[x, y]_k = -sum_{i,j} x_i y_j C[i, j, k] = (MN @ vec(x y^T))_k."""
        return self._unpack("q", f"_MN @ {self._outer(x, y)}")

    def matrix(self, x, bracket=False):
        """ad(x)^T (or -ad(x) with ``bracket``) as one (n, n) array on floats; on columns the token the
        products below expand to :meth:`coad` / :meth:`neg_bracket` of x (no (n, n, G) tensor)."""
        if not self.floats:
            return ("columns", list(x), bracket)
        name = self.fresh("A")
        self.emit(f"{name} = ({self._stack(x)} @ {'_MB' if bracket else '_MA'}).reshape({self.n}, {self.n})")
        return name

    def matvec(self, A, v, prefix):
        if isinstance(A, tuple):
            _, x, bracket = A
            return self.neg_bracket(x, v) if bracket else self.coad(x, v, prefix)
        return self._unpack(prefix, f"{A} @ {self._stack(v)}")

    def combo(self, prefix, pairs, scale=None):
        """scale * sum_j c_j V_j: on numpy columns as sum_j c_j (V_j stacked) over (n, G) arrays, two numpy calls a
        term instead of the scalar writer's two a term and component (the extra stages of dop853's interpolant,
        ~8-13 terms in 10 components: ~250 ufunc calls a stage on a few columns); on floats the scalar text (a
        Python float operation costs less than a numpy call on a vector of n <= 10)."""
        pairs = [(float(c), V) for c, V in pairs if float(c) != 0.0]
        if self.floats or scale is not None or not pairs or any(len(V) != self.n for _, V in pairs):
            return super().combo(prefix, pairs, scale)
        return self._unpack(prefix, " + ".join(f"{c!r}*{self._stack(V)}" for c, V in pairs))

    def field(self, z):
        """(I - P) ad*_{W z + c} z as g - P g with P one constant of the preamble (_MP): two numpy calls, where
        the scalar writer's n^2 terms of (I - P) cost ~200 ufunc calls a stage on the dense output's columns
        (n = 10, a servo-constraint in a random basis: P = b c^T / (c, b) has no zero entry)."""
        g = self.coad(self.velocity(z), z)
        if self.st.P is None:
            return g
        G = self._stack(g)
        return self._unpack("f", f"{G} - _MP @ {G}")

    def velocity(self, z, scale=None):
        """w = W z + c (or scale*(W z + c)) as one matrix product (no addition when c = 0: a free system)."""
        expr = f"_MW @ {self._stack(z)}"
        if np.any(self.st.c):
            expr += " + _Mc" + ("" if self.floats else "[:, None]")
        return self._unpack("w", expr if scale is None else f"{scale}*({expr})")

    # ------------------------------------------------------------ the exponential and dexp^-1 by matrices
    def foldable(self):
        """No folded Taylor action: with no closed form the action is exp(A) z from the matrix (below)."""
        return False

    def _expphi(self, x):
        """Names (F, D, P) of ||A||_F^2 (the largest over columns), exp(A) - I and phi_1(A), A = ad(x)^T (one
        matrix on floats, a (G, n, n) batch on columns; genhelpers.expphi), written once per x while in scope:
        the stage's exponential and its dexp^-1 read the same pair."""
        memo = self.__dict__.setdefault("_expphis", {})
        hit = memo.get(tuple(x))
        if hit is not None and self._in_scope(hit[3], hit[4], x):
            return hit[:3]
        n = self.n
        A, D, P, F = self.fresh("A"), self.fresh("D"), self.fresh("P"), self.fresh("F")
        X = self._stack(x)
        if self.floats:
            self.emit(f"{A} = ({X} @ _MA).reshape({n}, {n})")
        else:
            self.emit(f"{A} = ({X}.T @ _MA).reshape(-1, {n}, {n})")
        self.emit(f"{D}, {P}, {F} = expphi({A})")
        memo[tuple(x)] = (F, D, P, len(self.lines), self.indent)
        return F, D, P

    def stage_act(self, x, z):
        """A stage's exp(ad x)^T z: from exp(A) - I of genhelpers.expphi (:meth:`_act_matrix`), whose phi_1 the
        stage's dexp^-1 of the same x reads (:meth:`dexpinv`); on an almost abelian algebra its closed form."""
        if self.st.closed == "almost_abelian":
            return super().stage_act(x, z)
        return self._act_matrix(x, z, False)

    def _adapted_map(self, which, v, prefix):
        """The adapted basis's maps of an almost abelian algebra as one product with a constant of the
        preamble (:func:`preamble`)."""
        return self._unpack(prefix, f"_AA{which} @ {self._stack(v)}")

    def _act_taylor(self, x, z, delta):
        """exp(ad x)^T z (delta: exp(ad x)^T z - z), A = ad(x)^T: on floats, or when the stage's pair of the same x
        is in scope, z + D z with D = exp(A) - I (genhelpers.expphi, to round-off); on numpy columns (the dense
        output's points, an update) the Taylor series of the action on the (n, n, G) matrices
        (:meth:`_act_columns`): no phi_1 is needed there, and a product of the action costs n^2 a column
        where the powers of expphi cost n^3."""
        memo = self.__dict__.get("_expphis", {})
        hit = memo.get(tuple(x))
        if self.floats or (hit is not None and self._in_scope(hit[3], hit[4], x)):
            return self._act_matrix(x, z, delta)
        return self._act_columns(x, z, delta)

    def _act_matrix(self, x, z, delta):
        """exp(ad x)^T z = z + D z (delta: D z), D = exp(A) - I, A = ad(x)^T (genhelpers.expphi): the
        exponential to round-off, as the Taylor action summed below 2^-54 |z| is."""
        _, D, _ = self._expphi(x)
        Z = self._stack(z)
        if delta:
            return self._unpack("d", self._times(D, Z))
        return self._unpack("y", f"{Z} + {self._times(D, Z)}")

    def _act_columns(self, x, z, delta):
        """exp(A) z (delta: exp(A) z - z) on numpy columns, A = ad(x)^T as an (n, n, G) array (one product with
        _MA), by the scaled Taylor series of the action (genhelpers.taction: the plan tplan of ||A||_F with
        substeps of norm <= 2, the terms of :meth:`ExponentialWriter.taylor_substeps`; Al-Mohy and Higham
        2011), one einsum a term. Measured on the dense output of rkmk853 on R x_D R^8 in a random basis (999
        columns, ||A||_F <= 1.08: 1 substep, 19 terms): 0.7 ms against 1.5 ms for expphi's 9 batched products
        and D z."""
        n = self.n
        A = self.fresh("A")
        self.emit(f"{A} = (_MA.T @ {self._stack(x)}).reshape({n}, {n}, -1)")
        d = self._unpack("d", f"taction({A}, {self._stack(z)})")
        return d if delta else self.assign("y", [f"{z[i]} + {d[i]}" for i in range(n)])

    def _times(self, M, V):
        """Source of M V for a stacked vector V: one matrix on floats, a batch on columns."""
        if self.floats:
            return f"({M} @ {V})"
        return f"({M} @ {V}.T[:, :, None])[:, :, 0].T"

    def dexpinv(self, theta, v, terms):
        """dexp^-1 summed to round-off with no closed form: sum_k B_k/k! (-ad_theta)^k v = phi_1(-ad_theta)^-1 v
        (the Bernoulli numbers are the Taylor coefficients of x / (e^x - 1) = 1 / phi_1(x); Hairer, Lubich
        and Wanner 2006, IV.8). With M = ad(theta)^T, -ad_theta = -M^T and phi_1(-M) = e^-M phi_1(M), so
        phi_1(-M^T)^-1 = e^(M^T) phi_1(M)^-T: dexp^-1 v = u + D^T u with phi_1(M)^T u = v (genhelpers.pdinv:
        one solve; D, phi_1 of the stage's exponential of the same theta). The same NaN as the series beyond
        its convergence bound (x^2 = ||ad_theta||_F^2 / (2 pi)^2 > DEXPINV_X2MAX: the step is rejected; x^2 from
        expphi's ||A||_F^2 = ||ad_theta||_F^2, the largest over columns, instead of the n(n+1)/2 products of the
        quadratic form, and added to the solve's array); truncated series and closed forms as the scalar
        writer."""
        if int(terms) < ROUNDOFF_TERMS or self.st.closed is not None or pair_form(self.st.C) is not None:
            return super().dexpinv(theta, v, terms)
        F, D, P = self._expphi(theta)
        x2 = self.fresh("x2")
        self.emit(f"{x2} = {1.0 / (2.0 * np.pi) ** 2!r}*{F}")
        bad = self._dexpinv_bad(x2)
        return self._unpack("k", f"pdinv({D}, {P}, {self._stack(v)})" + ("" if bad is None else f" + {bad}"))

    # ------------------------------------------------------------ the Casimirs of a projected pair
    def casimir_polynomials(self, proj, z, grad=False):
        """Names of C_k(z) (or, with ``grad``, the p x n names of dC_k/dz_j) for the Casimir projection
        ``proj`` (:meth:`integrators.codegen.projection.CasimirProjection.write` calls it): the monomials
        degree by degree as blocks of rows and one matrix product with the coefficients
        (:func:`liegroups.monomials.monomial_sum`; a quartic in 10 variables: ~40 array operations
        instead of ~3000 terms of C and grad C, on floats and on columns alike). The values of a projection
        written in a sparse basis (``proj.basis``) are its sparse polynomials' text at zhat = T^T z (one
        product): ~90 terms of so(5)'s quartic in its root basis, ~8 us on floats against ~27 us for the
        Kronecker powers of the dense one, and on the dense output's 1001 columns ~0.4 against ~0.8 ms; the
        gradients on columns there as G = T Ghat from the sparse polynomials' rows (CSR: ~0.4 against ~0.8 ms)."""
        if self.floats and proj.basis is None and text_cost(proj.polys) <= FLOAT_TEXT_COST:
            return proj.grad_exprs(self, z) if grad else proj.value_exprs(self, z)
        if not grad and proj.basis is not None:
            return proj.value_exprs(self, self._unpack("_pyh", f"_PTT @ {self._stack(z)}"))
        rows = proj.p * (self.n if grad else 1)
        if grad and proj.basis is not None and not self.floats:    # G = T Ghat(T^T z), Ghat from sparse rows
            p, n = proj.p, self.n
            out = self._unpack_rows("pc", rows, f"(_PT @ ppoly(_PTABH, _PTT @ {self._stack(z)}, True)"
                                                f".reshape({p}, {n}, -1)).reshape({p * n}, -1)")
            return [out[k * n:(k + 1) * n] for k in range(p)]
        out = self._unpack_rows("pc", rows, f"ppoly(_PTAB, {self._stack(z)}, {grad})")
        return [out[k * self.n:(k + 1) * self.n] for k in range(proj.p)] if grad else out

    def _unpack_rows(self, prefix, count, expr):
        base = self.fresh(prefix)
        names = [f"{base}{i}" for i in range(count)]
        self.emit(f"{', '.join(names)}, = ({expr}){'[:, 0].tolist()' if self.floats else ''}")
        return names
