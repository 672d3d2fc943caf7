"""The problems of the discrete mechanics schemes: what a constrained system must tell an integrator
beyond its vector field, attached to the ordinary problem as ``problem.discrete``.

* :class:`LieConstraintData`: a left-invariant kinetic energy T = (I w, w)/2 on a Lie group with k
  left-invariant constraints A w = 0 (rows a_i in g*) and controls B (rows b_i). ``structure`` is
  "lie_nonholonomic" for the Euler-Poincare-Suslov equations m' = ad*_w m + A^T lambda (B = A, the
  state z = m) and "lie_second_kind" for servo-constraints of the second kind and the vakonomic model,
  (m + B^T lambda)' = ad*_w (m + B^T lambda) (the state z = m + B^T lambda; Kozlov's lectures on
  servo-constraints). ``group`` (liegroups.SO3, SE2, SE3: hat / vee) is needed by the Cayley schemes only.
* :class:`LagrangeDAlembertData`: a mechanical Lagrangian in coordinates L(q, v) = v^T M v / 2 - V(q)
  with a constant mass matrix M and Cetaev-linear constraints A(q) v = 0 (k x n); the state is y = (q, v).
  ``grad_V(q)`` -> (..., n), ``A(q)`` -> (..., k, n), optional ``dA(q)`` -> (..., k, n, n) with
  dA[..., i, j, l] = dA_ij / dq_l (without it dA is taken by complex steps of A, which must then accept
  complex arrays). Optional ``scalar`` = (grad_V1, A1, dA1[, a1, Da1]): the same functions of ONE q (1-d arrays,
  returning (n,), (k, n), (k, n, n); dA1 may be None), written so that numba compiles them (nopython: no
  ellipsis indexing, no Python objects), each either f(q) returning a new array or f(q, out) writing into out
  (the form the compiled loops call: no allocation per call); they give mp_lda and nh_rattle their compiled loops
  (``backend="numba"``, :mod:`integrators.reference.nonholonomic.compiled`).
  Optional ``gauge`` = (a, Da): a term linear in the velocity, L = v^T M v / 2 + a(q) . v - V(q), with
  a(q) -> (..., n) and Da(q) -> (..., n, n), Da[..., i, j] = da_i/dq_j (both must accept complex arrays: the
  implicit steps differentiate them by complex steps). The force it adds is (Da^T - Da) v (a magnetic-type
  force; zero when a = grad S is exact, where only the discrete schemes see it: Modin and Verdier 2020's
  non-reversible test problems, :func:`contact_oscillator_nonreversible`). Its compiled loops need the
  scalar a1(q) (n,) and Da1(q) (n, n) as the 4th and 5th entries of ``scalar``.
  Optional ``source`` = {"grad_V": n, "A": k x n, "dA": k x n x n expression strings in q0 .. q(n-1)} (numpy
  and math calls by module name; servo.coordinates prints them from its symbolic equations): without a gauge
  term and with k <= 2 the engine writes them into the straight-line loops of
  :mod:`integrators.codegen.coordinate_source` (preferred to the loops on ``scalar``); checked at one q.

:func:`suslov_problem` and :func:`lagrange_dalembert_problem` build complete problems (vector field,
energy, constraint residuals, outputs) from the data, for users without a servo system; the servo systems
attach the data to the problems they build (``Nonholonomic.problem()``, ``ConstrainedSystem.simulate``).
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from ...core.errors import IntegrationInputError
from ...core.problems import CoadjointProblem, ODEProblem


def _matrix(x, shape, what):
    a = np.asarray(x, dtype=float)
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise IntegrationInputError(f"{what} must be a finite array of shape {shape}, got {np.shape(x)}")
    return a


def _writes(f):
    """True when the scalar problem function ``f`` has the form f(q, out) (writes its value into out)."""
    if f is None:
        return False
    try:
        return len(inspect.signature(getattr(f, "py_func", f)).parameters) == 2
    except (TypeError, ValueError):
        return False


def _call1(f, q, shape, writes):
    """The value of a scalar problem function at one q, in either form."""
    if writes:
        out = np.zeros(shape)
        f(q, out)
        return out
    return np.asarray(f(q), dtype=float)


def _check_source(source, n, k, grad_V, A, dA):
    """The expression source of the generated coordinate loops (``integrators.codegen.coordinate_source``):
    {"grad_V": n strings, "A": k x n, "dA": k x n x n (dA_ij/dq_l), optional} in q0 .. q(n-1), numpy and math
    calls by module name; checked against the batched functions at one q (IntegrationInputError)."""
    try:
        src = {"grad_V": [str(e) for e in source["grad_V"]], "A": [[str(e) for e in r] for r in source["A"]]}
        if source.get("dA") is not None:
            src["dA"] = [[[str(e) for e in c] for c in r] for r in source["dA"]]
    except (TypeError, KeyError, AttributeError) as err:
        raise IntegrationInputError(f"source must be a dict of expression strings (grad_V, A[, dA]): {err}") from None
    shapes = {"grad_V": (n,), "A": (k, n), "dA": (k, n, n)}
    q = np.linspace(0.1, 0.3, n)
    refs = {"grad_V": grad_V(q), "A": A(q), "dA": dA(q) if "dA" in src else None}
    env = {"numpy": np, "np": np, "math": math, **{f"q{i}": float(q[i]) for i in range(n)}}
    for key, exprs in src.items():
        arr = np.array(exprs, dtype=object)
        if arr.shape != shapes[key]:
            raise IntegrationInputError(f"source[{key!r}] must have shape {shapes[key]}, got {arr.shape}")
        try:
            got = np.array([float(eval(e, dict(env))) for e in arr.ravel()]).reshape(arr.shape)
        except Exception as err:  # noqa: BLE001 - any error of the user's text, reported with it
            raise IntegrationInputError(f"source[{key!r}] does not evaluate at q = {q.tolist()}: {err!r}") from None
        if not np.allclose(got, refs[key], rtol=1e-12, atol=1e-14):
            raise IntegrationInputError(f"source[{key!r}] disagrees with the batched function at q = {q.tolist()}: "
                                        f"{got.tolist()} against {np.asarray(refs[key]).tolist()}")
    return src


def vakonomic_names(n, k):
    """The sympy symbols of the expression source of :class:`VakonomicCoordinateData`: (q0.., v0.., l0..)."""
    import sympy as sp
    return tuple(sp.symbols(f"{c}0:{m}", real=True) for c, m in (("q", n), ("v", n), ("l", k)))


def vakonomic_expressions(source, n, k):
    """(L*, [phi_c]) as sympy expressions of :func:`vakonomic_names` from the text ``source`` = {"L": a string,
    "phi": k strings} (sympy's syntax); IntegrationInputError naming an entry that does not parse, uses another
    name, or (phi) depends on the multipliers."""
    import sympy as sp
    qs, vs, ls = vakonomic_names(n, k)
    names = {str(x): x for x in (*qs, *vs, *ls)}
    out = []
    for key, text in [("L", source["L"])] + [(f"phi[{c}]", t) for c, t in enumerate(source["phi"])]:
        try:
            e = sp.sympify(str(text), locals=names)
        except (sp.SympifyError, SyntaxError, TypeError) as err:
            raise IntegrationInputError(f"source {key} does not parse: {text!r} ({err})") from None
        extra = e.free_symbols - set(names.values())
        if extra or (key != "L" and e.free_symbols & set(ls)):
            raise IntegrationInputError(f"source {key} may use only q0..q{n - 1}, v0..v{n - 1}"
                                        + ("" if key != "L" else f", l0..l{k - 1}") + f": {text!r}")
        out.append(e)
    return out[0], out[1:]


def _check_vakonomic_source(source, n, k, Lv, Lq, phi):
    """The expression source of the generated dvak_mid loop: {"L": a string, "phi": k strings} in q0.., v0..,
    l0.. (sympy's syntax); dL*/dv, dL*/dq and phi derived from it by sympy agree with the batched functions at
    one state, else IntegrationInputError naming the entry."""
    import sympy as sp
    try:
        src = {"L": str(source["L"]), "phi": [str(e) for e in source["phi"]]}
    except (TypeError, KeyError, AttributeError) as err:
        raise IntegrationInputError(f"source must be a dict {{'L': str, 'phi': [str, ...]}}: {err!r}") from None
    if len(src["phi"]) != k:
        raise IntegrationInputError(f"source['phi'] must hold {k} expressions, got {len(src['phi'])}")
    L, phis = vakonomic_expressions(src, n, k)
    qs, vs, ls = vakonomic_names(n, k)
    q, v, lam = np.linspace(0.1, 0.3, n), np.linspace(-0.2, 0.3, n), np.linspace(0.1, 0.2, k)
    at = {**dict(zip(qs, q)), **dict(zip(vs, v)), **dict(zip(ls, lam))}
    got = {"dL*/dv (from L)": ([sp.diff(L, x) for x in vs], Lv(q, v, lam)),
           "dL*/dq (from L)": ([sp.diff(L, x) for x in qs], Lq(q, v, lam)),
           "phi": (phis, phi(q, v))}
    for what, (es, ref) in got.items():
        try:
            val = np.array([complex(e.evalf(subs=at)).real for e in es])
        except (TypeError, ValueError) as err:
            raise IntegrationInputError(f"source: {what} does not evaluate at q = {q.tolist()}: {err!r}") from None
        if not np.allclose(val, np.real(ref), rtol=1e-12, atol=1e-14):
            raise IntegrationInputError(f"source: {what} disagrees with the batched function at q = {q.tolist()}, "
                                        f"v = {v.tolist()}, lambda = {lam.tolist()}: {val.tolist()} against "
                                        f"{np.real(ref).tolist()}")
    return src


class LieConstraintData:
    """Inertia I (n, n), constraints A (k, n) and controls B (k, n) on ``algebra`` (see the module docstring)."""

    def __init__(self, algebra, inertia, A, B=None, structure="lie_nonholonomic", group=None):
        n = algebra.dim
        if structure not in ("lie_nonholonomic", "lie_second_kind"):
            raise IntegrationInputError(f"structure must be 'lie_nonholonomic' or 'lie_second_kind', got {structure!r}")
        self.algebra, self.structure, self.group = algebra, structure, group
        self.n = n
        self.I = _matrix(inertia, (n, n), "inertia")
        A = np.atleast_2d(np.asarray(A, dtype=float))
        self.A = _matrix(A, (A.shape[0], n), "the constraint covectors A")
        self.k = self.A.shape[0]
        self.B = self.A.copy() if B is None else _matrix(np.atleast_2d(np.asarray(B, dtype=float)), (self.k, n),
                                                          "the control covectors B")
        if not np.allclose(self.I, self.I.T) or np.min(np.linalg.eigvalsh(self.I)) <= 0:
            raise IntegrationInputError("inertia must be symmetric positive definite")
        self.Iinv = np.linalg.inv(self.I)
        self.R = self.A @ self.Iinv @ self.B.T
        if np.linalg.matrix_rank(self.R) < self.k:
            raise IntegrationInputError(f"the constraints are not realizable: A I^-1 B^T = {self.R.tolist()} is singular")
        if structure == "lie_nonholonomic" and not np.allclose(self.A, self.B):
            raise IntegrationInputError("the Euler-Poincare-Suslov schemes need the nonholonomic model B = A; a "
                                        "servo-constraint of the first kind with B != A has no discrete "
                                        "Lagrange-d'Alembert principle")
        if group is not None and getattr(group, "dim", n) != n:
            raise IntegrationInputError(f"group {group.name} has dimension {group.dim}, the algebra {n}")


class LagrangeDAlembertData:
    """L = v^T M v / 2 - V(q), constraints A(q) v = 0 (see the module docstring)."""

    structure = "lagrange_dalembert"

    def __init__(self, M, grad_V, A, dA=None, k=None, scalar=None, gauge=None, source=None):
        M = np.atleast_2d(np.asarray(M, dtype=float))
        n = M.shape[0]
        self.M = _matrix(M, (n, n), "the mass matrix M")
        if not np.allclose(self.M, self.M.T) or np.min(np.linalg.eigvalsh(self.M)) <= 0:
            raise IntegrationInputError("the mass matrix M must be symmetric positive definite")
        if not (callable(grad_V) and callable(A)) or (dA is not None and not callable(dA)):
            raise IntegrationInputError("grad_V, A (and dA when given) must be callables of q")
        self.n = n
        self.Minv = np.linalg.inv(self.M)
        self.grad_V, self._A, self._dA = grad_V, A, dA
        A0 = np.asarray(A(np.zeros(n)))
        if A0.ndim != 2 or A0.shape[1] != n:
            raise IntegrationInputError(f"A(q) must return (..., k, {n}), got shape {A0.shape} at q = 0")
        self.k = A0.shape[0]
        if scalar is not None:
            scalar = tuple(scalar) + (None,) * (5 - len(tuple(scalar)))
            if len(scalar) != 5 or not (callable(scalar[0]) and callable(scalar[1])) or any(
                    f is not None and not callable(f) for f in scalar[2:]) or ((scalar[3] is None) != (scalar[4] is None)):
                raise IntegrationInputError("scalar must be (grad_V1, A1[, dA1[, a1, Da1]]): callables of one q "
                                            "(a1 and Da1 together)")
            q = np.linspace(0.1, 0.3, n)
            self.scalar_writes = tuple(_writes(f) for f in scalar)
            for f, ref, what, w in ((scalar[0], grad_V(q), "grad_V1", self.scalar_writes[0]),
                                    (scalar[1], A(q), "A1", self.scalar_writes[1])) + (
                    ((scalar[2], self.dA(q), "dA1", self.scalar_writes[2]),) if scalar[2] is not None else ()):
                got = _call1(f, q, np.shape(ref), w)
                if (got.shape != np.shape(ref) or not np.allclose(got, ref, rtol=1e-12, atol=1e-14)):
                    raise IntegrationInputError(f"scalar {what}(q) disagrees with the batched function at q = "
                                                f"{q.tolist()}: {got.tolist()} against {np.asarray(ref).tolist()}")
        self.scalar = scalar
        if scalar is None:
            self.scalar_writes = None
        self.source = None if source is None else _check_source(source, n, self.k, grad_V, A, self.dA)
        if gauge is not None:
            if (not isinstance(gauge, (tuple, list)) or len(gauge) != 2 or not all(callable(f) for f in gauge)):
                raise IntegrationInputError("gauge must be (a, Da): callables of q returning (..., n) and (..., n, n)")
            q = np.linspace(0.1, 0.3, n)
            a, Da = np.asarray(gauge[0](q)), np.asarray(gauge[1](q))
            if a.shape != (n,) or Da.shape != (n, n):
                raise IntegrationInputError(f"gauge a(q), Da(q) must have shapes ({n},), ({n}, {n}); got {a.shape}, "
                                            f"{Da.shape} at q = {q.tolist()}")
            e = 1e-30
            Dcs = np.stack([np.imag(np.asarray(gauge[0](q + 1j * e * np.eye(n)[j]))) / e for j in range(n)], -1)
            if not np.allclose(Dcs, Da, rtol=1e-10, atol=1e-12):
                raise IntegrationInputError(f"gauge Da(q) is not the derivative of a(q) at q = {q.tolist()}: "
                                            f"{Da.tolist()} against complex steps {Dcs.tolist()}")
        self.gauge = gauge
        if scalar is not None and scalar[3] is not None:
            if gauge is None:
                raise IntegrationInputError("scalar a1, Da1 are given but the problem has no gauge term (gauge=(a, Da))")
            q = np.linspace(0.1, 0.3, n)
            for f, ref, what, w in ((scalar[3], self.a(q), "a1", self.scalar_writes[3]),
                                    (scalar[4], self.Da(q), "Da1", self.scalar_writes[4])):
                got = _call1(f, q, np.shape(ref), w)
                if got.shape != np.shape(ref) or not np.allclose(got, ref, rtol=1e-12, atol=1e-14):
                    raise IntegrationInputError(f"scalar {what}(q) disagrees with the gauge function at q = "
                                                f"{q.tolist()}: {got.tolist()} against {np.asarray(ref).tolist()}")

    def a(self, q):
        """The gauge one-form a(q) (..., n) (zero without a gauge)."""
        return np.zeros(np.shape(q)) if self.gauge is None else np.asarray(self.gauge[0](q))

    def Da(self, q):
        """da_i/dq_j (..., n, n) (zero without a gauge)."""
        return (np.zeros(np.shape(q) + (self.n,)) if self.gauge is None else np.asarray(self.gauge[1](q)))

    def force(self, q, v):
        """-grad V(q) + (Da^T - Da) v."""
        F = -np.asarray(self.grad_V(q), dtype=float)
        if self.gauge is not None:
            Da = self.Da(q)
            F = F + np.einsum("...ji,...j->...i", Da, v) - np.einsum("...ij,...j->...i", Da, v)
        return F

    def A(self, q):
        """A(q), (..., k, n)."""
        return np.asarray(self._A(q))

    def dA(self, q):
        """dA_ij/dq_l (..., k, n, n), given or by complex steps of A."""
        if self._dA is not None:
            return np.asarray(self._dA(q), dtype=float)
        q = np.asarray(q, dtype=float)
        n, e = self.n, 1e-30
        Q = q[None] + 1j * e * np.eye(n).reshape((n,) + (1,) * (q.ndim - 1) + (n,))
        return np.moveaxis(np.imag(np.asarray(self._A(Q))) / e, 0, -1)

    def multiplier(self, q, v):
        """The Lagrange-d'Alembert multiplier: (A M^-1 A^T) lambda = -A M^-1 F - (dA[v]) v, F = :meth:`force`."""
        A = self.A(q)
        dAv = np.einsum("...ijl,...l->...ij", self.dA(q), v)
        rhs = -np.einsum("...ij,jl,...l->...i", A, self.Minv, self.force(q, v)) - np.einsum("...ij,...j->...i", dAv, v)
        G = np.einsum("...ij,jl,...ml->...im", A, self.Minv, A)
        return np.linalg.solve(G, rhs[..., None])[..., 0]

    def acceleration(self, q, v):
        """v' = M^-1 (F + A^T lambda), F = :meth:`force`."""
        lam = self.multiplier(q, v)
        F = self.force(q, v) + np.einsum("...ij,...i->...j", self.A(q), lam)
        return F @ self.Minv.T


class VakonomicCoordinateData:
    """A Lagrangian L(q, v) in coordinates with k constraints phi(q, v) = 0 and the model of the second kind:
    the controlled Lagrangian L* = L + lambda . N(q, v) (Kozlov's lectures; the vakonomic model is N = -phi),
    the state y = (q, v, lambda) of size 2n + k (the multipliers are state variables, as in
    ``servo.coordinates``). The data are three batched functions, each accepting complex arrays (the implicit
    steps differentiate them by complex steps):

    * ``Lv(q, v, lam)`` -> (..., n): dL*/dv,  ``Lq(q, v, lam)`` -> (..., n): dL*/dq;
    * ``phi(q, v)`` -> (..., k): the constraints.

    Optional ``scalar`` = (Lv1, Lq1, phi1): the same functions of one state written so that numba compiles them,
    in the writing form f(q, v, lam, out) / phi1(q, v, out) on complex 1-d arrays (the compiled loop of
    ``dvak_mid`` takes its Jacobians by complex steps); ``servo.coordinates`` generates them from its symbolic
    L*, phi.

    Optional ``source`` = {"L": the controlled Lagrangian L*, "phi": k strings}: expression text in the names
    q0..q(n-1), v0..v(n-1), l0..l(k-1) (the multipliers), sympy's syntax (sin, cos, exp, sqrt, ** ...);
    ``servo.coordinates`` prints it from its symbolic L*, phi. The engine writes from it the straight-line loop
    of ``dvak_mid`` with analytic Jacobians and simplified Newton (:mod:`integrators.codegen.vakonomic_source`,
    preferred to the loop on ``scalar``); dL*/dv, dL*/dq and phi derived from it are checked against the
    batched functions at one state (IntegrationInputError).

    Autonomous (no t), no forces besides those in L. The scheme ``dvak_mid``
    (:mod:`integrators.reference.nonholonomic.vakonomic_schemes`) needs dL*/dv to be invertible in
    (v, lambda) together with phi = 0 (the realizability of the model)."""

    structure = "vakonomic_coordinates"

    def __init__(self, n, k, Lv, Lq, phi, scalar=None, source=None):
        if int(n) != n or n < 1 or int(k) != k or k < 1 or k >= n:
            raise IntegrationInputError(f"need 1 <= k < n constraints on n coordinates, got n = {n}, k = {k}")
        if not (callable(Lv) and callable(Lq) and callable(phi)):
            raise IntegrationInputError("Lv, Lq and phi must be callables")
        self.n, self.k = int(n), int(k)
        self.Lv, self.Lq, self.phi = Lv, Lq, phi
        q, v, lam = np.linspace(0.1, 0.3, n), np.linspace(-0.2, 0.3, n), np.linspace(0.1, 0.2, k)
        for f, args, m, what in ((Lv, (q, v, lam), n, "Lv"), (Lq, (q, v, lam), n, "Lq"), (phi, (q, v), k, "phi")):
            out = np.asarray(f(*args))
            if out.shape != (m,):
                raise IntegrationInputError(f"{what} must return shape ({m},) for one state, got {out.shape}")
            outc = np.asarray(f(*(a + 0j for a in args)))
            if not np.iscomplexobj(outc) or not np.allclose(outc.real, out):
                raise IntegrationInputError(f"{what} must accept complex arrays (complex-step derivatives)")
        if scalar is not None:
            if len(tuple(scalar)) != 3 or not all(callable(f) for f in scalar):
                raise IntegrationInputError("scalar must be (Lv1, Lq1, phi1): callables writing into their last argument")
            for f, args, ref, what in ((scalar[0], (q, v, lam), Lv(q, v, lam), "Lv1"),
                                       (scalar[1], (q, v, lam), Lq(q, v, lam), "Lq1"), (scalar[2], (q, v), phi(q, v), "phi1")):
                out = np.zeros(np.shape(ref), dtype=complex)
                f(*(a + 0j for a in args), out)
                if not np.allclose(out.real, ref, rtol=1e-12, atol=1e-14):
                    raise IntegrationInputError(f"scalar {what} disagrees with {what[:-1]} at one state: "
                                                f"{out.real.tolist()} against {np.asarray(ref).tolist()}")
        self.scalar = tuple(scalar) if scalar is not None else None
        self.source = None if source is None else _check_vakonomic_source(source, self.n, self.k, Lv, Lq, phi)


def suslov_problem(algebra, inertia, A, group=None, name=None):
    """The Euler-Poincare-Suslov problem m' = ad*_w m + A^T lambda(m), A w = 0, w = I^-1 m, as a
    CoadjointProblem carrying :class:`LieConstraintData` (energy, constraint residuals, linear invariants
    I^-1 a_i, output "lambda")."""
    d = LieConstraintData(algebra, inertia, A, group=group)
    IA = d.A @ d.Iinv                                       # rows I^-1 a_i

    def velocity(m):
        return np.asarray(m) @ d.Iinv

    def multiplier(m):
        c = algebra._coad(velocity(m), m)
        return -np.linalg.solve(d.R, (c @ IA.T)[..., None])[..., 0]

    def forcing(m):
        return multiplier(m) @ d.A

    def energy(m):
        return 0.5 * np.einsum("...i,...i->...", m, velocity(m))

    cons = {f"(a_{i + 1}, w)": (lambda m, i=i: velocity(m) @ d.A[i]) for i in range(d.k)}
    p = CoadjointProblem(algebra, velocity, forcing=forcing, velocity_matrix=d.Iinv, invariants={"energy": energy},
                         constraints=cons, linear_invariants=IA, name=name or f"Euler-Poincare-Suslov on {algebra.name}",
                         outputs={"lambda": multiplier, "w": velocity}, tolerances={c: 1e-6 for c in cons})
    p.discrete = d
    return p


def lagrange_dalembert_problem(M, grad_V, A, dA=None, potential=None, name=None, scalar=None, gauge=None,
                               source=None):
    """The Lagrange-d'Alembert equations M q'' = -grad V + (Da^T - Da) q' + A^T lambda, A(q) q' = 0 as an
    ODEProblem on y = (q, v) carrying :class:`LagrangeDAlembertData` (constraint residual "A(q) v", energy
    v^T M v / 2 + V when ``potential`` V(q) is given, outputs "q", "v", "lambda"). ``scalar``, ``gauge``: see
    :class:`LagrangeDAlembertData`."""
    d = LagrangeDAlembertData(M, grad_V, A, dA, scalar=scalar, gauge=gauge, source=source)
    n = d.n

    def f(t, y):
        y = np.asarray(y, dtype=float)
        q, v = y[..., :n], y[..., n:]
        return np.concatenate([v, d.acceleration(q, v)], axis=-1)

    inv = {}
    if potential is not None:
        # v^T M v as one two-operand einsum (the three-operand form costs 3x over every saved state)
        unit = bool(np.array_equal(d.M, np.eye(n)))

        def energy(y):
            v = y[..., n:]
            Mv = v if unit else np.matmul(v, d.M)
            return 0.5 * np.einsum("...i,...i->...", Mv, v) + potential(y[..., :n])
        inv["energy"] = energy
    cons = {f"A(q) v [{i}]": (lambda y, i=i: np.einsum("...j,...j->...", d.A(y[..., :n])[..., i, :], y[..., n:]))
            for i in range(d.k)}
    p = ODEProblem(f, 2 * n, invariants=inv, constraints=cons, name=name or "Lagrange-d'Alembert system",
                   outputs={"q": lambda y: y[..., :n], "v": lambda y: y[..., n:],
                            "lambda": lambda y: d.multiplier(y[..., :n], y[..., n:])},
                   tolerances={c: 1e-6 for c in cons})
    p.discrete = d
    return p


def contact_oscillator(eps=0.3):
    """The nonholonomic particle / contact oscillator of McLachlan and Perlmutter (2006), section 5.2:
    q = (x, y, z), M = 1, V = (|q|^2 + eps x^2 z^2)/2, constraint dx + y dz = 0 (A(q) = [1, 0, y]).
    H = |v|^2/2 + V and H_y = (y^2 + y'^2)/2 are conserved (invariants "energy" and "H_y"). eps = 0.3 is the
    value of Verdier's reproduction of their experiment (odelab, ``ContactOscillator(epsilon=.3)``). The
    problem carries scalar functions, so mp_lda and nh_rattle run it compiled with backend="numba"."""

    def grad_V(q):
        x, y, z = q[..., 0], q[..., 1], q[..., 2]
        return np.stack([x + eps * x * z * z, y, z + eps * x * x * z], -1)

    def A(q):
        q = np.asarray(q)
        out = np.zeros(q.shape[:-1] + (1, 3), dtype=q.dtype)
        out[..., 0, 0] = 1.0
        out[..., 0, 2] = q[..., 1]
        return out

    def dA(q):
        out = np.zeros(np.shape(q)[:-1] + (1, 3, 3))
        out[..., 0, 2, 1] = 1.0
        return out

    def grad_V1(q, out):                       # the scalar functions write into out (no allocation a call)
        out[0] = q[0] + eps * q[0] * q[2] * q[2]
        out[1] = q[1]
        out[2] = q[2] + eps * q[0] * q[0] * q[2]

    def A1(q, out):
        out[0, 0] = 1.0
        out[0, 1] = 0.0
        out[0, 2] = q[1]

    def dA1(q, out):
        for j in range(3):
            for l in range(3):
                out[0, j, l] = 0.0
        out[0, 2, 1] = 1.0

    def V(q):
        return 0.5 * (np.einsum("...i,...i->...", q, q) + eps * (q[..., 0] * q[..., 2]) ** 2)

    e = repr(float(eps))
    source = {"grad_V": [f"q0 + {e} * q0 * q2 * q2", "q1", f"q2 + {e} * q0 * q0 * q2"], "A": [["1.0", "0.0", "q1"]],
              "dA": [[["0"] * 3, ["0"] * 3, ["0", "1.0", "0"]]]}
    p = lagrange_dalembert_problem(np.eye(3), grad_V, A, dA, potential=V, scalar=(grad_V1, A1, dA1),
                                   name=f"contact oscillator (eps = {eps:g})", source=source)
    p.invariants["H_y"] = lambda y: 0.5 * (y[..., 1] ** 2 + y[..., 4] ** 2)
    return p


def contact_oscillator_nonreversible(eps=0.3):
    """The non-reversible variant of the contact oscillator (Modin and Verdier 2020, section on non-reversible
    test problems): the Hamiltonian H(q, p) = (|p + grad S|^2 + |q|^2 + eps x^2 z^2)/2 with S = S(q), i.e. the
    canonical momentum p = v - grad S. The Lagrangian is L = |v|^2/2 - grad S . v - V: the added term is the
    total derivative -dS/dt, so the motion in (q, v) is exactly the contact oscillator's (H, H_y conserved), but
    the standard reversibility map (q, p) -> (q, -p), in velocities (q, v) -> (q, -v + 2 grad S), no longer
    reverses it: the problem is integrable and not reversible for the standard map. A discrete scheme applied to
    this Lagrangian discretizes the gauge term a . v = -grad S . v, and the error it makes there is not a
    discrete total derivative: the scheme is not reversible. S(q) = cos z as in Verdier's reproduction
    (odelab, ``NonReversibleContactOscillator``), so a = -grad S = (0, 0, sin z). The state is (q, v) as in
    :func:`contact_oscillator` (same invariants, same initial states: :func:`contact_oscillator_initial`);
    it carries scalar functions (a1, Da1 with them), so mp_lda and nh_rattle run it compiled with
    backend="numba"."""
    base = contact_oscillator(eps)
    d = base.discrete

    def a(q):
        z = q[..., 2]
        zero = z * 0
        return np.stack([zero, zero, np.sin(z)], -1)

    def Da(q):
        z = q[..., 2]
        out = np.zeros(np.shape(q) + (3,), dtype=np.result_type(z, float))
        out[..., 2, 2] = np.cos(z)
        return out

    def a1(q, out):
        out[0] = 0.0
        out[1] = 0.0
        out[2] = np.sin(q[2])

    def Da1(q, out):
        for i in range(3):
            for j in range(3):
                out[i, j] = 0.0
        out[2, 2] = np.cos(q[2])

    p = lagrange_dalembert_problem(d.M, d.grad_V, d._A, d._dA, potential=lambda q: 0.5 * (
        np.sum(q * q, -1) + eps * q[..., 0] ** 2 * q[..., 2] ** 2), gauge=(a, Da), scalar=d.scalar[:3] + (a1, Da1),
        name=f"non-reversible contact oscillator (eps = {eps:g}, S = cos z)")
    p.invariants["H_y"] = base.invariants["H_y"]
    return p


def contact_oscillator_initial(z0, eps=0.3, H0=1.5, Hy=0.5):
    """States (..., 6) at rest in x, z with y = sqrt(2 H_y) (so y(t) = sqrt(2 H_y) cos t), energy H0 (odelab's
    ``initial_cos``): x0 = sqrt((2 H0 - 2 H_y - z0^2) / (1 + eps z0^2))."""
    z0 = np.asarray(z0, dtype=float)
    x0 = np.sqrt((2 * H0 - 2 * Hy - z0 ** 2) / (1 + eps * z0 ** 2))
    zero = np.zeros_like(z0)
    return np.stack([x0, np.full_like(z0, np.sqrt(2 * Hy)), z0, zero, zero, zero], -1)
