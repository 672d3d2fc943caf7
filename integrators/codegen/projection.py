"""Projection onto the level set of the Casimirs, for the projected Runge-Kutta pairs.

The standard projection method (Hairer, Lubich and Wanner, *Geometric Numerical Integration*, 2nd
ed. (2006), Section IV.4, Algorithm 4.2): after each accepted step z~ of an ordinary embedded
Runge-Kutta pair, the state is moved orthogonally onto {C_k(z) = C_k(z0), k = 1..p}, the level set
of ALL polynomial Casimirs C_k of the algebra (:meth:`liegroups.LieAlgebra.casimirs`, linear ones
too: one Newton system, so no Casimir is broken by the projection along another's gradient):

    z1 = z~ + G^T lambda,   G = grad C(z~)  (p x n, fixed: simplified Newton),
    lambda_0 = 0,  lambda_{i+1} = lambda_i - (G G^T)^-1 (C(z~ + G^T lambda_i) - C(z0)),

until every residual |C_k(z~ + G^T lambda) - C_k(z0)| is at round-off, at most :data:`MAX_ITER`
iterations: the residual after an iteration is O(|r_0|^2 / |G|^2) (1-2 iterations at the tolerances of the
pairs). "Round-off" for C_k at z is :data:`TOL_FACTOR` times 2 eps sum_j |G_kj z_j| (for a homogeneous C of
degree d, sum_j z_j dC/dz_j = d C: the size of the terms whose rounding the residual sees; the evaluation of a
dense quartic rounds to 1-3 times 2 eps of it). The projection keeps the order of the underlying method (GNI,
Theorem IV.4.2) and every Casimir to round-off after every step, with no drift growing with the number of
steps; the error estimate of the pair stays that of the unprojected step (GNI IV.4).

G G^T (symmetric, positive definite when the gradients are independent) is factored once per step as
L D L^T (straight-line code for any p, no square root; the usual p is 1 to 3); a pivot D_j below
1e-12 M_jj (the gradients dependent at z~, e.g. |m|^2 at m = 0), below 1e-290 (a state so small that
|grad C|^2 underflows, |z| ~ 1e-145 for a quadratic Casimir) or not finite drops that direction
(1/D_j replaced by 0), so a degenerate point is left unprojected rather than divided by zero.

The first residuals C(z~) - C(z0) come from the gradients by Euler's identity, C = (1/d) z . grad C, when
every Casimir is homogeneous of degree d (n products instead of an evaluation of C).

C and grad C are written as straight-line source from the sympy polynomials once per algebra
(structure constants), each monomial of degree >= 2 named once (:class:`_Monomials`), and cached; the same
writer emits the projection into the generated programs of :mod:`integrators.codegen.programs` (scalar, numpy
columns, numba) and gives the numpy function used by the generic reference loop, the dense output and events.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..geometry.sparse_basis import sparse_basis
from ..reference import genhelpers
from .source_text import Lines, lin

#: at most this many simplified Newton iterations per projection
MAX_ITER = 8
#: the iterations stop when every residual is within this many times 2 eps sum_j |G_kj z_j|: the rounding of the
#: residual's own evaluation is of that size (a dense quartic in 10 variables stalls at 1-3x it at a few of 1001
#: grid points, sp(4) in a random basis, which kept the dense output's projection at MAX_ITER evaluations)
TOL_FACTOR = 8.0

_CACHE = {}


class _Key(tuple):
    """A projection's ``key``, a tuple whose hash is computed once: it holds every term of the Casimirs (a dense
    quartic in 10 variables has 714), which a tuple hashes anew each time, and the plan of every run looks its
    functions up by it (~50 us a call on so(5) in a random basis). Equal to, and printed as, the plain tuple."""

    def __hash__(self):
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = tuple.__hash__(self)
        return h


class _Monomials:
    """Names of the monomials of the variables ``z`` in the code ``src`` writes: one of degree >= 2 is emitted
    once, on first use, as the product of the monomial without its last variable and that variable (so each
    costs one product; degree 1 is the variable, degree 0 "1.0"). Written term by term, c*z0*z1*z2 costs three
    products for each of the ~2,900 terms of a dense quartic's value and gradient in 10 variables; named, the
    ~280 monomials below degree 4 cost one each and every term one multiply-add."""

    def __init__(self, src, z):
        self.src, self.z, self.names = src, z, {}
        self.base = src.fresh("_pq")

    def __call__(self, exps):
        d = sum(exps)
        if d <= 1:
            return "1.0" if d == 0 else self.z[exps.index(1)]
        name = self.names.get(exps)
        if name is None:
            j = max(i for i, e in enumerate(exps) if e)
            lower = self(exps[:j] + (exps[j] - 1,) + exps[j + 1:])
            name = self.names[exps] = f"{self.base}{len(self.names)}"
            self.src.emit(f"{name} = {lower}*{self.z[j]}")
        return name


def _less(exps, j):
    return exps[:j] + (exps[j] - 1,) + exps[j + 1:]


class CasimirProjection:
    """The polynomial Casimirs of an algebra as data: ``polys`` (one tuple of (coefficient, exponents)
    per Casimir), ``p`` of them on g* of dimension ``n``; ``key`` identifies them in the caches of
    the generated code. With ``basis`` = (T, Chat) the text (:meth:`write`, :meth:`values`, :meth:`increment`,
    :meth:`rows_source`) evaluates Chat at zhat = T^T z and maps the gradients back (G = T Ghat), and ``polys``
    is Chat(T^T z) expanded (:func:`basis_polynomials`), for the dense forms."""

    def __init__(self, polys, n, basis=None):
        self.polys, self.p, self.n = tuple(polys), len(polys), int(n)
        # basis: (T as rows of floats, the polynomials of zhat = T^T z) when the text takes them there
        self.basis = basis
        self._T = None if basis is None else np.array(basis[0], dtype=float)
        self._wpolys = self.polys if basis is None else tuple(basis[1])
        self.key = _Key(("casimir-projection", self.n, self.polys, basis))
        text = self.source()
        env = dict(genhelpers.ARRAY, np=np)
        exec(compile(text, "<liedyn casimir projection>", "exec"), env)
        self._values, self._increment = env["values"], env["increment"]

    def __reduce__(self):
        """Pickled as its data (the generated functions are rebuilt): a background compile's child process
        (:mod:`integrators.backends.compile_child`) receives the plan this way."""
        return (CasimirProjection, (self.polys, self.n, self.basis))

    # ------------------------------------------------------------------ writing source
    def value_exprs(self, src, z):
        """Source of C_k(z) for the names z, the monomials named in ``src`` (:class:`_Monomials`): each term
        c z^a as z_j (c z^(a - e_j)) with j its last variable, C = c_0 + sum_j z_j H_j(z), so a value needs the
        monomials one degree below (those of the gradient)."""
        mono = _Monomials(src, z)
        out = []
        for poly in self._wpolys:
            const, H = [], {}
            for c, ex in poly:
                if not any(ex):
                    const.append((c, "1.0"))
                    continue
                j = max(i for i, e in enumerate(ex) if e)
                H.setdefault(j, []).append((c, mono(_less(ex, j))))
            parts = const + [(1.0, f"{z[j]}*({lin(H[j])})") for j in sorted(H)]
            out.append(lin(parts))
        return out

    def grad_exprs(self, src, z):
        """Source of dC_k/dz_j, a p x n list of expressions, the monomials named in ``src``."""
        mono = _Monomials(src, z)
        out = []
        for poly in self._wpolys:
            row = []
            for j in range(self.n):
                row.append(lin([(c * ex[j], mono(_less(ex, j))) for c, ex in poly if ex[j]]))
            out.append(row)
        return out

    def hat(self, src, z, prefix):
        """The names of zhat = T^T z (the coordinates the polynomials are written in), emitted into ``src``;
        z itself when the projection has no basis."""
        if self._T is None:
            return list(z)
        T, n = self._T, self.n
        out = [f"{prefix}{a}" for a in range(n)]
        for a in range(n):
            src.emit(f"{out[a]} = {lin([(T[i, a], z[i]) for i in range(n) if T[i, a] != 0.0])}")
        return out

    @property
    def degrees(self):
        """The degree of each Casimir when it is homogeneous (every term of that degree, >= 1), else None."""
        out = []
        for poly in self._wpolys:
            ds = {sum(ex) for _, ex in poly}
            out.append(ds.pop() if len(ds) == 1 and min(ds) >= 1 else None)
        return out

    def write(self, src, z, targets, fixed=None):
        """Emit into ``src`` (a :class:`integrators.codegen.writer.Source` or :class:`integrators.codegen.source_text.Lines`) the
        projection of the point z (names) onto {C = targets} (names); return the names of the
        increment G^T lambda (module docstring) and of the projected point z + G^T lambda. The lines run on floats, numpy columns (every
        test is a max over the columns: ``bmax``) and under numba. The first residuals come from the gradients
        just written, C(z) = (1/d) sum_j z_j dC/dz_j, when every Casimir is homogeneous (Euler's identity: n
        products instead of one evaluation of C, ~1/4 of a projection onto a dense quartic in 10 variables);
        else from C(z) itself."""
        n, p = self.n, self.p
        G = [[f"_pg{k}_{j}" for j in range(n)] for k in range(p)]
        # a writer with its own form of the polynomials (the matrix form of a dense basis) writes them
        poly = getattr(src, "casimir_polynomials", None)
        if poly is not None:
            grads = poly(self, z, grad=True)
        elif self._T is None:
            grads = self.grad_exprs(src, z)
        else:   # dC/dz_j = sum_a dChat/dzhat_a T[j, a] (zhat = T^T z)
            gh = self.grad_exprs(src, self.hat(src, z, "_pzh"))
            T = self._T
            grads = []
            for k in range(p):
                for a in range(n):
                    if gh[k][a] != "0.0":
                        src.emit(f"_pgh{k}_{a} = {gh[k][a]}")
                grads.append([lin([(T[j, a], f"_pgh{k}_{a}") for a in range(n) if gh[k][a] != "0.0" and T[j, a] != 0.0])
                              for j in range(n)])
        nz = [[j for j in range(n) if grads[k][j] != "0.0"] for k in range(p)]
        for k in range(p):
            for j in nz[k]:
                src.emit(f"{G[k][j]} = {grads[k][j]}")
        M = {}
        for k in range(p):
            for m in range(k + 1):
                common = [j for j in nz[k] if j in nz[m]]
                M[k, m] = f"_pm{k}_{m}"
                src.emit(f"{M[k, m]} = {lin([(1.0, f'{G[k][j]}*{G[m][j]}') for j in common])}")
        # L D L^T of M (unit lower L), 1/D_j or 0 for a dependent direction (rinv)
        L, iD = {}, []
        for j in range(p):
            dj = " - ".join([M[j, j]] + [f"{L[j, k]}*{L[j, k]}*_pd{k}" for k in range(j)])
            src.emit(f"_pd{j} = {dj}")
            src.emit(f"_pi{j} = rinv(_pd{j}, {M[j, j]})")
            iD.append(f"_pi{j}")
            for i in range(j + 1, p):
                s = " - ".join([M[i, j]] + [f"{L[i, k]}*{L[j, k]}*_pd{k}" for k in range(j)])
                L[i, j] = f"_pl{i}_{j}"
                src.emit(f"{L[i, j]} = ({s})*_pi{j}")
        for k in range(p):
            src.emit(f"_pt{k} = 4.440892098500626e-16*("
                     + " + ".join(f"abs({G[k][j]}*{z[j]})" for j in nz[k] or [0]) + ")")
        degrees = self.degrees
        if None not in degrees:
            vals = [f"({lin([(1.0, f'{G[k][j]}*{z[j]}') for j in nz[k]])})/{float(d)!r}" for k, d in enumerate(degrees)]
        else:
            vals = self.value_exprs(src, self.hat(src, z, "_pzh")) if poly is None else poly(self, z)
        for k in range(p):
            src.emit(f"_pr{k} = ({vals[k]}) - {targets[k]}")
        y = [f"_py{j}" for j in range(n)]

        def iteration(first):
            # lambda <- lambda - M^-1 r: forward (L), diagonal (D^-1), backward (L^T); then r at z + G^T lambda
            for i in range(p):
                src.emit(f"_pu{i} = " + " - ".join([f"_pr{i}"] + [f"{L[i, k]}*_pu{k}" for k in range(i)]))
            for i in reversed(range(p)):
                src.emit(f"_pv{i} = " + " - ".join([f"_pu{i}*{iD[i]}"] + [f"{L[k, i]}*_pv{k}" for k in range(i + 1, p)]))
            for k in range(p):   # lambda_0 = 0: the first iterate is -v (no constant start, see below)
                src.emit(f"_pa{k} = -_pv{k}" if first else f"_pa{k} = _pa{k} - _pv{k}")
            for j in range(n):
                src.emit(f"{y[j]} = {z[j]} + ({lin([(1.0, f'{G[k][j]}*_pa{k}') for k in range(p) if j in nz[k]])})")
            for k, v in enumerate(self.value_exprs(src, self.hat(src, y, "_pyh")) if poly is None else poly(self, y)):
                src.emit(f"_pr{k} = ({v}) - {targets[k]}")

        # The first iteration is written before the loop: a variable set to a constant in the body of a
        # numba.prange loop (lambda = 0.0) may be hoisted out of it by numba's parfor pass, which then
        # carries lambda over from one accepted step to the next (seen in the lane kernel on se(3)).
        iteration(True)
        if fixed is None:
            src.emit(f"for _pit in range({MAX_ITER - 1}):")
            src.indent += 1
            src.emit("if " + " and ".join(f"bmax(abs(_pr{k}) - {TOL_FACTOR!r}*_pt{k}) <= 0.0" for k in range(p)) + ":")
            src.emit("    break")
            iteration(False)
            src.indent -= 1
        else:
            # ``fixed`` iterations without a test (straight-line code the lanes vectorize); _pok <= 0
            # when the last residuals are at round-off (else the caller projects again with the loop)
            for _ in range(fixed - 1):
                iteration(False)
            ok = f"abs(_pr0) - {TOL_FACTOR!r}*_pt0"
            for k in range(1, p):
                ok = f"max({ok}, abs(_pr{k}) - {TOL_FACTOR!r}*_pt{k})"
            src.emit(f"_pok = {ok}")
        inc = [f"_pp{j}" for j in range(n)]
        for j in range(n):
            src.emit(f"{inc[j]} = {lin([(1.0, f'{G[k][j]}*_pa{k}') for k in range(p) if j in nz[k]])}")
        return inc, y

    def source(self):
        """Source of ``values(z...) -> (C_k...)`` and ``increment(z..., c...) -> (p_j...)``."""
        z = [f"z{j}" for j in range(self.n)]
        c = [f"c{k}" for k in range(self.p)]
        v = Lines()
        vals = self.value_exprs(v, self.hat(v, z, "_pzh"))
        text = (f"def values({', '.join(z)}):\n" + "\n".join(v.lines + [f"    return ({', '.join(vals)},)"]) + "\n\n")
        w = Lines()
        inc, _ = self.write(w, z, c)
        return (text + f"def increment({', '.join(z + c)}):\n" + "\n".join(w.lines)
                + f"\n    return ({', '.join(inc)},)\n")

    def rows_source(self):
        """Source of ``rows(Z, C, OUT)``: OUT[r] = the increment projecting the row Z[r] (m, n) onto {C = C[r]}
        (C (m, p)), a loop over the rows for compiled code (the dense output of a projected pair on the
        compiled path: straight-line code per row instead of one numpy call per term over all rows)."""
        z = [f"_z{j}" for j in range(self.n)]
        c = [f"_c{k}" for k in range(self.p)]
        w = Lines(indent=2)
        for j in range(self.n):
            w.emit(f"{z[j]} = Z[_r, {j}]")
        for k in range(self.p):
            w.emit(f"{c[k]} = C[_r, {k}]")
        inc, _ = self.write(w, z, c)
        for j in range(self.n):
            w.emit(f"OUT[_r, {j}] = {inc[j]}")
        return "def rows(Z, C, OUT):\n    for _r in range(Z.shape[0]):\n" + "\n".join(w.lines) + "\n    return OUT\n"

    # ------------------------------------------------------------------ numpy
    def values(self, z):
        """C_k(z) for z of shape (..., n): shape (..., p) (one state: in Python floats, the same expressions)."""
        z = np.asarray(z, dtype=float)
        if z.ndim == 1:
            return np.array([float(v) for v in self._values(*z.tolist())])
        out = self._values(*np.moveaxis(z, -1, 0))
        return np.stack([np.broadcast_to(v, z.shape[:-1]) for v in out], -1)

    def increment(self, z, targets):
        """The increment G^T lambda that projects z (..., n) onto {C = targets} (targets (..., p) or
        (p,)), every row on its own (module docstring; the iterations stop when every row's residual
        is at round-off)."""
        z = np.asarray(z, dtype=float)
        targets = np.broadcast_to(np.asarray(targets, dtype=float), z.shape[:-1] + (self.p,))
        with np.errstate(all="ignore"):
            inc = self._increment(*np.moveaxis(z, -1, 0), *np.moveaxis(targets, -1, 0))
        return np.stack([np.broadcast_to(v, z.shape[:-1]) for v in inc], -1)

    def project(self, z, targets):
        """z (..., n) projected onto {C = targets}: z + :meth:`increment`."""
        return np.asarray(z, dtype=float) + self.increment(z, targets)


def polynomials(algebra):
    """The polynomial Casimirs of ``algebra`` as tuples of (coefficient, exponents) (``Casimir.terms``,
    sorted by exponents)."""
    return tuple(tuple(cas.terms) for cas in algebra.casimirs())


def of_algebra(algebra):
    """The :class:`CasimirProjection` of ``algebra`` (None when it has no polynomial Casimir), cached
    per structure constants; written in the sparse basis of the algebra when that is cheaper
    (:func:`basis_polynomials`)."""
    C = np.ascontiguousarray(algebra.structure_constants, dtype=float)
    key = (C.shape, C.tobytes())
    if key not in _CACHE:
        polys = polynomials(algebra)
        found = sparse_polynomials(algebra)
        if found is not None:    # the text reads Chat in the sparse basis, the dense forms Chat(T^T z) expanded
            basis, polys = found
        _CACHE[key] = CasimirProjection(polys, algebra.dim, None if found is None else basis) if polys else None
    return _CACHE[key]


def sparse_polynomials(algebra):
    """:func:`basis_polynomials` of ``algebra``'s polynomial Casimirs (in the order of ``algebra.casimirs()``), cached
    per structure constants: ((T, Chat), Chat(T^T z)) when the sparse basis makes them cheaper, else None. The Casimir
    projection (:func:`of_algebra`) and the end-of-run check's compiled values
    (:func:`integrators.backends.casimir_rows.values`) read them (~40 ms once for so(5) in a random basis)."""
    C = np.ascontiguousarray(algebra.structure_constants, dtype=float)
    key = ("sparse", C.shape, C.tobytes())
    if key not in _CACHE:
        polys = polynomials(algebra)
        _CACHE[key] = basis_polynomials(C, polys) if polys else None
    return _CACHE[key]


#: the largest symmetric tensor (n^d entries) :func:`basis_polynomials` forms for a degree d
_TENSOR_MAX = 2_000_000


def text_cost(polys):
    """Products of a projection's text: a term of the gradient for each variable of each monomial, and the value."""
    return sum(len(poly) + sum(1 for _, ex in poly for e in ex if e) for poly in polys)


