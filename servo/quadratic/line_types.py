"""The result types of the invariant-line solver: InvariantLine, FamilyWitness, InvariantLines.

An invariant line x = s xi, v(xi) = c xi of x' = v(x) carries the flow s' = c s^2, s(t) = s0 / (1 - c s0 t)
(Kozlov's lectures on servo-constraints); ``InvariantLines`` collects all of them with the certificate of
completeness that ``servo.quadratic.invariant_lines.invariant_lines`` found, and shows itself in a
notebook as a Markdown table (``invariant_lines_markdown``).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import QuadraticSystemError
from .display import format_number

__all__ = ["InvariantLine", "FamilyWitness", "InvariantLines", "invariant_lines_markdown", "invariant_lines_text"]


@dataclass
class InvariantLine:
    """One invariant line x = s * direction, on which s' = c s^2."""

    direction: NDArray[Any]
    c: complex
    multiplicity: int
    is_real: bool
    residual: float
    cycle_numbers: tuple[int, ...] = ()
    sphere_eigenvalues: NDArray[Any] | None = None
    tol: float = 1e-8
    kovalevskaya_exponents: NDArray[np.complex128] | None = None   # at d = -direction / c; None if c = 0
    alpha: float = float("inf")          # Smale's alpha bound (inf: singular or not tested)
    backward_error: float = float("nan")  # certify.backward_error in the equilibrated system
    precision: int | None = None         # bits of the ball-arithmetic proof of this line (None: not in balls)
    ball: Any = field(default=None, repr=False, compare=False)   # (BallRoot, d, s): its Krawczyk box, scaled

    @property
    def is_equilibrium_line(self) -> bool:
        """c = 0: every point of the line is an equilibrium."""
        return abs(self.c) <= self.tol

    def blowup_time(self, s0: ArrayLike) -> NDArray[np.float64]:
        """Time at which s(t) = s0 / (1 - c s0 t) reaches infinity, for x(0) = s0 * direction.

        1 / (c s0) if c s0 > 0 (real line), +inf otherwise (the solution tends to 0 or stays fixed).
        """
        s0 = np.asarray(s0, dtype=float)
        if not self.is_real:
            raise QuadraticSystemError("blow-up time is defined for real lines only; this line is complex")
        cs = np.real(self.c) * s0
        with np.errstate(divide="ignore"):
            return np.where(cs > 0, 1.0 / np.where(cs > 0, cs, 1.0), np.inf)

    def solution(self, s0: float, t: ArrayLike) -> NDArray[np.float64]:
        """s(t) = s0 / (1 - c s0 t) times the direction, shape t.shape + (p,)."""
        t = np.asarray(t, dtype=float)
        s = s0 / (1 - np.real(self.c) * s0 * t)
        return s[..., None] * np.real(self.direction)

    @property
    def stability(self) -> str | None:
        """Stability of the ray +direction as a fixed point of the flow on the sphere of directions.

        Sphere flow: xi' = v(xi) - (xi . v(xi)) xi (time d tau = |x| dt). Its linearisation at a
        fixed point has the eigenvalues lambda_k(J) - c, where J = dv(xi) and lambda_k runs over
        the eigenvalues of J other than the one along xi (J xi = 2 c xi). The ray -direction has the
        opposite eigenvalues (x(t) -> -x(-t) symmetry). None for complex lines.
        """
        if self.sphere_eigenvalues is None:
            return None
        re = np.real(self.sphere_eigenvalues)
        if re.size == 0:
            return "attracting"
        if np.all(re < -self.tol):
            return "attracting"
        if np.all(re > self.tol):
            return "repelling"
        if np.any(re < -self.tol) and np.any(re > self.tol):
            return "saddle"
        return "degenerate"

    def __repr__(self) -> str:
        d = np.array2string(np.real_if_close(self.direction), precision=4)
        return (f"InvariantLine(direction={d}, c={np.real_if_close(self.c):.6g}, "
                f"multiplicity={self.multiplicity}, real={self.is_real})")


@dataclass
class FamilyWitness:
    """A path end point lying on a positive-dimensional set of solutions of v(xi) = c xi.

    local_dimension: dimension (in CP^{p-1}) found by the local test; is_equilibria: c = 0 at the
    witness (e.g. a plane on which v vanishes); paths: how many paths ended here.
    """

    direction: NDArray[Any]
    c: complex
    local_dimension: int
    is_equilibria: bool
    paths: int
    #: whether positive dimension at the witness was proved in exact arithmetic: a linear space of lines
    #: through it (servo.quadratic.families.linear_family_proof), or, at an exact rational witness, a local
    #: ring longer than any isolated root's (servo.quadratic.multiplicity.not_isolated); the exact path
    #: confirms families up to p = 3, the exact dimension of the solution set (servo.quadratic.dimension) up to
    #: p = 6 (then witnesses may stay unproved one by one while the family is proved)
    proved: bool = False


