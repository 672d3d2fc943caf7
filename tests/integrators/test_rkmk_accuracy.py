"""The adaptive RKMK pairs deliver the accuracy asked for (issue 24): at the same rtol, rkmk853's final error is
within 3x of rk853_projected's on so(4), se(3), so(5) and so(4) in a random basis (the systems its error norm's
exponent was calibrated on, :mod:`integrators.core.controller`) and on a seeded draw of algebras the calibration
did not use (sl(3), Bianchi types and random solvable algebras, in random bases); Hairer's norm misses the bar
on both (negative controls); the reason the error norm of DOP853 in RKMK form extrapolates less than Hairer's
holds. The 5(4) pairs rkmk45 and rkmk_tsit5 are measured against the projected pair of their own tableau (the
same order), not against rk853_projected.

Expected values are independent of the code under test: the final states against solve_ivp's DOP853 at rtol
1e-13 (its error, ~1e-12 here, is below 1% of the errors compared); the local errors against the exact flow of
one step by the same tight solve_ivp; the error norm against its formula written here.
"""

import contextlib
import dataclasses
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from integrators import METHODS, CoadjointProblem, integrate
from integrators.methods.registry import applies
from integrators.core import controller
from integrators.reference.pair import ReferencePair
from liegroups import LieAlgebra, named

#: the issue's target: rkmk853's final error at most this many times rk853_projected's at the same rtol
TARGET = 3.0


def _algebra(name):
    if name == "so(4) random basis":
        g = named.so4()
        return g.change_basis(np.eye(6) + 0.3 * np.random.default_rng(5).standard_normal((6, 6)))
    return {"so(4)": named.so4, "se(3)": named.se3, "so(5)": lambda: named.so(5)}[name]()


def _problem(g, seed=1):
    """z' = ad*_{W z} z, W the inverse of a random SPD inertia B B^T / n + I, |z0| = 3 (as
    benchmarks/rkmk_accuracy.py), and the exact solution on [0, 10] by a tight DOP853."""
    rng = np.random.default_rng(seed)
    n = g.dim
    B = rng.standard_normal((n, n))
    W = np.linalg.inv(B @ B.T / n + np.eye(n))
    z0 = rng.standard_normal(n)
    z0 *= 3.0 / np.linalg.norm(z0)
    P = CoadjointProblem(g, lambda z: z @ W.T, velocity_matrix=W, record_casimirs=False)
    sol = solve_ivp(lambda t, z: P.rhs(t, z), (0.0, 10.0), z0, method="DOP853", rtol=1e-13, atol=1e-15,
                    dense_output=True)
    return P, z0, sol


def _final_error(P, z0, sol, method, rtol, **kw):
    r = integrate(P, z0, (0.0, 10.0), method=method, rtol=rtol, atol=rtol / 100, backend="numpy", **kw)
    assert r.status == 0
    return np.linalg.norm(r.y[-1] - sol.sol(10.0)) / np.linalg.norm(z0), len(r.t) - 1


@pytest.mark.parametrize("name", ["so(4)", "se(3)", "so(5)", "so(4) random basis"])
def test_rkmk853_final_error_within_3x_of_rk853_projected(name):
    # before the RKMK norm (Hairer's norm in both forms) these were 57x (so(4)), 4.5x (se(3)), 14x (so(5))
    P, z0, sol = _problem(_algebra(name))
    rtol = 1e-8
    e_proj, n_proj = _final_error(P, z0, sol, "rk853_projected", rtol)
    e_mk, n_mk = _final_error(P, z0, sol, "rkmk853", rtol)
    assert e_mk <= TARGET * e_proj, (name, e_mk / rtol, e_proj / rtol)
    # and not by taking many more steps than rk853_projected (measured: 1.1-1.6x here; the error ratios 1.8, 0.24, 0.56, 0.08)
    assert n_mk <= 2.0 * n_proj, (name, n_mk, n_proj)


@contextlib.contextmanager
def _hairers_norm():
    """Hairer's DOP853 norm and step rule in RKMK form too (gamma 1/2, k = 7), as before the RKMK norm."""
    saved = controller.LIE_DOP853_GAMMA, controller.LIE_DOP853_ORDER
    controller.LIE_DOP853_GAMMA, controller.LIE_DOP853_ORDER = 0.5, 7
    try:
        yield
    finally:
        controller.LIE_DOP853_GAMMA, controller.LIE_DOP853_ORDER = saved


