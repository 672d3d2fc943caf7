"""The periodically excited sleighs: limits against the classical sleigh's exact solution, the regimes
the papers describe (a strange attractor, acceleration like t^(1/3) with the averaged law derived in
catalog.entries.forced_sleighs), and the resumable sweep store (interrupted, resumed, same table)."""

import numpy as np
import pytest

import catalog
import integrators
from catalog.entries.forced_sleighs import rotor_speed_law
from catalog.sweeps import AccelerationExponent, LargestExponent, SweepError


def test_without_the_mass_it_is_chaplygins_sleigh():
    # m = 0: u = U tanh(k t + c), U = sqrt(2E/M), k = M ell U / (J + M ell^2) (the classical exact solution)
    M, J, ell, v0, w0 = 1.0, 1.0, 0.5, 0.2, 1.0
    e = catalog.get("sleigh_oscillating_mass", m=0.0, M=M, J=J, ell=ell, v0=v0, w0=w0, t_end=10.0, steps=2000)
    run = catalog.simulate(e)
    Jc = J + M * ell ** 2
    U = np.sqrt((M * v0 ** 2 + Jc * w0 ** 2) / M)
    k, c = M * ell * U / Jc, np.arctanh(v0 / U)
    np.testing.assert_allclose(run.y[:, 0], U * np.tanh(k * run.t + c), atol=1e-9)


def test_oscillating_mass_has_a_strange_attractor_at_the_defaults():
    # lambda_1 > 0 with a negative sum: chaos on a phase-volume contracting attractor (Bizyaev et al. 2017)
    res = LargestExponent(t_end=600.0, transient=100.0)(catalog.get("sleigh_oscillating_mass"))
    assert res["largest_exponent"] > 0.02
    assert res["sum_exponents"] < -0.05 and res["attractor"]


def test_chart_measure_runs_the_generated_tangent_flow_with_the_reference_values():
    # every point of a chart runs the generated tangent flow (numba when installed, else numpy, for all
    # points alike); its values are those of the numpy loop with the entry's hand-derived Jacobian
    e = catalog.get("sleigh_oscillating_mass", A=1.2, xi=0.1)
    meas = LargestExponent(t_end=60.0, transient=10.0, steps_per_period=30)
    row = meas(e)
    red, T = e.extras["reduced"], e.extras["period"]
    ref = integrators.lyapunov_spectrum(red, e.initial_state[:2], 60.0, dt=T, h=T / 30, transient=10.0, fast=False)
    assert ref.jacobian == "user jacobian"
    assert abs(row["largest_exponent"] - ref.exponents[0]) < 1e-9
    assert abs(row["sum_exponents"] - ref.exponents.sum()) < 1e-9
    # the same backend gives the same row to the bit (a resumed chart equals an uninterrupted one); numpy's
    # tangent flow is batched over time (integrators.backends.tangent_blocks), numba steps it: equal to round-off
    assert row == meas(e)
    other = LargestExponent(t_end=60.0, transient=10.0, steps_per_period=30, backend="numpy")(e)
    assert other == LargestExponent(t_end=60.0, transient=10.0, steps_per_period=30, backend="numpy")(e)
    assert set(other) == set(row)
    for key in row:
        if isinstance(row[key], float):
            assert abs(row[key] - other[key]) <= 1e-12 * max(1.0, abs(row[key])), key
        else:
            assert row[key] == other[key], key


def test_mass_behind_the_blade_line_accelerates():
    e = catalog.get("sleigh_oscillating_mass", xi=-0.5, A=1.0)
    row = AccelerationExponent(100.0, 1500.0)(e)
    assert row["acceleration_exponent"] > 0.3 and row["v_end"] > 10.0


def test_rotor_sleigh_follows_the_averaged_law():
    # the averaged law b^2 v^3/3 + Omega^2 v = ell k1^2 Omega^2 t / (2 I_O^2) + C (derived in the entry's
    # module), hence v ~ t^(1/3); LSODA takes the stiff relaxation of omega in its stride
    e = catalog.get("sleigh_rotor")
    P = e.extras["parameters"]
    T = e.extras["period"]
    te = np.arange(8, 160) * T
    r = integrators.integrate(e.extras["reduced"], e.initial_state[:2], (0, te[-1]), method="scipy:LSODA",
                              rtol=1e-8, atol=1e-11, t_eval=te)
    v = r.y[:, 0]
    law = rotor_speed_law(te, P["M"], P["J"], P["ell"], P["k1"], P["Omega"], v[0], te[0])
    assert np.max(np.abs(v / law - 1)) < 2e-3
    # the law's own exponent over (1e3, 1e6) is 1/3 within 0.02 (the full run is in benchmarks/phase_space.py)
    tt = np.geomspace(1e3, 1e6, 40)
    vl = rotor_speed_law(tt, P["M"], P["J"], P["ell"], P["k1"], P["Omega"], v[0], te[0])
    assert abs(np.polyfit(np.log(tt), np.log(vl), 1)[0] - 1 / 3) < 0.02