@dataclass
class InvariantLines:
    """All invariant lines of a QuadraticSystem, with a completeness certificate.

    ``certificate`` (``certified`` is ``certificate is not None``; ``reason`` says why or why not):

    * ``"alpha"``: a proof, up to the rounding bounds of servo.quadratic.certify: every line is a
      simple root certified by Smale's alpha test in the equilibrated system, the lines are
      pairwise distinct (disjoint certified balls), each is certified real or non-real, and there
      are 2^p - 1 of them. With the trivial root [0 : ... : 0 : 1] (always simple) that is the
      Bezout number 2^p of p quadrics in P^p, so there are no other solutions, no multiple ones and
      no positive-dimensional ones: lines, real_count and multiplicities (all 1) are exact and each
      c and direction is within the certified radius.
    * (``"alpha+count"`` and ``"krawczyk+count"``, singular lines whose multiplicities rest on the path count
      only, are no longer given: a cluster of close simple roots next to an exact singular root was counted in
      its multiplicity. Such an answer is not certified; its reason says so.)
    * ``"krawczyk"``: a proof in ball arithmetic, where the double-precision run did not decide: every path
      end point refined by Newton's method in 64, 128, ... bits and put through the Krawczyk test
      (servo.quadratic.krawczyk, servo.quadratic.certify_lines), giving 2^p pairwise disjoint boxes (the
      trivial root among them), each holding exactly one root, which is simple, real where the box is
      centred on a real point; by the Bezout count 2^p nothing else exists. ``precision`` is the number of
      bits the proof needed (each line's own in ``InvariantLine.precision``).
    * ``"alpha+krawczyk"`` (p >= 7): the lines the alpha test proves are kept (pairwise disjoint balls, none
      holding the trivial root), and only the paths they do not account for are proved in ball arithmetic
      (Krawczyk boxes disjoint from each other and from the alpha balls; servo.quadratic.certify_mixed); with
      the trivial root 2^p distinct simple roots, so nothing else exists. Only the ball-proved lines carry
      ``ball`` and ``precision``.
    * ``"alpha+multiplicity"`` / ``"krawczyk+multiplicity"``: the simple lines proved as in "alpha" /
      "krawczyk", the singular lines (multiplicity > 1) at round-off and apart from the others; every
      singular line is an exact root with rational (Gaussian rational) coordinates whose multiplicity is
      proved in exact arithmetic (the dimension of the local ring, servo.quadratic.multiplicity), and these
      multiplicities with the proved simple roots add up to 2^p: a proof, multiplicities included.
    * ``"exact"``: multiple lines with algebraic (irrational) coordinates, proved by the exact path
      (servo.quadratic.exact: a Groebner basis over QQ; for p <= 3 whenever double precision does not decide, for
      p = 4..6 when several paths reach one root and the coefficients have at most 40 bits): the number of
      solutions with multiplicity is 2^p, the multiplicities are the exponents of the characteristic polynomial
      of a separating multiplication matrix (Stickelberger), reality from Sturm counts and the Hermite form, c = 0
      decided over QQ; the simple lines are proved again by the Krawczyk test from the exact path's points. The
      coordinates of the multiple lines are algebraic numbers given by the rational univariate representation
      g(P) = G_g(u(P)) / G_1(u(P)) (Rouillier 1999), evaluated in ball arithmetic at the isolated root u(P): each
      is proved to the double it is rounded to (relative 2^-60, or below 2^-300 of the line's largest one),
      however many scales the entries of Q span.
    * ``"family"``: a positive-dimensional set of lines, proved: for p <= 3 by the exact path (its
      Groebner basis is not zero-dimensional), above at every witness in exact arithmetic (a linear space of
      lines through it, or an infinite local ring at it: FamilyWitness.proved), or, where a witness is not
      proved, by the exact dimension of the solution set (servo.quadratic.dimension, p <= 6, coefficients of
      <= 40 bits; the reason says so); every isolated line listed is at round-off; the isolated lines are not
      proved complete: end points next to the family that are not at round-off, simple ones the alpha test does
      not prove, and singular ones whose isolation is not proved are not listed (they may lie on the family; the
      reason counts them). A family the numerical local dimension test reports but nothing proves is not
      certified.
    * ``None``: not certified (a failed path, a line not at round-off, a simple line failing the
      alpha test, two lines not told apart, a count other than 2^p - 1, undecided reality).
    """

    lines: list[InvariantLine]
    positive_dimensional: list[FamilyWitness]
    p: int
    failed_paths: int
    path_result: Any = field(repr=False, default=None)
    certificate: str | None = None
    reason: str = ""
    precision: int | None = None   # bits of the arithmetic the proof needed: 53 (alpha test in double), or more

    def __iter__(self) -> Iterator[InvariantLine]:
        return iter(self.lines)

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, i: int) -> InvariantLine:
        return self.lines[i]

    @property
    def total_multiplicity(self) -> int:
        """Sum of the multiplicities of the isolated lines (2^p - 1 when the set is finite)."""
        return int(sum(L.multiplicity for L in self.lines))

    @property
    def real(self) -> list[InvariantLine]:
        """The real lines."""
        return [L for L in self.lines if L.is_real]

    @property
    def real_count(self) -> int:
        """Number of real lines counted with multiplicity."""
        return int(sum(L.multiplicity for L in self.lines if L.is_real))

    @property
    def is_finite(self) -> bool:
        """No positive-dimensional family of solutions was found."""
        return not self.positive_dimensional

    @property
    def certified(self) -> bool:
        """``certificate`` is not None: see there for what is proved."""
        return self.certificate is not None

    @property
    def max_residual(self) -> float:
        """max |v(xi) - c xi| / |xi|^2 over the lines."""
        return max((L.residual for L in self.lines), default=0.0)

    def _repr_markdown_(self) -> str:
        return invariant_lines_markdown(self)

    def __str__(self) -> str:
        return invariant_lines_text(self)

    def __repr__(self) -> str:
        return (f"InvariantLines(p={self.p}, lines={len(self.lines)}, total_multiplicity="
                f"{self.total_multiplicity}, real={self.real_count}, families="
                f"{len(self.positive_dimensional)}, certified={self.certified}, "
                f"certificate={self.certificate!r}, precision={self.precision})")