def test_hairers_norm_in_rkmk_form_misses_the_target_on_so4():
    # the same run with Hairer's norm (the RKMK error estimate unchanged otherwise): the bound above fails,
    # so the test above tests the norm (numpy reference path, fast=False: the norm read at run time)
    P, z0, sol = _problem(_algebra("so(4)"))
    rtol = 1e-8
    e_proj, _ = _final_error(P, z0, sol, "rk853_projected", rtol, fast=False)
    with _hairers_norm():
        e_old, _ = _final_error(P, z0, sol, "rkmk853", rtol, fast=False)
    e_new, _ = _final_error(P, z0, sol, "rkmk853", rtol, fast=False)
    assert e_old > 10.0 * e_proj and e_new <= TARGET * e_proj


def _local(P, sol, method, h, states):
    """Geometric means over ``states`` of (true local error of the propagated solution) / (error norm), the
    true error of one step of size h from the exact solution's state, measured in the norm's own scale."""
    m = METHODS[method]
    ref = ReferencePair(P, m.tableau, m.lie, m.terms)
    rtol, atol = 1e-8, 1e-10
    out = []
    for t in states:
        z = sol.sol(t)
        exact = solve_ivp(lambda s, y: P.rhs(s, y), (0.0, h), z, method="DOP853", rtol=1e-13, atol=1e-16).y[:, -1]
        Ks, _, _, z1, _, Kl = ref.stages(t, z, h, ref.first(t, z))
        sc = atol + rtol * np.maximum(np.abs(z), np.abs(z1))
        true = np.sqrt(np.mean(((z1 - exact) / sc) ** 2))
        out.append(true / ref.error(z, z1, Ks, Kl, rtol, atol))
    return math.exp(np.mean(np.log(out)))


def test_the_reason_rkmk853_needs_its_own_norm():
    # so(4) at h = 0.2 (the steps of rtol ~1e-8): true local error over the norm, at 8 states of the orbit
    P, z0, sol = _problem(_algebra("so(4)"))
    states = np.linspace(0.5, 9.0, 8)
    h = 0.2
    rk = _local(P, sol, "rk853", h, states)
    with _hairers_norm():
        hairer = _local(P, sol, "rkmk853", h, states)
    lie = _local(P, sol, "rkmk853", h, states)
    # Hairer's extrapolation e5 (10 e5 / e3) is > 5x less conservative in RKMK form (measured: 15x) ...
    assert hairer > 5.0 * rk, (hairer, rk)
    # ... while the 5(4) pair's plain RMS of one estimate is as reliable in both forms (measured 0.073 / 0.059)
    assert _local(P, sol, "rkmk45", 0.1, states) < 3.0 * _local(P, sol, "rk45", 0.1, states)
    # the RKMK norm brings the ratio back to at most the ambient form's (measured 0.021 / 0.066)
    assert lie <= rk, (lie, rk)


def test_the_rkmk_norm_is_its_formula_in_every_form():
    # err = sqrt(S5/n) (S5 / (S5 + 0.01 S3))^(1/5), written here; the generated text evaluates the same
    rng = np.random.default_rng(4)
    n = 6
    for _ in range(20):
        s5, s3 = 10.0 ** rng.uniform(-10, 2), 10.0 ** rng.uniform(-10, 2)
        expected = math.sqrt(s5 / n) * (s5 / (s5 + 0.01 * s3)) ** 0.2
        np.testing.assert_allclose(controller.error_norm([s5, s3], n, lie=True), expected, rtol=1e-14)
        env = {"sqrt": math.sqrt, "S5": s5, "S3": s3, "dim": n}
        np.testing.assert_allclose(eval(controller.error_norm_source(["S5", "S3"], n, lie=True), env), expected,
                                   rtol=1e-14)
        np.testing.assert_allclose(eval(controller.error_norm_source(["S5", "S3"], "dim", lie=True), env),
                                   expected, rtol=1e-14)
    # both zero: zero (an exact step is accepted, not NaN); the one-estimate norm is the same in both forms
    assert controller.error_norm([0.0, 0.0], n, lie=True) == 0.0
    assert controller.error_norm([4.0], 4, lie=True) == controller.error_norm([4.0], 4) == 1.0
    # the step rule's order: 6 for DOP853 in RKMK form (err ~ h^6.8), the tableau's otherwise
    assert controller.estimate_order(METHODS["rkmk853"].tableau, True) == 6
    assert controller.estimate_order(METHODS["rk853"].tableau, False) == 7
    assert controller.estimate_order(METHODS["rkmk45"].tableau, True) == 4


# ---------------------------------------------------------------------------------------------------------------
# algebras the calibration of LIE_DOP853_GAMMA did not use (it used so(5), so(4), se(3) and random bases of so(5)
# and so(4)): a seeded draw, as benchmarks/drawn_systems.py draws its algebras


def _random_basis(g, rng):
    """g in the basis Q diag(s) (Q a random rotation, s in [0.5, 2])."""
    n = g.dim
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    return g.change_basis(Q * rng.uniform(0.5, 2.0, n)[None, :])


