"""The invariant lines proved by two certificates at once: Smale's alpha test (double precision) for the roots
it decides, the Krawczyk test in ball arithmetic (servo.quadratic.certify_lines) only for the end points it
leaves open.

Why it is a proof. Each alpha-certified point z_a has a root zeta_a within the angle rho_a of z_a in P^p
(servo.quadratic.certify); each Krawczyk box holds exactly one root zeta_b, inside its enclosure K_b
(servo.quadratic.krawczyk). The roots counted are pairwise different:
* alpha / alpha: the balls are pairwise disjoint (angle(z_a, z_a') > rho_a + rho_a');
* box / box: disjoint boxes, or the same root merged (servo.quadratic.krawczyk.group_roots);
* box / alpha: the enclosure K_b lies in the ball of angle rho_b around its centre m_b, rho_b =
  asin(|K_b - m_b| / |m_b|) (|K_b - m_b| an upper bound from ball arithmetic; sin angle(u, u + e) <= |e| / |u|),
  and angle(m_b, z_a) > rho_b + rho_a. A box that meets an alpha ball is not counted (it may hold the same
  root): dropping a root only lowers the count, which must still reach 2^p;
* the trivial root [0 : ... : 0 : 1] is a Krawczyk root, and lies outside every alpha ball (its angle to
  z_a = (y, c) is asin(|y| / |z|) > rho_a).
So the count of distinct simple roots is at least (alpha points) + (boxes kept); when that is 2^p, the Bezout
number of p quadrics in P^p (Fulton, "Intersection Theory", 1984, section 12.3), these are all the
solutions, each simple. Pairs are compared only where ``certify.close_pairs`` says they may be close (a
superset of the close pairs, proved there).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .certify import close_pairs, pair_angles
from .certify_lines import ball_certify_end_points
from .krawczyk import BallRoot, require_flint

__all__ = ["MixedCertificate", "mixed_certificate", "disjoint_alpha"]


@dataclass
class MixedCertificate:
    """``roots``: the Krawczyk roots counted (trivial root excluded), ``ok``: the count is 2^p with every
    piece proved, ``reason``: what was proved or why not, ``precision``: bits the ball proofs needed."""

    roots: list[BallRoot]
    ok: bool
    reason: str
    precision: int


def disjoint_alpha(Z: NDArray[np.complex128], radius: NDArray[np.float64]) -> NDArray[np.bool_]:
    """The rows of the alpha-certified points Z (angles ``radius``) whose balls meet no other ball and do not
    hold the trivial root [0 : ... : 0 : 1]: a flag per row."""
    Z = np.asarray(Z, dtype=complex)
    keep = np.isfinite(radius)
    if not len(Z):
        return keep
    p = Z.shape[1] - 1
    with np.errstate(invalid="ignore"):
        to_trivial = np.arcsin(np.clip(np.linalg.norm(Z[:, :p], axis=1) / np.linalg.norm(Z, axis=1), 0, 1))
    keep &= to_trivial * (1 - 1e-12) - 1e-15 > radius
    rows = np.nonzero(keep)[0]
    pr = close_pairs(Z[rows], 2 * float(radius[rows].max()) if rows.size else 0.0)
    if len(pr):
        a, b = rows[pr[:, 0]], rows[pr[:, 1]]
        meet = pair_angles(Z, a, b) <= radius[a] + radius[b]
        keep[a[meet]] = False
        keep[b[meet]] = False
    return keep


def _box_angle(r: BallRoot) -> float:
    """An upper bound of the angle in P^p between the centre r.mid and every point of the enclosure of r."""
    fl = require_flint("ball arithmetic")
    e = [float((r.enclosure[i, 0] - fl.acb(complex(m))).abs_upper()) for i, m in enumerate(r.mid)]
    err = float(np.sqrt(np.sum(np.square(e)))) * (1 + 1e-12)
    m = float(np.linalg.norm(r.mid)) * (1 - 1e-15)
    return float(np.arcsin(err / m)) * (1 + 1e-12) + 1e-15 if err < m else np.pi


def mixed_certificate(Q: NDArray[Any], w: NDArray[np.float64], Za: NDArray[np.complex128],
                      radius: NDArray[np.float64], points: NDArray[np.complex128], seed: int = 0,
                      dscale: NDArray[np.float64] | None = None) -> MixedCertificate:
    """Prove the roots of v'(y) = c' w y (equilibrated, rows (y, c')) from the alpha-certified points ``Za``
    (pairwise disjoint balls of angles ``radius`` without the trivial root: ``disjoint_alpha``) and the
    Krawczyk test of the end points ``points`` the alpha test left open (the trivial root is added here).
    See the module docstring for the argument. ``dscale``: the variable scaling of the equilibrated system,
    passed to :func:`ball_certify_end_points` (a box proved again until tight in the original coordinates)."""
    Q = np.asarray(Q)
    p = Q.shape[0]
    Za = np.asarray(Za, dtype=complex).reshape(-1, p + 1)
    pts = np.vstack([np.asarray(points, dtype=complex).reshape(-1, p + 1),
                     np.append(np.zeros(p), 1.0).astype(complex)[None]])
    B = ball_certify_end_points(Q, w, pts, seed=seed, dscale=dscale)
    if B.undecided:
        return MixedCertificate([], False, f"{len(B.undecided)} pair(s) of end points neither proved equal nor "
                                "distinct in ball arithmetic", B.precision)
    if B.trivial is None:
        return MixedCertificate([], False, "the trivial root [0 : ... : 0 : 1] was not proved", B.precision)
    roots = B.lines
    kept = np.ones(len(roots), dtype=bool)
    if roots and len(Za):
        M = np.array([r.mid for r in roots], dtype=complex)
        rb = np.array([_box_angle(r) for r in roots])
        pr = close_pairs(M, float(rb.max() + radius.max()), Za)
        if len(pr):
            b, a = pr[:, 0], pr[:, 1]
            meet = pair_angles(M, b, a, Za) <= rb[b] + radius[a]
            kept[b[meet]] = False
    roots = [r for r, k in zip(roots, kept) if k]
    total = len(Za) + len(roots) + 1
    dropped = int((~kept).sum())
    if total != 2 ** p:
        return MixedCertificate(roots, False, (
            f"{len(Za)} roots by the alpha test and {len(roots) + 1} more in ball arithmetic (trivial root "
            f"included{f', {dropped} box(es) meeting an alpha ball not counted' if dropped else ''}): {total}, not "
            f"the Bezout number 2^p = {2 ** p}"), B.precision)
    return MixedCertificate(roots, True, (
        f"{len(Za)} simple roots certified by the alpha test (pairwise disjoint balls), {len(roots)} more proved "
        f"by the Krawczyk test in ball arithmetic ({B.precision} bits), their boxes disjoint from each other and "
        f"from the alpha balls; with the trivial root that is the Bezout number 2^p = {2 ** p} distinct simple "
        f"roots, so there is nothing else"), B.precision)
