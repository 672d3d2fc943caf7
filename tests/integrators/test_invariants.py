"""What each method declares in ``preserves`` is measured.

* "casimirs": every Casimir of so(3), se(3), sl(2), so(4) (found by liegroups from the structure
  constants, independent of the integrators) is kept to 1e-13 relative over 10^5
  steps: on so(3) rkmk4 and the splittings run 10^5 steps of one trajectory (the generated scalar
  stepper), the other methods 10^4 (Moser-Veselov 2 x 10^3); on se(3), sl(2), so(4) (generic numpy
  path) a batch of 8 runs 10^3 steps for every method, and rkmk4 runs one trajectory for 10^5 steps.
  benchmarks/compare_integrators.py measures the so(3) drift over 10^6 steps.
* "quadratic_invariants" of Moser-Veselov: the rigid-body energy, to round-off.
* methods that do not declare "casimirs" (rk4) visibly drift (so the check can fail).
* "quadratic_invariants" (implicit midpoint): the energy and the Casimirs are quadratic on so(3).
* "linear_invariants": a servo-type forcing with a linear invariant (c, z); kept to 1e-13.
"""

import numpy as np
import pytest

from integrators import METHODS, integrate
from integrators.analysis.rigid_body import free_rigid_body
from liegroups import named

from ._problems import RIGID_ONLY, STRUCTURED, ALGEBRAS, quadratic_problem, start

CASIMIR_METHODS = [n for n, m in METHODS.items() if "casimirs" in m.preserves and n not in RIGID_ONLY + STRUCTURED
                   and m.fixed_step]
# the adaptive pairs (no steps=) are tested in test_adaptive.py


def _casimir_drift(res):
    names = [k for k in res.invariants if k.startswith("casimir:")]
    assert names, "the problem should record the algebra's Casimirs"
    out = {}
    for k in names:
        v = res.invariants[k]
        scale = np.maximum(np.abs(v[0]), np.max(np.abs(res.y[0]), axis=-1) ** 2)
        out[k] = float(np.max(np.abs(v - v[0]) / scale))
    return out