def _triangular(rng, k, r):
    """n(k) (strictly upper triangular k x k) plus r random diagonal matrices: a solvable algebra."""
    mats = []
    for i in range(k):
        for j in range(i + 1, k):
            X = np.zeros((k, k))
            X[i, j] = 1.0
            mats.append(X)
    mats += [np.diag(rng.uniform(-1.0, 1.0, k)) for _ in range(r)]
    return LieAlgebra.from_matrices(mats, name=f"n({k})+{r} diag")


def _unseen():
    """The draw (seed 24): sl(3) in a random basis, three Bianchi types drawn from II..IX (VI_a, VII_a with a drawn
    a) in random bases, n(4) + 2 and n(3) + 1 random diagonal matrices in random bases; label -> algebra."""
    rng = np.random.default_rng(24)
    out = {"sl(3)": named.sl(3), "sl(3) random basis": _random_basis(named.sl(3), rng)}
    for _ in range(3):
        t = str(rng.choice(["II", "III", "IV", "V", "VI", "VI0", "VII", "VII0", "VIII", "IX"]))
        a = {"VI": 2.0 + rng.uniform(), "VII": rng.uniform(0.1, 2.0)}.get(t)
        out[f"Bianchi {t}" + ("" if a is None else f"_{a:.2f}") + " random basis"] = _random_basis(named.bianchi(t, a=a), rng)
    out["n(4)+2 diag random basis"] = _random_basis(_triangular(rng, 4, 2), rng)
    out["n(3)+1 diag random basis"] = _random_basis(_triangular(rng, 3, 1), rng)
    return out


_UNSEEN = _unseen()


def _errors(P, z0, sol, method, rtol, **kw):
    """(final error, largest error at the accepted steps), relative to |z0| and in units of rtol."""
    r = integrate(P, z0, (0.0, 10.0), method=method, rtol=rtol, atol=rtol / 100, backend="numpy", **kw)
    assert r.status == 0
    e = np.linalg.norm(r.y - sol.sol(r.t).T, axis=-1) / np.linalg.norm(z0) / rtol
    return e[-1], np.max(e), len(r.t) - 1


def _comparator(g):
    # rk853_projected where the algebra has a polynomial Casimir to project onto, else rk853 (the same pair, with
    # nothing to project: the Bianchi types of class B and the solvable ones here)
    return "rk853_projected" if applies(METHODS["rk853_projected"], CoadjointProblem(g, lambda z: z)) else "rk853"


def test_the_unseen_draw_is_what_it_says():
    # labels as drawn; the class-B Bianchi types and the solvable ones have no Casimir, sl(3) has two
    assert sorted(_UNSEEN) == sorted(["sl(3)", "sl(3) random basis", "Bianchi VII_0.54 random basis",
                                      "Bianchi IV random basis", "Bianchi VII_0.64 random basis",
                                      "n(4)+2 diag random basis", "n(3)+1 diag random basis"])
    assert _UNSEEN["n(4)+2 diag random basis"].is_solvable() and not _UNSEEN["sl(3)"].is_solvable()
    assert [_comparator(g) for g in _UNSEEN.values()].count("rk853_projected") == 2


@pytest.mark.parametrize("name", sorted(_UNSEEN))
def test_rkmk853_within_3x_on_algebras_the_calibration_did_not_use(name):
    # |z0| = 3 as the calibration's systems; at rtol 1e-6, 1e-8, 1e-10 (measured worst: 0.5x final, 0.55x largest
    # over the run; with Hairer's norm up to 5.5x). The largest error over the run is the bar; the final error too,
    # unless both are far below what was asked (the class-B Bianchi flows contract: at rtol 1e-8 rk853 ends at
    # 0.004 rtol, and the ratio of two such errors is noise), hence the floor of rtol / 10.
    g = _UNSEEN[name]
    P, z0, sol = _problem(g)
    cmp = _comparator(g)
    for rtol in (1e-6, 1e-8, 1e-10):
        f_c, m_c, n_c = _errors(P, z0, sol, cmp, rtol)
        f_mk, m_mk, n_mk = _errors(P, z0, sol, "rkmk853", rtol)
        assert m_mk <= TARGET * m_c, (name, rtol, m_mk, m_c)
        assert f_mk <= max(TARGET * f_c, 0.1), (name, rtol, f_mk, f_c)
        assert n_mk <= 2.0 * n_c, (name, rtol, n_mk, n_c)   # measured 0.7-1.9x


