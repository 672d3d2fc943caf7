"""What the code generator knows about a problem, recognised from its data rather than its name.

* The velocity map is probed at fixed random points: when w(z) = W z + c (affine: every
  Euler-Poincare system, servo-constraints of the second kind, the heavy top with its linear term c)
  W and c are read off and checked (:func:`affine_velocity`).
* A forcing is accepted when it is the multiplier force of linear invariants L (p, n) and a fixed span
  B: f(z) = -B (L B)^-1 L ad*_{w(z)} z = -P ad*_{w(z)} z (servo-constraints of the first kind,
  Suslov's problem), found by probing f and checked at random points (:func:`multiplier_projector`).
* The kind of closed-form exponential the structure constants admit (:func:`closed_form`): so(3) /
  se(3) in the documented basis (compared entrywise), a 3-dimensional algebra with ad_x^3 = q(x) ad_x
  in any basis (:func:`cubic_ad`), or a sum of two such ideals (:func:`ideal_split`, from the commutant
  of ad: Schur's lemma, Hall (2015)).

:func:`recognise` returns the :class:`Structure` (cached on the problem object and re-derived when
what it depends on changes), or None when the problem is outside what the generator covers.
"""

from __future__ import annotations

import math
import types

import numpy as np

from liegroups.closed_forms import closed_form_kind

from .almost_abelian import almost_abelian


class Structure:
    """The data the generated code is written from.

    kind "coadjoint": z' = (I - P) ad*_{W z + c} z on g* with structure constants C (P = None: no
    forcing). ``closed`` is "so3", "se3", "ad3", "ad3x2", "almost_abelian" (:func:`closed_form`) or None (generic
    Taylor exponential). ``Pi`` (with P): the orthogonal projector L^T (L L^T)^-1 L onto the row space of
    the linear invariants L whose multiplier force P is (a Lie-group step of a forced problem projects its
    increment with I - Pi, as :class:`integrators.reference.stepping.ProjectedStepper` projects its end
    point onto {L z = L z0}).
    """

    def __init__(self, C, W, c, P=None, closed=None, Pi=None):
        self.C = np.asarray(C, dtype=float)
        self.n = self.C.shape[0]
        self.W = np.asarray(W, dtype=float)
        self.c = np.asarray(c, dtype=float)
        self.P = None if P is None else np.asarray(P, dtype=float)
        self.closed = closed
        self.Pi = None if Pi is None else np.asarray(Pi, dtype=float)
        parts = [self.C, self.W, self.c] + ([] if P is None else [self.P]) + ([] if Pi is None else [self.Pi])
        self.key = (closed, self.n) + tuple(p.tobytes() for p in parts)
        # ||ad(e_i)^T||_1 (largest column sum): ||ad(x)^T||_1 <= sum_i |x_i| norms[i]
        self.norms = np.array([np.max(np.sum(np.abs(self.C[i]), axis=1)) if self.n else 0.0
                               for i in range(self.n)])


def closed_form(C):
    """The closed-form exponential the generated code uses for structure constants C:

    * "so3" or "se3" when C equals the structure constants of so(3) / se(3) in the documented basis
      (:func:`liegroups.closed_forms.closed_form_kind`): Rodrigues' formula with cross products;
    * "ad3" when C is 3-dimensional with ad_x^3 = q(x) ad_x, q(x) = tr(ad_x^2)/2, for every x,
      checked on probes to 1e-12: the unimodular algebras (so(3), su(2), sl(2), so(2,1), se(2),
      e(1,1), Heisenberg: Bianchi class A, in any basis;
      :meth:`integrators.codegen.exp_writer.ExponentialWriter._act_ad3` derives the identity) and Bianchi V
      (there ad_x^2 = -x_3 ad_x);
    * "ad3x2" when C is 6-dimensional and the direct sum of two 3-dimensional ideals with that
      property (so(4) = so(3) + so(3), so(2,2) = sl(2) + sl(2), so(3) + sl(2), in any basis), found
      by :func:`ideal_split`;
    * "almost_abelian" when g has an abelian ideal of codimension one and ad of a complement is
      diagonalisable with a well-conditioned basis (R x_D R^(n-1), Bianchi III, VI_h, VII_h, in any basis;
      :func:`integrators.geometry.almost_abelian.almost_abelian`): blockwise scalar functions in the
      adapted basis;
    * None otherwise (the Taylor series of the action).
    """
    C = np.asarray(C, dtype=float)
    key = (C.shape, C.tobytes())
    kind = _CLOSED.get(key, False)
    if kind is False:
        if len(_CLOSED) >= 256:
            _CLOSED.clear()
        kind = _CLOSED[key] = _closed_form(C)
    return kind


