"""The six claims of the slide "Общие свойства приведенных систем" (Kozlov's lectures), as checks.

For x' = v(x), v homogeneous quadratic in x in R^p:
1. if t -> x(t) is a solution, so is t -> -x(-t);
2. if v(x) != 0 for x != 0, there is an invariant line x = s xi with s' = c s^2, c != 0;
3. first kind with a, b collinear (nonholonomic): x = 0 is stable and there is a line of equilibria
   (on the reduced system the hypothesis shows as a positive-definite quadratic first integral, the
   kinetic energy on the constraint; that is the form checked here);
4. if v(x) != 0 for x != 0 and the number of invariant lines (with multiplicities) is finite, it is
   odd and at most 2^p - 1;
5. p = 2 with a line of equilibria a x1 + b x2 = 0: d tau = (a x1 + b x2) dt makes the system linear;
6. p = 2 with a non-degenerate quadratic first integral: there is a line of equilibria.

Each function returns a ClaimCheck: whether the hypothesis holds for the given system, whether the
conclusion holds (checked by a method independent of the hypothesis test where possible), details.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import solve_ivp
from scipy.optimize import minimize

from .integrals import min_speed_on_sphere, quadratic_first_integrals, time_change_to_linear
from .line_types import InvariantLines
from .protocol import QuadraticField
from ..errors import NotLinearizableError

__all__ = ["ClaimCheck", "claim1_time_reversal", "claim2_escaping_line", "claim3_nonholonomic",
           "claim4_parity", "claim5_time_change", "claim6_integral_gives_equilibria",
           "check_all_claims", "has_real_equilibrium"]


def _expm(A):
    """Matrix exponential by scaling and squaring with an 18-term Taylor series (small matrices)."""
    A = np.asarray(A, dtype=float)
    k = max(0, int(np.ceil(np.log2(max(np.abs(A).sum(axis=1).max(), 1e-300)))) + 1)
    B = A / 2.0 ** k
    E, term = np.eye(len(A)), np.eye(len(A))
    for n in range(1, 19):
        term = term @ B / n
        E = E + term
    for _ in range(k):
        E = E @ E
    return E


@dataclass
class ClaimCheck:
    """Outcome of one claim on one system. holds = (not hypothesis) or conclusion."""

    claim: int
    hypothesis: bool
    conclusion: bool | None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        return (not self.hypothesis) or bool(self.conclusion)


def _scale(q):
    return max(float(np.abs(q.Q).max()), 1e-300)


def has_real_equilibrium(q: QuadraticField, rtol: float = 1e-7) -> tuple[bool, float]:
    """(bool, min |v| on the unit sphere / max|Q|): is there a real x != 0 with v(x) = 0?"""
    m, _ = min_speed_on_sphere(q)
    return m <= rtol * _scale(q), m / _scale(q)


def _integrate(q, x0, t_end, rtol=1e-12):
    sol = solve_ivp(lambda t, x: q.v(x), (0.0, t_end), x0, method="DOP853", rtol=rtol,
                    atol=1e-14, dense_output=True)
    if sol.status != 0:
        raise ValueError(f"integration to t = {t_end} failed ({sol.message}); shorten t_end")
    return sol


def claim1_time_reversal(q: QuadraticField, x0: ArrayLike, t_end: float = 0.5) -> ClaimCheck:
    """Claim 1: y(t) = -x(-t) solves y' = v(y). Integrates x backwards from x0 and y forwards from
    -x0 (two independent integrations) and compares on [0, t_end]; conclusion if the relative
    deviation is below 1e-7. Also checks the identity v(-x) = v(x) behind it."""
    x0 = np.asarray(x0, dtype=float)
    xs = _integrate(q, x0, -t_end)
    ys = solve_ivp(lambda t, x: q.v(x), (0.0, t_end), -x0, method="Radau", rtol=1e-12,
                   atol=1e-14, dense_output=True)          # a different method for y
    t = np.linspace(0, t_end, 21)
    dev = np.abs(ys.sol(t) + xs.sol(-t)).max() / max(np.abs(ys.sol(t)).max(), 1e-300)
    even = np.abs(q.v(-x0) - q.v(x0)).max()
    return ClaimCheck(1, True, bool(dev < 1e-7 and even == 0), {"deviation": dev, "v(-x)-v(x)": even})


def claim2_escaping_line(q: QuadraticField, lines: InvariantLines | None = None, rtol: float = 1e-7
                         ) -> ClaimCheck:
    """Claim 2: v(x) != 0 for real x != 0 implies a real invariant line with c != 0.

    Hypothesis by minimising |v| on the unit sphere; conclusion from the homotopy's real lines,
    and on that line the blow-up s(t) = s0 / (1 - c s0 t) is confirmed by integration."""
    has_eq, m = has_real_equilibrium(q, rtol)
    lines = q.invariant_lines() if lines is None else lines
    esc = [L for L in lines.real if not L.is_equilibrium_line]
    ok = bool(esc)
    details = {"min_speed": m, "escaping_lines": len(esc)}
    if esc:
        L = esc[0]
        # half-way to blow-up, but short enough that round-off off the line (which may be
        # unstable on the sphere) cannot grow by more than ~e
        t = min(0.5 / L.c, 0.5 / (q.p * _scale(q)))
        sol = _integrate(q, L.direction.copy(), t)
        details["line_solution_error"] = float(np.abs(sol.y[:, -1] - L.solution(1.0, t)).max())
        ok = details["line_solution_error"] < 1e-8 * np.abs(L.solution(1.0, t)).max()
    return ClaimCheck(2, not has_eq, ok, details)


def _definite_integral(q, S=None):
    """A positive-definite quadratic first integral (given S checked, else searched in the span)."""
    if S is not None:
        S = np.asarray(S, dtype=float)
        x = np.random.default_rng(0).normal(size=(20, q.p))
        dH = np.abs(np.einsum("ni,ij,nj->n", x, S, q.v(x))).max()
        if dH > 1e-9 * np.abs(S).max() * _scale(q) * np.abs(x).max() ** 3:
            raise ValueError(f"the given S is not a first integral: |x^T S v(x)| = {dH:.3g}")
        w = np.linalg.eigvalsh(S)
        return (S if w.min() > 0 else -S if w.max() < 0 else None)
    basis = quadratic_first_integrals(q)
    if not basis:
        return None
    B = np.array(basis)

    def f(c):
        return -np.linalg.eigvalsh(np.tensordot(c / np.linalg.norm(c), B, 1))[0]
    best = None
    for c0 in np.vstack([np.eye(len(B)), -np.eye(len(B)),
                         np.random.default_rng(1).normal(size=(8, len(B)))]):
        r = minimize(f, c0, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14})
        if best is None or r.fun < best.fun:
            best = r
    if best.fun < -1e-9:
        return np.tensordot(best.x / np.linalg.norm(best.x), B, 1)
    return None


def claim3_nonholonomic(q: QuadraticField, energy: ArrayLike | None = None, lines: InvariantLines | None = None,
                        trials: int = 8, t_end: float = 5.0, seed: int = 0) -> ClaimCheck:
    """Claim 3: with a positive-definite quadratic first integral H = x^T S x (the energy of a
    nonholonomic reduced system), x = 0 is stable and there is a real line of equilibria.

    Stability is checked by integration: |x(t)| <= sqrt(cond S) |x0| for random small x0 (the
    Lyapunov bound); the line of equilibria both by min |v| on the sphere and by the homotopy."""
    S = _definite_integral(q, energy)
    if S is None:
        return ClaimCheck(3, False, None, {"reason": "no positive-definite quadratic integral"})
    w = np.linalg.eigvalsh(S)
    bound = np.sqrt(w.max() / w.min())
    rng = np.random.default_rng(seed)
    ratio = 0.0
    for x0 in rng.normal(size=(trials, q.p)) * 1e-2:
        sol = _integrate(q, x0, t_end, rtol=1e-10)
        ratio = max(ratio, np.linalg.norm(sol.y, axis=0).max() / np.linalg.norm(x0))
    has_eq, m = has_real_equilibrium(q)
    lines = q.invariant_lines() if lines is None else lines
    hom_eq = any(L.is_equilibrium_line for L in lines.real) or any(
        f.is_equilibria for f in lines.positive_dimensional)
    stable = ratio <= bound * (1 + 1e-6)
    return ClaimCheck(3, True, bool(stable and has_eq),
                      {"growth": ratio, "lyapunov_bound": bound, "min_speed": m,
                       "homotopy_equilibrium_line": hom_eq, "energy": S})


def claim4_parity(q: QuadraticField, lines: InvariantLines | None = None, rtol: float = 1e-7) -> ClaimCheck:
    """Claim 4: v(x) != 0 for real x != 0 and finitely many lines => the number of real lines with
    multiplicity is odd and <= 2^p - 1. Hypothesis: min |v| on the sphere and a certified, finite
    homotopy result."""
    has_eq, m = has_real_equilibrium(q, rtol)
    lines = q.invariant_lines() if lines is None else lines
    hyp = (not has_eq) and lines.is_finite and lines.certified
    n = lines.real_count
    return ClaimCheck(4, bool(hyp), bool(n % 2 == 1 and n <= 2 ** q.p - 1),
                      {"real_count": n, "min_speed": m, "certified": lines.certified})


def claim5_time_change(q: QuadraticField, x0: ArrayLike, t_end: float = 1.0, l: ArrayLike | None = None
                       ) -> ClaimCheck:
    """Claim 5: p = 2 with a real line of equilibria l(x) = 0: v(x) = l(x) A x, so along every
    solution x(t) = expm(A tau(t)) x0 with tau' = l(x). Checked by integrating (x, tau) together."""
    has_eq, m = has_real_equilibrium(q)
    if q.p != 2 or not has_eq:
        return ClaimCheck(5, False, None, {"min_speed": m})
    try:
        l, A = time_change_to_linear(q, l)
    except NotLinearizableError as exc:
        return ClaimCheck(5, True, False, {"error": str(exc)})
    x0 = np.asarray(x0, dtype=float)
    sol = solve_ivp(lambda t, y: np.append(q.v(y[:2]), l @ y[:2]), (0, t_end), np.append(x0, 0.0),
                    method="DOP853", rtol=1e-12, atol=1e-14, dense_output=True)
    t = np.linspace(0, t_end, 11)
    Y = sol.sol(t)
    lin = np.array([_expm(A * tau) @ x0 for tau in Y[2]]).T
    dev = np.abs(lin - Y[:2]).max() / max(np.abs(Y[:2]).max(), 1e-300)
    return ClaimCheck(5, True, bool(dev < 1e-8), {"l": l, "A": A, "deviation": dev})


