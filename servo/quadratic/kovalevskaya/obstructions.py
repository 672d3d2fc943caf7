"""The resonance obstruction applied: the degrees m with no homogeneous polynomial first integral, each with a
certificate (the Darboux point, its exponents and the closest miss of m = sum k_i rho_i).

The theorem and its proof are in the docstring of servo.quadratic.kovalevskaya (Yoshida (1983), Furta (1996)).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from ..display import format_vector
from ..invariant_lines import invariant_lines
from ..line_types import InvariantLine
from ..polynomials import check_degree
from ..protocol import QuadraticField
from .exact_exponents import Exponent, exact_kovalevskaya_exponents
from .exponents import darboux_point, kovalevskaya_exponents
from .resonances import exact_resonant, resonances

__all__ = ["ObstructionCertificate", "IntegrabilityObstructions", "integrability_obstructions"]


@dataclass(frozen=True)
class ObstructionCertificate:
    """Why no homogeneous polynomial first integral of ``degree`` exists: at the Darboux point
    ``darboux_point`` (v(d) = -d, -1 a simple eigenvalue of K) the Kovalevskaya ``exponents`` admit no
    degree = sum k_i rho_i with k_i >= 0, 1 <= |k| <= degree; ``margin`` is the closest miss
    (min |sum k rho - degree|), ``tolerance`` what it was compared with (0 on the exact path)."""

    degree: int
    darboux_point: NDArray[Any]
    exponents: tuple[Exponent, ...]
    margin: float
    tolerance: float
    line_index: int
    exact: bool = False

    def __str__(self) -> str:
        ex = ", ".join(sp.sstr(e) for e in self.exponents) if self.exact else format_vector(self.exponents)[1:-1]
        return (f"degree {self.degree}: no homogeneous polynomial first integral; at the Darboux point "
                f"d = {format_vector(self.darboux_point)} the exponents ({ex}) have no resonance "
                f"{self.degree} = sum k_i rho_i (closest miss {self.margin:.3g})")


@dataclass
class IntegrabilityObstructions:
    """Degrees m <= max_degree for which the Kovalevskaya exponents rule out a homogeneous polynomial first
    integral (see the theorem in the module docstring), with one certificate per ruled-out degree.

    ``certificates``: {degree: ObstructionCertificate}; ``darboux_points``: how many Darboux points were
    tested; ``skipped``: [(line index, reason)] for lines with c != 0 not used."""

    max_degree: int
    certificates: dict[int, ObstructionCertificate]
    darboux_points: int
    skipped: list[tuple[int, str]] = field(default_factory=list)
    exact: bool = False
    proved: bool = False        # from proved exponent enclosures (kovalevskaya.enclosures.proved_obstructions)

    @property
    def ruled_out(self) -> tuple[int, ...]:
        """The degrees with no homogeneous polynomial first integral (proved)."""
        return tuple(sorted(self.certificates))

    @property
    def open_degrees(self) -> tuple[int, ...]:
        """The degrees the test does not decide (a resonance at every tested Darboux point)."""
        return tuple(m for m in range(1, self.max_degree + 1) if m not in self.certificates)

    def rules_out(self, m: int) -> bool:
        """True if a homogeneous polynomial first integral of degree m is proved not to exist."""
        return int(m) in self.certificates

    def __str__(self) -> str:
        kind = "exact" if self.exact else "proved (ball arithmetic)" if self.proved else "numeric"
        head = (f"Kovalevskaya-exponent test ({kind}), degrees 1..{self.max_degree}, "
                f"{self.darboux_points} Darboux point(s) tested"
                + (f", {len(self.skipped)} skipped" if self.skipped else "") + ":")
        rows = []
        for m in range(1, self.max_degree + 1):
            if m in self.certificates:
                rows.append("  " + str(self.certificates[m]))
            else:
                rows.append(f"  degree {m}: not ruled out (a resonance at every tested Darboux point)")
        rows += [f"  skipped line {i}: {why}" for i, why in self.skipped]
        return "\n".join([head] + rows)

    def __repr__(self) -> str:
        return (f"IntegrabilityObstructions(max_degree={self.max_degree}, ruled_out={self.ruled_out}, "
                f"open={self.open_degrees}, darboux_points={self.darboux_points}, exact={self.exact})")


def integrability_obstructions(q: QuadraticField, max_degree: int = 4, lines: Iterable[InvariantLine] | None = None,
                               rtol: float = 1e-8, exact: bool = False) -> IntegrabilityObstructions:
    """Degrees m <= max_degree with no homogeneous polynomial first integral, by the resonance theorem of the
    docstring of servo.quadratic.kovalevskaya applied at every Darboux point d = -xi / c of the invariant lines.

    lines: the InvariantLines of q (computed if None). Numeric (default): lines of multiplicity 1 with
    relative residual < 1e-10 and no exponent within tolerance of -1; a degree is ruled out when some such
    point has margin > rtol (1 + m)(1 + max |rho|); the certificate is the point with the largest margin.
    exact=True (rational Q, p <= 4): the exponents of ``exact_kovalevskaya_exponents`` and exact resonances.
    """
    max_degree = check_degree(max_degree)
    certs, skipped = {}, []
    if exact:
        pts = exact_kovalevskaya_exponents(q, lines=lines)
        used = 0
        for i, P in enumerate(pts):
            if any(e == -1 for e in P.exponents):
                skipped.append((i, "an exponent equals -1 (-1 is not a simple eigenvalue of K)"))
                continue
            used += 1
            for m in range(1, max_degree + 1):
                res, miss = exact_resonant(P.exponents, m)
                if not res and (m not in certs or miss > certs[m].margin):
                    certs[m] = ObstructionCertificate(m, P.darboux_point, tuple(P.exponents), miss, 0.0, i, True)
        return IntegrabilityObstructions(max_degree, certs, used, skipped, True)
    if lines is None:
        lines = invariant_lines(q)
    lines = list(lines)
    cand = [i for i, L in enumerate(lines) if not L.is_equilibrium_line]
    if not cand:
        return IntegrabilityObstructions(max_degree, certs, 0, skipped, False)
    R = [lines[i].kovalevskaya_exponents for i in cand]
    if any(r is None for r in R):                 # lines built elsewhere: compute all exponents in one batch
        R = kovalevskaya_exponents(q.Q, np.array([lines[i].direction for i in cand]),
                                   np.array([lines[i].c for i in cand]))
    R = np.array(R, dtype=complex).reshape(len(cand), q.p - 1)
    mult = np.array([lines[i].multiplicity for i in cand])
    res = np.array([lines[i].residual for i in cand])
    minus1 = np.any(np.abs(R + 1) <= rtol * (1 + np.abs(R).max(axis=1, initial=0.0))[:, None], axis=1)
    scale = max(float(np.abs(q.Q).max()), 1e-300)
    use = (mult == 1) & (res <= 1e-10 * scale) & ~minus1
    for j in np.nonzero(~use)[0]:
        i = cand[j]
        skipped.append((i, f"multiplicity {mult[j]} (exponents not accurate enough to decide)" if mult[j] != 1 else
                        f"residual {res[j]:.2g} of v(xi) = c xi too large" if res[j] > 1e-10 * scale else
                        "an exponent equals -1 (-1 is not a simple eigenvalue of K)"))
    idx = [cand[j] for j in np.nonzero(use)[0]]
    R = R[use]
    if len(idx):
        margin, tol = resonances(R, max_degree, rtol)
        score = np.where(margin > tol, margin, -np.inf)       # (B, M): the best certificate per degree
        best = np.argmax(score, axis=0)
        for m in np.nonzero(score[best, np.arange(max_degree)] > -np.inf)[0] + 1:
            b = int(best[m - 1])
            certs[int(m)] = ObstructionCertificate(int(m), darboux_point(lines[idx[b]]), tuple(R[b]),
                                                   float(margin[b, m - 1]), float(tol[b, m - 1]), idx[b])
    return IntegrabilityObstructions(max_degree, certs, len(idx), skipped, False)
