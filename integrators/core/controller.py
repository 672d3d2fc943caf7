"""The step-size controller of the adaptive pairs, written once (Hairer, Norsett and Wanner, *Solving
ODEs I*, II.4, as scipy's solve_ivp):

    accepted (err <= 1):  h <- h min(MAX_FACTOR, SAFETY err^(-1/(k+1)))     (MAX_FACTOR when err = 0)
    rejected (err > 1):   h <- h max(MIN_FACTOR, SAFETY err^(-1/(k+1)))     (MIN_FACTOR when err is inf/NaN)

with k the order of the error estimate, and the error norm of an attempt (scipy's RK45 / DOP853):

    one estimate e:          err = sqrt(sum(e_i^2) / n)
    DOP853's two (e5, e3):   err = S5 / sqrt(n (S5 + 0.01 S3)),   S5 = sum(e5_i^2), S3 = sum(e3_i^2)

(Hairer, Norsett and Wanner, *Solving ODEs I*, II.10, the norm of DOP853), with e the estimates divided
by atol + rtol max(|z|, |z1|).

DOP853 in RKMK form (Munthe-Kaas 1999; :func:`error_norm` with ``lie``) extrapolates less:

    err = sqrt(S5 / n) F^gamma,   F = S5 / (S5 + 0.01 S3),   gamma = LIE_DOP853_GAMMA = 1/5

(Hairer's norm is gamma = 1/2: sqrt(S5/n) F^(1/2)). Why: F ~ (10 e5/e3)^2 ~ h^4 scales the
fifth-order estimate down to the size of the eighth-order solution's error, an extrapolation from the
ratio of the third- to the fifth-order errors. It holds for the ambient form on these quadratic fields
(z' = ad*_{w(z)} z has a constant second derivative, so most elementary differentials of order 9
vanish), but the RKMK stage equation theta' = dexp^-1_theta(w(exp(theta) . z)) has all its derivatives:
its order-8 solution's local error relative to Hairer's estimate is 5-15x the ambient form's on so(4)
and so(5) at the steps of rtol 1e-6..1e-10 (geometric means over 12 states of the benchmark's
trajectories; the estimates themselves are right: dexp^-1 summed to round-off, e5 and e3 of the two
forms alike). The 5(4) pairs (one estimate, no extrapolation) need no change: the ratio of their true
local error to the estimate is the same in both forms (0.07-0.36 against 0.16-0.24). With gamma = 1/5,
err ~ h^6.8; the step rule takes k = :data:`LIE_DOP853_ORDER` = 6. Measured with
benchmarks/rkmk_accuracy.py's problems (final error of rkmk853 over rk853_projected's at rtol 1e-6,
1e-8, 1e-10 on so(5), so(4), se(3)): gamma = 1/2: up to 63x; 1/4: up to 3.7x; 1/5: at most 1.9x, with
1.0-1.75x rk853_projected's steps; 1/8: at most 0.6x; 0 (e5 alone): 2-3.5x the steps.

The numpy reference loop calls :func:`accepted_factor`,
:func:`rejected_factor` and :func:`error_norm`, the numpy ensembles :func:`factors`, and every code
writer emits :func:`accepted_source` / :func:`rejected_source` / :func:`error_norm_source`, so the
constants and the norm live here only.
"""

from __future__ import annotations

import numpy as np

SAFETY = 0.9
MIN_FACTOR = 0.2
MAX_FACTOR = 10.0
#: the weight of DOP853's third-order estimate in its error norm
DOP853_WEIGHT = 0.01
#: the exponent of DOP853's damping factor S5 / (S5 + 0.01 S3) in RKMK form (module docstring; Hairer's: 1/2)
LIE_DOP853_GAMMA = 0.2
#: the order k of the step rule for DOP853 in RKMK form (its norm behaves like h^(6 + 4 gamma) = h^6.8)
LIE_DOP853_ORDER = 6


