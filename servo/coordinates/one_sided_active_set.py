"""The active set of one-sided constraints at a state: the complementarity problem at acceleration level.

w = w0 + G mu >= 0, mu >= 0, mu_nu w_nu = 0, with mu = lambda (Cetaev and type I, G = (df/dq') A^-1 M^T
after Kozlov's sign rule (6.2)) or mu = lambda' (type II, G = -(df/dq') A_lambda^-1 (dN/dq')^T); solved
exactly by enumerating active sets, smallest first (Kozlov (2019), sections 2, 6 and 7; for M = df/dq' this
is Gauss's principle, ``servo.coordinates.gauss``). ``ActiveSetMixin`` holds these methods of
``OneSidedSystem`` (``servo.coordinates.one_sided``), whose module docstring states the model.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ActiveSetError

__all__ = ["ActiveSetMixin"]


class ActiveSetMixin:
    """The accelerations and the active set of a one-sided system (a mixin of ``OneSidedSystem``: it reads
    ``system``, ``k``, ``kind`` and the lambdified ``_num["pieces"]``)."""

    def _pieces(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike, lam: ArrayLike | None = None) -> tuple:
        """(a0, B, G, w0, sign): q'' = a0 + B mu, w = f' = w0 + G mu (see the module docstring).

        Type I: B = A^-1 (s M)^T with s_nu = sign (A^-1 M_nu, df_nu/dq') (Kozlov's rule (6.2)); type II:
        B = -A_lambda^-1 (dN/dq')^T with A_lambda = A + sum lambda_nu d^2 N_nu/dq'^2 and mu = lambda'.
        """
        S, n, k = self.system, self.system.n, self.k
        A, rhs = S.inertia_and_rhs(t, q, qd)
        v = self._num["pieces"](*S._args(t, q, qd))
        v = np.broadcast_to(v, np.shape(rhs)[:-1] + v.shape[-1:])
        batch = np.shape(rhs)[:-1]
        J = v[..., :k * n].reshape(batch + (k, n))
        c = v[..., k * n:k * n + k]
        rest = v[..., k * n + k:]
        if self.kind == 1:
            a0 = np.linalg.solve(A, rhs[..., None])[..., 0]
            M = rest.reshape(J.shape)
            B = np.linalg.solve(A, np.swapaxes(M, -1, -2))
            d = np.einsum("...ij,...ji->...i", J, B)
            sign = np.where(d < 0, -1.0, 1.0)
            B = B * sign[..., None, :]
        else:
            lam = np.zeros(np.shape(rhs)[:-1] + (k,)) if lam is None else np.asarray(lam, dtype=float)
            NJ = rest[..., :k * n].reshape(J.shape)
            H = rest[..., k * n:k * n + k * n * n].reshape(batch + (k, n, n))
            dN = rest[..., k * n + k * n * n:].reshape(J.shape)
            Al = A + np.einsum("...k,...kij->...ij", lam, H)
            a0 = np.linalg.solve(Al, (rhs - np.einsum("...k,...ki->...i", lam, dN))[..., None])[..., 0]
            B = -np.linalg.solve(Al, np.swapaxes(NJ, -1, -2))
            sign = np.ones(np.shape(rhs)[:-1] + (k,))
        w0 = np.einsum("...ij,...j->...i", J, a0) + c
        return a0, B, J @ B, w0, sign

    def acceleration(self, t: ArrayLike, q: ArrayLike, qd: ArrayLike, active: Iterable[int],
                     lam: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(q'', mu) with the constraints in ``active`` held at f' = 0 (mu = 0 for the others).

        mu = lambda for Cetaev and type I (the multiplier of the sign-corrected control), mu = lambda'
        for type II (``lam``: the state multipliers).
        """
        a0, B, G, w0, _ = self._pieces(t, q, qd, lam)
        mu = np.zeros(np.shape(w0))
        act = sorted(active)
        if act:
            Gs = G[..., act, :][..., :, act]
            mu[..., act] = np.linalg.solve(Gs, -w0[..., act, None])[..., 0]
        return a0 + np.einsum("...ij,...j->...i", B, mu), mu

    def _lcp(self, t: float, q: ArrayLike, qd: ArrayLike, candidates: Collection[int], exclude: Collection[int],
             tol: float, forced: tuple[int, ...] = (), lam: ArrayLike | None = None,
             free_sign: Collection[int] = ()) -> tuple | None:
        a0, B, G, w0, _ = self._pieces(t, q, qd, lam)
        cand = [i for i in sorted(candidates) if i not in exclude and i not in forced]
        scale = 1.0 + np.abs(w0).max()
        for size in range(len(cand) + 1):
            for Sset in combinations(cand, size):
                Sset = sorted(set(Sset) | set(forced))
                mu = np.zeros(self.k)
                if Sset:
                    Gs = G[np.ix_(Sset, Sset)]
                    if abs(np.linalg.det(Gs)) < 1e-12 * (1.0 + np.abs(Gs).max()) ** len(Sset):
                        continue
                    mu[Sset] = np.linalg.solve(Gs, -w0[Sset])
                w = w0 + G @ mu
                signed = [i for i in Sset if i not in free_sign]
                if np.all(mu[signed] >= -tol * scale) and all(w[i] >= -tol * scale for i in candidates):
                    return set(Sset), w, scale, a0 + B @ mu
        return None

    def select_active(self, t: float, q: ArrayLike, qd: ArrayLike, candidates: Iterable[int],
                      exclude: Collection[int] = (), tol: float = 1e-9, probe: float = 1e-6,
                      lam: ArrayLike | None = None) -> set[int]:
        """The active set among ``candidates`` (constraints with f = 0) solving the complementarity problem.

        mu_S = -G_SS^-1 w0_S >= 0 and w_i = w0_i + (G mu)_i >= 0 for the candidates outside S; smallest
        sets first, so at a sign change of mu (mu = 0) the constraint is released. Type II: constraints
        with a state lambda_nu > 0 are active whatever the sign of lambda_nu'. Degenerate ties (w_i = 0
        and mu_i = 0, e.g. a start from rest) are decided at second order: the state is advanced by a
        short Taylor step of length ``probe`` in the chosen mode and a free candidate whose w_i then
        turns negative is made active.
        """
        held = set() if lam is None else {i for i in range(self.k) if lam[i] > 0}
        candidates = set(candidates) | held
        out = self._lcp(t, q, qd, candidates, exclude - held if exclude else (), tol, forced=tuple(sorted(held)),
                        lam=lam, free_sign=held)
        if out is None:
            _, _, G, w0, _ = self._pieces(t, q, qd, lam)
            hint = ("check the realizability det (A^-1 M, df/dq') > 0" if self.kind == 1 else
                    "type II needs (A^-1 dN/dq', df/dq') < 0 (lambda >= 0 must push towards f > 0); use -N")
            raise ActiveSetError(f"no active set at t = {t:.12g}: candidates {sorted(candidates)}, "
                                 f"free constraint accelerations w0 = {w0.tolist()}, G = {G.tolist()}; {hint}")
        active, w, scale, acc = out
        ties = [i for i in sorted(candidates) if i not in active and i not in exclude and abs(w[i]) <= tol * scale]
        if ties:
            q1, qd1 = np.asarray(q) + probe * np.asarray(qd), np.asarray(qd) + probe * acc
            _, _, G, w0, _ = self._pieces(t + probe, q1, qd1, lam)
            mu = np.zeros(self.k)
            act = sorted(active)
            if act:
                mu[act] = np.linalg.solve(G[np.ix_(act, act)], -w0[act])
            w1 = w0 + G @ mu
            push = [i for i in ties if w1[i] < -tol * scale]
            if push:
                better = self._lcp(t, q, qd, candidates, exclude, tol, forced=tuple(sorted(active | set(push))),
                                   lam=lam, free_sign=held)
                if better is not None:
                    active = better[0]
        return active
