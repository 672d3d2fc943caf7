"""Kovalevskaya exponents as proved enclosures (ball arithmetic, python-flint), and obstructions proved with them.

For an invariant line with c != 0: the root (xi, c) of v(xi) = c xi is first proved in ball arithmetic at
``precision`` bits (servo.quadratic.krawczyk on the equilibrated system, servo.quadratic.certify_lines), so a
box holds the exact root; K = Id - J(xi) / c (J(xi)_ij = 2 sum_k Q[i,j,k] xi_k, the derivation in the docstring
of servo.quadratic.kovalevskaya) is then a ball matrix holding the exact K, and Arb's eigenvalue isolation
(``acb_mat.eig``: Rump's verified method or van der Hoeven-Mourrain's; the output encloses the eigenvalues of
every matrix in the input ball) gives p disjoint discs, one eigenvalue each. K d = -d: exactly one disc
holds -1; the others are the exponents, and -1 is proved a simple eigenvalue (its disc is disjoint from them).

Integer exponents exactly: for rational Q and a Darboux point with rational coordinates (found near the
proved point and checked exactly: v(d) = -d over Q), an exponent disc holding one integer n with
det(K(d) - n Id) = 0 over Q is n: n is an eigenvalue of K and the disc holds only one. At an irrational
(algebraic) Darboux point (p <= ALGEBRAIC_MAX_P) det(K(d) - n Id) = 0 is decided in the number field
(servo.quadratic.kovalevskaya.algebraic_exponents), for a disc that overlaps no other.

Obstructions proved (``proved_obstructions``): degree m is ruled out at a Darboux point when no ball
sum_i k_i rho_i (k in N^{p-1}, 1 <= |k| <= m) contains m: every resonance is excluded by the enclosures, and
the theorem of servo.quadratic.kovalevskaya applies (-1 simple is proved too).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from ...errors import ExactCheckError
from ..certify import equilibrate
from ..certify_lines import EigenBallSystem, chart
from ..invariant_lines import invariant_lines
from ..krawczyk import PRECISIONS, certify_point, require_flint, working_precision
from ..line_types import InvariantLine
from ..polynomials import check_degree, rational_tensor
from ..protocol import QuadraticField
from .algebraic_exponents import DarbouxIdeal
from .obstructions import IntegrabilityObstructions, ObstructionCertificate
from .resonances import multi_indices

__all__ = ["ExponentEnclosure", "certified_exponents", "proved_obstructions"]

#: largest p for which integer exponents at irrational Darboux points are decided in the number field
#: (Groebner bases over QQ, kovalevskaya.algebraic_exponents)
ALGEBRAIC_MAX_P = 3


@dataclass
class ExponentEnclosure:
    """The proved Kovalevskaya exponents of one line: ``exponents`` (flint acb discs, one exponent each, sorted
    by the real part of the centre), ``precision`` (bits), ``radius`` (largest radius, float), ``exact`` {index:
    integer} for the exponents proved to be exactly that integer, or ``reason`` (and no exponents) if the proof
    failed."""

    line_index: int
    darboux_point: NDArray[Any]
    exponents: tuple[Any, ...] = ()
    precision: int = 0
    radius: float = float("inf")
    exact: dict[int, int] = field(default_factory=dict)
    reason: str = ""

    @property
    def proved(self) -> bool:
        return bool(self.exponents) or (self.reason == "" and len(self.darboux_point) == 1)

    @property
    def values(self) -> NDArray[np.complex128]:
        return np.array([complex(e.mid()) for e in self.exponents], dtype=complex)


def _rational_darboux(R: list, mid: NDArray[np.complex128]) -> list[sp.Rational] | None:
    """A rational d near ``mid`` with v(d) = -d exactly (denominators up to 10^6), or None."""
    if np.any(np.abs(mid.imag) > 1e-12 * (1 + np.abs(mid).max())):
        return None
    d = [sp.Rational(Fraction(float(a)).limit_denominator(10 ** 6)) for a in mid.real]
    p = len(d)
    for i in range(p):
        if sum(R[i][j][k] * d[j] * d[k] for j in range(p) for k in range(p)) != -d[i]:
            return None
    return d


def _one_line(q: QuadraticField, L: InvariantLine, index: int, Qs, w, dsc, ssc, prec: int, R,
              algebraic: Callable[[], DarbouxIdeal | None] | None = None) -> ExponentEnclosure:
    fl = require_flint("certified Kovalevskaya exponents")
    p = q.p
    darboux = -np.asarray(L.direction) / L.c
    if p == 1:
        return ExponentEnclosure(index, darboux, (), prec, 0.0)
    l = chart(p, 0)
    z = np.concatenate([np.asarray(L.direction, dtype=complex) / dsc, [complex(L.c) / ssc]])
    s = z @ l
    if abs(s) < 1e-12 * np.linalg.norm(z):
        l = chart(p, 1)
        s = z @ l
    system = EigenBallSystem(Qs, w, l)
    root = certify_point(system, z / s, refine=True, precisions=[b for b in PRECISIONS if b >= prec] or [prec],
                         min_precision=prec)
    if root is None:
        return ExponentEnclosure(index, darboux, reason="the line's root could not be proved at this precision "
                                                         "(a multiple line?)")
    with working_precision(root.precision):
        xi = [root.enclosure[i, 0] * fl.acb(float(dsc[i])) for i in range(p)]
        c = root.enclosure[p, 0] * fl.acb(float(ssc))
        if c.real.contains(0) and c.imag.contains(0):
            return ExponentEnclosure(index, darboux, reason="c is not proved non-zero: no Darboux point")
        Qc = np.asarray(q.Q, dtype=complex)
        K = fl.acb_mat([[(1 if i == j else 0)
                         - 2 * sum((fl.acb(float(Qc[i, j, k].real), float(Qc[i, j, k].imag)) * xi[k]
                                    for k in range(p) if Qc[i, j, k] != 0), fl.acb(0)) / c
                         for j in range(p)] for i in range(p)])
        try:
            E = list(K.eig())
        except ValueError:                   # a repeated exponent: clustered discs, one per eigenvalue
            E = list(K.eig(multiple=True, nonstop=True))
            if any(not (e.real.is_finite() and e.imag.is_finite()) for e in E):
                return ExponentEnclosure(index, darboux, reason="the eigenvalues of K are not isolated at "
                                                                f"{root.precision} bits")
        minus = [i for i, e in enumerate(E) if e.real.contains(-1) and e.imag.contains(0)]
        if len(minus) != 1 or any(E[minus[0]].overlaps(e) for i, e in enumerate(E) if i != minus[0]):
            return ExponentEnclosure(index, darboux, reason="-1 is not proved a simple eigenvalue of K (no single "
                                                            "isolated disc holds it)")
        rho = sorted((e for i, e in enumerate(E) if i != minus[0]),
                     key=lambda e: (float(e.real.mid()), float(e.imag.mid())))
        rad = max((max(float(e.real.rad()), float(e.imag.rad())) for e in rho), default=0.0)
        exact = {}
        if R is not None:
            ints = {}
            for i, e in enumerate(rho):
                if e.imag.contains(0):
                    lo, hi = int(np.ceil(float(e.real.lower()))), int(np.floor(float(e.real.upper())))
                    if lo == hi and e.real.contains(lo):
                        ints[i] = lo
            if ints:
                d = _rational_darboux(R, np.array([complex(x.mid()) / complex(c.mid()) for x in xi]) * -1)
                ideal = algebraic() if d is None and algebraic is not None else None
                if ideal is not None:
                    # an irrational Darboux point: decided in the number field (kovalevskaya.algebraic_exponents)
                    dball = [-x / c for x in xi]
                    for i, n in ints.items():
                        if sum(rho[i].overlaps(e) for e in rho) == 1 and ideal.has_integer_exponent(dball, n):
                            exact[i] = n
                if d is not None:
                    Kx = sp.eye(p) + sp.Matrix(p, p, lambda i, j: 2 * sum(R[i][j][k] * d[k] for k in range(p)))
                    for i, n in ints.items():
                        # the discs overlapping this one hold m eigenvalues (a cluster); rank(K - n) <= p - m
                        # proves n has geometric, hence algebraic, multiplicity >= m: all of them are n
                        m = sum(rho[i].overlaps(e) for e in rho)
                        if (Kx - n * sp.eye(p)).rank() <= p - m:
                            exact[i] = n
    return ExponentEnclosure(index, darboux, tuple(rho), root.precision, rad, exact)


def certified_exponents(q: QuadraticField, lines: Iterable[InvariantLine] | None = None, precision: int = 128
                        ) -> list[ExponentEnclosure]:
    """Proved enclosures of the Kovalevskaya exponents at every line with c != 0 (``invariant_lines(q)`` if
    ``lines`` is None), at ``precision`` bits or more; one ExponentEnclosure per such line, in order (with a
    ``reason`` where the proof failed). Needs python-flint."""
    require_flint("certified Kovalevskaya exponents")
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)) or not 64 <= precision <= 1024:
        raise ExactCheckError(f"precision must be an int in [64, 1024] bits, got {precision!r}")
    if lines is None:
        lines = invariant_lines(q)
    Qs, w, dsc, ssc = equilibrate(q.Q)
    try:
        R = rational_tensor(q, snap=True)
    except ExactCheckError:
        R = None
    ideal: list[DarbouxIdeal | None] = []

    def algebraic() -> DarbouxIdeal | None:      # built once, at the first irrational Darboux point
        if not ideal:
            ideal.append(DarbouxIdeal(R) if R is not None and q.p <= ALGEBRAIC_MAX_P else None)
        return ideal[0]
    out = []
    for i, L in enumerate(lines):
        if L.is_equilibrium_line:
            continue
        if L.multiplicity != 1:
            out.append(ExponentEnclosure(i, -np.asarray(L.direction) / L.c,
                                         reason=f"multiplicity {L.multiplicity}: K is singular there"))
            continue
        out.append(_one_line(q, L, i, Qs, w, dsc, ssc, int(precision), R, algebraic))
    return out


def proved_obstructions(q: QuadraticField, max_degree: int = 4, lines: Iterable[InvariantLine] | None = None,
                        precision: int = 128) -> IntegrabilityObstructions:
    """Degrees m <= max_degree with no homogeneous polynomial first integral, proved: at some Darboux point the
    proved exponent discs exclude every resonance m = sum k_i rho_i (1 <= |k| <= m). ``margin`` of each
    certificate is a lower bound of min |sum k rho - m| there; lines whose exponents were not proved are listed
    in ``skipped``. The result has ``exact=False`` and ``proved=True``."""
    fl = require_flint("proved obstructions")
    max_degree = check_degree(max_degree)
    encs = certified_exponents(q, lines, precision)
    certs: dict[int, ObstructionCertificate] = {}
    skipped, used = [], 0
    for E in encs:
        if E.reason:
            skipped.append((E.line_index, E.reason))
            continue
        used += 1
        n = len(E.exponents)
        if n == 0:
            continue
        ks, lev = multi_indices(n, max_degree)
        with working_precision(E.precision):
            sums = []
            for k in ks:
                s = fl.acb(0)
                for a, e in zip(k, E.exponents):
                    if a:
                        s += int(a) * e
                sums.append(s)
            for m in range(1, max_degree + 1):
                miss = np.inf
                ok = True
                for s, lv in zip(sums, lev):
                    if lv > m:
                        continue
                    dz = s - m
                    if dz.real.contains(0) and dz.imag.contains(0):
                        ok = False
                        break
                    miss = min(miss, float(abs(dz).lower()))
                if ok and (m not in certs or miss > certs[m].margin):
                    certs[m] = ObstructionCertificate(m, E.darboux_point, tuple(E.values), float(miss), 0.0,
                                                      E.line_index)
    return IntegrabilityObstructions(max_degree, certs, used, skipped, False, proved=True)
