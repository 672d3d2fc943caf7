"""One step of each method family; the loop that calls it lives in :mod:`integrators.engine.driver`.

``make_stepper(method, problem)`` returns a :class:`Stepper` with ``step(t, y, h) -> y1`` and
``fevals`` (right-hand-side or generator evaluations per step); ``h`` is a float.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import ConvergenceError, MethodError
from ..methods import CommutatorFree, DiscreteMechanics, ImplicitMidpoint, MoserVeselov, RungeKutta, Splitting
from .moser_veselov import MoserVeselovStepper
from .runge_kutta import lincomb, rk_increment, rkmk_increment, stages
from .nonholonomic import steppers as nonholonomic_steppers
from ..geometry import orbit_space
from ..geometry.spaces import AffineCoadjointSpace, CoadjointSpace, GroupSpace


def space_for(problem):
    """The homogeneous space (generator, action, bracket) of a coadjoint or reconstruction problem: the orbits of
    an almost abelian algebra with R^2 acting (:mod:`integrators.geometry.orbit_space`), g* with the coadjoint
    action, g x g* with the affine one (a forcing), or the group."""
    if orbit_space.applies(problem):
        return orbit_space.OrbitSpace(problem)
    if problem.kind == "coadjoint":
        return CoadjointSpace(problem) if problem.forcing is None else AffineCoadjointSpace(problem)
    if problem.kind == "reconstruction":
        return GroupSpace(problem.group, problem.velocity)
    raise MethodError(f"Lie-group methods need a coadjoint or reconstruction problem, got {problem.kind!r}")


def _rhs(problem):
    if problem.kind == "coadjoint":
        return problem.rhs
    return problem.f


class Stepper:
    """``step(t, y, h)`` -> y1; ``delta(t, y, h)`` -> y1 - y computed without cancellation where
    the method allows it (used by the driver's compensated summation)."""

    fevals = 0

    def step(self, t, y, h):  # pragma: no cover - interface
        raise NotImplementedError

    def delta(self, t, y, h):
        return self.step(t, y, h) - y


class ProjectedStepper(Stepper):
    """A stepper followed by the orthogonal projection onto {C z = C z0} (linear invariants C (p, n) of a
    forced coadjoint problem that a Lie-group method does not keep): z <- z - C^T (C C^T)^-1 (C z - C z0),
    so event location uses the same map as the steps."""

    def __init__(self, inner, C, z0):
        self.inner, self.fevals = inner, inner.fevals
        self.C, self.target = C, z0 @ C.T
        self.G = np.linalg.solve(C @ C.T, C)

    def step(self, t, y, h):
        z = self.inner.step(t, y, h)
        return z - (z @ self.C.T - self.target) @ self.G


class RKStepper(Stepper):
    """Explicit Runge-Kutta: K_i = h f(t + c_i h, y + sum_j a_ij K_j), y1 = y + sum b_i K_i
    (:func:`integrators.reference.runge_kutta.stages`)."""

    def __init__(self, method, problem):
        self.f = _rhs(problem)
        self.A, self.b, self.c = method.A, method.b, method.c
        self.fevals = len(method.b)

    def step(self, t, y, h):
        return y + self.delta(t, y, h)

    def delta(self, t, y, h):
        return lincomb(self.b, stages(self.A, self.c, t, h, rk_increment(self.f, y, h)))


class MidpointStepper(Stepper):
    """Implicit midpoint y1 = y0 + h f(t + h/2, (y0 + y1)/2) by fixed-point iteration.

    Iterates until max |y1^(k+1) - y1^(k)| <= tol * max(1, max|y|) (batched: all trajectories), or
    the increment stops decreasing below 1e3 * tol (round-off floor); raises ConvergenceError after
    ``max_iter`` iterations otherwise. Quadratic invariants are then kept to the iteration tolerance.
    """

    def __init__(self, method, problem):
        self.f = _rhs(problem)
        self.tol, self.max_iter = method.tol, method.max_iter
        self.fevals = 0  # counted per call in nfev_total
        self.nfev_total = 0

    def step(self, t, y, h):
        tm = t + 0.5 * h
        d1 = h * self.f(tm, y)
        y1 = y + d1
        self.nfev_total += 1
        scale = max(1.0, float(np.max(np.abs(y))))
        prev = np.inf
        for it in range(1, self.max_iter + 1):
            d1 = h * self.f(tm, 0.5 * (y + y1))
            new = y + d1
            d = float(np.max(np.abs(new - y1)))
            y1 = new
            self.nfev_total += 1
            if d <= self.tol * scale or (d >= prev and d <= 1e3 * self.tol * scale):
                self.last_delta = d1
                return y1
            prev = d
        raise ConvergenceError(f"implicit midpoint did not converge at t = {t}: last fixed-point increment "
                               f"{d:.3e} > tolerance {self.tol * scale:.1e} after {self.max_iter} "
                               f"iterations (reduce h)")


def _midpoint_delta(self, t, y, h):
    self.step(t, y, h)
    return self.last_delta


MidpointStepper.delta = _midpoint_delta


class RKMKStepper(Stepper):
    """RKMK: theta_i = sum_j a_ij K_j, K_i = h dexpinv_{theta_i}(xi(t + c_i h, exp(theta_i) y0)),
    y1 = exp(sum b_i K_i) y0 (dexp^-1 series with ``terms`` terms; Munthe-Kaas 1999)."""

    def __init__(self, method, problem):
        self.space = space_for(problem)
        self.A, self.b, self.c, self.terms = method.A, method.b, method.c, method.terms
        self.fevals = len(method.b)

    def _theta(self, t, y, h):
        return lincomb(self.b, stages(self.A, self.c, t, h, rkmk_increment(self.space, y, h, self.terms)))

    def step(self, t, y, h):
        return self.space.act(self._theta(t, y, h), y)

    def delta(self, t, y, h):
        return self.space.act_delta(self._theta(t, y, h), y)


class CFStepper(Stepper):
    """Commutator-free / Crouch-Grossman: products of exponentials of combinations of F_i = xi(Y_i)."""

    def __init__(self, method, problem):
        self.space = space_for(problem)
        self.stages, self.update, self.c = method.stages, method.update, method.c
        self.fevals = len(method.c)

    def _apply(self, exps, Fs, y, h):
        for coeffs in exps:
            x = lincomb(coeffs, Fs)
            if x is not None:
                y = self.space.act(h * x, y)
        return y

    def _stages(self, t, y, h):
        Fs = []
        for i, exps in enumerate(self.stages):
            Yi = self._apply(exps, Fs, y, h)
            Fs.append(self.space.field(t + self.c[i] * h, Yi))
        return Fs

    def step(self, t, y, h):
        return self._apply(self.update, self._stages(t, y, h), y, h)

    def delta(self, t, y, h):
        """Sum of the increments of the final exponentials (each without cancellation)."""
        Fs = self._stages(t, y, h)
        cur, total = y, None
        for coeffs in self.update:
            x = lincomb(coeffs, Fs)
            if x is not None:
                d = self.space.act_delta(h * x, cur)
                cur = cur + d
                total = d if total is None else total + d
        return total


class SplittingStepper(Stepper):
    """McLachlan's splitting of the free rigid body H = sum m_i^2 a_i / 2 on so(3)*.

    Subtracting the Casimir a_j |m|^2 / 2 (j the middle axis) leaves H = H_i + H_k with
    H_i = (a_i - a_j) m_i^2 / 2, whose flow is the exact rotation about e_i by the angle
    -h (a_i - a_j) m_i (m_i is constant along it). A Strang step is
    R_i(h/2) R_k(h) R_i(h/2) (order 2); ``gammas`` composes Strang steps (Yoshida's triple jump gives
    order 4). Every sub-step is a rotation, so |m| is kept to round-off (McLachlan 1993).
    """

    def __init__(self, method, problem):
        a = np.diag(problem.velocity_matrix).astype(float)
        j = int(np.argsort(a)[1])
        i, k = [q for q in range(3) if q != j]
        self.i, self.k = i, k
        self.alpha_i, self.alpha_k = a[i] - a[j], a[k] - a[j]
        self.gammas = method.gammas
        self.fevals = 0

    @staticmethod
    def _rot(m, axis, alpha, h):
        # m' = m x (alpha m_axis e_axis): (m_p, m_q) rotate by -omega t, (p, q) cyclic after axis
        p, q = (axis + 1) % 3, (axis + 2) % 3
        ang = (h * alpha) * m[..., axis]
        c, s = np.cos(ang), np.sin(ang)
        out = m.copy()
        out[..., p] = c * m[..., p] + s * m[..., q]
        out[..., q] = -s * m[..., p] + c * m[..., q]
        return out

    def step(self, t, y, h):
        for g in self.gammas:
            hg = g * h
            y = self._rot(y, self.i, self.alpha_i, 0.5 * hg)
            y = self._rot(y, self.k, self.alpha_k, hg)
            y = self._rot(y, self.i, self.alpha_i, 0.5 * hg)
        return y


_STEPPERS = {ImplicitMidpoint: MidpointStepper, CommutatorFree: CFStepper, Splitting: SplittingStepper,
             MoserVeselov: MoserVeselovStepper}


def make_stepper(method, problem):
    """The stepper for a fixed-step ``method`` on ``problem`` (a Runge-Kutta tableau in its "rk" or "rkmk" form,
    the discrete mechanics schemes of :mod:`integrators.reference.nonholonomic`, the other kinds)."""
    if isinstance(method, DiscreteMechanics):
        return nonholonomic_steppers.make_stepper(method, problem)
    if isinstance(method, RungeKutta):
        if method.project or not method.fixed_step:
            raise MethodError(f"{method.name} is not a fixed-step method of the rk or rkmk form")
        return RKMKStepper(method, problem) if method.lie else RKStepper(method, problem)
    return _STEPPERS[type(method)](method, problem)
