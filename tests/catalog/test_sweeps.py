"""catalog.sweeps run serially (in this process): grid and random points, keys of an entry, the measures
against independent formulas, the failure column, the tidy table and its files, the figure, the path
without dask, and the error paths."""

import csv
import itertools
import sys
import warnings

import numpy as np
import pytest

import catalog
from catalog.sweeps import SweepError, SweepWarning, fit_rate, grid, report_section, samples, sweep
from catalog.sweeps.grid import parse_axis

# the documented default inertia of the constrained rigid bodies (catalog.entries.constrained_bodies)
I_BODY = np.array([[3.0, 0.2, 0.4], [0.2, 2.0, 0.3], [0.4, 0.3, 1.0]])


def run(*a, **kw):
    kw.setdefault("serial", True)
    return sweep(*a, **kw)


# ------------------------------------------------------------------------------------------ points
def test_axis_specs():
    assert np.array_equal(parse_axis("a", "1:3:5"), [1.0, 1.5, 2.0, 2.5, 3.0])
    assert np.allclose(parse_axis("a", "1:100:3:log"), [1.0, 10.0, 100.0], rtol=1e-14)
    assert np.array_equal(parse_axis("a", "0.5, 2,7"), [0.5, 2.0, 7.0])
    assert np.array_equal(parse_axis("a", "4"), [4.0])
    assert np.array_equal(parse_axis("a", [3, 1]), [3.0, 1.0])


@pytest.mark.parametrize("spec, words", [
    ("1:3", "lo:hi:num"), ("1:3:0", "positive integer"), ("1:3:2.5", "positive integer"),
    ("x:3:4", "lower end 'x' is not a number"), ("1:inf:3", "not finite"), ("1:2:1", "one value"),
    ("-1:1:3:log", "positive ends"), ("1,,b", "value 'b'"), ("", "no values")])
def test_bad_axis_names_the_problem(spec, words):
    with pytest.raises(SweepError, match="axis 'I1'") as exc:
        parse_axis("I1", spec)
    assert words in str(exc.value)


def test_grid_order_first_axis_slowest():
    g = grid({"a": [1, 2], "b": [10, 20, 30]})
    expect = list(itertools.product([1.0, 2.0], [10.0, 20.0, 30.0]))
    assert [(g.point(i)["a"], g.point(i)["b"]) for i in range(g.size)] == expect
    assert g.shape == (2, 3) and g.varying == ["a", "b"]


def test_samples_are_seeded_and_in_bounds():
    a, b, c = samples(50, seed=3, I1="1:2", I2=(0, 5)), samples(50, seed=3, I1="1:2", I2=(0, 5)), samples(50, seed=4, I1="1:2", I2=(0, 5))
    assert np.array_equal(a.values["I1"], b.values["I1"]) and not np.array_equal(a.values["I1"], c.values["I1"])
    rng = np.random.default_rng(3)  # the documented draw: uniform, axis by axis in the order given
    assert np.array_equal(a.values["I1"], rng.uniform(1, 2, 50)) and np.array_equal(a.values["I2"], rng.uniform(0, 5, 50))
    with pytest.raises(SweepError, match="upper end"):
        samples(5, I1="2:1")
    with pytest.raises(SweepError, match="positive integer"):
        samples(0, I1="1:2")


# ------------------------------------------------------------------------------------------ keys
@pytest.mark.parametrize("key, words", [
    ("zz", "has no parameter 'zz'; accepted: I11=3.0"), ("n", "sweep its components n[0], n[1], n[2]"),
    ("n[3]", "index 3 is out of range"), ("I11[0]", "is a number, not a vector"), ("y0", "component index"),
    ("1x", "parameter name or name[index]")])
def test_bad_keys(key, words):
    with pytest.raises(SweepError) as exc:
        run("beghin_body", {key: [0.5]}, "realizability")
    assert words in str(exc.value)


