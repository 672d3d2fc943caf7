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

(Hairer's norm is gamma = 1/2: sqrt(S5/n) F^(1/2)). The exponent is CALIBRATED, not derived, as Hairer's
weight 0.01 is: F ~ (10 e5/e3)^2 ~ h^4 scales the fifth-order estimate down to the size of the eighth-order
solution's error, an extrapolation from the ratio of the third- to the fifth-order errors whose strength no
expansion fixes. Why RKMK needs a weaker one: on the free Euler-Poincare fields Hairer's norm overestimates
the ambient pair's order-8 local error 10-15x (true / estimate 0.066 on so(4), 0.10 on se(3) at h = 0.2,
geometric means over 8 states; 0.08, 0.19 with a cubic velocity at h = 0.1), which is where
rk853_projected's accuracy at a given rtol comes from, while in RKMK form (theta' =
dexp^-1_theta(w(exp(theta) . z)), all derivatives) it is 1.0 on so(4) (15x the ambient ratio), 1.3 with the
cubic velocity, 0.14 and 0.40 on se(3): the estimates themselves are right (dexp^-1 summed to round-off, e5
and e3 of the two forms alike). An estimate faithful to rkmk853's local error therefore lands where Hairer's
does (1.4-63x rk853_projected's final error at the same rtol); matching rk853_projected at equal rtol needs
a deliberately pessimistic one. Tried (benchmarks/rkmk_accuracy.py; final error of rkmk853 over
rk853_projected's at rtol 1e-6, 1e-8, 1e-10, steps over its steps): gamma = 1/2: up to 63x; 1/4: up to 3.7x;
1/5: at most 1.8x in 1.0-1.8x the steps; 1/8: at most 0.6x; 0 (e5 alone, the one choice with an asymptotic
argument: it bounds the fifth-order solution's error and so the eighth's as h -> 0, step rule k = 5 or 6):
0.001-0.12x in 1.2-2.9x the steps; the defect of the continuous extension at the step's middle, h
theta'(1/2) - h F(theta(1/2)) mapped by ad*, as the estimate (it bounds the error of the grid output; k = 7,
16 evaluations a step instead of 12; benchmark only): up to 5.8x in 1.05-1.67x rk853_projected's evaluations
(1.00-1.37x at matched error). At matched error all of them cost the same within 10% (function evaluations
at equal largest error over the run, 1e-6..1e-10, on so(4), se(3) and random bases of so(4) and so(5): gamma
= 1/5 0.79-1.17x rk853_projected's, Hairer's 0.82-1.26x, e5 alone 0.75-1.25x): the exponent moves where a
given rtol lands on one work-precision curve, it does not change the curve. Calibrated on so(5), so(4),
se(3) and random bases of so(5) and so(4) (|z0| = 3, the benchmark's inertia); checked on systems it did not
use (tests/integrators/test_rkmk_accuracy.py: sl(3), Bianchi types, random solvable algebras; the drawn
systems of benchmarks/drawn_systems.py, free and servo of the second kind, in benchmarks/rkmk_accuracy.py:
at most 1.65x on 83 of 84 runs, Hairer's up to 48x; the other ends at 0.19 rtol against rk853's 0.006 rtol,
rk853's last step cut to 0.73 to land on t1 where rkmk853's last step is 2.5). The 5(4) pairs (one estimate,
no extrapolation) keep the plain RMS: their true local error over the estimate is alike in both forms
(0.07-0.36 against 0.16-0.24). With gamma = 1/5, err ~ h^6.8; the step rule takes k =
:data:`LIE_DOP853_ORDER` = 6.

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
#: the exponent of DOP853's damping factor S5 / (S5 + 0.01 S3) in RKMK form; calibrated (module docstring; Hairer's: 1/2)
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
