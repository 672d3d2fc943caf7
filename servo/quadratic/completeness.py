"""What the solver of the invariant lines has proved: the verdict ``InvariantLines.certificate`` from the
certified pieces (alpha test of the simple roots, exact singular roots, separation, the Bezout count 2^p).

The argument for each verdict is in the docstring of servo.quadratic.certify (completeness, separation,
reality) and of InvariantLines.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .certify import ALPHA0, close_pairs, pair_angles
from .line_types import FamilyWitness, InvariantLine

__all__ = ["ROUNDOFF", "SINGULAR_RADIUS", "completeness_certificate"]

#: componentwise backward error (certify.backward_error) above which a line is not at round-off
ROUNDOFF = 1e-12
#: angle in P^p (equilibrated coordinates) assumed around a singular root in the separation check
SINGULAR_RADIUS = 1e-4


def completeness_certificate(p: int, lines: list[InvariantLine], cand: list[tuple[Any, int, Any]],
                             Zc: NDArray[np.complex128], radius: NDArray[np.float64], real: NDArray[np.bool_],
                             nonreal: NDArray[np.bool_], exact: NDArray[np.bool_], failed: int,
                             fams: list[FamilyWitness], qreal: bool, wide: NDArray[np.bool_] | None = None,
                             dscale: NDArray[np.float64] | None = None) -> tuple[str | None, str]:
    """(certificate, reason): what InvariantLines.certificate documents, or None and why not.

    ``lines`` and ``cand`` (members, multiplicity, scaled point) are the candidate roots in the same order,
    ``Zc`` their (Newton-refined) scaled points, ``radius`` / ``real`` / ``nonreal`` the results of the alpha
    test (inf / False where it was not run or failed), ``exact`` whether a singular root was verified in
    exact arithmetic, ``failed`` the number of lost paths, ``fams`` the family witnesses, ``qreal`` whether
    Q is real; ``wide`` whether the alpha ball of a line is wide in the original coordinates xi = dscale * y
    (then the line is not proved to the precision its numbers show).
    """
    if failed:
        return None, f"{failed} of {2 ** p} paths failed or were lost (jumped, diverged, trivial root miscounted)"
    bad = [L for L in lines if L.backward_error > ROUNDOFF]
    if bad:
        L = bad[0]
        return None, (f"{len(bad)} line(s) not at round-off: backward error {L.backward_error:.2e} > "
                      f"{ROUNDOFF:.0e} at direction {np.round(L.direction, 6)}")
    simple = np.array([m == 1 for _, m, _ in cand], dtype=bool)
    inexact = [k for k in np.nonzero(~simple)[0] if not exact[k]]
    if inexact:
        k = inexact[0]
        return None, (f"{len(inexact)} line(s) reached by several paths not verified as exact singular "
                      f"roots (near {np.round(lines[k].direction, 6)} no small-integer point solves the "
                      f"system exactly with a singular Jacobian); the alpha test cannot certify them")
    loose = [k for k in np.nonzero(simple)[0] if wide is not None and wide[k]]
    if loose:
        k = loose[0]
        scale = "" if dscale is None else f", d from {float(min(dscale)):.3g} to {float(max(dscale)):.3g}"
        return None, (f"{len(loose)} simple line(s) proved by the alpha test in the equilibrated coordinates only: "
                      f"the ball is wide in the original ones (xi = d y{scale}) at direction "
                      f"{np.round(lines[k].direction, 6)}")
    fail = [k for k in np.nonzero(simple)[0] if not np.isfinite(radius[k])]
    if fail:
        k = fail[0]
        return None, (f"{len(fail)} simple line(s) fail the alpha test (alpha = {lines[k].alpha:.3g} >= "
                      f"{ALPHA0:.4f}) at direction {np.round(lines[k].direction, 6)}")
    # no certified ball may hold the trivial root [0 : ... : 0 : 1] (its angle to (y, c) is asin(|y| / |z|)):
    # else that ball's root could be the trivial one, counted twice
    rows = np.nonzero(simple)[0]
    if rows.size:
        Zr = np.asarray(Zc)[rows]
        to_trivial = np.arcsin(np.clip(np.linalg.norm(Zr[:, :p], axis=1) / np.linalg.norm(Zr, axis=1), 0, 1))
        near = to_trivial * (1 - 1e-12) - 1e-15 <= radius[rows]
        if near.any():
            return None, (f"the certified ball of line {np.round(lines[rows[np.argmax(near)]].direction, 6)} "
                          f"reaches the trivial root [0 : ... : 0 : 1]")
    undecided = [k for k in np.nonzero(simple)[0] if qreal and not (real[k] or nonreal[k])]
    # separation: certified radius for simple roots, SINGULAR_RADIUS (heuristic) for clusters
    if len(cand) > 1:
        rad = np.where(simple, radius, SINGULAR_RADIUS)
        pr = close_pairs(Zc, 2 * float(rad.max()))     # every radius is finite here (the checks above)
        if len(pr):
            A = pair_angles(Zc, pr[:, 0], pr[:, 1])
            close = A <= rad[pr[:, 0]] + rad[pr[:, 1]]
            if close.any():
                i = int(np.argmax(close))
                a, b = pr[i]
                return None, (f"lines {np.round(lines[a].direction, 6)} and {np.round(lines[b].direction, 6)} "
                              f"are not certified distinct (angle {A[i]:.2e} <= {rad[a] + rad[b]:.2e})")
    total = sum(L.multiplicity for L in lines)
    if fams:
        return "family", (f"positive-dimensional solution set ({len(fams)} witness(es), numerical local "
                          f"dimension test); {total} isolated line(s) with multiplicity, not proved complete")
    if total != 2 ** p - 1:
        return None, f"multiplicities add to {total}, not 2^p - 1 = {2 ** p - 1}"
    if undecided:
        k = undecided[0]
        return None, f"reality of line {np.round(lines[k].direction, 6)} not certified"
    if simple.all():
        return "alpha", (f"{total} = 2^p - 1 distinct simple roots, each certified by the alpha test "
                         f"(max alpha {max(L.alpha for L in lines):.2e} < {ALPHA0:.4f}); with the "
                         f"simple trivial root that is the Bezout number 2^p, so there is nothing else")
    return "alpha+count", (f"{int(simple.sum())} simple roots certified by the alpha test; "
                           f"{int((~simple).sum())} singular root(s) verified exactly (rational arithmetic: "
                           f"F = 0 and dF rank-deficient), "
                           f"their multiplicities from the path count; total {total} = 2^p - 1 (the "
                           f"multiplicities of the singular roots are not proved)")