def test_non_numeric_parameter_cannot_be_swept():
    with pytest.raises(SweepError, match="'constraint' is not numeric"):
        run("talamucci_two_points", {"constraint": [1.0]}, "empty")


def test_initial_state_keys():
    seen = run("euler_top", {"y0[1]": [0.25, 0.5]}, lambda e: float(e.initial_state[1]))
    assert np.array_equal(seen.column("value"), [0.25, 0.5])
    coords = run("skate_inclined", {"qd0[2]": [2.0]}, lambda e: float(e.initial_state["qd0"][2]))
    assert coords.column("value")[0] == 2.0
    with pytest.raises(SweepError, match=r"swept with q0\[i\] or qd0\[i\], not y0\[0\]"):
        run("skate_inclined", {"y0[0]": [1.0]}, lambda e: 0.0)


def test_factory_and_fixed_parameters():
    def factory(theta, scale=1.0):
        return catalog.get("beghin_body", n=(0.0, np.sin(theta), scale * np.cos(theta)))

    r = run(factory, {"theta": [0.0, np.pi / 2]}, lambda e: float(e.extras["b"][2]),
            fixed={"scale": 2.0})
    assert np.allclose(r.column("value"), [2.0, 0.0], atol=1e-15)
    with pytest.raises(SweepError, match="has no parameter 'phi'"):
        run(factory, {"phi": [0.0]}, "realizability")


def test_built_entries_keep_their_parameters_or_vary_only_their_initial_state():
    from pathlib import Path

    e = catalog.get("servo_sleigh", a_u=0.3)
    r = run(e, {"c_w": [-0.5, 0.5]}, lambda x: {"a_u": x.parameters["a_u"], "c_w": x.parameters["c_w"]})
    assert np.array_equal(r.column("a_u"), [0.3, 0.3]) and np.array_equal(r.column("c_w (measured)"), [-0.5, 0.5])
    mine = catalog.from_file(Path(catalog.__file__).parent / "entries" / "data" / "flywheel.toml")
    r = run(mine, {"y0[0]": [0.1, 0.2]}, lambda x: float(x.initial_state[0]))
    assert np.array_equal(r.column("value"), [0.1, 0.2])
    with pytest.raises(SweepError, match="has no parameter 'b2'"):
        run(mine, {"b2": [0.1]}, "empty")


# ------------------------------------------------------------------------------------------ measures
def test_realizability_against_the_hand_formula():
    """(I^-1 l, n) with l = e3: zero for n = (v1, -v0, 0), v = I^-1 e3; realizable elsewhere."""
    v = np.linalg.inv(I_BODY)[:, 2]
    r = run("beghin_body", {"n[0]": [v[1], 1.0], "n[1]": [-v[0]], "n[2]": [0.0, 0.7]}, "realizability")
    n = np.array([[v[1], -v[0], 0.0], [v[1], -v[0], 0.7], [1.0, -v[0], 0.0], [1.0, -v[0], 0.7]])
    expect = n @ v  # (I^-1 e3, n) by hand, per grid point
    assert np.allclose(r.column("realizability"), expect, atol=1e-15)
    assert abs(r.column("realizability")[0]) < 1e-15
    assert list(r.column("realizable")) == [False, True, True, True]
    assert r.failed == 0


def _sleigh_quadratic(alpha, beta):
    """u' = alpha u w, w' = beta u w as Q[i, j, k] symmetric in (j, k)."""
    from servo import QuadraticSystem

    Q = np.zeros((2, 2, 2))
    Q[0, 0, 1] = Q[0, 1, 0] = alpha / 2
    Q[1, 0, 1] = Q[1, 1, 0] = beta / 2
    return QuadraticSystem(Q)