def basis_polynomials(C, polys):
    """((T, the polynomials Chat of zhat = T^T z), Chat(T^T z) expanded in z) for the sparse basis T of C
    (:func:`integrators.geometry.sparse_basis.sparse_basis`) when the projection's text is cheaper there, else None.
    The expansion is what the dense forms of the projection read (the generic kernel's monomial tables, the
    numpy matrix form), so that every path projects onto the same function and takes its targets from it.

    C_k(z) = Chat_k(T^T z): each homogeneous part, as the symmetric tensor S of its coefficients, becomes
    S(T^-T zhat, ...), the tensor contracted with T^-1 on every index; the coefficient of zhat^e is the entry at
    its sorted index times the multinomial coefficient. In the sparse basis most coefficients are zero (the
    weights; the contraction in extended precision, round-off below 1e-12 of the largest dropped), and Chat(T^T z) is
    checked against C(z) at probes to 1e-11 of the sum of the terms' sizes. The two differ by
    ~1e-13-1e-12 of the terms (the library's coefficients in a dense basis are accurate to ~1e-13, and a
    coefficient in the new basis sums ~cond(T)^d of them): a run projected onto Chat keeps the library's Casimirs
    to that, with no drift (their difference is a fixed function of the state), far inside the 1e-6 a run is
    checked to.
    The text then costs the maps z -> zhat, the gradients back
    (G = T Ghat) and zhat at each iterate ((2 + p) n^2 products) besides the sparse polynomials; it is used when
    that is below 0.7 of the dense polynomials' products (so(5) in a random basis: ~730 against ~3,070)."""
    form = sparse_basis(C)
    if form is None:
        return None
    n, p = C.shape[0], len(polys)
    if any(n ** sum(ex) > _TENSOR_MAX for poly in polys for _, ex in poly):
        return None
    out = [_substitute(poly, form.Tinv, n, clean=1e-12) for poly in polys]   # z = T^-T zhat
    if text_cost(out) + (2 + p) * n * n >= 0.7 * text_cost(polys):
        return None
    for z in np.random.default_rng(5).standard_normal((3, n)):
        zh = form.T.T @ z
        for poly, hpoly in zip(polys, out):
            sizes = [c * np.prod(z ** np.array(ex)) for c, ex in poly]
            got = sum(c * np.prod(zh ** np.array(ex)) for c, ex in hpoly)
            if abs(got - sum(sizes)) > 1e-11 * sum(abs(v) for v in sizes):
                return None
    back = tuple(_substitute(hpoly, form.T, n, clean=0.0) for hpoly in out)    # zhat = T^T z
    return (tuple(map(tuple, form.T.tolist())), tuple(out)), back