def estimate_order(tab, lie: bool) -> int:
    """The order k of a pair's error norm in the step rule: the tableau's ``err_order``, or
    :data:`LIE_DOP853_ORDER` for a two-estimate (DOP853) pair in RKMK form (``lie``)."""
    return LIE_DOP853_ORDER if lie and len(tab.E) == 2 else tab.err_order


def exponent(order: int) -> float:
    """-1/(k+1) for an error estimate of order k."""
    return -1.0 / (order + 1)


def accepted_factor(err: float, order: int) -> float:
    """The factor of h after an accepted step."""
    return MAX_FACTOR if err == 0.0 else min(MAX_FACTOR, SAFETY * err ** exponent(order))


def rejected_factor(err: float, order: int) -> float:
    """The factor of h after a rejected step (inf or NaN errors shrink it by MIN_FACTOR)."""
    return MIN_FACTOR if not err < 1e300 else max(MIN_FACTOR, SAFETY * err ** exponent(order))


def factors(err, accepted, order):
    """Both rules at once over an ensemble's errors (arrays): the factor of each trajectory's h."""
    with np.errstate(all="ignore"):
        p = SAFETY * err ** exponent(order)
    return np.where(accepted, np.where(err == 0.0, MAX_FACTOR, np.minimum(MAX_FACTOR, p)),
                    np.where(err < 1e300, np.maximum(MIN_FACTOR, p), MIN_FACTOR))


def accepted_source(order, err: str = "err", fac: str = "fac") -> str:
    """The accepted-step rule as one line of generated source (floats, numba); ``order``: the order of the
    error estimate, or the name of a variable holding the exponent -1/(k+1) (a text for every order)."""
    expo = order if isinstance(order, str) else repr(exponent(order))
    return f"{fac} = {MAX_FACTOR!r} if {err} == 0.0 else min({MAX_FACTOR!r}, {SAFETY!r}*{err}**({expo}))"


def rejected_source(order, err: str = "err", fac: str = "fac") -> str:
    """The rejected-step rule as one line of generated source (floats, numba); ``order`` as for
    :func:`accepted_source`."""
    expo = order if isinstance(order, str) else repr(exponent(order))
    return f"{fac} = {MIN_FACTOR!r} if not ({err} < 1e300) else max({MIN_FACTOR!r}, {SAFETY!r}*{err}**({expo}))"


def error_norm(sums, n: int, lie: bool = False):
    """The error norm from the sums of squares ``sums`` (one per error estimate, arrays over an
    ensemble or floats) of a state of dimension n (module docstring); ``lie``: of the RKMK form."""
    if len(sums) == 1:
        return np.sqrt(sums[0] / n)
    s5, s3 = sums
    if lie:
        return np.sqrt(s5 / n) * (s5 / (s5 + DOP853_WEIGHT * s3 + 1e-300)) ** LIE_DOP853_GAMMA
    return s5 / np.sqrt(n * (s5 + DOP853_WEIGHT * s3) + 1e-300)


def error_norm_source(sums, n, sqrt: str = "sqrt", lie: bool = False) -> str:
    """:func:`error_norm` as one expression of generated source; ``sums``: the names (or expressions
    without side effects) of the sums of squares; ``n``: the dimension, or the name of a variable holding
    it; ``sqrt``: the name of the square root in the text's namespace; ``lie``: of the RKMK form."""
    dim = n if isinstance(n, str) else repr(float(n))
    if len(sums) == 1:
        return f"{sqrt}(({sums[0]})/{dim})"
    s5, s3 = sums
    if lie:
        return (f"{sqrt}(({s5})/{dim})*(({s5})/(({s5}) + {DOP853_WEIGHT!r}*({s3}) + 1e-300))"
                f"**{LIE_DOP853_GAMMA!r}")
    return f"({s5})/{sqrt}({dim}*(({s5}) + {DOP853_WEIGHT!r}*({s3})) + 1e-300)"
