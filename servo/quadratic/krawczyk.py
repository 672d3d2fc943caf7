"""The Krawczyk test in ball arithmetic (python-flint's acb, an optional extra): boxes that provably hold
exactly one root of a square system f(z) = 0, z in C^n, and the grouping of such boxes into distinct roots.

Krawczyk operator (Krawczyk (1969); Moore, Kearfott and Cloud (2009), section 8.2; Rump (2010), Theorem
13.2 for the complex case): for a
point m, any matrix Y and a box X containing m,

    K(X) = m - Y f(m) + (I - Y J(X)) (X - m),       J(X) a box enclosing Df over X.

If K(X) lies in the interior of X, then X holds exactly one root zeta of f, zeta lies in K(X), and Df(zeta)
(indeed every matrix of J(X)) is non-singular: zeta is a simple root. Proof sketch: g(z) = z - Y f(z) maps
X into K(X) (f(z) - f(m) = int_0^1 Df(m + t (z - m)) dt (z - m), the integral lies in the convex box J(X)),
so Brouwer gives a fixed point; strict inclusion makes I - Y M contracting for every M in J(X), hence Y
and M are non-singular and the fixed point (the root) is unique. Boxes here are products of complex
rectangles (acb = real ball + i real ball), which are convex, so the argument holds componentwise.

Reality (a real system, f(conj z) = conj f(z)): a box centred at a real point is symmetric under
conjugation, so its unique root equals its own conjugate: it is real. A root whose enclosure K(X) has a
component with imaginary part bounded away from 0 is non-real.

Distinct roots: two enclosures that are disjoint in some real or imaginary part hold different roots; an
enclosure K_a inside the box X_b of another point holds X_b's unique root, the same root. Anything else is
undecided (the caller refines in higher precision).

Everything numeric here is rigorous ball arithmetic (Arb, Johansson (2017)); the centres m and the matrices Y are
plain approximations (midpoints), which the theorem allows.
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["have_flint", "require_flint", "working_precision", "BallSystem", "BallRoot", "krawczyk",
           "certify_point", "group_roots", "PRECISIONS"]

#: the precisions (bits) tried in turn by ``certify_point``
PRECISIONS = (64, 128, 256, 512, 1024)

try:                                   # the optional extra `certify` (python-flint)
    import flint as _flint
except ImportError:                    # pragma: no cover - exercised where python-flint is absent
    _flint = None


def have_flint() -> bool:
    """True if python-flint (ball arithmetic) is importable."""
    return _flint is not None


def require_flint(what: str) -> Any:
    """The flint module, or ModuleNotFoundError naming ``what`` needs it and how to install it."""
    if _flint is None:
        raise ModuleNotFoundError(f"{what} needs python-flint (ball arithmetic): pip install 'liedyn[certify]' "
                                  f"or pip install python-flint")
    return _flint


@contextlib.contextmanager
def working_precision(bits: int) -> Iterator[None]:
    """Set flint's working precision (a global of the library) for the block, and restore it."""
    fl = require_flint("ball arithmetic")
    old = fl.ctx.prec
    fl.ctx.prec = int(bits)
    try:
        yield
    finally:
        fl.ctx.prec = old


class BallSystem(Protocol):
    """A square system f: C^n -> C^n evaluated in ball arithmetic at the current flint precision.

    ``f(z)`` and ``jac(z)`` take an n x 1 acb_mat (a point or a box) and return enclosures of f (n x 1) and of
    Df (n x n) over it; ``real`` is True when f has real coefficients (f(conj z) = conj f(z))."""

    n: int
    real: bool

    def f(self, z: Any) -> Any: ...

    def jac(self, z: Any) -> Any: ...


@dataclass
class BallRoot:
    """A box X proved (Krawczyk) to hold exactly one root, which is simple and lies in ``enclosure``.

    enclosure, box: n x 1 acb_mat (K(X) and X); precision: bits of the arithmetic that proved it;
    real: True (proved real), False (proved non-real) or None (not decided; the system is complex or the
    box meets the real space); mid: the centres as complex numbers; radius: an upper bound of the largest
    real or imaginary radius of the enclosure (float)."""

    enclosure: Any
    box: Any
    precision: int
    real: bool | None
    mid: NDArray[np.complex128]
    radius: float


def _fl() -> Any:
    return require_flint("ball arithmetic")


def _upper(x: Any) -> float:
    """A float upper bound of |x| for an arb ball x."""
    v = float(x.abs_upper())
    return v * (1 + 2.0 ** -50) + 1e-300 if math.isfinite(v) else math.inf


def _col(values: Sequence[Any]) -> Any:
    fl = _fl()
    return fl.acb_mat([[v] for v in values])