def invariant_lines_markdown(lines: InvariantLines) -> str:
    """Markdown for Jupyter: the real invariant lines as a table, then the counts.

    One row per real line x = s xi, v(xi) = c xi: the direction xi (|xi| = 1), c, the multiplicity, the
    stability of the ray +xi on the sphere of directions, the blow-up time 1/(c s0) of s' = c s^2 for
    s0 = 1 (none for c <= 0), and the residual |v(xi) - c xi|; then the counts (complex lines,
    positive-dimensional families, whether the multiplicities add up to 2^p - 1).
    """
    head = (f"**Invariant lines** of a quadratic system with p = {lines.p}: {len(lines)} lines, "
            f"{lines.real_count} real, total multiplicity {lines.total_multiplicity} "
            f"(generic count 2^p - 1 = {2 ** lines.p - 1}), families {len(lines.positive_dimensional)}, "
            f"certified: {'yes' if lines.certified else 'no'}")
    rows = ["| direction ξ | c | multiplicity | stability of +ξ | blow-up time (s0 = 1) | residual |",
            "|---|---|---|---|---|---|"]
    for L in lines.real:
        d = ", ".join(format_number(v, 4) for v in np.real_if_close(L.direction))
        c = float(np.real(L.c))
        blow = f"{1.0 / c:.6g}" if c > 0 else "none"
        rows.append(f"| ({d}) | {format_number(L.c)} | {L.multiplicity} | {L.stability} | {blow} | {L.residual:.1e} |")
    if not lines.real:
        rows.append("| (no real line) | | | | | |")
    return head + "\n\n" + "\n".join(rows)



def invariant_lines_text(lines: InvariantLines, most: int = 20) -> str:
    """Plain text for ``print(lines)``: the counts and the certificate, then one row per real line (the
    first ``most``, by c) with its direction, c, multiplicity, stability of the ray +xi and the blow-up
    time 1/(c s0) for s0 = 1; at most 30 lines."""
    cert = lines.certificate or "none"
    out = [f"InvariantLines: p = {lines.p}, {len(lines)} lines ({lines.real_count} real), total multiplicity "
           f"{lines.total_multiplicity} of 2^p - 1 = {2 ** lines.p - 1}, families {len(lines.positive_dimensional)}, "
           f"certificate {cert}"]
    real = sorted(lines.real, key=lambda L: float(np.real(L.c)))
    if real:
        out.append(f"  {'direction xi (|xi| = 1)':40s} {'c':>12s} {'mult':>4s} {'stability of +xi':16s} blow-up (s0 = 1)")
    for L in real[:most]:
        d = "(" + ", ".join(format_number(v, 4) for v in np.real_if_close(L.direction)) + ")"
        c = float(np.real(L.c))
        blow = f"{1.0 / c:.6g}" if c > 0 else "none"
        out.append(f"  {d:40s} {format_number(L.c):>12s} {L.multiplicity:4d} {str(L.stability):16s} {blow}")
    if len(real) > most:
        out.append(f"  ... {len(real) - most} more real lines (lines.real)")
    if not real:
        out.append("  (no real line)")
    if len(lines) > len(real):
        out.append(f"  {len(lines) - len(real)} complex lines (lines.lines)")
    return "\n".join(out)