#: structure constants (shape, bytes) -> closed_form (its probes cost up to ~0.3 ms; the reference steppers ask
#: once per run, :func:`integrators.geometry.orbit_space.applies`)
_CLOSED = {}


def _closed_form(C):
    kind = closed_form_kind(C)
    if kind in ("so3", "se3"):
        return kind
    if cubic_ad(C):
        return "ad3"
    if ideal_split(C) is not None:
        return "ad3x2"
    if almost_abelian(C) is not None:
        return "almost_abelian"
    return None


def killing_half(C):
    """The matrix Q of q(x) = tr(ad_x^2)/2 = x^T Q x: half the Killing form, Q_ij =
    sum_{a,b} C[i, a, b] C[j, b, a] / 2."""
    C = np.asarray(C, dtype=float)
    return 0.5 * np.einsum("iab,jba->ij", C, C)


def cubic_ad(C, rtol=1e-12):
    """True when C is 3-dimensional and ad_x^3 = q(x) ad_x (q of :func:`killing_half`) to rtol
    |ad_x|^3 at the unit vectors and three random points (the identity is quadratic in the
    directions of x, so these probes decide it up to round-off)."""
    C = np.asarray(C, dtype=float)
    if C.shape != (3, 3, 3):
        return False
    Q = killing_half(C)
    rng = np.random.default_rng(2024)
    for x in np.concatenate([np.eye(3), rng.standard_normal((3, 3))]):
        A = np.einsum("i,ikj->jk", x, C)  # ad_x: (ad_x y)_j = sum_{i,k} x_i y_k C[i, k, j]
        size = float(np.max(np.abs(A)))
        if size == 0.0:
            continue
        if not np.max(np.abs(A @ A @ A - (x @ Q @ x) * A)) <= rtol * 9.0 * size ** 3:
            return False
    return True


_SPLITS = {}


def ideal_split(C, rtol=1e-10):
    """The projection P1 of g = I1 + I2 onto the first of two 3-dimensional ideals (along the second)
    when C (6-dimensional) splits so and ad_x^3 = q(x) ad_x holds on each ideal, else None.

    The ideals are read off the commutant of the adjoint representation, the matrices T with
    T ad_y = ad_y T for every y: for a direct sum of two real-simple ideals whose centroids are R it
    is span(P1, P2) (Schur's lemma on each simple ideal: Hall (2015), chapter 4), so the
    traceless element T of the commutant has T^2 = c I, c > 0, and P1 = (I + T/sqrt c)/2. A
    complex-simple algebra (sl(2, C) = so(3, 1): T^2 = -I), a bigger commutant (an abelian or
    non-semisimple summand) or ideals without the cubic identity give None. Entries of P1 within
    1e-12 of a multiple of 2^-20 are rounded to it (the so(4) basis: 0, +-1/2, so x1 = P1 x rounds
    like any sum). Checked on probes: ad_{P1 x} ad_{P2 x} = 0 and the cubic identity on each ideal.
    """
    C = np.asarray(C, dtype=float)
    if C.shape != (6, 6, 6):
        return None
    key = C.tobytes()
    if key in _SPLITS:
        return _SPLITS[key]
    _SPLITS[key] = out = _ideal_split(C, rtol)
    return out


def _ideal_split(C, rtol):
    n = 6
    ads = np.transpose(C, (0, 2, 1))  # ads[i] = ad(e_i): (ad_{e_i})_{kj} = C[i, j, k]
    size = float(np.max(np.abs(C)))
    if size == 0.0:
        return None
    eye = np.eye(n)
    # row-major vec: vec(T ad) = (I kron ad^T) vec T, vec(ad T) = (ad kron I) vec T
    L = np.concatenate([np.kron(eye, a.T) - np.kron(a, eye) for a in ads])
    _, sv, Vt = np.linalg.svd(L)
    null = Vt[sv <= rtol * sv[0]] if sv.size else Vt
    if null.shape[0] != 2:
        return None
    Ts = [v.reshape(n, n) - np.trace(v.reshape(n, n)) / n * eye for v in null]
    T = max(Ts, key=lambda m: float(np.max(np.abs(m))))
    c = float(np.trace(T @ T)) / n
    if not c > 0.0 or np.max(np.abs(T @ T - c * eye)) > 1e-9 * c:
        return None
    P1 = 0.5 * (eye + T / np.sqrt(c))
    snapped = np.round(P1 * 2.0 ** 20) / 2.0 ** 20
    if np.max(np.abs(snapped - P1)) <= 1e-12:
        P1 = snapped
    if abs(np.trace(P1) - 3.0) > 1e-9:
        return None
    Q = killing_half(C)
    rng = np.random.default_rng(2025)
    for x in rng.standard_normal((4, n)):
        x1 = P1 @ x
        parts = [np.einsum("i,ikj->jk", y, C) for y in (x1, x - x1)]
        big = max(float(np.max(np.abs(A))) for A in parts)
        if np.max(np.abs(parts[0] @ parts[1])) > 1e-10 * 36.0 * big ** 2 or \
                np.max(np.abs(parts[1] @ parts[0])) > 1e-10 * 36.0 * big ** 2:
            return None
        for y, A in zip((x1, x - x1), parts):
            if np.max(np.abs(A @ A @ A - (y @ Q @ y) * A)) > 1e-10 * 36.0 * big ** 3:
                return None
    return P1