def claim6_integral_gives_equilibria(q: QuadraticField, lines: InvariantLines | None = None) -> ClaimCheck:
    """Claim 6: p = 2 with a non-degenerate quadratic integral x^T S x (det S != 0) has a real line
    of equilibria. Hypothesis from the null space of quadratic integrals; conclusion from min |v|
    on the circle, cross-checked with the homotopy's equilibrium lines."""
    if q.p != 2:
        return ClaimCheck(6, False, None, {"reason": "p != 2"})
    basis = quadratic_first_integrals(q)
    rng = np.random.default_rng(0)
    dets = [abs(np.linalg.det(np.tensordot(c, np.array(basis), 1)))
            for c in rng.normal(size=(6, len(basis)))] if basis else [0.0]
    hyp = max(dets) > 1e-8
    has_eq, m = has_real_equilibrium(q)
    lines = q.invariant_lines() if lines is None else lines
    hom_eq = any(L.is_equilibrium_line for L in lines.real) or any(
        f.is_equilibria for f in lines.positive_dimensional)
    return ClaimCheck(6, bool(hyp), bool(has_eq),
                      {"integrals": len(basis), "min_speed": m, "homotopy_equilibrium_line": hom_eq})


def check_all_claims(q: QuadraticField, x0: ArrayLike | None = None, energy: ArrayLike | None = None
                     ) -> dict[int, ClaimCheck]:
    """Run every claim that applies to q (1, 2, 4 always; 3 if a definite integral exists; 5, 6 for
    p = 2) with one shared invariant-line computation. Returns {claim number: ClaimCheck}."""
    lines = q.invariant_lines()
    x0 = np.full(q.p, 0.1) if x0 is None else np.asarray(x0, dtype=float)
    out = {1: claim1_time_reversal(q, x0, t_end=0.1 / max(_scale(q) * np.abs(x0).sum(), 1e-300)),
           2: claim2_escaping_line(q, lines), 3: claim3_nonholonomic(q, energy, lines),
           4: claim4_parity(q, lines)}
    if q.p == 2:
        out[5] = claim5_time_change(q, x0, t_end=0.1 / max(_scale(q) * np.abs(x0).sum(), 1e-300))
        out[6] = claim6_integral_gives_equilibria(q, lines)
    return out