def _column_from_complex(z: NDArray[np.complex128]) -> Any:
    """An exact acb column from complex doubles (every double is an exact dyadic number)."""
    fl = _fl()
    return _col([fl.acb(float(c.real), float(c.imag)) for c in np.asarray(z, dtype=complex)])


def _mid(z: Any) -> Any:
    return z.mid()


def _norm_upper(z: Any) -> float:
    """Upper bound of max_i max(|Re z_i|, |Im z_i|) over a column (float)."""
    return max(max(_upper(z[i, 0].real), _upper(z[i, 0].imag)) for i in range(z.nrows()))


def _to_complex(z: Any) -> NDArray[np.complex128]:
    return np.array([complex(z[i, 0].mid()) for i in range(z.nrows())], dtype=complex)


def _newton(system: BallSystem, z: Any, prec: int, real: bool, iters: int) -> tuple[Any, float] | None:
    """Newton's method on the midpoints at the current precision; returns (z, |last step|) or None if Df is
    singular or the iteration blows up."""
    fl = _fl()
    step = math.inf
    tol = 2.0 ** (-prec + 6)
    for _ in range(iters):
        try:
            dz = system.jac(z).solve(system.f(z))
        except ZeroDivisionError:
            return None
        z = _mid(z - dz)
        if real:
            z = _col([fl.acb(z[i, 0].real) for i in range(z.nrows())])
        step = _norm_upper(_mid(dz))
        scale = max(_norm_upper(z), 1e-300)
        if not math.isfinite(step) or not math.isfinite(scale) or scale > 1e300:
            return None
        if step <= tol * scale:
            break
    return z, step


def krawczyk(system: BallSystem, z: Any, prec: int, real: bool = False, inflations: int = 4) -> BallRoot | None:
    """The Krawczyk test around the centre z (n x 1 acb_mat of exact midpoints) at the current precision
    ``prec`` (already set), with Y = mid(Df(z))^-1 and the box X = z + r ([-1, 1] + i [-1, 1])^n,
    r = 2 |Y f(z)| + 2^(4 - prec) (1 + |z|), enlarged 16-fold up to ``inflations`` times (epsilon-inflation,
    Rump 2010, section 13). real: z is real and the system is real (the proof then makes the root real).
    Returns the BallRoot or None."""
    fl = _fl()
    n = system.n
    try:
        Y = system.jac(z).mid().inv().mid()
    except ZeroDivisionError:
        return None
    fz = system.f(z)
    m = z - Y * fz                                     # the first two terms of K, a ball column
    base = 2 * _norm_upper(Y * fz) + 2.0 ** (4 - prec) * (1 + _norm_upper(z))
    if not math.isfinite(base):
        return None
    eye = fl.acb_mat([[1 if i == j else 0 for j in range(n)] for i in range(n)])
    for k in range(inflations):
        r = base * 16.0 ** k
        u = fl.acb(fl.arb(0, r), fl.arb(0, r))
        dX = _col([u] * n)
        X = z + dX
        K = m + (eye - Y * system.jac(X)) * dX
        inside = all(X[i, 0].real.contains_interior(K[i, 0].real) and X[i, 0].imag.contains_interior(K[i, 0].imag)
                     for i in range(n))
        if inside:
            if real:
                is_real: bool | None = True
            elif system.real and any(not K[i, 0].imag.contains(0) for i in range(n)):
                is_real = False
            else:
                is_real = None
            rad = max(max(_upper(K[i, 0].real.rad()), _upper(K[i, 0].imag.rad())) for i in range(n))
            return BallRoot(K, X, int(prec), is_real, _to_complex(z), rad)
    return None