def test_invariant_lines_against_servo_and_the_line_xi_alpha_beta():
    """Servo-sleigh (M = I = b_v = 1): alpha = a_u, beta = c_w. The line xi = (alpha, beta) has
    v(xi) = alpha beta xi, so c = |alpha beta| / |(alpha, beta)| for the unit direction with c > 0."""
    from servo import invariant_lines

    r = run("servo_sleigh", {"a_u": [-1.0, 0.0, 0.5], "c_w": [-0.5, 1.0]}, "invariant_lines")
    for i in range(r.grid.size):
        a, b = r.column("a_u")[i], r.column("c_w")[i]
        lines = invariant_lines(_sleigh_quadratic(a, b))
        assert r.column("real_lines")[i] == len(lines.real)
        assert r.column("real_count")[i] == lines.real_count
        assert r.column("total_multiplicity")[i] == lines.total_multiplicity
        cs = [abs(r.column(f"c_{k}")[i]) for k in range(1, len(r.info["lines"]) + 1)]  # oriented rays: c or -c
        assert sum(np.isfinite(cs)) == r.column("real_lines")[i]
        if a != 0:
            assert r.column("real_lines")[i] == 3
            assert np.isclose(max(c for c in cs if np.isfinite(c)), abs(a * b) / np.hypot(a, b), rtol=1e-10)
        else:  # alpha = 0: u' = 0, w' = beta u w: u = 0 is a line of equilibria, w = 0 the other line
            assert r.column("real_lines")[i] == 2
    assert set(r.column("stability_1")) <= {"attracting", "repelling", "saddle", "degenerate", ""}


def test_invariant_lines_include_kovalevskaya_exponents():
    """The servo-sleigh's reduced system u' = alpha u w, w' = beta u w has two lines of equilibria (c = 0, no
    Darboux point) and one line with c != 0. At its Darboux point d (v(d) = -d, so alpha w = beta u = -1) the
    Kovalevskaya matrix K = Dv(d) + Id has trace alpha w + beta u + 2 = 0, and one eigenvalue is -1, so the
    exponent is 1: the degree of the linear integral beta u - alpha w."""
    r = run("servo_sleigh", {"a_u": [0.5]}, "invariant_lines")
    cs = [r.column(f"c_{k}")[0] for k in (1, 2, 3)]
    ks = [r.column(f"kovalevskaya_{k}")[0] if f"kovalevskaya_{k}" in r.columns else "" for k in (1, 2, 3)]
    for c, k in zip(cs, ks):
        if abs(c) > 1e-12:
            assert float(k) == pytest.approx(1.0, abs=1e-12)


def _servo_sleigh_u(alpha, beta, u0, w0, t):
    """u' = alpha u w, w' = beta u w with gamma = beta u - alpha w conserved: u = gamma/(beta + C e^(gamma t))."""
    g = beta * u0 - alpha * w0
    u = g / (beta + (g / u0 - beta) * np.exp(g * t))
    return np.stack([u, (beta * u - g) / alpha], -1)


def test_exact_error_and_integrals_drift_of_a_fixed_step_method():
    r = run("servo_sleigh", {"a_u": [0.5, 1.0]}, "exact_error", options={"method": "rk4", "steps": 100})
    d = run("servo_sleigh", {"a_u": [0.5, 1.0]}, "integrals_drift", options={"method": "rk4", "steps": 100})
    for i, a_u in enumerate([0.5, 1.0]):
        e = catalog.get("servo_sleigh", a_u=a_u)
        run_ = catalog.simulate(e, method="rk4", steps=100)
        uw = _servo_sleigh_u(a_u, -0.5, 1.0, 0.5, run_.t)  # M = I = b_v = 1: p_u = u, p_w = w, p_v = 0
        exact = np.stack([uw[:, 0], 0 * uw[:, 0], uw[:, 1]], -1)
        assert np.isclose(r.column("exact_error")[i], np.max(np.abs(run_.y - exact)), rtol=1e-6)
        gamma = -0.5 * run_.y[:, 0] - a_u * run_.y[:, 2]
        drift = np.max(np.abs(gamma - gamma[0])) / max(1.0, abs(gamma[0]))
        assert d.column("drift[gamma = beta u - alpha w]")[i] == drift
        assert d.column("max_drift")[i] == max(d.columns[k][i] for k in d.columns if k.startswith("drift["))