@pytest.mark.parametrize("name, params", [("sleigh_oscillating_mass", {}), ("sleigh_rotor", {"J": 0.3})])
def test_the_public_builder_gives_the_entrys_equations(name, params):
    # servo.TimeDependentSystem on se(2)* (momenta, the blade's multiplier) against the entry's (v, omega)
    # equations derived by hand in catalog.entries.forced_sleighs
    e = catalog.get(name, **params)
    S = e.extras["lie_system"]()
    w0 = np.array([e.initial_state[0], 0.0, 0.3])
    res = S.simulate(S.state_from(w0), 15.0, steps=15)
    ref = integrators.integrate(e.extras["reduced"], w0[[0, 2]], (0.0, 15.0), method="scipy:DOP853", rtol=1e-13,
                                atol=1e-14, t_eval=res.t)
    np.testing.assert_allclose(res.outputs["w"][:, [0, 2]], ref.y, atol=1e-9)
    assert S.period == pytest.approx(e.extras["period"])


@pytest.mark.parametrize("name", ["sleigh_oscillating_mass", "sleigh_rotor"])
def test_reduced_problems_jacobian_is_the_derivative_of_its_field(name):
    # complex step: J[:, l] = Im f(t, y + i eps e_l) / eps, exact to round-off (the field is analytic)
    red = catalog.get(name).extras["reduced"]
    rng = np.random.default_rng(5)
    for _ in range(4):
        t, y = rng.uniform(0, 50), rng.uniform(-2, 2, 2)
        cols = [np.imag(red.f(t, y + 1e-30j * np.eye(2)[l])) / 1e-30 for l in range(2)]
        np.testing.assert_allclose(red.jac(t, y), np.stack(cols, -1), rtol=1e-12, atol=1e-14)
    Y = rng.uniform(-2, 2, (3, 2))
    assert red.jac(1.0, Y).shape == (3, 2, 2)
    assert red.period == pytest.approx(catalog.get(name).extras["period"])


def test_rotor_without_body_inertia_has_no_builder_system():
    assert catalog.get("sleigh_rotor", J=0.0).extras["lie_system"]() is None


def _measure(entry):
    return {"v_mid": float(catalog.simulate(entry).y[-1, 0])}


def test_sweep_store_resumes_with_the_same_table(tmp_path, monkeypatch):
    grid = {"A": "0.5:2:4", "xi": "-0.5:0.5:3"}
    kw = dict(fixed={"t_end": 5.0, "steps": 200}, serial=True, chunk=2)
    full = catalog.sweep("sleigh_oscillating_mass", grid, _measure, **kw)
    from catalog.sweeps import store as store_mod

    calls = {"n": 0}
    real = store_mod.ChunkStore.write

    def dying(self, idx, cols):
        if calls["n"] == 3:
            raise KeyboardInterrupt("killed after three chunks")
        calls["n"] += 1
        real(self, idx, cols)

    monkeypatch.setattr(store_mod.ChunkStore, "write", dying)
    with pytest.raises(KeyboardInterrupt):
        catalog.sweep("sleigh_oscillating_mass", grid, _measure, store=tmp_path / "s", **kw)
    monkeypatch.setattr(store_mod.ChunkStore, "write", real)
    assert len(list((tmp_path / "s").glob("chunk-*.pkl"))) == 3
    again = catalog.sweep("sleigh_oscillating_mass", grid, _measure, store=tmp_path / "s", **kw)
    assert again.info["resumed"] == 6
    for k, col in full.columns.items():
        np.testing.assert_array_equal(again.columns[k], col)
    # a third run reads everything back and evaluates nothing
    third = catalog.sweep("sleigh_oscillating_mass", grid, _measure, store=tmp_path / "s", **kw)
    assert third.info["resumed"] == 12 and third.info["tasks"] == 0
    # other arguments: the store refuses to mix two sweeps
    with pytest.raises(SweepError, match="different sweep"):
        catalog.sweep("sleigh_oscillating_mass", {"A": "0.5:2:5", "xi": "-0.5:0.5:3"}, _measure,
                      store=tmp_path / "s", **kw)