def certify_point(system: BallSystem, z0: NDArray[np.complex128], refine: bool = True,
                  precisions: Sequence[int] = PRECISIONS, min_precision: int = 0, newton_iters: int = 40
                  ) -> BallRoot | None:
    """Prove that a root lies near the approximate point z0: for each precision in turn (from the first one
    >= min_precision), Newton's method from z0 in that precision (``refine``; without it z0 itself is the
    centre, the check of a given point), then the Krawczyk test; for a real system the real projection of
    the point is tried first (a success proves a real root). Returns the first BallRoot or None.

    With ``refine`` the root must be the one Newton's method from z0 converges to at once: within
    2 |first Newton step from z0| (+ 2^-40 (1 + |z0|)) of z0, the distance an approximate zero in Smale's
    sense keeps (Blum, Cucker, Shub and Smale (1998), ch. 8); a root reached after wandering is not z0's."""
    z0 = np.asarray(z0, dtype=complex)
    if not np.all(np.isfinite(z0)):
        return None
    tries = [True, False] if system.real else [False]
    reach = None
    for prec in precisions:
        if prec < min_precision:
            continue
        with working_precision(prec):
            if refine:
                zc = _column_from_complex(z0)
                try:
                    d0 = _to_complex(_mid(system.jac(zc).solve(system.f(zc))))
                except ZeroDivisionError:
                    d0 = np.full(z0.shape, np.inf)
                if reach is None:
                    reach = 2 * float(np.abs(d0).max()) * (1 + 1e-6) + 2.0 ** -40 * (1 + float(np.abs(z0).max()))
            for real in tries:
                if real and not refine and np.any(z0.imag != 0):
                    continue
                if real and refine and np.any(np.abs(z0.imag) > 2 * np.abs(d0) * (1 + 1e-6)
                                              + 2.0 ** -60 * (1 + float(np.abs(z0).max()))):
                    # a component of z0 farther from the real axis than from its root's (the first Newton step at
                    # this precision, componentwise): the root is not real. Without this the real projection of a
                    # non-real root of a cluster (a mixed-scale p = 6 fuzz system has a real root and a conjugate
                    # pair whose 4th coordinates are 0 and +-4.5e-17 i, the others of size 1; Jacobians of
                    # smallest singular value ~1e-29) converges to the real root, within ``reach`` of z0 (whose
                    # slack is absolute), and the pair is never proved
                    continue
                z = _column_from_complex(z0.real if real else z0)
                if refine:
                    out = _newton(system, z, prec, real, newton_iters)
                    if out is None or out[1] > 2.0 ** (-prec / 2) * max(_norm_upper(out[0]), 1.0):
                        continue            # Newton did not converge: no simple root here at this precision
                    z = out[0]
                    far = float(np.abs(_to_complex(z) - z0).max())
                    if not far <= reach:
                        continue            # converged to some root, but not the one z0 approximates
                root = krawczyk(system, z, prec, real=real)
                if root is not None:
                    return root
        if not refine:          # a given point: more precision does not make the box around it smaller
            break
    return None


def _separated(a: Any, b: Any) -> bool:
    """Some real or imaginary part of the boxes a, b (columns) does not overlap: their points differ."""
    return any(not a[i, 0].real.overlaps(b[i, 0].real) or not a[i, 0].imag.overlaps(b[i, 0].imag)
               for i in range(a.nrows()))


def _inside(a: Any, b: Any) -> bool:
    """The box a lies in the box b (all components)."""
    return all(b[i, 0].real.contains(a[i, 0].real) and b[i, 0].imag.contains(a[i, 0].imag) for i in range(a.nrows()))


def group_roots(roots: Sequence[BallRoot | None]) -> tuple[NDArray[np.int_], list[tuple[int, int]]]:
    """Group proved roots into distinct roots: returns (label per entry, -1 for None; undecided pairs).

    Two entries get one label when one's enclosure lies in the other's Krawczyk box (the same unique root);
    different labels are proved different only if the pairs list is empty: it holds the pairs whose boxes
    overlap without containment (neither proved equal nor proved distinct). Candidate pairs come from a sweep
    over the real part of the first coordinate (floats with a generous rounding slack); every other pair is
    disjoint in that coordinate."""
    idx = [i for i, r in enumerate(roots) if r is not None]
    labels = -np.ones(len(roots), dtype=int)
    if not idx:
        return labels, []
    key = np.array([roots[i].mid[0].real for i in idx])
    rad = np.array([max(_upper(roots[i].box[0, 0].real.rad()), roots[i].radius) for i in idx])
    scale = np.abs(key)
    order = np.argsort(key)
    parent = {i: i for i in idx}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    undecided = []
    lo = 0
    for pos in range(len(order)):
        a = order[pos]
        while key[a] - key[order[lo]] > 2 * (rad[a] + rad.max()) + 1e-15 * (scale[a] + scale[order[lo]]) + 1e-300:
            lo += 1
        for q in range(lo, pos):
            b = order[q]
            if abs(key[a] - key[b]) > 2 * (rad[a] + rad[b]) + 1e-15 * (scale[a] + scale[b]) + 1e-300:
                continue
            ra, rb = roots[idx[a]], roots[idx[b]]
            if _separated(ra.box, rb.box) or _separated(ra.enclosure, rb.enclosure):
                continue
            if _inside(ra.enclosure, rb.box) or _inside(rb.enclosure, ra.box):
                parent[find(idx[a])] = find(idx[b])
            else:
                undecided.append((min(idx[a], idx[b]), max(idx[a], idx[b])))
    roots_of = {}
    for i in idx:
        labels[i] = roots_of.setdefault(find(i), len(roots_of))
    return labels, undecided
