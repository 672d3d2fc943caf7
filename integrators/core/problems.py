"""The problem protocols that every integrator consumes.

* :class:`ODEProblem`: a plain ODE y' = f(t, y).
* :class:`CoadjointProblem`: a coadjoint-type ODE on g*, z' = ad*_{w(z)} z + f(z), with a velocity map
  w(z) (w = dH/dm for Euler-Poincare / Lie-Poisson systems; linear in z for servo-constraints of the
  second kind) and an optional extra force f(z) (the multiplier term lambda b of a servo-constraint
  of the first kind). Lie-Poisson methods move z along its coadjoint orbit when f is None, so every
  Casimir of the algebra is kept to round-off. With ``time_dependent=True`` the callables are
  w(t, z) and f(t, z) (a periodic inertia I(t), a gyrostatic or linear term c(t), a control): the
  Casimirs are still kept without forcing (z' = ad*_{w(t, z)} z moves z on its coadjoint orbit for
  any w), the generated code (autonomous) does not apply and the numpy steppers pass the stage
  times t + c_i h.
* :class:`ReconstructionProblem`: g' = g w(t) on a matrix group (SO(3), SE(2), SE(3)).

Arrays follow the library convention: the last axis is the state (or algebra) index, leading axes
are a batch; every callable here must accept (..., dim) and broadcast.

Every problem also takes

* ``period``: the period T of a time-periodic vector field (f(t + T, y) = f(t, y)), read by the
  phase-space tools (:func:`integrators.lyapunov_spectrum`, :func:`integrators.poincare_section`:
  the stroboscopic map, the exponents per period) when they are not given one, and by the adaptive
  pairs: a field quadratic in the state with a period runs their generated loops, its coefficients a
  Fourier fit over one period (:mod:`integrators.geometry.timed_fourier`);

* ``outputs``: dict name -> callable(y) evaluated after the integration on the saved raw states,
  (K, ..., dim) -> (K, ...) or (K, ..., p); the results are ``IntegrationResult.outputs``;
* ``state_map``: callable raw -> the system's state layout; the result's ``y`` is then
  ``state_map(raw)`` and the raw states are kept as ``outputs["z"]``.

Invariants and constraints are always evaluated on the raw states.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import Any

import liegroups
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import IntegrationInputError


def _outputs(outputs, state_map):
    """Check the declared outputs (dict name -> callable) and state map (callable or None)."""
    outputs = dict(outputs or {})
    for k, f in outputs.items():
        if not isinstance(k, str) or not callable(f):
            raise IntegrationInputError(f"outputs must map names (str) to callables f(y), got {k!r}: {f!r}")
    if state_map is not None and not callable(state_map):
        raise IntegrationInputError(f"state_map must be a callable raw -> state, got {state_map!r}")
    return outputs, state_map


def _tolerances(tolerances):
    """Check the per-quantity tolerances of the end-of-run checks (dict name -> positive float)."""
    out = dict(tolerances or {})
    for k, v in out.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < np.inf:
            raise IntegrationInputError(f"tolerances must map names (str) to positive finite numbers, got {k!r}: {v!r}")
    return out


def _period(period):
    """None or a positive finite float (the period of a time-periodic vector field)."""
    if period is None:
        return None
    if isinstance(period, bool) or not isinstance(period, (int, float, np.floating, np.integer)) or \
            not 0 < float(period) < np.inf:
        raise IntegrationInputError(f"period must be a positive finite number (the period T of the vector "
                                    f"field), got {period!r}")
    return float(period)


def state_time(t, z):
    """t as the time of the states z for a time-dependent field: a float stays a float; an array t with
    one more trailing axis of length 1 than z[..., 0] (the steppers' per-row times of shape (P, 1) for
    z (P, n), as in t + c_i h with h broadcasting against z) loses it, so that the callables velocity(t, z)
    and forcing(t, z) always get t broadcasting against z[..., 0] (the convention of
    :class:`CoadjointProblem`)."""
    if np.ndim(t) == 0:
        return t
    t = np.asarray(t)
    if t.ndim == np.ndim(z) and t.shape[-1] == 1:
        return t[..., 0]
    return t


#: Casimir -> its invariant name "casimir:<expr>", made once per Casimir, not at every problem built on its
#: algebra (``Casimir.text`` writes sympy's string from the terms; for other objects sympy prints ``c.expr``,
#: ~0.2-0.5 s for a quartic Casimir in 10 variables in a random basis)
_CASIMIR_NAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def casimir_names(algebra: liegroups.LieAlgebra) -> list[tuple[str, Any]]:
    """[("casimir:<expr>", Casimir), ...] for the polynomial Casimirs of ``algebra`` (``algebra.casimirs()``,
    which the algebra keeps); each name is made once per Casimir object."""
    out = []
    for c in algebra.casimirs():
        try:
            name = _CASIMIR_NAMES[c]
        except (KeyError, TypeError):      # TypeError: an object that takes no weak reference
            name = f"casimir:{getattr(c, 'text', None) or c.expr}"   # Casimir.text: the same string, no sympy
            try:
                _CASIMIR_NAMES[c] = name
            except TypeError:
                pass
        out.append((name, c))
    return out


class ODEProblem:
    """y' = f(t, y).

    Parameters
    ----------
    f : callable (t, y) -> (..., dim)
    dim : int
    invariants : dict name -> callable(y) -> (...), optional
        Quantities that should stay constant (recorded along the solution).
    constraints : dict name -> callable(y) -> (...), optional
        Residuals that should stay zero (recorded along the solution).
    jac : callable (t, y) -> (dim, dim), optional
        Passed to the implicit scipy methods (Radau, BDF, LSODA).
    outputs, state_map : see the module docstring.
    tolerances : dict name -> relative tolerance of that invariant or constraint in the end-of-run
        check of :mod:`integrators.engine.guard` (defaults there).
    period : the period T of a time-periodic f (optional; see the module docstring).
    """

    kind = "ode"

    def __init__(self, f: Callable[[Any, NDArray[Any]], ArrayLike], dim: int,
                 invariants: Mapping[str, Callable[[NDArray[Any]], ArrayLike]] | None = None,
                 constraints: Mapping[str, Callable[[NDArray[Any]], ArrayLike]] | None = None,
                 jac: Callable[[Any, NDArray[Any]], ArrayLike] | None = None, name: str | None = None,
                 outputs: Mapping[str, Callable[[NDArray[Any]], ArrayLike]] | None = None,
                 state_map: Callable[[NDArray[Any]], ArrayLike] | None = None,
                 tolerances: Mapping[str, float] | None = None, period: float | None = None) -> None:
        self.outputs, self.state_map = _outputs(outputs, state_map)
        self.tolerances = _tolerances(tolerances)
        self.period = _period(period)
        self.f = f
        self.dim = int(dim)
        self.invariants = dict(invariants or {})
        self.constraints = dict(constraints or {})
        self.jac = jac
        self.name = name or "ODE"

    def rhs(self, t: Any, y: NDArray[Any]) -> ArrayLike:
        """The vector field f(t, y)."""
        return self.f(t, y)


class CoadjointProblem:
    """z' = ad*_{w(z)} z + f(z) on the dual g* of ``algebra``.

    Parameters
    ----------
    algebra : liegroups.LieAlgebra
    velocity : callable z -> w(z), (..., n) -> (..., n)
        For a Hamiltonian H(z), w = dH/dz.
    forcing : callable z -> f(z), optional
        An extra (non-Hamiltonian) term; with it Casimirs are no longer invariants.
    velocity_matrix : (n, n) array, optional
        If w(z) = W z is linear, the matrix W (lets methods use closed forms and Newton solvers).
    hamiltonian : callable z -> (...), optional
        H(z); recorded as an invariant named "energy" when given and forcing is None.
    invariants, constraints : dict name -> callable(z) -> (...), optional
        Extra quantities to record; the algebra's polynomial Casimirs are added automatically
        (as "casimir:<expr>") when ``forcing`` is None and ``record_casimirs`` is true.
    linear_invariants : (p, n) or (n,) array, optional
        Covectors c with (c, z) constant along the exact flow, i.e. (c, ad*_{w(z)} z + f(z)) = 0 for
        every z (e.g. c = I^-1 a for a servo-constraint of the first kind (a, w) = 0 with
        lambda(z) = -(I^-1 a, ad*_w z)/(I^-1 a, b)). Recorded as invariants "linear:<i>". With a
        forcing, the Lie-group methods (which keep Casimirs only without forcing) project each step
        orthogonally back onto {C z = C z0}, which keeps their order and these invariants to
        round-off; Runge-Kutta methods keep them without projection.
    outputs, state_map, tolerances : see the module docstring and :class:`ODEProblem`.
    time_dependent : bool, default False
        True: ``velocity`` and ``forcing`` are callables (t, z), t a float or an array broadcasting
        against z[..., 0] (z' = ad*_{w(t, z)} z + f(t, z)); ``velocity_matrix`` is then refused and a
        ``hamiltonian`` is not recorded as an invariant (the energy of a forced or time-dependent
        system is not conserved). The generated code (autonomous) does not take such a problem:
        :func:`integrators.geometry.recognition.recognise` returns None and ``backend='numba'`` raises
        MethodError; the numpy steppers (rk, rkmk, commutator-free, the adaptive pairs, scipy) apply.
    period : the period T of a time-periodic velocity / forcing (optional; see the module docstring).
    """

    kind = "coadjoint"

    def __init__(self, algebra: liegroups.LieAlgebra, velocity: Callable[[NDArray[Any]], ArrayLike],
                 forcing: Callable[[NDArray[Any]], ArrayLike] | None = None, velocity_matrix: ArrayLike | None = None,
                 hamiltonian: Callable[[NDArray[Any]], ArrayLike] | None = None,
                 invariants: Mapping[str, Callable[[NDArray[Any]], ArrayLike]] | None = None,
                 constraints: Mapping[str, Callable[[NDArray[Any]], ArrayLike]] | None = None, name: str | None = None,
                 record_casimirs: bool = True, linear_invariants: ArrayLike | None = None,
                 outputs: Mapping[str, Callable[[NDArray[Any]], ArrayLike]] | None = None,
                 state_map: Callable[[NDArray[Any]], ArrayLike] | None = None,
                 tolerances: Mapping[str, float] | None = None, time_dependent: bool = False,
                 period: float | None = None) -> None:
        self.outputs, self.state_map = _outputs(outputs, state_map)
        self.tolerances = _tolerances(tolerances)
        if not isinstance(time_dependent, (bool, np.bool_)):
            raise IntegrationInputError(f"time_dependent must be True or False, got {time_dependent!r}")
        self.time_dependent = bool(time_dependent)
        if self.time_dependent and velocity_matrix is not None:
            raise IntegrationInputError("velocity_matrix describes an autonomous velocity w = W z; a time-dependent "
                                        "problem (time_dependent=True) has none: give velocity(t, z) only")
        self.period = _period(period)
        self.algebra = algebra
        self.dim = algebra.dim
        self.velocity = velocity
        self.forcing = forcing
        # copies: a problem changed in place does not change the system it was built from (and back)
        self.velocity_matrix = None if velocity_matrix is None else np.array(velocity_matrix, dtype=float)
        self.hamiltonian = hamiltonian
        self.invariants = dict(invariants or {})
        self.constraints = dict(constraints or {})
        self.name = name or f"coadjoint ODE on {algebra.name}*"
        if hamiltonian is not None and "energy" not in self.invariants and forcing is None and not self.time_dependent:
            self.invariants["energy"] = hamiltonian
        self.linear_invariants = None
        if linear_invariants is not None:
            L = np.atleast_2d(np.array(linear_invariants, dtype=float))
            if L.ndim != 2 or L.shape[1] != self.dim or not np.all(np.isfinite(L)):
                raise IntegrationInputError(f"linear_invariants must be finite covectors of shape (p, {self.dim}), "
                                 f"got shape {L.shape}")
            if np.linalg.matrix_rank(L) < L.shape[0]:
                raise IntegrationInputError(f"linear_invariants must be linearly independent: rank "
                                 f"{np.linalg.matrix_rank(L)} < {L.shape[0]}")
            self.linear_invariants = L
            for i, c in enumerate(L):
                self.invariants.setdefault(f"linear:{i}", lambda z, c=c: np.asarray(z) @ c)
        if forcing is None and record_casimirs:
            for name, c in casimir_names(algebra):
                self.invariants.setdefault(name, c)

    def rhs(self, t: Any, z: NDArray[Any]) -> NDArray[Any]:
        """ad*_{w(z)} z + f(z) (ad*_{w(t, z)} z + f(t, z) for a time-dependent problem)."""
        coad = getattr(self.algebra, "_coad", self.algebra.coad)   # unchecked: stages may overflow
        if self.time_dependent:
            t = state_time(t, z)
            out = coad(self.velocity(t, z), z)
            return out if self.forcing is None else out + self.forcing(t, z)
        out = coad(self.velocity(z), z)
        if self.forcing is not None:
            out = out + self.forcing(z)
        return out

    def as_ode(self) -> ODEProblem:
        """The same vector field as a plain :class:`ODEProblem` (for RK4, midpoint, scipy)."""
        return ODEProblem(lambda t, z: self.rhs(t, z), self.dim, self.invariants, self.constraints,
                          name=self.name, outputs=self.outputs, state_map=self.state_map,
                          tolerances=self.tolerances, period=self.period)


class ReconstructionProblem:
    """g' = g w(t) on a matrix group; ``velocity(t)`` returns (..., dim) algebra coordinates.

    ``group`` is one of liegroups.SO3, SE2, SE3 (an object with hat, exp, defect); ``outputs`` and
    ``state_map`` act on the (K, ..., N, N) group elements (see the module docstring).
    """

    kind = "reconstruction"

    def __init__(self, group: Any, velocity: Callable[[Any], ArrayLike], name: str | None = None,
                 outputs: Mapping[str, Callable[[NDArray[Any]], ArrayLike]] | None = None,
                 state_map: Callable[[NDArray[Any]], ArrayLike] | None = None) -> None:
        self.outputs, self.state_map = _outputs(outputs, state_map)
        self.group = group
        self.velocity = velocity
        self.dim = group.dim
        self.name = name or f"reconstruction on {group.name}"
