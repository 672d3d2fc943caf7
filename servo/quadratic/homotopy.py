"""Batched homotopy continuation for F(z) = v(xi) - c xi = 0, z = (xi, c) in P^p.

Method (Sommese & Wampler, "The numerical solution of systems of polynomials", 2005, ch. 2, 3, 10):
- target F_i(z) = sum_{j,k} Q[i,j,k] xi_j xi_k - w_i c xi_i (w = 1 unless scaled), homogeneous quadratic in z in P^p;
  start G_i(z) = xi_i^2 - c^2, whose 2^p roots [s_1 : ... : s_p : 1], s in {+1,-1}^p, are isolated
  and regular (dG = [2 diag(xi) | -2 c], rank p there). Bezout: 2^p = number of paths.
- H(z, t) = (1 - t) gamma G(z) + t F(z), gamma a random unit complex number (gamma trick: for all
  but finitely many gamma no path meets a singularity for t in [0, 1)).
- affine chart a . z = 1 with a random complex a (no path diverges in the chart, a.s.).
- all paths are one batch: RK4 predictor on dz/dtau = -H_z^{-1} H_t dt/dtau, Newton corrector,
  per-path step-size control.
- Cauchy end game for paths whose end point is singular: z(1) = mean of z over m loops of the circle
  t = 1 - r e^{i theta} (m = cycle number, found when the loop closes).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["QuadraticEigenHomotopy", "PathResult", "solve_rows"]

FIRST_MAX = 1e-3          # largest accepted first Newton correction (relative) while tracking
CHUNK = 1024              # default QuadraticEigenHomotopy.chunk


def solve_rows(J: NDArray[Any], b: NDArray[Any]) -> NDArray[Any]:
    """Batched solve J x = b (J (B, N, N), b (B, N), or (B, N, K) for K right-hand sides); rows with a singular J
    give NaN instead of raising (one batched LAPACK call; only when some matrix is singular are the rows solved
    one by one)."""
    try:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if b.ndim == 3:
                return np.linalg.solve(J, b)
            return np.linalg.solve(J, b[..., None])[..., 0]
    except np.linalg.LinAlgError:
        out = np.full(b.shape, np.nan, dtype=np.result_type(J, b))
        for i in range(J.shape[0]):
            try:
                out[i] = np.linalg.solve(J[i], b[i])
            except np.linalg.LinAlgError:
                pass
        return out


def _rownorm(x):
    """Euclidean norm of each row of a complex (B, N) array."""
    return np.sqrt((x.real * x.real + x.imag * x.imag).sum(axis=1))


def _linear(tau):
    """The straight path t = tau, dt/dtau = 1."""
    return tau.astype(complex), np.ones_like(tau, dtype=complex)


class PathResult:
    """End points of all 2^p paths: z (2^p, p+1), flags regular/converged, cycle numbers, cond."""

    def __init__(self, z: NDArray[np.complex128], converged: NDArray[np.bool_], regular: NDArray[np.bool_],
                 cycle: NDArray[np.int_], cond: NDArray[np.float64], residual: NDArray[np.float64], gamma: complex,
                 patch: NDArray[np.complex128]) -> None:
        self.z, self.converged, self.regular = z, converged, regular
        self.cycle, self.cond, self.residual = cycle, cond, residual
        self.gamma, self.patch = gamma, patch


class QuadraticEigenHomotopy:
    """Homotopy from xi_i^2 - c^2 to v(xi) - c xi for a (possibly complex) tensor Q of shape (p,p,p).

    Parameters: Q symmetric in (j, k); rng for gamma and the patch; tol the relative tracking
    tolerance of the corrector; w (p,) non-zero weights of the c term, F_i = v_i(xi) - w_i c xi_i
    (default 1: an equation scaling that is not a change of variables, see certify.equilibrate).
    """

    def __init__(self, Q: ArrayLike, rng: np.random.Generator | int | None = None, tol: float = 1e-9,
                 w: ArrayLike | None = None) -> None:
        self.Q = np.asarray(Q, dtype=complex)
        self.p = self.Q.shape[0]
        self.w = np.ones(self.p) if w is None else np.asarray(w, dtype=float)
        self.N = self.p + 1
        self._Qr = self.Q.reshape(self.p * self.p, self.p).T.copy()   # (k, i*p + j)
        rng = np.random.default_rng(rng)
        th = rng.uniform(0, 2 * np.pi)
        self.gamma = np.exp(1j * th)
        a = rng.normal(size=self.N) + 1j * rng.normal(size=self.N)
        self.a = a / np.linalg.norm(a)
        self.tol = tol
        self.newton_iters, self.accept, self.target = 1, 1e-3, 1e-4
        #: paths tracked together (``track``): a block of CHUNK Jacobians (N x N complex) stays in cache; the
        #: whole 2^14 batch at once spent most of its time moving memory
        self.chunk = CHUNK
        self.rng = rng
        # dF(z) and dG(z) are linear in z: dF(z)[i, m] = sum_k z_k MF[k, i, m], same for G
        p, N = self.p, self.p + 1
        MF = np.zeros((N, p, N), dtype=complex)
        MF[:p, :, :p] = 2 * self.Q.transpose(2, 0, 1)          # 2 A_ij = 2 sum_k Q[i,j,k] xi_k
        MF[p, :, :p] = -np.diag(self.w)                        # - c diag(w)
        MF[:p, :, p] = -np.diag(self.w)                        # - w xi
        MG = np.zeros((N, p, N), dtype=complex)
        MG[np.arange(p), np.arange(p), np.arange(p)] = 2       # 2 diag(xi)
        MG[p, :, p] = -2                                       # - 2 c
        self._MF = MF.reshape(N, p * N).copy()
        # [dF | dG | dF - gamma dG] at z in one matmul (rows (i, m) flattened)
        self._M3 = np.concatenate([MF.reshape(N, p * N), MG.reshape(N, p * N),
                                   (MF - self.gamma * MG).reshape(N, p * N)], axis=1)

    # ------------------------------------------------------------ systems
    def _QA(self, xi):
        """A[..., i, j] = sum_k Q[i,j,k] xi_k (so v(xi) = A xi and dv = 2 A)."""
        return (xi @ self._Qr).reshape(xi.shape[:-1] + (self.p, self.p))

    def F(self, z: NDArray[np.complex128]) -> NDArray[np.complex128]:
        """Target F(z) = v(xi) - c w xi, z = (xi, c), batched (..., p + 1) -> (..., p)."""
        xi, c = z[..., :-1], z[..., -1:]
        return np.einsum("...ij,...j->...i", self._QA(xi), xi) - c * self.w * xi

    def JF(self, z: NDArray[np.complex128]) -> NDArray[np.complex128]:
        """dF/dz = [2 A(xi) - c diag(w) | -w xi] with A_ij = sum_k Q[i,j,k] xi_k, shape (..., p, p + 1)."""
        xi, c = z[..., :-1], z[..., -1]
        J = np.empty(z.shape[:-1] + (self.p, self.N), dtype=complex)
        J[..., :-1] = 2 * self._QA(xi)
        idx = np.arange(self.p)
        J[..., idx, idx] -= c[..., None] * self.w
        J[..., -1] = -self.w * xi
        return J

    def G(self, z: NDArray[np.complex128]) -> NDArray[np.complex128]:
        """Start system G_i(z) = xi_i^2 - c^2."""
        return z[..., :-1] ** 2 - z[..., -1:] ** 2

    def start_points(self) -> NDArray[np.complex128]:
        """The 2^p roots of the start system, scaled onto the patch a . z = 1."""
        s = np.array(np.meshgrid(*([[1.0, -1.0]] * self.p), indexing="ij")).reshape(self.p, -1).T
        z = np.concatenate([s, np.ones((s.shape[0], 1))], axis=1).astype(complex)
        return z / (z @ self.a)[:, None]

    def _aug(self, z, t, need=(True, True)):
        """Augmented Jacobian [H_z; a] (B, N, N), H_t = F - gamma G and H at (z, t).

        need = (H_t wanted, H wanted); the ones not wanted are returned as None. F and G are
        homogeneous quadratic, so F(z) = dF(z) z / 2 and G(z) = dG(z) z / 2 (Euler)."""
        p, N = self.p, self.N
        B = z.shape[0]
        pN = p * N
        out = z @ self._M3
        J = np.empty((B, N, N), dtype=complex)
        J[:, :-1] = (out[:, :pN] * t[:, None]
                     + out[:, pN:2 * pN] * ((1 - t) * self.gamma)[:, None]).reshape(B, p, N)
        J[:, -1] = self.a
        Ht = Hv = None
        zc = z[:, :, None]
        if need[0]:
            Ht = (out[:, 2 * pN:].reshape(B, p, N) @ zc)[:, :, 0] * 0.5
        if need[1]:
            Hv = (J[:, :-1] @ zc)[:, :, 0] * 0.5
        return J, Ht, Hv

    def H(self, z: NDArray[np.complex128], t: ArrayLike) -> NDArray[np.complex128]:
        """H(z, t) = t F(z) + (1 - t) gamma G(z)."""
        t = np.asarray(t)[..., None]
        return t * self.F(z) + (1 - t) * self.gamma * self.G(z)

    # ------------------------------------------------------------ tracker
    def _velocity(self, z, t, dt):
        J, Ht, _ = self._aug(z, t, (True, False))
        rhs = np.empty(z.shape, dtype=complex)
        np.multiply(Ht, -dt[:, None], out=rhs[:, :-1])
        rhs[:, -1] = 0
        return solve_rows(J, rhs)

    def _jac_lin(self, z, t):
        """(dF(z), [H_z; a]) at (z, t), t complex (B,): dF(z) = z @ MF, dG(z) = [2 diag(xi) | -2 c] added
        sparsely (as _aug, one product instead of three)."""
        B = z.shape[0]
        p, N = self.p, self.N
        dF = (z @ self._MF).reshape(B, p, N)
        J = np.empty((B, N, N), dtype=complex)
        np.multiply(dF, t[:, None, None], out=J[:, :-1])
        g2 = 2 * (1 - t) * self.gamma
        idx = np.arange(p)
        J[:, idx, idx] += g2[:, None] * z[:, :p]
        J[:, :-1, p] -= g2[:, None] * z[:, p:]
        J[:, -1] = self.a
        return dF, J

    def _velocity_lin(self, z, tau):
        """dz/dt on the straight path t = tau: [H_z; a] v = [-H_t; 0] (as _aug, fewer calls)."""
        B = z.shape[0]
        p, N = self.p, self.N
        dF, J = self._jac_lin(z, tau.astype(complex))
        # H_t = F - gamma G, F(z) = dF(z) z / 2 (Euler), G_i = xi_i^2 - c^2
        rhs = np.empty((B, N), dtype=complex)
        np.matmul(dF, z[:, :, None], out=rhs[:, :-1, None])
        rhs[:, :-1] *= -0.5
        rhs[:, :-1] += self.gamma * (z[:, :p] ** 2 - z[:, p:] ** 2)
        rhs[:, -1] = 0
        return solve_rows(J, rhs)

    def _newton_velocity(self, z, t, iters):
        """Newton as ``_newton``, and in its last iteration, with the same matrix [H_z; a] at the same point, the
        velocity dz/dt of the straight path (right-hand side [-H_t; 0], H_t = F - gamma G, F = dF z / 2): a
        second column of one batched solve. Returns z, |last step|/|z|, |first step|/|z| and that velocity,
        which is the one at the point before the last correction (they differ by O(the correction))."""
        first = last = None
        t = np.asarray(t, dtype=complex)
        p = self.p
        for it in range(iters):
            dF, J = self._jac_lin(z, t)
            two = it == iters - 1
            rhs = np.empty(z.shape + (2 if two else 1,), dtype=complex)
            np.matmul(J[:, :-1], z[:, :, None], out=rhs[:, :-1, :1])       # H = [H_z] z / 2 (Euler)
            rhs[:, :-1, 0] *= 0.5
            rhs[:, -1, 0] = z @ self.a - 1
            if two:
                np.matmul(dF, z[:, :, None], out=rhs[:, :-1, 1:])
                rhs[:, :-1, 1] *= -0.5
                rhs[:, :-1, 1] += self.gamma * (z[:, :p] ** 2 - z[:, p:] ** 2)
                rhs[:, -1, 1] = 0
            sol = solve_rows(J, rhs)
            dz = sol[:, :, 0]
            z = z - dz
            last = _rownorm(dz) / (1 + _rownorm(z))
            first = last if first is None else first
        return z, last, first, sol[:, :, 1]

    def _newton(self, z, t, iters=3):
        """Newton on [H(z,t); a.z - 1]; returns z, |last step|/|z|, |first step|/|z|."""
        first = last = None
        t = np.asarray(t, dtype=complex)
        for _ in range(iters):
            _, J = self._jac_lin(z, t)
            r = np.empty(z.shape, dtype=complex)
            np.matmul(J[:, :-1], z[:, :, None], out=r[:, :-1, None])     # H = [H_z] z / 2 (Euler)
            r[:, :-1] *= 0.5
            r[:, -1] = z @ self.a - 1
            dz = solve_rows(J, r)
            z = z - dz
            last = _rownorm(dz) / (1 + _rownorm(z))
            first = last if first is None else first
        return z, last, first

    def track(self, z: NDArray[np.complex128], tau0: ArrayLike, tau1: ArrayLike,
              tpath: Callable[[NDArray[Any]], tuple[NDArray[Any], NDArray[Any]]], h0: float = 0.05,
              hmin: float = 1e-12, hmax: float = 0.2, max_steps: int = 5000, precise: bool | str = False
              ) -> tuple[NDArray[np.complex128], NDArray[np.bool_]]:
        """Track every row of z from tau0 to tau1 (arrays) along t = tpath(tau) -> (t, dt/dtau).

        Returns (z_end, ok). Each path keeps its own step h (halved on a failed corrector, doubled
        after 3 successes); a path whose h falls below hmin * (tau1 - tau0) is marked failed.
        """
        B = z.shape[0]
        if B > self.chunk:          # paths are independent: track them a cache-sized block at a time
            t0, t1 = np.broadcast_to(tau0, (B,)), np.broadcast_to(tau1, (B,))
            def one(i):
                return self.track(z[i:i + self.chunk], t0[i:i + self.chunk], t1[i:i + self.chunk], tpath, h0=h0,
                                  hmin=hmin, hmax=hmax, max_steps=max_steps, precise=precise)
            parts = [one(i) for i in range(0, B, self.chunk)]
            return np.concatenate([q[0] for q in parts]), np.concatenate([q[1] for q in parts])
        if precise is True:
            iters, accept, target = 2, 1e-10, 1e-7
        elif precise == "near":
            iters, accept, target = 1, 1e-5, 1e-6
        else:
            iters, accept, target = self.newton_iters, self.accept, self.target
        z = z.copy()
        B = z.shape[0]
        tau = np.array(tau0, dtype=float) * np.ones(B)
        tau1 = np.array(tau1, dtype=float) * np.ones(B)
        span = np.abs(tau1 - tau0) + 1e-300
        h = np.minimum(h0 * span, hmax * span)
        active = tau < tau1
        ok = np.ones(B, dtype=bool)
        steps = 0
        # on the straight path the corrector's last solve also gives the velocity for the next step's k1 (same
        # matrix, a second right-hand side): 4 solves a step instead of 5; kv holds it per path, valid where
        # ``have`` (a rejected step keeps the velocity at its start point)
        cache = tpath is _linear
        kv = np.empty_like(z)
        have = np.zeros(B, dtype=bool)
        if cache:
            vel, tc = self._velocity_lin, lambda tt: tt.astype(complex)
        else:
            def vel(zz, tt):
                t, dt = tpath(tt)
                return self._velocity(zz, t, dt)

            def tc(tt):
                return tpath(tt)[0]
        while active.any() and steps < max_steps:
            steps += 1
            ia = np.nonzero(active)[0]
            za, ta, ha = z[ia], tau[ia], np.minimum(h[ia], tau1[ia] - tau[ia])
            hc = ha[:, None]
            hh = 0.5 * hc
            tm, tn = ta + 0.5 * ha, ta + ha
            if cache:
                miss = ~have[ia]
                if miss.any():
                    kv[ia[miss]] = vel(za[miss], ta[miss])
                    have[ia[miss]] = True
                k1 = kv[ia]
            else:
                k1 = vel(za, ta)
            k2 = vel(za + hh * k1, tm)
            k3 = vel(za + hh * k2, tm)
            k4 = vel(za + hc * k3, tn)
            zp = za + hc / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            if cache:
                zc, last, first, vn = self._newton_velocity(zp, tc(tn), iters)
            else:
                zc, last, first = self._newton(zp, tc(tn), iters=iters)
            acc = np.isfinite(last) & (last < accept) & (first < FIRST_MAX)
            ia_acc = ia[acc]
            if cache:
                kv[ia_acc] = vn[acc]
            z[ia_acc] = zc[acc]
            tau[ia_acc] = np.where(tau1[ia_acc] - tn[acc] < 1e-14 * span[ia_acc], tau1[ia_acc], tn[acc])
            # RK4 local error ~ h^5: aim at a first Newton correction of 1e-6
            with np.errstate(divide="ignore", invalid="ignore"):
                fac = np.clip((target / np.where(np.isfinite(first), first, 1e300)) ** 0.2, 0.25, 2.0)
            h[ia_acc] = np.minimum(ha[acc] * np.maximum(fac[acc], 0.5), hmax * span[ia_acc])
            ia_rej = ia[~acc]
            h[ia_rej] = ha[~acc] * np.minimum(fac[~acc], 0.5)
            dead = ia_rej[h[ia_rej] < hmin * span[ia_rej]]
            ok[dead] = False
            active = (tau < tau1) & ok
        ok &= tau >= tau1
        return z, ok

    # ------------------------------------------------------------ end game
    def cauchy_endgame(self, z: NDArray[np.complex128], r: float, samples: int = 32, max_loops: int | None = None
                       ) -> tuple[NDArray[np.complex128], NDArray[np.int_], NDArray[np.bool_]]:
        """Cauchy integral end game at radius r around t = 1 for the rows of z (taken at t = 1 - r).

        Loops the circle t = 1 - r e^{i theta} until each path closes (cycle number m) and returns
        the mean over the m loops (trapezoid rule, exact for the Puiseux series up to the tracking
        error), the cycle numbers, and an ok flag.
        """
        max_loops = max_loops or 2 ** self.p
        B = z.shape[0]
        z = self._newton(z, np.full(B, 1 - r, dtype=complex), iters=4)[0]   # tighten the start
        start = z.copy()
        acc = np.zeros_like(z)
        cycle = np.zeros(B, dtype=int)
        ok = np.ones(B, dtype=bool)
        result = np.full_like(z, np.nan)
        cur = z.copy()
        open_ = np.ones(B, dtype=bool)
        dth = 2 * np.pi / samples

        def tpath(th):
            e = np.exp(1j * th)
            return 1 - r * e, -1j * r * e
        for loop in range(max_loops):
            for k in range(samples):
                idx = np.nonzero(open_ & ok)[0]
                if idx.size == 0:
                    break
                acc[idx] += cur[idx]
                th0 = 2 * np.pi * (loop + k / samples)
                zn, okk = self.track(cur[idx], th0, th0 + dth, tpath, h0=0.5, hmax=1.0,
                                     precise=True)
                cur[idx] = zn
                ok[idx[~okk]] = False
            idx = np.nonzero(open_ & ok)[0]
            d = np.linalg.norm(cur[idx] - start[idx], axis=1) / (1 + np.linalg.norm(start[idx], axis=1))
            closed = idx[d < 1e-6]
            cycle[closed] = loop + 1
            result[closed] = acc[closed] / ((loop + 1) * samples)
            open_[closed] = False
            if not (open_ & ok).any():
                break
        ok &= ~open_
        return result, cycle, ok

    # ------------------------------------------------------------ driver
    def solve(self, r_endgame: float = 1e-4, cond_singular: float = 1e8) -> PathResult:
        """Track all 2^p paths to t = 1; regular end points are Newton-polished, the others go
        through the Cauchy end game at radius r_endgame. Returns a PathResult."""
        z0 = self.start_points()
        B = z0.shape[0]
        lin = _linear
        zA, okA = self.track(z0, 0.0, 0.9, lin)                 # loose tolerances far from t = 1
        zW, okW = self.track(zA, 0.9, 0.99, lin, precise="near")
        okA &= okW
        zA, okA2 = self.track(zW, 0.99, 1.0 - r_endgame, lin, precise="near",
                                    h0=0.1, hmax=0.5)
        okA &= okA2
        zB, okB = self.track(zA, 1.0 - r_endgame, 1.0, lin, h0=0.25, hmax=1.0)
        okB &= okA
        cycle = np.ones(B, dtype=int)
        ones = np.ones(B)
        zB, last, _ = self._newton(zB, ones.astype(complex), iters=3)
        with np.errstate(all="ignore"):
            cond = np.linalg.cond(np.nan_to_num(self._jac_lin(zB, ones.astype(complex))[1]))
        regular = okB & np.isfinite(cond) & (cond < cond_singular) & (last < 1e-12)
        sing = np.nonzero(okW & ~regular)[0]
        converged = regular.copy()
        changed = np.zeros(B, dtype=bool)
        # Cauchy end game at r_endgame; paths whose loop cannot be tracked there (two branches
        # closer than the corrector can separate) are retried at the wider radius 1e-2
        for r, zs in ((r_endgame, zA), (1e-2, zW)):
            if not sing.size:
                break
            ze, cyc, oke = self.cauchy_endgame(zs[sing], r)
            zB[sing[oke]] = ze[oke]
            changed[sing[oke]] = True
            cycle[sing[oke]] = cyc[oke]
            converged[sing[oke]] = True
            sing = sing[~oke]
        redo = np.nonzero(changed | ~np.all(np.isfinite(zB), axis=1))[0]   # the rows whose end point moved
        if redo.size:
            with np.errstate(all="ignore"):
                cond[redo] = np.linalg.cond(self._jac_lin(np.nan_to_num(zB[redo]), ones[redo].astype(complex))[1])
        res = np.linalg.norm(self.F(zB), axis=1) / (1 + np.linalg.norm(zB, axis=1) ** 2)
        converged &= np.isfinite(res)
        return PathResult(zB, converged, regular, cycle, cond, res, self.gamma, self.a)