def _substitute(poly, M, n, clean):
    """The polynomial poly(M^T y) in the variables y (poly: (coefficient, exponents) terms; the substitution
    z_i = sum_a M[a, i] y_a), each homogeneous part as the symmetric tensor of its coefficients contracted with
    M on every index, in extended precision (a coefficient sums n^d products); the coefficient of y^e is the
    entry at its sorted index times the multinomial coefficient; terms below ``clean`` of the largest dropped."""
    M = np.asarray(M, dtype=np.longdouble)
    by_degree = {}
    for c, ex in poly:
        by_degree.setdefault(sum(ex), []).append((c, ex))
    terms = {}
    for d, part in by_degree.items():
        if d == 0:
            for c, ex in part:
                terms[ex] = terms.get(ex, 0.0) + c
            continue
        S = np.zeros((n,) * d, dtype=np.longdouble)
        for c, ex in part:     # spread c over the d!/prod(e_j!) orderings of the monomial's index
            idx = [j for j in range(n) for _ in range(ex[j])]
            perms = set(itertools.permutations(idx))
            for q in perms:
                S[q] += c / len(perms)
        for _ in range(d):
            S = np.tensordot(S, M, axes=([0], [1]))
        for idx in itertools.combinations_with_replacement(range(n), d):
            ex = tuple(idx.count(j) for j in range(n))
            mult = math.factorial(d) / math.prod(math.factorial(e) for e in ex)
            terms[ex] = terms.get(ex, 0.0) + float(S[idx] * mult)
    big = max((abs(c) for c in terms.values()), default=0.0)
    return tuple(sorted(((c, ex) for ex, c in terms.items() if c != 0.0 and abs(c) > clean * big), key=lambda t: t[1]))
