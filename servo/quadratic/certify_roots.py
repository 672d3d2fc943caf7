"""``certify_roots``: proofs, in ball arithmetic, that given approximate points are near roots of a square
polynomial system, which of them are real, and how many distinct roots they reach.

For each point: Newton's method in increasing precision (64, 128, ... 1024 bits, python-flint's acb), then
the Krawczyk test (servo.quadratic.krawczyk: a box holding exactly one root, which is simple; real where the
box is centred on a real point of a real system; non-real where the enclosure's imaginary part excludes 0).
With ``refine=False`` the point itself is the centre and one precision is used: the check of a point as
given, as in the certification packages (alpha theory: Hauenstein and Sottile, "alphaCertified", 2012;
interval arithmetic: Breiding, Rose and Timme, "Certifying zeros of polynomial systems using interval
arithmetic", 2023, HomotopyContinuation.jl's ``certify``; Lee, "The NumericalCertification package in
Macaulay2", 2022). The same root reached from several points gets one ``root_index``; ``distinct`` counts
the roots proved distinct (disjoint boxes).

Coefficients must be exact: integers, rationals, floats (exact dyadic numbers) or Gaussian rationals; a
coefficient such as sqrt(2) has no exact ball here and is refused (substitute a Rational).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike, NDArray

from ..errors import QuadraticSystemError
from .krawczyk import PRECISIONS, BallRoot, certify_point, group_roots, require_flint

__all__ = ["RootCertificate", "CertifiedRoots", "PolynomialBallSystem", "certify_roots"]


def _exact_part(c: sp.Expr, where: str) -> sp.Rational:
    if c.is_Rational:
        return sp.Rational(c)
    if c.is_Float:
        return sp.Rational(c)                 # a binary float is an exact rational
    raise QuadraticSystemError(f"coefficient {c} of {where} is not an integer, rational or float: it has no "
                               f"exact ball; substitute a Rational")


class PolynomialBallSystem:
    """A square polynomial system from sympy expressions, evaluated in ball arithmetic (``BallSystem``).

    Each f_i = sum_a c_a z^a with exact (Gaussian) rational coefficients; Df from the exact derivatives. The
    coefficient balls are made at the working precision of each call (exact for dyadic rationals)."""

    def __init__(self, equations: Sequence[sp.Expr], variables: Sequence[sp.Symbol]) -> None:
        self.variables = tuple(variables)
        self.n = n = len(self.variables)
        if n == 0:
            raise QuadraticSystemError("certify_roots needs at least one variable")
        if len(set(self.variables)) != n or not all(isinstance(v, sp.Symbol) for v in self.variables):
            raise QuadraticSystemError(f"variables must be distinct sympy Symbols, got {self.variables}")
        if len(equations) != n:
            raise QuadraticSystemError(f"the system is not square: {len(equations)} equations in {n} unknowns")
        self.terms = [self._terms(sp.sympify(e), f"equation {i}") for i, e in enumerate(equations)]
        self.dterms = []
        for i, e in enumerate(equations):
            P = sp.Poly(sp.expand(sp.sympify(e)), *self.variables)
            self.dterms.append([self._terms(P.diff(v).as_expr(), f"d(equation {i})/d{v}") for v in self.variables])
        self.real = all(im == 0 for T in self.terms for _, _, im in T)
        self.degree = max((sum(a) for T in self.terms for a, _, _ in T), default=0)

    def _terms(self, e: sp.Expr, where: str) -> list[tuple[tuple[int, ...], sp.Rational, sp.Rational]]:
        try:
            P = sp.Poly(sp.expand(e), *self.variables)
        except sp.PolynomialError as exc:
            raise QuadraticSystemError(f"{where} is not a polynomial in {self.variables}: {exc}") from None
        if P.free_symbols - set(self.variables):
            raise QuadraticSystemError(f"{where} has symbols {sorted(map(str, P.free_symbols - set(self.variables)))} "
                                       f"that are not variables")
        out = []
        for a, c in P.terms():
            re, im = sp.sympify(c).as_real_imag()
            out.append((a, _exact_part(re, where), _exact_part(im, where)))
        return out

    def _eval(self, terms: list, z: Any, pw: list) -> Any:
        import flint
        s = flint.acb(0)
        for a, re, im in terms:
            t = flint.acb(flint.arb(flint.fmpq(int(re.p), int(re.q))), flint.arb(flint.fmpq(int(im.p), int(im.q))))
            for k, e in enumerate(a):
                if e:
                    t = t * pw[k][e]
            s += t
        return s

    def _powers(self, z: Any) -> list:
        import flint
        d = max(self.degree, 1)
        out = []
        for k in range(self.n):
            x = z[k, 0]
            row = [flint.acb(1), x]
            for _ in range(d - 1):
                row.append(row[-1] * x)
            out.append(row)
        return out

    def f(self, z: Any) -> Any:
        import flint
        pw = self._powers(z)
        return flint.acb_mat([[self._eval(T, z, pw)] for T in self.terms])

    def jac(self, z: Any) -> Any:
        import flint
        pw = self._powers(z)
        return flint.acb_mat([[self._eval(T, z, pw) for T in row] for row in self.dterms])


@dataclass
class RootCertificate:
    """The verdict on one given point.

    certified: a box around the (refined) point holds exactly one root, which is simple; real: True (proved
    real), False (proved non-real), None (undecided or not certified); enclosure: the ball of every coordinate
    (a tuple of flint acb, None if not certified); midpoint / radius: its centre (complex) and an upper bound
    of the radii; precision: the bits the proof needed; root_index: which distinct root (0, 1, ...; points
    with the same index reach the same root); reason: why not, if not certified."""

    point: NDArray[np.complex128]
    certified: bool
    real: bool | None = None
    enclosure: tuple[Any, ...] | None = None
    midpoint: NDArray[np.complex128] | None = None
    radius: float = float("inf")
    precision: int | None = None
    root_index: int | None = None
    reason: str = ""


@dataclass
class CertifiedRoots:
    """One RootCertificate per given point (``records``, also by iteration and index), and the counts:
    ``distinct`` roots proved distinct among the certified points (disjoint boxes), ``distinct_real`` of them
    proved real, ``certified`` points; ``undecided``: pairs of points whose boxes overlap without one
    containing the other (then ``distinct`` is only a lower bound and ``distinct_proved`` is False)."""

    records: list[RootCertificate]
    distinct: int
    distinct_real: int
    undecided: list[tuple[int, int]] = field(default_factory=list)

    @property
    def certified(self) -> int:
        return sum(r.certified for r in self.records)

    @property
    def distinct_proved(self) -> bool:
        return not self.undecided

    def __iter__(self) -> Iterator[RootCertificate]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, i: int) -> RootCertificate:
        return self.records[i]

    def __repr__(self) -> str:
        return (f"CertifiedRoots({len(self.records)} points, {self.certified} certified, {self.distinct} distinct "
                f"({self.distinct_real} real){', undecided pairs ' + str(self.undecided) if self.undecided else ''})")


def certify_roots(equations: Sequence[sp.Expr], variables: Sequence[sp.Symbol], points: ArrayLike,
                  refine: bool = True, max_precision: int = 1024) -> CertifiedRoots:
    """Certify approximate roots of the square polynomial system ``equations`` = 0 in ``variables``.

    points: (N, n) approximate roots (complex). refine=True: Newton's method in 64, 128, ... bits up to
    ``max_precision`` before the Krawczyk test (the library's use: any point in the basin of a simple root is
    certified); refine=False: the test around each point as given (64 bits). Returns CertifiedRoots (one
    RootCertificate per point, and ``distinct``). Needs python-flint (the ``certify`` extra). Bad input raises
    QuadraticSystemError (a ValueError) naming the problem.
    """
    require_flint("certify_roots")
    system = PolynomialBallSystem(list(equations), list(variables))
    if isinstance(max_precision, (bool, np.bool_)) or not isinstance(max_precision, (int, np.integer)) \
            or max_precision < 64:
        raise QuadraticSystemError(f"max_precision must be an int >= 64 (bits), got {max_precision!r}")
    if not isinstance(refine, (bool, np.bool_)):
        raise QuadraticSystemError(f"refine must be True or False, got {refine!r}")
    try:
        Z = np.array(points, dtype=complex)
    except (TypeError, ValueError) as exc:
        raise QuadraticSystemError(f"points must be an (N, {system.n}) array of numbers: {exc}") from None
    if Z.ndim == 1 and system.n == 1:
        Z = Z[:, None]
    if Z.ndim != 2 or Z.shape[1] != system.n:
        raise QuadraticSystemError(f"points must have shape (N, {system.n}), got {Z.shape}")
    precs = [b for b in PRECISIONS if b <= max_precision]
    roots: list[BallRoot | None] = []
    records = []
    for z in Z:
        if not np.all(np.isfinite(z)):
            roots.append(None)
            records.append(RootCertificate(z, False, reason="the point is not finite"))
            continue
        r = certify_point(system, z, refine=bool(refine), precisions=precs)
        roots.append(r)
        if r is None:
            why = (f"the Krawczyk test fails around the point as given (64 bits)" if not refine else
                   f"Newton's method does not reach a simple root from the point, or the Krawczyk test fails, "
                   f"up to {precs[-1]} bits (a singular root, or the point is outside every basin)")
            records.append(RootCertificate(z, False, reason=why))
        else:
            enc = tuple(r.enclosure[i, 0] for i in range(system.n))
            records.append(RootCertificate(z, True, r.real, enc, np.array([complex(e.mid()) for e in enc]),
                                           r.radius, r.precision))
    labels, undecided = group_roots(roots)
    for rec, lab in zip(records, labels):
        rec.root_index = int(lab) if lab >= 0 else None
    distinct = int(labels.max() + 1) if (labels >= 0).any() else 0
    real_labels = {int(l) for rec, l in zip(records, labels) if l >= 0 and rec.real}
    return CertifiedRoots(records, distinct, len(real_labels), undecided)