def test_friction_rate_is_one_over_N_and_matches_the_exact_skate():
    """Skate with friction -N (a, q') a against x = sin^2(wt)/(2w^2), y = (wt - sin 2wt / 2)/(2w^2), phi = wt:
    the error is O(1/N) (Kozlov's Theorem 1)."""
    Ns = [25.0, 50.0, 100.0]
    r = run("skate_friction", {"N": Ns}, "friction_rate", options={"t_end": 2.0, "steps": 50})
    t = np.linspace(0, 2.0, 51)
    w = 1.0
    ex = np.stack([np.sin(w * t) ** 2 / (2 * w**2), (w * t - np.sin(2 * w * t) / 2) / (2 * w**2), w * t,
                   np.sin(2 * w * t) / (2 * w), (1 - np.cos(2 * w * t)) / (2 * w), np.full_like(t, w)], -1)
    y = catalog.simulate(catalog.get("skate_friction", N=50.0, t_end=2.0, steps=50)).y
    assert np.isclose(r.column("limit_error")[1], np.max(np.abs(y - ex)), rtol=1e-6)
    assert np.allclose(r.column("N_times_error"), np.array(Ns) * r.column("limit_error"), rtol=1e-15)
    p, C = fit_rate(r)
    assert abs(p + 1) < 0.15, p


def test_user_callable_and_fit_rate_recover_a_power_law():
    r = run("sleigh_friction", {"N": "10:1000:5:log"}, lambda e: 3.0 * e.parameters["N"] ** -1.5)
    p, C = fit_rate(r, "N", "value")
    assert np.isclose(p, -1.5, rtol=1e-12) and np.isclose(C, 3.0, rtol=1e-12)


def test_failed_points_are_recorded_or_raised():
    from servo import CovectorError

    r = run("beghin_body", {"n[1]": [0.0, 1.0], "n[2]": [0.0]}, "realizability")
    assert r.failed == 1 and r.column("error")[0].startswith("CovectorError: b must be non-zero")
    assert np.isnan(r.column("realizability")[0]) and r.column("realizability")[1] != 0
    with pytest.raises(CovectorError):
        run("beghin_body", {"n[1]": [0.0, 1.0], "n[2]": [0.0]}, "realizability", errors="raise")


@pytest.mark.parametrize("name, measure, words", [
    ("euler_top", "realizability", "has model 'free'"), ("skate_inclined", "invariant_lines", "has none"),
    ("beghin_body", "exact_error", "no exact solution"), ("chaplygin_sleigh", "friction_rate", "has none"),
    ("euler_top", "nope", "unknown measure 'nope'; known: empty, exact_error")])
def test_measure_that_does_not_apply_stops_before_the_sweep(name, measure, words):
    with pytest.raises(SweepError, match=words):
        run(name, {"t_end": [1.0]}, measure)


def test_bad_measure_option_and_sweep_arguments():
    with pytest.raises(SweepError, match="has no option 'stepz'; accepted: method=None, steps=None"):
        run("servo_sleigh", {"a_u": [1.0]}, "exact_error", options={"stepz": 3})
    with pytest.raises(SweepError, match="chunk must be a positive integer"):
        run("servo_sleigh", {"a_u": [1.0]}, "empty", chunk=0)
    with pytest.raises(SweepError, match="errors must be"):
        run("servo_sleigh", {"a_u": [1.0]}, "empty", errors="ignore")