def test_hairers_norm_misses_the_target_on_an_unseen_algebra():
    # negative control of the test above: Hairer's norm in RKMK form on the solvable n(4)+2 diag at rtol 1e-8
    # (measured 5.5x final, 4.2x largest over the run)
    P, z0, sol = _problem(_UNSEEN["n(4)+2 diag random basis"])
    f_c, m_c, _ = _errors(P, z0, sol, "rk853", 1e-8, fast=False)
    with _hairers_norm():
        f_h, m_h, _ = _errors(P, z0, sol, "rkmk853", 1e-8, fast=False)
    assert m_h > TARGET * m_c and f_h > TARGET * f_c, (f_h, f_c, m_h, m_c)


# ---------------------------------------------------------------------------------------------------------------
# the 5(4) pairs: their bar is the projected pair of their own tableau (the same order); against rk853_projected
# they end 2-24x (rkmk45) and 1-4x (rkmk_tsit5) higher at the same rtol because they are of order 5, not 8


@pytest.mark.parametrize("name", ["so(4)", "se(3)"])
@pytest.mark.parametrize("mk, twin", [("rkmk45", "rk45_projected"), ("rkmk_tsit5", "tsit5_projected")])
def test_the_5_4_pairs_match_their_projected_twin_at_equal_work(name, mk, twin):
    # an order-5 pair's global error goes as N^-5 in its number of steps N, so err N^5 compares two such pairs at
    # equal steps. Measured at rtol 1e-8 (largest error over the run): so(4) 1.3x (rkmk_tsit5) and 1.3x (rkmk45),
    # se(3) 1.4x and 0.7x; at equal rtol so(4) 1.1x and 1.5x, se(3) 4.4x and 2.8x with 0.80x and 0.76x the steps
    P, z0, sol = _problem(_algebra(name))
    rtol = 1e-8
    _, m_t, n_t = _errors(P, z0, sol, twin, rtol)
    _, m_mk, n_mk = _errors(P, z0, sol, mk, rtol)
    assert m_mk * n_mk ** 5 <= TARGET * m_t * n_t ** 5, (m_mk, n_mk, m_t, n_t)
    if name == "so(4)":
        assert m_mk <= TARGET * m_t, (m_mk, m_t)
    else:   # se(3): longer steps (see the estimate test below) account for the ratio at equal rtol
        assert n_mk <= 0.85 * n_t, (n_mk, n_t)


def test_the_twin_bar_can_fail():
    # negative control: rkmk_tsit5 with dexp^-1 cut to its first term (theta' = w: a first-order error in every
    # stage that the pair's estimate shares) on so(4) misses the bar above by far (measured 1.5e7x)
    P, z0, sol = _problem(_algebra("so(4)"))
    cut = dataclasses.replace(METHODS["rkmk_tsit5"], terms=1)
    _, m_t, n_t = _errors(P, z0, sol, "tsit5_projected", 1e-8)
    _, m_mk, n_mk = _errors(P, z0, sol, cut, 1e-8, fast=False)
    assert m_mk * n_mk ** 5 > 10 * TARGET * m_t * n_t ** 5, (m_mk, n_mk, m_t, n_t)


def _estimate(P, sol, method, h, states):
    """Geometric mean over ``states`` of the norm of a pair's error estimate (mapped to the state) at step h."""
    m = METHODS[method]
    ref = ReferencePair(P, m.tableau, m.lie, m.terms)
    out = []
    for t in states:
        z = sol.sol(t)
        Ks, _, _, _, _, Kl = ref.stages(t, z, h, ref.first(t, z))
        est = sum(e * K for e, K in zip(m.tableau.E[0], Ks + [Kl]) if e != 0.0)
        out.append(np.linalg.norm(P.algebra._coad(est, z) if m.lie else est))
    return math.exp(np.mean(np.log(out)))


def test_why_the_5_4_pairs_take_longer_steps_on_se3():
    # at equal h the RKMK estimate of the fourth-order solution's error is 3x smaller than the ambient one on se(3)
    # (measured 0.32 for Tsitouras' pair, 0.30 for Dormand-Prince's) and alike on so(4) (1.2, 1.0): the controller's
    # h ~ err^(-1/5) then takes 3^(1/5) = 1.25x longer steps, and an order-5 global error grows by 1.25^5 = 3x
    states = np.linspace(0.5, 9.0, 8)
    P, _, sol = _problem(_algebra("se(3)"))
    for mk, rk in (("rkmk_tsit5", "tsit5"), ("rkmk45", "rk45")):
        assert _estimate(P, sol, mk, 0.1, states) < 0.5 * _estimate(P, sol, rk, 0.1, states), mk
    P, _, sol = _problem(_algebra("so(4)"))
    for mk, rk in (("rkmk_tsit5", "tsit5"), ("rkmk45", "rk45")):
        assert 0.7 < _estimate(P, sol, mk, 0.1, states) / _estimate(P, sol, rk, 0.1, states) < 1.5, mk
