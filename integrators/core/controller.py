"""The step-size controller of the adaptive pairs, written once (Hairer, Norsett and Wanner, *Solving
ODEs I*, II.4, as scipy's solve_ivp):

    accepted (err <= 1):  h <- h min(MAX_FACTOR, SAFETY err^(-1/(k+1)))     (MAX_FACTOR when err = 0)
    rejected (err > 1):   h <- h max(MIN_FACTOR, SAFETY err^(-1/(k+1)))     (MIN_FACTOR when err is inf/NaN)

with k the order of the error estimate, and the error norm of an attempt (scipy's RK45 / DOP853):

    one estimate e:          err = sqrt(sum(e_i^2) / n)
    DOP853's two (e5, e3):   err = S5 / sqrt(n (S5 + 0.01 S3)),   S5 = sum(e5_i^2), S3 = sum(e3_i^2)

(Hairer, Norsett and Wanner, *Solving ODEs I*, II.10, the norm of DOP853), with e the estimates divided
by atol + rtol max(|z|, |z1|). The numpy reference loop calls :func:`accepted_factor`,
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


def error_norm(sums, n: int):
    """The error norm from the sums of squares ``sums`` (one per error estimate, arrays over an
    ensemble or floats) of a state of dimension n (module docstring)."""
    if len(sums) == 1:
        return np.sqrt(sums[0] / n)
    s5, s3 = sums
    return s5 / np.sqrt(n * (s5 + DOP853_WEIGHT * s3) + 1e-300)


def error_norm_source(sums, n, sqrt: str = "sqrt") -> str:
    """:func:`error_norm` as one expression of generated source; ``sums``: the names (or expressions
    without side effects) of the sums of squares; ``n``: the dimension, or the name of a variable holding
    it; ``sqrt``: the name of the square root in the text's namespace."""
    dim = n if isinstance(n, str) else repr(float(n))
    if len(sums) == 1:
        return f"{sqrt}(({sums[0]})/{dim})"
    s5, s3 = sums
    return f"({s5})/{sqrt}({dim}*(({s5}) + {DOP853_WEIGHT!r}*({s3})) + 1e-300)"
