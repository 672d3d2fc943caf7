"""Path tracking in higher precision (python-flint's acb at 128, 256 ... bits, midpoints only): the paths of
servo.quadratic.homotopy tracked again where double precision loses them (badly scaled systems, entries over
1e-20..1e20, where the conditioning along a path exceeds 1 / eps of a double).

Same homotopy as QuadraticEigenHomotopy (its gamma, patch a . z = 1, start points and weights w):

    H(z, t) = t F(z) + (1 - t) gamma G(z),   F_i = sum_jk Q_ijk xi_j xi_k - w_i c xi_i,   G_i = xi_i^2 - c^2,

dz/dt from [H_z; a] dz/dt = [-H_t; 0] with H_t = F - gamma G; RK4 predictor, Newton corrector (3 steps,
accepted when the last correction is below 2^(-prec/2) of |z| and the first below 1e-3 of |z|), step halved
on a rejection and grown by 1.5 after three acceptances (Sommese and Wampler, "The numerical solution of
systems of polynomials", 2005, ch. 2; Bates, Hauenstein, Sommese and Wampler, "Adaptive multiprecision path
tracking", 2008, for why precision, not step size, is the cure once the conditioning passes 1 / eps). The end
points are approximations only: the ball certificate (servo.quadratic.certify_lines) proves them.

The end t = 1 is approached geometrically: a step at most halves s = 1 - t until s <= 2^(-prec/2), and only
from there is t = 1 reached in one step (the operating zone of the end games, where the sample points are
geometric in s: Sommese and Wampler, ch. 10). Two paths that go to two close simple roots (a near-double root:
a mixed-scale p = 6 system of the fuzz has two pairs 1.2e-8 apart in the equilibrated coordinates, with
Jacobians of smallest singular value ~1e-15) come together like the two branches through a double root, at a
distance ~ s, until s is about the roots' distance; a step straight onto t = 1 from s >> that distance (the
step control used to allow it, since the predictor there is accurate relative to |z|) lands both on whichever
root is nearer the prediction, and the other root is lost: 2^p distinct roots can then never be counted. The
geometric approach costs about prec / 2 steps a path more at most.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .homotopy import QuadraticEigenHomotopy
from .krawczyk import require_flint, working_precision

__all__ = ["track_precise"]


class _Flint:
    """H, [H_z; a] and H_t of a QuadraticEigenHomotopy as acb matrices (midpoint arithmetic)."""

    def __init__(self, hom: QuadraticEigenHomotopy) -> None:
        fl = require_flint("precise path tracking")
        self.fl = fl
        p = self.p = hom.p
        Q = hom.Q
        self.Qk = [fl.acb_mat([[fl.acb(float(Q[i, j, k].real), float(Q[i, j, k].imag)) for j in range(p)]
                               for i in range(p)]) for k in range(p)]
        self.nz = [k for k in range(p) if np.any(Q[:, :, k])]
        self.w = [fl.acb(float(a)) for a in hom.w]
        self.a = [fl.acb(float(c.real), float(c.imag)) for c in hom.a]
        self.gamma = fl.acb(float(hom.gamma.real), float(hom.gamma.imag))

    def parts(self, z: Any, t: Any) -> tuple[Any, Any, Any]:
        """(J = [H_z; a] (N x N), H_t (p x 1), H (p x 1)) at (z, t)."""
        fl, p = self.fl, self.p
        A = fl.acb_mat(p, p)
        for k in self.nz:
            A = A + self.Qk[k] * z[k, 0]
        x = [z[i, 0] for i in range(p)]
        c = z[p, 0]
        v = A * fl.acb_mat([[xi] for xi in x])
        F = [v[i, 0] - self.w[i] * c * x[i] for i in range(p)]
        G = [x[i] * x[i] - c * c for i in range(p)]
        s = 1 - t
        gs = self.gamma * s
        rows = []
        for i in range(p):
            row = [t * 2 * A[i, j] for j in range(p)] + [-t * self.w[i] * x[i] - gs * 2 * c]
            row[i] += -t * self.w[i] * c + gs * 2 * x[i]
            rows.append(row)
        rows.append(list(self.a))
        J = fl.acb_mat(rows)
        Ht = fl.acb_mat([[F[i] - self.gamma * G[i]] for i in range(p)])
        H = fl.acb_mat([[t * F[i] + gs * G[i]] for i in range(p)])
        return J, Ht, H

    def velocity(self, z: Any, t: Any) -> Any:
        J, Ht, _ = self.parts(z, t)
        rhs = self.fl.acb_mat([[-Ht[i, 0]] for i in range(self.p)] + [[0]])
        return J.mid().solve(rhs.mid()).mid()

    def newton(self, z: Any, t: Any, iters: int = 3) -> tuple[Any, float, float]:
        first = last = math.inf
        for it in range(iters):
            J, _, H = self.parts(z, t)
            pa = self.fl.acb(-1)
            for j in range(self.p + 1):
                pa += self.a[j] * z[j, 0]
            r = self.fl.acb_mat([[H[i, 0]] for i in range(self.p)] + [[pa]])
            dz = J.mid().solve(r.mid()).mid()
            z = (z - dz).mid()
            last = _norm(dz) / (1 + _norm(z))
            if it == 0:
                first = last
        return z, last, first


def _norm(z: Any) -> float:
    return max(abs(complex(z[i, 0].mid())) for i in range(z.nrows()))


def track_precise(hom: QuadraticEigenHomotopy, rows: NDArray[np.int_] | None = None, prec: int = 128,
                  max_steps: int = 4000) -> tuple[NDArray[np.complex128], NDArray[np.bool_]]:
    """Track the paths ``rows`` (default all 2^p) of ``hom`` from t = 0 to t = 1 at ``prec`` bits; returns the
    end points (complex doubles, NaN where the path failed) and an ok flag per row."""
    fl = require_flint("precise path tracking")
    rows = np.arange(2 ** hom.p) if rows is None else np.asarray(rows, dtype=int)
    z0 = hom.start_points()[rows]
    out = np.full(z0.shape, np.nan, dtype=complex)
    ok = np.zeros(len(rows), dtype=bool)
    with working_precision(prec):
        sys_ = _Flint(hom)
        tol = 2.0 ** (-prec / 2)
        floor = 2.0 ** (-prec / 2)
        for b, zs in enumerate(z0):
            z = fl.acb_mat([[fl.acb(float(c.real), float(c.imag))] for c in zs])
            # the distance to the end, s = 1 - t, is the double that steps (t itself in a double cannot come
            # closer to 1 than 1e-16); t = 1 - s is exact in the working precision
            s, h, good, steps = 1.0, 0.02, 0, 0
            one = fl.acb(1)
            while s > 0.0 and steps < max_steps:
                steps += 1
                # the end is approached geometrically (each step at most halves s) down to s = ``floor``, and only
                # then reached in one step: a step straight onto t = 1 from s >> floor can land two paths on one
                # of two close roots (module docstring)
                h = min(h, s) if s <= floor else min(h, s / 2)
                sn = s - h if h < s else 0.0
                T0, Tm, T1 = one - fl.acb(s), one - (fl.acb(s) + fl.acb(sn)) / 2, one - fl.acb(sn)
                try:
                    k1 = sys_.velocity(z, T0)
                    k2 = sys_.velocity((z + k1 * (h / 2)).mid(), Tm)
                    k3 = sys_.velocity((z + k2 * (h / 2)).mid(), Tm)
                    k4 = sys_.velocity((z + k3 * h).mid(), T1)
                    zp = (z + (k1 + 2 * k2 + 2 * k3 + k4) * (h / 6)).mid()
                    zc, last, first = sys_.newton(zp, T1)
                except ZeroDivisionError:
                    last = first = math.inf
                if last < tol and first < 1e-3 and math.isfinite(_norm(zc)):
                    z, s = zc, sn
                    good += 1
                    if good >= 3:
                        h, good = h * 1.5, 0
                else:
                    h, good = h / 2, 0
                    if h < 1e-14 * max(s, 1e-300) or h < 1e-300:
                        break
            if s == 0.0:
                out[b] = [complex(z[i, 0].mid()) for i in range(hom.N)]
                ok[b] = True
    return out, ok
