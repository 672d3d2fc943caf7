"""Euler-Poincare systems on the dual of a Lie algebra: m' = ad*_w m, w = dH/dm.

Kozlov's lectures on servo-constraints ("Системы на группах Ли"): for a left-invariant kinetic
energy T = (I w, w)/2 = (I^-1 m, m)/2 the momenta m = I w in g* obey the Euler-Poincare equations
m' = ad*_w m, with (ad*_w m)_j = sum_{i,k} w_i C[i,j,k] m_k (library convention; for so(3) this is
Euler's m' = m x w), and T is a first integral. :class:`EulerPoincare` also takes a Hamiltonian
H(m) = (m, K m)/2 + (c, m) with a symmetric positive *semidefinite* K = d^2H/dm^2 and a linear term c,
so that w = K m + c; this covers the heavy top on se(3)*, H = (M, J^-1 M)/2 + m g (Gamma, chi):
``EulerPoincare(se3, inverse_inertia=blockdiag(J^-1, 0), linear_term=(0, 0, 0, m g chi))``.

:class:`LieSystem` is the common base of the free system and of the constrained systems
(servo-constraints of the first and second kind, :mod:`servo.lie.servo_first`, :mod:`servo.lie.servo_second`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import sympy as sp
from integrators import CoadjointProblem, integrate, polynomial_quantity
from numpy.typing import ArrayLike, NDArray

from ..errors import ServoError, SymbolicParameterError
from .built_once import BuiltOnce
from .display import system_markdown
from .first_integrals import FirstIntegral, free_integrals
from .method_choice import choose, document_default
from .parameters import Parameter, Scalar, check_inertia, check_inverse_inertia, check_real_vector, free_symbols
from .reduction import Reduced, reduce_free
from .symbolic import Equations, free_equations

if TYPE_CHECKING:
    from integrators import IntegrationResult
    from liegroups import LieAlgebra

_System = TypeVar("_System", bound="LieSystem")
#: a component of a simulation computed from the variable z of the coadjoint problem, batched
Output = Callable[[NDArray[np.float64]], NDArray[np.float64]]

__all__ = ["EulerPoincare", "LieSystem"]


class LieSystem(BuiltOnce):
    """Common machinery: parameters (numbers or sympy), batching helpers, simulate, integrals, equations.

    Subclasses set ``kind``, ``state_dim`` and implement ``velocity``, ``rhs``,
    ``_problem`` and the conversions between the state and the variable z of the coadjoint problem.

    What depends only on the parameters (the problem, the default method, the first integrals, the
    reduced system) is built once per system and kept; assigning a parameter (``s.I = ...``,
    ``s.b = ...``) builds the system again from it (:mod:`servo.lie.built_once`).
    """

    kind = "base"

    @property
    def default_method(self) -> str:
        """The method ``simulate`` uses when none is named: :data:`servo.lie.method_choice.METHOD_TABLE`."""
        return self._choice()[0]

    def _choice(self):
        """(method, options) of :func:`servo.lie.method_choice.choose` for this system's problem, kept."""
        return self._built("choice", lambda _: choose(self.problem()))

    def problem(self) -> CoadjointProblem:
        """The :class:`integrators.CoadjointProblem` of this system, built on the first call and shared by
        every later one (``s.problem() is s.problem()``; treat it as read-only). Assigning a parameter
        builds a new one (:mod:`servo.lie.built_once`). What it contains: ``_problem`` of each system."""
        return self._built("problem", type(self)._problem)

    def _problem(self) -> CoadjointProblem:
        raise NotImplementedError

    def __init__(self, algebra: LieAlgebra, name: str | None = None) -> None:
        self.algebra = algebra
        self.n = algebra.dim
        self.name = name or f"{type(self).__name__} on {algebra.name}"
        self._cache: dict[str, Any] = {}

    # ----------------------------------------------------------------- parameters
    @property
    def symbols(self) -> list[sp.Symbol]:
        """Free sympy symbols among the parameters (empty for a numeric system)."""
        return free_symbols(*self._sym_params().values())

    @property
    def is_numeric(self) -> bool:
        """True when every parameter is a number (required by rhs, simulate, reduced().system)."""
        return self._built("is_numeric", lambda twin: not twin.symbols)

    def _require_numeric(self, what):
        if not self.is_numeric:
            names = ", ".join(str(s) for s in self.symbols)
            raise SymbolicParameterError(f"{what} needs numeric parameters but {self.name} has symbols "
                                         f"{names}; use .subs({{symbol: value, ...}}) first")

    def subs(self: _System, mapping: Mapping[sp.Basic, Scalar]) -> _System:
        """The same system with sympy symbols replaced by values: ``s.subs({I11: 2.0, b3: 1})``."""
        params = {k: (v.subs(mapping) if isinstance(v, sp.MatrixBase) else v)
                  for k, v in self._sym_params().items()}
        return self._rebuild(params)

    def _real_array(self, x, what):
        """x as a float array; ServoError for complex or non-numeric input."""
        if np.iscomplexobj(x):
            raise ServoError(f"{what} must be real, got a complex array for {self.name}")
        try:
            return np.asarray(x, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ServoError(f"{what} must be a real numeric array for {self.name}: {exc}") from None

    def _check_last(self, x, size, what, finite=False):
        """x as a float array (..., size); ServoError for complex or non-numeric input, a wrong last axis
        and, with ``finite`` (the public entries: states given by the user), a NaN or inf entry."""
        if not (type(x) is np.ndarray and x.dtype == np.float64):   # the integrators' states are already so
            x = self._real_array(x, what)
        if x.ndim == 0 or x.shape[-1] != size:
            raise ServoError(f"{what} must have last axis of length {size} for {self.name}, got shape {x.shape}")
        if finite and not np.all(np.isfinite(x)):
            bad = tuple(int(v) for v in np.argwhere(~np.isfinite(x))[0])
            raise ServoError(f"{what} must be finite: entry {bad} is {x[bad]} ({self.name})")
        return x

    # ----------------------------------------------------------------- simulation
    def simulate(self, state0: ArrayLike, t_end: float, steps: int | None = 1000, method: str | None = None,
                 project: bool = False, **options: Any) -> IntegrationResult:
        """Integrate from ``state0`` over [0, t_end] with ``integrators.integrate``.

        Without ``method`` the table :data:`servo.lie.method_choice.METHOD_TABLE` picks the fastest method
        that keeps what the system's claims need: an adaptive pair choosing its own steps (rk853_projected
        keeping the Casimirs, rkmk853 on an algebra without a polynomial Casimir, rk853 keeping the linear
        constraint of a forced system; rtol 1e-12, atol 1e-14 unless
        given), with the states on the output grid of ``steps`` (or ``h``) from its continuous extension,
        or at its accepted steps with ``steps=None`` and no ``h``. Other options (``h``, ``save_every``, ``rtol``, ``atol``, ``events``)
        go to ``integrators.integrate``. States off the constraint raise
        :class:`ConstraintViolationError` unless ``project=True``. Returns the integrator's
        ``IntegrationResult``: ``y`` in this system's state layout, and the components this system's
        problem declares (:meth:`outputs`): ``res.z`` (the variable of the coadjoint problem),
        ``res.w`` (velocities), ``res.multiplier`` (also ``res["lambda"]``).
        """
        self._require_numeric("simulate")
        y0 = self.check_state(state0, project=project)
        kwargs = dict(options)
        if steps is not None and "h" not in kwargs:
            kwargs["steps"] = steps  # integrate checks it (a positive integer; 1.5, inf, True refused)
        problem = self.problem()
        if method is None:
            method, defaults = self._choice()
            kwargs = {**defaults, **kwargs}
        res = integrate(problem, self.to_problem(y0), (0.0, float(t_end)), method=method, **kwargs)
        res.system = self
        return res

    def outputs(self) -> dict[str, Output]:
        """The named components every integration of this system records, as callables on the variable z
        of the coadjoint problem (K, ..., n): z itself, velocities "w" and the multiplier ("multiplier", "lambda")."""
        state = self.from_problem

        def multiplier(z: NDArray[np.float64]) -> NDArray[np.float64]:
            return self.multiplier(state(z))

        # "lambda" is the same callable as "multiplier": recorded once (integrators.core.result.finish)
        return {"z": lambda z: z,
                "w": lambda z: self.velocity(state(z)),
                "multiplier": multiplier,
                "lambda": multiplier}

    def to_problem(self, state: ArrayLike) -> NDArray[np.float64]:
        """The variable of the coadjoint problem for a state (identity unless overridden)."""
        return np.asarray(state, dtype=float)

    def from_problem(self, z: ArrayLike) -> NDArray[np.float64]:
        """The state for the variable of the coadjoint problem (identity unless overridden)."""
        return np.asarray(z, dtype=float)

    def check_state(self, state: ArrayLike, project: bool = False) -> NDArray[np.float64]:
        """Validate the shape of a state (constrained systems also check (a, w) = 0)."""
        self._require_numeric("check_state")
        return self._check_last(state, self.state_dim, "state", finite=True)

    # ----------------------------------------------------------------- symbolic side
    def equations(self, symbolic: bool = True) -> Equations:
        """The equations of motion as :class:`servo.lie.symbolic.Equations` (sympy; ``.latex()``).

        ``symbolic=False`` evaluates numeric coefficients to floats.
        """
        eq = self._equations()
        return eq if symbolic else eq.evalf()

    def first_integrals(self) -> list[FirstIntegral]:
        """Named first integrals (callables on states with a sympy ``expr``), see :mod:`servo.lie.first_integrals`."""
        return self._built("integrals", type(self)._first_integrals)

    def reduced(self) -> Reduced:
        """The homogeneous quadratic system on the constraint, see :mod:`servo.lie.reduction`."""
        return self._built("reduced", type(self)._reduced)

    def _equations(self):
        raise NotImplementedError

    def _first_integrals(self):
        raise NotImplementedError

    def _reduced(self):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"

    _repr_markdown_ = system_markdown


def _set_inertia(p, value):
    p["inertia"], p["inverse_inertia"] = value, None


def _set_inverse_inertia(p, value):
    p["inertia"], p["inverse_inertia"] = None, value


class EulerPoincare(LieSystem):
    """Free Euler-Poincare system m' = ad*_w m with w = dH/dm = K m + c.

    .. math::

        \\dot m = \\operatorname{ad}^*_{\\omega} m, \\qquad
        \\omega = \\frac{\\partial H}{\\partial m} = K m + c, \\qquad
        H(m) = \\tfrac12 (m, K m) + (c, m), \\quad K = I^{-1},

    with :math:`(\\operatorname{ad}^*_{\\omega} m)_j = \\sum_{i,k} \\omega_i C_{ij}^{k} m_k`; on so(3)
    with :math:`C = \\varepsilon` this is Euler's :math:`\\dot m = m \\times \\omega`.

    Parameters
    ----------
    algebra : liegroups.LieAlgebra
    inertia : (n, n) or (n,) array_like of numbers or sympy expressions, optional
        Symmetric positive definite I, T = (I w, w)/2, K = I^-1. A vector is a diagonal.
    inverse_inertia : (n, n) array_like, optional (keyword)
        K = d^2H/dm^2 given directly; may be only positive semidefinite (heavy top: diag(J^-1, 0)).
        Give exactly one of ``inertia`` and ``inverse_inertia``.
    linear_term : (n,) array_like, optional (keyword)
        c in H(m) = (m, K m)/2 + (c, m), so w = K m + c (heavy top on se(3)*: c = (0, 0, 0, m g chi)).

    Notes
    -----
    The state is m (..., n). ``H`` is a first integral, and so is every Casimir F(m).
    """

    kind = "free"

    def __init__(self, algebra: LieAlgebra, inertia: Parameter | None = None, *,
                 inverse_inertia: Parameter | None = None, linear_term: ArrayLike | Sequence[Scalar] | None = None,
                 name: str | None = None) -> None:
        super().__init__(algebra, name)
        n = self.n
        if (inertia is None) == (inverse_inertia is None):
            raise ServoError("give exactly one of inertia (positive definite I) and inverse_inertia (K = d2H/dm2)")
        if inertia is not None:
            self.I_sym, self.I = check_inertia(inertia, n)
            self.Iinv_sym = self.I_sym.inv()
            self.Iinv = None if self.I is None else np.linalg.inv(self.I)
        else:
            self.I_sym, self.I = None, None
            self.Iinv_sym, self.Iinv = check_inverse_inertia(inverse_inertia, n)
        if linear_term is None:
            self.c_sym, self.c = sp.zeros(n, 1), np.zeros(n)
        else:
            raw = np.asarray(linear_term, dtype=object).ravel()
            if raw.shape != (n,):
                raise ServoError(f"linear_term must have length {n}, got shape {np.shape(linear_term)}")
            self.c_sym, self.c = check_real_vector(raw, "linear_term")
        self.state_dim = n

    #: ``s.I = ...`` (or ``s.Iinv = ...``, ``s.c = ...``) builds the system again (:mod:`servo.lie.built_once`)
    _SETTABLE = {"I": _set_inertia, "Iinv": _set_inverse_inertia, "c": "linear_term"}

    def _sym_params(self):
        return {"inertia": self.I_sym, "inverse_inertia": self.Iinv_sym if self.I_sym is None else None,
                "linear_term": self.c_sym}

    def _rebuild(self, p):
        c = p["linear_term"]
        lt = None if c is None or all(x == 0 for x in np.asarray(c, dtype=object).ravel()) else c
        if p["inertia"] is not None:
            return EulerPoincare(self.algebra, p["inertia"], linear_term=lt, name=self.name)
        return EulerPoincare(self.algebra, inverse_inertia=p["inverse_inertia"], linear_term=lt, name=self.name)

    @property
    def has_linear_term(self) -> bool:
        """True when H has a non-zero linear term c (then w = K m + c is affine, not linear)."""
        return bool(any(x != 0 for x in self.c_sym))

    # ------------------------------------------------------------------ numerics
    def velocity(self, state: ArrayLike) -> NDArray[np.float64]:
        """w = K m + c (= I^-1 m for a kinetic energy), batched."""
        self._require_numeric("velocity")
        m = self._check_last(state, self.n, "m")
        return m @ self.Iinv.T + self.c

    @polynomial_quantity(2)
    def hamiltonian(self, state: ArrayLike) -> NDArray[np.float64]:
        """H(m) = (m, K m)/2 + (c, m)."""
        m = self._check_last(state, self.n, "m")
        return 0.5 * np.einsum("...i,...i->...", m, m @ self.Iinv.T) + m @ self.c

    energy = hamiltonian

    def rhs(self, state: ArrayLike) -> NDArray[np.float64]:
        """m' = ad*_w m, batched (for so(3): m x w)."""
        m = self._check_last(state, self.n, "m")
        return self.algebra._coad(self.velocity(m), m)

    def multiplier(self, state: ArrayLike) -> NDArray[np.float64]:
        """The free system has no control force: lambda = 0 (shape (...))."""
        return np.zeros(np.shape(state)[:-1])

    def state_from(self, w: ArrayLike | None = None, m: ArrayLike | None = None, lam: None = None) -> NDArray[np.float64]:
        """The state m from velocities (m = I w; needs ``inertia``) or from momenta m."""
        if lam is not None:
            raise ServoError("the free Euler-Poincare system has no multiplier lambda")
        if (w is None) == (m is None):
            raise ServoError("give exactly one of w (velocities) and m (momenta)")
        self._require_numeric("state_from")
        if m is not None:
            return self._check_last(m, self.n, "m", finite=True).copy()
        if self.I is None:
            raise ServoError("state_from(w=...) needs the inertia I (this system was given inverse_inertia, "
                             "which may be singular); pass m= instead")
        if self.has_linear_term:
            raise ServoError("state_from(w=...) with a linear term c: solve w = K m + c yourself and pass m=")
        return self._check_last(w, self.n, "w", finite=True) @ self.I.T

    def problem(self) -> CoadjointProblem:
        """The :class:`integrators.CoadjointProblem` z' = ad*_{w(z)} z with z = m and H as 'energy' (built
        once per system and shared, :meth:`LieSystem.problem`)."""
        return self._built("problem", type(self)._problem)

    def _problem(self):
        self._require_numeric("problem")
        return CoadjointProblem(self.algebra, self.velocity, hamiltonian=self.hamiltonian,
                                velocity_matrix=None if self.has_linear_term else self.Iinv,
                                name=self.name, outputs=self.outputs())

    def _equations(self):
        return free_equations(self)

    def _first_integrals(self):
        return free_integrals(self)

    def _reduced(self):
        return reduce_free(self)


document_default(EulerPoincare, "casimirs")
