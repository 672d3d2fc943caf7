"""Positive-dimensional solution sets of v(xi) = c xi met by the homotopy: the local dimension test at a path
end point, the exact proof of a linear family through it, and the merging of witnesses that lie on one linear
family (used by ``invariant_lines``)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from .certify import exact_jacobian_rank, exact_root
from .certify_lines import available as ball_available
from .homotopy import QuadraticEigenHomotopy
from .line_types import FamilyWitness
from .multiplicity import local_multiplicity, not_isolated

#: tolerances of the rounding of a span to Gaussian rationals, tried in turn. They only choose which rational span
#: to try (the proof is the exact check of F on it, ``_vanishes_on``), so a loose one costs nothing in soundness:
#: points on a non-reduced family sit up to ~1e-6 off it (the Gauss-Newton of the local test converges slowly
#: across it), and the reduced row echelon form of points eps = 1e-2 apart magnifies that ~1/eps
ROUNDING_TOLS = (1e-9, 1e-6, 1e-4, 1e-3)

__all__ = ["local_dimension", "local_family", "linear_family_proof", "family_proof_near", "isolation_exactly",
           "merge_linear_families"]


def local_dimension(hom: QuadraticEigenHomotopy, z: NDArray[np.complex128], eps: float = 1e-2) -> int:
    """Local dimension test at an end point z of the homotopy (t = 1).

    In the chart zhat^H w = 1 at zhat = z/|z|, for each random unit direction r of the numerical
    null space of dF (r orthogonal to zhat) solve the over-determined system F(w) = 0,
    zhat^H w = 1, r^H (w - zhat) = eps by Gauss-Newton. On a curve through zhat with a tangent
    not orthogonal to r this converges to residual ~1e-16; at an isolated root of multiplicity mu
    the residual cannot go below ~eps^mu, so with eps = 1e-2 and threshold 1e-13 roots with
    mu <= 6 are told apart from families. Returns the dimension found (0 = isolated).
    """
    return local_family(hom, z, eps)[0]


def local_family(hom: QuadraticEigenHomotopy, z: NDArray[np.complex128], eps: float = 1e-2
                 ) -> tuple[int, list[NDArray[np.complex128]]]:
    """``local_dimension``'s test, with the points it found on the family near zhat (in the chart
    zhat^H w = 1): (dimension, points)."""
    zh = z / np.linalg.norm(z)
    J = np.vstack([hom.JF(zh), zh.conj()[None]])
    s, vh = np.linalg.svd(J)[1:]
    null = vh[s < 1e-6 * s[0]].conj()
    found = []
    for r in null:
        w = zh + eps * r
        for _ in range(40):
            res = np.concatenate([hom.F(w), [zh.conj() @ w - 1, r.conj() @ (w - zh) - eps]])
            A = np.vstack([hom.JF(w), zh.conj()[None], r.conj()[None]])
            dw = np.linalg.lstsq(A, res, rcond=1e-12)[0]
            w = w - dw
            if np.linalg.norm(dw) < 1e-15:
                break
        res = np.concatenate([hom.F(w), [zh.conj() @ w - 1, r.conj() @ (w - zh) - eps]])
        if np.linalg.norm(res) < 1e-13:
            found.append(w)
    if not found:
        return 0, []
    return int(np.linalg.matrix_rank(np.array([w - zh for w in found]), tol=1e-3 * eps)), found


def _gauss_rational(x: complex, tol: float, max_den: int) -> tuple[Fraction, Fraction] | None:
    """x as a Gaussian rational a + b i with denominators <= max_den, if within tol of one."""
    parts = []
    for t in (x.real, x.imag):
        f = Fraction(t).limit_denominator(max_den)
        if abs(float(f) - t) > tol:
            return None
        parts.append(f)
    return parts[0], parts[1]


def _bilinear(Q: NDArray, w: NDArray, a: list, b: list) -> list:
    """The symmetric bilinear form of F(z) = v'(y) - c' w y, i.e. F(z) = B(z, z), at the Gaussian rational
    points a, b = (y, c') (lists of (re, im) Fractions), exactly:
    B_i(a, b) = sum_jk Q_ijk a_j b_k - w_i (a_p b_i + b_p a_i) / 2 (Q symmetric in j, k)."""
    def mul(x, y):
        return (x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0])
    p = Q.shape[0]
    out = []
    for i in range(p):
        re = im = Fraction(0)
        for j, k in zip(*np.nonzero(Q[i])):
            q = Fraction(float(Q[i, j, k]))
            t = mul(a[j], b[k])
            re += q * t[0]
            im += q * t[1]
        wi = Fraction(float(w[i])) / 2
        for t in (mul(a[p], b[i]), mul(b[p], a[i])):
            re -= wi * t[0]
            im -= wi * t[1]
        out.append((re, im))
    return out


def linear_family_proof(Q: NDArray, w: NDArray, z: NDArray[np.complex128], near: list[NDArray[np.complex128]],
                        max_den: int = 1024) -> list[list[tuple[Fraction, Fraction]]] | None:
    """An exact proof that the end point z = (y, c') lies on a linear family of solutions of F(z) = v'(y) -
    c' w y = 0 (Q, w of the equilibrated system, Q symmetric in (j, k), dyadic entries), or None.

    ``near``: points found on the family near z (``local_family``). If the family is linear, its cone S is
    the span of z and these points (numerically: the singular values give its dimension). The basis is put in
    reduced row echelon form, its entries rounded to Gaussian rationals with denominators <= max_den, and F is
    shown to vanish identically on their span in exact arithmetic: F is quadratic, so F(sum t_i s_i) =
    sum_ij t_i t_j B(s_i, s_j) = 0 for all t iff B(s_i, s_j) = 0 for all i <= j (B the polarisation of F).
    A span of dimension >= 2 is a projective space of dimension >= 1 of solutions, each a line [y] (y != 0:
    the only solution with y = 0 is the trivial point [0 : ... : 0 : 1], a single point): the solution set is
    positive-dimensional, proved.

    At a point where several branches of the solution set meet (a linear family crossing another component),
    the near points lie on different branches and their joint span is no family: then the span of z with each
    near point alone is tried (each is the projective line of one branch through z, if that branch is linear).
    Returns the rational basis (rows) of the first span proved, or None when none is a linear family with
    such rational coordinates (a curved family: nothing is claimed)."""
    Q = np.asarray(Q)
    pts = [np.asarray(u, dtype=complex) / np.linalg.norm(u) for u in [z] + list(near)]
    if len(pts) < 2:
        return None
    spans = [pts] + ([[pts[0], u] for u in pts[1:]] if len(pts) > 2 else [])
    for span in spans:
        for tol in ROUNDING_TOLS:
            basis = _rational_span(np.array(span), max_den, tol)
            if basis is not None and _vanishes_on(Q, np.asarray(w), basis):
                return basis
    return None


def family_proof_near(hom: QuadraticEigenHomotopy, Q: NDArray, w: NDArray, z: NDArray[np.complex128],
                      near: list[NDArray[np.complex128]]) -> list[list[tuple[Fraction, Fraction]]] | None:
    """``linear_family_proof`` at the end point z, then at the exact rational root next to it, if there is one
    (``certify.exact_root``, within 1e-6 and 1e-4): an end point of several paths is their mean, off the family
    by up to ~1e-4 where it meets other branches, and the points the local test finds from there miss the
    family's rational span; from the exact point they lie on it (a degenerate p = 5 system of the fuzz: the line
    of equilibria through e_1 and e_3, proved from e_3 itself but not from the paths' mean next to it)."""
    basis = linear_family_proof(Q, w, z, near)
    for eps in (1e-6, 1e-4):
        if basis is not None:
            break
        r = exact_root(Q, w, z, eps=eps)
        if r is not None:
            r = r / np.linalg.norm(r)
            basis = linear_family_proof(Q, w, r, local_family(hom, r)[1])
    return basis


def isolation_exactly(Qs, wsc, z):
    """(isolated, not isolated), each proved in exact arithmetic at an exact rational root next to the end point
    z (both False when there is none, or the local ring does not decide; servo.quadratic.multiplicity): its
    Hilbert function becomes constant (a finite local ring: isolated), or exceeds 2^p - 1 (more than any
    isolated root's multiplicity: a positive-dimensional component passes through it). The numerical local
    dimension test tells roots of multiplicity <= 6 from families (servo.quadratic.families.local_dimension);
    above that it can call an isolated root a family (a degenerate p = 5 system of the fuzz: a root of
    multiplicity 11 at e_3, "family" in one set of coordinates)."""
    if not ball_available():
        return False, False
    for eps in (1e-6, 1e-4):
        r = exact_root(Qs, wsc, z, eps=eps)
        if r is not None:
            if exact_jacobian_rank(Qs, wsc, r) == Qs.shape[0]:
                return False, False
            if local_multiplicity(Qs, wsc, r) is not None:
                return True, False
            return False, not_isolated(Qs, wsc, r)
    return False, False


def _rational_span(pts: NDArray[np.complex128], max_den: int, tol: float
                   ) -> list[list[tuple[Fraction, Fraction]]] | None:
    """The span of the rows pts (its dimension from the singular values), in reduced row echelon form with
    entries rounded to Gaussian rationals with denominators <= max_den; None if it has dimension < 2 or an
    entry is not within tol of such a rational."""
    s, vh = np.linalg.svd(pts)[1:]
    N = vh[:len(s)][s > 1e-8 * s[0]]
    if len(N) < 2:
        return None
    # reduced row echelon form, pivots chosen by size (Gauss-Jordan with partial pivoting over columns)
    N = N.copy()
    pivots: list[int] = []
    for r in range(len(N)):
        j = max((j for j in range(N.shape[1]) if j not in pivots), key=lambda j: abs(N[r, j]))
        if abs(N[r, j]) < 1e-8:
            return None
        N[r] /= N[r, j]
        for r2 in range(len(N)):
            if r2 != r:
                N[r2] -= N[r2, j] * N[r]
        pivots.append(j)
    basis = []
    for r in range(len(N)):
        row = []
        for j in range(N.shape[1]):
            g = _gauss_rational(complex(N[r, j]), tol, max_den)
            if g is None:
                return None
            row.append(g)
        basis.append(row)
    return basis


def _vanishes_on(Q: NDArray, w: NDArray, basis: list) -> bool:
    """F = 0 identically on the span of the Gaussian rational rows ``basis``: B(s_i, s_j) = 0 for i <= j, exactly."""
    zero = (Fraction(0), Fraction(0))
    return all(all(t == zero for t in _bilinear(Q, w, basis[i], basis[j]))
               for i in range(len(basis)) for j in range(i, len(basis)))


def merge_linear_families(hom: QuadraticEigenHomotopy, fams: list[FamilyWitness], d: NDArray[np.float64],
                          s: float) -> list[FamilyWitness]:
    """Merge witnesses that lie on one linear family: F vanishes on the segment between them
    (F of the scaled system, points mapped by y = xi / d, c' = c / s)."""
    merged = []
    for f in fams:
        z1 = np.concatenate([f.direction / d, [f.c / s]])
        for g in merged:
            z0 = np.concatenate([g.direction / d, [g.c / s]])
            pts = [(1 - t) * z0 + t * z1 for t in (0.3, 0.7)] + [z0 + 1j * z1]
            if all(
                    np.linalg.norm(hom.F(w)) < 1e-9 * np.linalg.norm(w) ** 2 for w in pts):
                g.paths += f.paths
                g.local_dimension = max(g.local_dimension, f.local_dimension)
                g.is_equilibria = bool(g.is_equilibria and f.is_equilibria)
                g.proved = bool(g.proved and f.proved)
                break
        else:
            merged.append(f)
    return merged