def _probes(y0, n, k=3, seed=12345):
    """Up to 4 rows of y0 and k random points at the scale of y0 (max(1, |y0|_inf))."""
    rng = np.random.default_rng(seed)
    y = np.asarray(y0, dtype=float).reshape(-1, n)[:4]
    scale = max(1.0, float(np.max(np.abs(y)))) if y.size else 1.0
    return np.concatenate([y, scale * rng.standard_normal((k, n))], axis=0)


def _random_points(n, k, seed):
    """k fixed standard-normal points in R^n (the probes of the recognition, independent of y0)."""
    return np.random.default_rng(seed).standard_normal((k, n))


def _affine_fits(velocity, W, c, Z):
    """velocity(Z) == Z W^T + c at the points Z (relative 1e-12); False when the velocity fails there."""
    try:
        with np.errstate(all="ignore"):
            vz = np.asarray(velocity(Z), dtype=float)
    except Exception:  # noqa: BLE001 - a velocity that does not take a batch has no fast path
        return False
    if vz.shape != Z.shape:
        return False
    pred = Z @ W.T + c
    return bool(np.all(np.abs(vz - pred) <= 1e-12 * (1.0 + np.abs(pred) + np.max(np.abs(W)) * np.abs(Z).max())))


def affine_velocity(velocity, n, y0=None):
    """(W, c) with velocity(z) = W z + c, read off at 0 and the unit vectors and checked at random
    points (and at y0 when given; relative 1e-12); None when the velocity is not affine (or not batched)."""
    basis = np.concatenate([np.zeros((1, n)), np.eye(n)], axis=0)
    try:
        with np.errstate(all="ignore"):
            v = np.asarray(velocity(basis), dtype=float)
    except Exception:  # noqa: BLE001 - a velocity that does not take a batch has no fast path
        return None
    if v.shape != (n + 1, n) or not np.all(np.isfinite(v)):
        return None
    c = v[0]
    W = (v[1:] - c).T
    Z = _random_points(n, 3, 12345) if y0 is None else _probes(y0, n)
    return (W, c) if _affine_fits(velocity, W, c, Z) else None


def _multiplier_fits(problem, W, c, P, Z):
    """forcing(Z) == -P ad*_{W z + c} z at the points Z (relative 1e-10)."""
    try:
        with np.errstate(all="ignore"):
            F = np.asarray(problem.forcing(Z), dtype=float)
            G = problem.algebra.coad(Z @ W.T + c, Z)
    except Exception:  # noqa: BLE001
        return False
    if F.shape != Z.shape or not np.all(np.isfinite(F)):
        return False
    return bool(np.all(np.abs(F + G @ P.T) <= 1e-10 * (1.0 + np.abs(G).max())))


def multiplier_projector(problem, W, c, y0=None):
    """P with forcing(z) = -P ad*_{W z + c} z for every z (multiplier force of the linear invariants
    L: P = B (L B)^-1 L with B spanning the forcing), or None when the forcing is not of this form.
    B is read off at fixed random points (the span of the forcing there, by an SVD); the identity is
    then checked at other random points and at y0 when given."""
    L = getattr(problem, "linear_invariants", None)
    if L is None:
        return None
    n = problem.dim
    Z = _random_points(n, n + 3, 777)
    try:
        with np.errstate(all="ignore"):
            F = np.asarray(problem.forcing(Z), dtype=float)
    except Exception:  # noqa: BLE001
        return None
    if F.shape != Z.shape or not np.all(np.isfinite(F)):
        return None
    p = L.shape[0]
    U, s, _ = np.linalg.svd(F.T)
    if s.size < p or s[0] == 0.0 or (s.size > p and s[p] > 1e-10 * s[0]):
        return None
    B = U[:, :p]
    LB = L @ B
    if abs(np.linalg.det(LB)) < 1e-12 * np.linalg.norm(L) ** p:
        return None
    P = B @ np.linalg.solve(LB, L)
    check = Z if y0 is None else np.concatenate([Z, _probes(y0, n, k=0)], axis=0)
    return P if _multiplier_fits(problem, W, c, P, check) else None