# ------------------------------------------------------------------------------------------ without dask
def test_without_dask_the_same_sweep_runs_serially_with_a_warning(monkeypatch):
    g = {"a_u": [0.5, 1.0], "c_w": [-0.5, 0.5]}
    ref = run("servo_sleigh", g, "invariant_lines")
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now raises ImportError
    with pytest.warns(SweepWarning, match="dask.distributed is not installed: the 4 points run serially"):
        r = sweep("servo_sleigh", g, "invariant_lines")
    assert r.info["engine"] == "serial"
    for k in ref.columns:
        assert np.array_equal(r.columns[k], ref.columns[k], equal_nan=ref.columns[k].dtype.kind == "f"), k


def test_core_library_never_imports_dask_at_module_level():
    """dask is imported only inside the functions that use it (an optional heavy dependency)."""
    import ast
    from pathlib import Path

    def top_level_imports(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                yield from (a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                yield child.module or ""
            else:
                yield from top_level_imports(child)

    root = Path(catalog.__file__).parent
    for path in list(root.rglob("*.py")) + list(root.parent.joinpath("servo").rglob("*.py")):
        mods = list(top_level_imports(ast.parse(path.read_text())))
        assert not any(m.split(".")[0] in ("dask", "distributed") for m in mods), path


# ------------------------------------------------------------------------------------------ table, files, figure
def test_table_files_round_trip(tmp_path):
    import pandas as pd

    r = run("servo_sleigh", {"a_u": [0.0, 0.5], "c_w": [-0.5, 1.0]}, "invariant_lines")
    paths = r.save(tmp_path / "csv")
    back = pd.read_csv(paths["table"], keep_default_na=False, na_values=[""])
    assert list(back.columns) == list(r.columns)
    assert np.allclose(back["c_1"], r.column("c_1"), equal_nan=True, rtol=0, atol=0)
    assert list(back["stability_1"].fillna("")) == list(r.column("stability_1"))  # "" where line 1 is absent
    pq = r.save(tmp_path / "pq", fmt="parquet", plot=False)
    back = pd.read_parquet(pq["table"])
    assert np.array_equal(back["real_lines"].to_numpy(), r.column("real_lines"))
    assert (tmp_path / "csv" / "sweep.png").stat().st_size > 0 and pq["figure"] is None


def test_without_pandas_a_dict_of_arrays_and_csv(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pandas", None)
    r = run("servo_sleigh", {"a_u": [0.3, 0.7]}, "exact_error", options={"method": "rk4", "steps": 20})
    assert isinstance(r.table, dict) and set(r.table) == {"index", "a_u", "exact_error", "error"}
    path = r.save(tmp_path, plot=False)["table"]
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    assert [float(x["exact_error"]) for x in rows] == list(r.column("exact_error"))  # repr: no digit lost
    with pytest.raises(SweepError, match="Parquet needs pandas and pyarrow"):
        r.save(tmp_path, fmt="parquet")


def test_heat_map_holds_the_grid_values_and_curves_for_one_key():
    r = run("beghin_body", {"n[1]": "-1:1:3", "n[2]": "0.5:1:2"}, "realizability")
    fig = r.figure()
    mesh = fig.axes[0].collections[0]
    assert np.allclose(np.asarray(mesh.get_array()).reshape(2, 3), r.on_grid("realizability").T)
    one = run("servo_sleigh", {"a_u": "0.2:1:4"}, "invariant_lines").figure()
    assert len(one.axes[0].collections) >= 1  # scatter of c by stability
    with pytest.raises(SweepError, match="one or two varying keys"):
        run("servo_sleigh", {"a_u": [1, 2], "c_w": [1, 2], "u0": [1, 2]}, "empty").figure()


def test_report_section_summarises_the_columns():
    r = run("beghin_body", {"n[1]": "-1:1:3", "n[2]": "0.5:1:2"}, "realizability")
    sec = report_section(r)
    row = next(x for x in sec["table"] if x["column"] == "realizability")
    assert row["min"] == r.column("realizability").min() and row["max"] == r.column("realizability").max()
    assert sec["figure"] is not None and "6 points" in sec["text"]
