"""The invariant lines proved in higher precision: the path end points of v'(y) = c' w y refined and certified
in ball arithmetic (servo.quadratic.krawczyk) where the double-precision alpha test does not decide.

The square system: f(z) = (v'(y) - c' w y, l . z - 1), z = (y, c') in C^{p+1}, with one random real chart l
for every point (so that distinct roots are distinct points of C^{p+1} and a real root has a real
representative). Every converged end point is refined by Newton's method in 64, 128, ... bits and put through
the Krawczyk test; the boxes are grouped into distinct roots (disjoint boxes, or one enclosure inside another
point's box: the same root). The completeness argument is the one of the alpha certificate
(servo.quadratic.certify): p quadrics in P^p have at most 2^p isolated solutions with multiplicity and no
room for anything else once 2^p distinct ones are found (Fulton, "Intersection Theory", 1984, section 12.3);
the trivial root [0 : ... : 0 : 1] is one of them. End points lost by the tracker do not matter when the
distinct proved roots already number 2^p.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .homotopy import QuadraticEigenHomotopy, _linear
from .krawczyk import PRECISIONS, BallRoot, certify_point, group_roots, have_flint, require_flint

__all__ = ["EigenBallSystem", "BallLines", "ball_certify_end_points", "chart", "retrack"]


def retrack(hom: QuadraticEigenHomotopy, rows: NDArray[np.int_]) -> NDArray[np.complex128]:
    """The paths ``rows`` tracked again from their start points to t = 1 with the tight corrector and no end
    game (finite end points only). A cluster of close simple roots looks singular at the end-game radius (the
    loop around t = 1 permutes them, the mean lands between them); tracked straight to t = 1 with small
    steps each path reaches its own root, which the ball certificate can then prove."""
    rows = np.asarray(rows, dtype=int)
    if rows.size == 0:
        return np.zeros((0, hom.N), dtype=complex)
    z0 = hom.start_points()[rows]
    zA, okA = hom.track(z0, 0.0, 0.99, _linear, precise="near")
    zB, okB = hom.track(zA, 0.99, 1.0, _linear, precise=True, hmin=1e-14)
    zB = zB[np.all(np.isfinite(zB), axis=1)]
    return zB


def chart(p: int, seed: int) -> NDArray[np.float64]:
    """The random real unit chart l of the ball certificate (a fixed function of p and seed)."""
    l = np.random.default_rng([int(seed), 25, p]).normal(size=p + 1)
    return l / np.linalg.norm(l)


class EigenBallSystem:
    """f(z) = (sum_jk Q[i,j,k] y_j y_k - c' w_i y_i, l . z - 1) in ball arithmetic (a ``BallSystem``); Q, w and
    l are doubles, hence exact balls. Df = [[2 A(y) - c' diag(w), -w y], [l^T]] with A(y) = sum_k Q[:,:,k] y_k."""

    def __init__(self, Q: NDArray[Any], w: NDArray[np.float64], l: NDArray[np.float64]) -> None:
        fl = require_flint("the ball certificate of the invariant lines")
        Q = np.asarray(Q)
        self.p = p = Q.shape[0]
        self.n = p + 1
        self.real = not np.iscomplexobj(Q) or not np.any(np.imag(Q))
        Qc = np.asarray(Q, dtype=complex)
        self._Qk = [fl.acb_mat([[fl.acb(float(Qc[i, j, k].real), float(Qc[i, j, k].imag)) for j in range(p)]
                                for i in range(p)]) for k in range(p)]
        self._nz = [k for k in range(p) if np.any(Qc[:, :, k])]
        self._w = [fl.acb(float(a)) for a in w]
        self._l = [fl.acb(float(a)) for a in l]

    def _A(self, z: Any) -> Any:
        fl = require_flint("ball arithmetic")
        A = fl.acb_mat(self.p, self.p)
        for k in self._nz:
            A = A + self._Qk[k] * z[k, 0]
        return A

    def f(self, z: Any) -> Any:
        fl = require_flint("ball arithmetic")
        p = self.p
        A = self._A(z)
        y = fl.acb_mat([[z[i, 0]] for i in range(p)])
        v = A * y
        c = z[p, 0]
        rows = [[v[i, 0] - c * self._w[i] * z[i, 0]] for i in range(p)]
        s = fl.acb(-1)
        for j in range(p + 1):
            s += self._l[j] * z[j, 0]
        return fl.acb_mat(rows + [[s]])

    def jac(self, z: Any) -> Any:
        fl = require_flint("ball arithmetic")
        p = self.p
        A = self._A(z)
        c = z[p, 0]
        rows = []
        for i in range(p):
            row = [2 * A[i, j] for j in range(p)] + [-self._w[i] * z[i, 0]]
            row[i] -= c * self._w[i]
            rows.append(row)
        rows.append(list(self._l))
        return fl.acb_mat(rows)


@dataclass
class BallLines:
    """What the ball certificate found among the end points: ``roots`` the distinct proved roots (BallRoot,
    chart coordinates of the scaled system), ``trivial`` the index of the trivial root among them (or None),
    ``undecided`` pairs of end points neither proved equal nor distinct, ``failed`` end points not proved,
    ``precision`` the largest precision (bits) a proof needed."""

    roots: list[BallRoot]
    trivial: int | None
    undecided: list[tuple[int, int]] = field(default_factory=list)
    failed: int = 0
    precision: int = 0

    @property
    def lines(self) -> list[BallRoot]:
        """The proved roots other than the trivial one."""
        return [r for i, r in enumerate(self.roots) if i != self.trivial]


def ball_certify_end_points(Q: NDArray[Any], w: NDArray[np.float64], Z: NDArray[np.complex128], seed: int = 0,
                            max_precision: int = 1024, dscale: NDArray[np.float64] | None = None) -> BallLines:
    """Prove the roots of v'(y) = c' w y near the end points Z (rows (y, c'), any scaling) in ball arithmetic:
    refine each in the chart l . z = 1 (``chart(p, seed)``), Krawczyk, group into distinct roots. ``dscale``: the
    variable scaling d of the equilibrated system (xi = d y); a box is then proved again in more bits until it is
    tight in the original coordinates, radius * max d <= 1e-12 max |d y| (a box tight in y can be wide in xi when
    d spans 2^+-60: a fuzz system reported a direction 1.5e-4 off from a 64-bit box)."""
    require_flint("the ball certificate of the invariant lines")
    Q = np.asarray(Q)
    p = Q.shape[0]
    l = chart(p, seed)
    system = EigenBallSystem(Q, np.asarray(w, dtype=float), l)
    precs = [b for b in PRECISIONS if b <= max_precision]
    out: list[BallRoot | None] = []
    for z in np.asarray(Z, dtype=complex):
        s = z @ l
        if not np.all(np.isfinite(z)) or abs(s) <= 1e-12 * np.linalg.norm(z):
            out.append(None)
            continue
        r = certify_point(system, z / s, refine=True, precisions=precs)
        # a root of a real system whose reality the enclosure does not decide (a real root whose centre came
        # out complex, or a non-real one within the radius of the real space): prove it again in more bits
        while r is not None and system.real and r.real is None and r.precision < precs[-1]:
            more = certify_point(system, r.mid, refine=True, precisions=precs, min_precision=2 * r.precision)
            if more is None:
                break
            r = more
        while r is not None and dscale is not None and r.precision < precs[-1] and \
                r.radius * float(np.max(dscale)) > 1e-12 * float(np.max(np.abs(r.mid[:p]) * dscale)):
            more = certify_point(system, r.mid, refine=True, precisions=precs, min_precision=2 * r.precision)
            if more is None:
                break
            r = more
        out.append(r)
    labels, undecided = group_roots(out)
    # a pair whose boxes overlap with neither enclosure inside the other's box: two proofs of one root at the
    # precision where its box is as wide as the Newton basin allows (an ill-conditioned root: a 64-bit box of
    # radius 2.7e-18 with a contraction ratio of 0.96, centres an ulp apart, in a mixed-scale p = 4 fuzz system),
    # or two close roots. Both are proved again in twice the bits, where the boxes shrink below the distance of
    # distinct roots or nest, and grouped again; nothing is merged without a proof
    while undecided:
        rows = sorted({i for pair in undecided for i in pair})
        if any(out[i] is None or out[i].precision >= precs[-1] for i in rows):
            break
        more = [certify_point(system, out[i].mid, refine=True, precisions=precs, min_precision=2 * out[i].precision)
                for i in rows]
        if any(r is None for r in more):
            break
        for i, r in zip(rows, more):
            out[i] = r
        labels, undecided = group_roots(out)
    roots: list[BallRoot] = []
    for lab in range(int(labels.max()) + 1 if (labels >= 0).any() else 0):
        members = [out[i] for i in np.nonzero(labels == lab)[0]]
        roots.append(min(members, key=lambda r: r.radius))          # the tightest box of that root
    trivial = None
    fl = require_flint("ball arithmetic")
    for i, r in enumerate(roots):       # the box holds the trivial root (0, ..., 0, 1 / l_p): it is that root
        with_prec = r.precision
        old, fl.ctx.prec = fl.ctx.prec, with_prec
        try:
            t = fl.acb(1) / fl.acb(float(l[p]))
            if all(r.box[j, 0].real.contains(0) and r.box[j, 0].imag.contains(0) for j in range(p)) and \
                    r.box[p, 0].real.contains(t.real) and r.box[p, 0].imag.contains(t.imag):
                trivial = i
        finally:
            fl.ctx.prec = old
    return BallLines(roots, trivial, undecided, sum(r is None for r in out),
                     max((r.precision for r in roots), default=0))


def available() -> bool:
    """True if the ball certificate can run (python-flint installed)."""
    return have_flint()
