"""The coefficients of a periodic field quadratic in the state as trigonometric polynomials of t.

A time-periodic field F(t + T, y) = F(t, y) that is quadratic in the state at every t
(:mod:`integrators.geometry.timed_quadratic`: e(t) + L(t) y + q(t)[y, y]) has T-periodic coefficients.
The adaptive pairs take steps at times known only as they go, so a table at the stage times of a fixed
step (:mod:`integrators.codegen.timed_source`) does not serve them; a trigonometric interpolant does:
with N equispaced samples over one period (the coefficients read off the problem's own field, no
symbolic work), the discrete Fourier transform gives

    c(t) = a_0 + sum_{k=1}^{K} (a_k cos k w t + b_k sin k w t),   w = 2 pi / T,   K < N / 2,

which interpolates c at the samples and converges geometrically in N for an analytic periodic c
(Trefethen 2000, *Spectral Methods in MATLAB*, ch. 3; Boyd 2001, *Chebyshev and Fourier Spectral
Methods*, 2.12: the error is bounded by the sum of the discarded Fourier coefficients). N doubles from 8
until the interpolant agrees with the coefficients read off the field at the N midpoints between the
samples and at random times (points where the interpolant is not forced to agree) to :data:`RTOL`
relative to the largest coefficient; a field whose coefficients are not resolved by :data:`NMAX`
samples (a discontinuous forcing, a coefficient singular nearby in the complex plane) has no fit (None:
the caller runs the numpy reference loop, which evaluates the field itself).
"""

from __future__ import annotations

import numpy as np

#: the interpolant's largest error at the check times, relative to max |coefficient| (+ 1)
RTOL = 1e-13
#: the most samples per period tried
NMAX = 512


class FourierFit:
    """The fit of :func:`fit`: ``omega`` = 2 pi / T; ``a0`` (m,), ``a`` and ``b`` (K, m) the cosine and sine
    amplitudes of the m = n nf coefficients (in the table order of
    :class:`integrators.geometry.timed_quadratic.TimedQuadratic`); ``err`` the largest error seen at the
    check times, ``samples`` N."""

    def __init__(self, omega, a0, a, b, err, samples, period):
        self.omega, self.a0, self.a, self.b = float(omega), a0, a, b
        self.err, self.samples, self.period = float(err), int(samples), float(period)
        self.K = a.shape[0]

    def evaluate(self, times):
        """The coefficients at ``times``: (len(times), m)."""
        th = self.omega * np.asarray(times, dtype=float).ravel()
        k = np.arange(1, self.K + 1)
        return self.a0 + np.cos(np.outer(th, k)) @ self.a + np.sin(np.outer(th, k)) @ self.b


def fit(tq, period, t0=0.0):
    """The :class:`FourierFit` of the coefficients of ``tq`` (a TimedQuadratic) over one ``period``, or None
    when NMAX samples do not resolve them to RTOL (module docstring)."""
    T = float(period)
    omega = 2.0 * np.pi / T
    rng = np.random.default_rng(20261127)
    extra = T * rng.random(7)
    N = 8
    while N <= NMAX:
        ts = T * np.arange(N) / N
        with np.errstate(all="ignore"):
            C = tq.coefficients(ts).reshape(N, -1)
        if not np.all(np.isfinite(C)):
            return None
        F = np.fft.rfft(C, axis=0) / N
        K = N // 2 - 1          # the Nyquist mode (cos only, ambiguous) is dropped: it must be negligible
        a0 = F[0].real
        a = 2.0 * F[1:K + 1].real
        b = -2.0 * F[1:K + 1].imag
        scale = 1.0 + float(np.max(np.abs(C)))
        # trailing modes whose amplitudes sum to less than RTOL / 10 (an error bound of the cut) are not written
        amp = np.max(np.abs(a) + np.abs(b), axis=1) if K else np.zeros(0)
        tail = np.cumsum(amp[::-1])[::-1]          # tail[k]: the amplitudes of modes k+1 .. K
        Kk = int(np.count_nonzero(tail > 0.1 * RTOL * scale))
        a0, a, b = (np.where(np.abs(x) > 1e-17 * scale, x, 0.0) for x in (a0, a[:Kk], b[:Kk]))   # round-off
        cand = FourierFit(omega, a0, a, b, 0.0, N, T)
        tc = np.concatenate([T * (np.arange(N) + 0.5) / N, t0 + extra])
        with np.errstate(all="ignore"):
            want = tq.coefficients(tc).reshape(len(tc), -1)
        err = float(np.max(np.abs(cand.evaluate(tc) - want)))
        if np.isfinite(err) and err <= RTOL * scale:
            cand.err = err
            return cand
        N *= 2
    return None


def coefficients_function(fit):
    """coef(t) -> the tuple of coefficients, evaluated with numpy (for the Python-float loops)."""
    k = np.arange(1, fit.K + 1, dtype=float) * fit.omega
    a0, a, b = fit.a0, fit.a, fit.b
    if fit.K == 0:
        const = tuple(a0.tolist())
        return lambda t: const
    cos, sin = np.cos, np.sin

    def coef(t):
        th = k * t
        return tuple((a0 + cos(th) @ a + sin(th) @ b).tolist())

    return coef