def _derive(problem):
    """The :class:`Structure` of a coadjoint problem from probes that do not depend on the initial
    state (so a cached one is the one a fresh recognition would find), or None."""
    n = problem.dim
    Wc = affine_velocity(problem.velocity, n)
    if Wc is None:
        return None
    W, c = Wc
    P = Pi = None
    if problem.forcing is not None:
        P = multiplier_projector(problem, W, c)
        if P is None:
            return None
        L = problem.linear_invariants
        Pi = L.T @ np.linalg.solve(L @ L.T, L)
    C = problem.algebra.structure_constants
    return Structure(C, W, c, P, closed_form(C), Pi)


def _same(a, b):
    # bound methods are new objects on every attribute access of a class-level def: compare by ==
    return a is b or (isinstance(a, types.MethodType) and a == b)


def _fingerprint(problem):
    """What a recognised structure depends on: the velocity, forcing and algebra objects (by identity)
    and the values of the structure constants and linear invariants."""
    L = getattr(problem, "linear_invariants", None)
    C = problem.algebra.structure_constants
    return ((problem.velocity, problem.forcing, problem.algebra),
            (problem.dim, np.asarray(C).tobytes(), None if L is None else np.asarray(L).tobytes()))


#: the attribute under which :func:`recognise` keeps its result on a problem
CACHE_ATTR = "_liedyn_recognised"
#: how many verified initial states (and scales) a problem remembers
_MEMO = 32


class _Recognised:
    """A problem's recognised structure with what it was derived from and where it was verified."""

    def __init__(self, objects, values, st):
        self.objects, self.values, self.st = objects, values, st
        self.scales = {}          # binary exponent of max(1, |y0|) -> verdict at random points of that size
        self.starts = set()       # bytes of initial states (first rows) already verified

    def matches(self, objects, values):
        return all(_same(a, b) for a, b in zip(self.objects, objects)) and self.values == values


def _verified(problem, entry, y0):
    """Does the structure hold at y0 (its first 4 rows) and at random points of y0's size? Remembered
    per initial state and per binary exponent of the size."""
    st = entry.st
    n = st.n
    Y = np.asarray(y0, dtype=float).reshape(-1, n)[:4]
    key = Y.tobytes()
    if key in entry.starts:
        return True
    size = float(np.max(np.abs(Y))) if Y.size else 0.0
    e = math.frexp(max(1.0, size))[1] if math.isfinite(size) else None
    ok = entry.scales.get(e)
    if ok is None:
        Z = math.ldexp(1.0, e) * _random_points(n, 3, 4242) if e is not None else Y
        ok = _affine_fits(problem.velocity, st.W, st.c, Z) and (
            st.P is None or _multiplier_fits(problem, st.W, st.c, st.P, Z))
        if len(entry.scales) >= _MEMO:
            entry.scales.clear()
        entry.scales[e] = ok
    ok = ok and _affine_fits(problem.velocity, st.W, st.c, Y) and (
        st.P is None or _multiplier_fits(problem, st.W, st.c, st.P, Y))
    if ok:
        if len(entry.starts) >= _MEMO:
            entry.starts.clear()
        entry.starts.add(key)
    return ok


def recognise(problem, y0):
    """The :class:`Structure` of a coadjoint problem, or None when it has none the generator knows
    (always None for a time-dependent problem, ``problem.time_dependent``).

    The structure (W, c, P) is read off at probes that do not depend on y0 and kept on the problem
    (attribute :data:`CACHE_ATTR`), so later calls do no probing. It is re-derived when what it
    depends on changes: the objects ``problem.velocity``, ``problem.forcing``, ``problem.algebra``
    (identity) or the values of ``problem.dim``, the structure constants or ``linear_invariants``.
    Every call also checks that the structure holds at y0 (its first 4 rows) and at random points of
    y0's size, remembered per initial state and per binary exponent of |y0|_inf, and derives it afresh
    when that fails; a callable that changes its behaviour in place (a closure over mutable state) is
    therefore caught at a new y0 but not at one already verified: build a new problem after changing
    its system (or delete the attribute)."""
    if getattr(problem, "kind", None) != "coadjoint" or getattr(problem, "time_dependent", False):
        return None   # the generated code is autonomous: w(t, z), f(t, z) are never probed as w(z)
    n = problem.dim
    if n > 12:
        return None
    objects, values = _fingerprint(problem)
    entry = getattr(problem, CACHE_ATTR, None)
    fresh = not isinstance(entry, _Recognised) or not entry.matches(objects, values)
    if not fresh and entry.st is not None and not _verified(problem, entry, y0):
        fresh = True                   # the callables changed in place (or the structure fails at y0)
    if fresh:
        entry = _Recognised(objects, values, _derive(problem))
        try:
            setattr(problem, CACHE_ATTR, entry)
        except (AttributeError, TypeError):  # a problem object that takes no attributes: no cache
            pass
        if entry.st is not None and not _verified(problem, entry, y0):
            return None
    return entry.st