@pytest.mark.parametrize("alg", sorted(ALGEBRAS))
@pytest.mark.parametrize("name", CASIMIR_METHODS)
def test_casimirs_kept_to_round_off(alg, name):
    algebra = ALGEBRAS[alg]()
    P = quadratic_problem(algebra, seed=5)
    if alg == "so3":
        z0 = start(3, 5)
        steps = 100_000 if name == "rkmk4" else 10_000
    else:
        z0 = start(algebra.dim, 5, batch=(8,))
        steps = 1000
    h = 0.01 if alg != "sl2" else 0.002  # sl(2) orbits are non-compact: keep a low-order method near them
    res = integrate(P, z0, (0.0, steps * h), method=name, steps=steps, save_every=steps // 10)
    assert res.status == 0, res.message
    assert "casimirs" in res.preserves
    drift = _casimir_drift(res)
    assert max(drift.values()) < 1e-13, drift


@pytest.mark.parametrize("alg", ["se3", "sl2", "so4"])
def test_casimirs_kept_over_1e5_steps_on_the_generic_path(alg):
    """10^5 steps on the generic (non-so(3)) numpy path with rkmk4 (30-80 s each): round-off must
    not accumulate in the coadjoint update, which every Lie-Poisson method shares (they run 10^3 steps above).
    rkmk4 rather than lie_euler: lie_euler's energy error lets |z| grow 100x along the non-compact orbits of
    se(3) and blow up on sl(2), so a drift relative to the initial scale would measure that, not round-off."""
    algebra = ALGEBRAS[alg]()
    P = quadratic_problem(algebra, seed=5)
    steps, h = 100_000, (0.01 if alg != "sl2" else 0.002)
    res = integrate(P, start(algebra.dim, 5), (0.0, steps * h), method="rkmk4", steps=steps,
                    save_every=steps // 10)
    assert res.status == 0, res.message
    drift = _casimir_drift(res)
    assert max(drift.values()) < 1e-13, drift


@pytest.mark.parametrize("name", ["splitting", "splitting4", "splitting6", "moser_veselov"])
def test_splitting_keeps_the_casimir(name):
    P = free_rigid_body((2.0, 1.0, 2.0 / 3.0))
    z0 = start(3, 7)
    steps = 100_000 if name != "moser_veselov" else 2_000  # implicit: slower per step
    res = integrate(P, z0, (0.0, steps * 0.01), method=name, steps=steps, save_every=steps // 10)
    assert max(_casimir_drift(res).values()) < 1e-13


def test_moser_veselov_keeps_the_energy():
    """Moser-Veselov conserves the rigid-body energy exactly (Moser & Veselov 1991): to round-off here,
    for random bodies and a batch of initial conditions, while its error is O(h^2)."""
    rng = np.random.default_rng(8)
    for _ in range(3):
        P = free_rigid_body(rng.uniform(0.5, 3.0, 3))
        res = integrate(P, start(3, 8, batch=(6,)), (0.0, 20.0), method="moser_veselov", h=0.05)
        assert "quadratic_invariants" in res.preserves
        assert np.max(res.drift("energy")) < 1e-13


def test_rk4_does_not_keep_casimirs():
    P = free_rigid_body((2.0, 1.0, 2.0 / 3.0))
    res = integrate(P, [np.cos(1.1), 0.0, np.sin(1.1)], (0.0, 10.0), method="rk4", h=0.1)
    assert "casimirs" not in res.preserves
    assert max(_casimir_drift(res).values()) > 1e-9


def test_midpoint_keeps_quadratic_invariants():
    P = free_rigid_body((2.0, 1.0, 2.0 / 3.0))
    z0 = start(3, 9, batch=(10,))
    res = integrate(P, z0, (0.0, 50.0), method="midpoint", h=0.05)
    assert np.max(res.drift("energy")) < 1e-13
    assert max(_casimir_drift(res).values()) < 1e-13


def _forced(algebra, seed):
    """z' = ad*_w z + lambda(z) b with lambda chosen so that (c, z)' = 0 for every z (servo type)."""
    rng = np.random.default_rng(seed)
    n = algebra.dim
    b, c = rng.standard_normal(n), rng.standard_normal(n)
    M = quadratic_problem(algebra, seed).velocity_matrix

    def forcing(z):
        lam = -(algebra.coad(z @ M, z) @ c) / (b @ c)
        return lam[..., None] * b

    P = quadratic_problem(algebra, seed, forcing=forcing, linear_invariants=c)
    return P, c


def test_a_linear_invariant_that_is_not_conserved_is_refused():
    algebra = named.so3()
    P, c = _forced(algebra, 11)
    from integrators import CoadjointProblem, IntegrationInputError

    Q = CoadjointProblem(algebra, P.velocity, forcing=P.forcing, linear_invariants=c + np.array([0.0, 0.0, 1.0]))
    with pytest.raises(IntegrationInputError, match=r"linear_invariants\[0\] is not conserved"):
        integrate(Q, [0.3, 0.1, 0.2], (0.0, 1.0), method="rkmk4", steps=10)


@pytest.mark.parametrize("alg", ["so3", "se3"])
@pytest.mark.parametrize("name", [n for n in METHODS if METHODS[n].fixed_step and n not in RIGID_ONLY + STRUCTURED])
def test_linear_invariants_with_forcing(alg, name):
    algebra = ALGEBRAS[alg]()
    P, c = _forced(algebra, 11)
    z0 = 0.2 * start(algebra.dim, 11, batch=(5,))
    res = integrate(P, z0, (0.0, 2.0), method=name, steps=200)
    assert "linear_invariants" in res.preserves and "casimirs" not in res.preserves
    lin = res.invariants["linear:0"]
    assert np.max(np.abs(lin - lin[0])) < 1e-13
