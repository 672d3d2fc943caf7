"""A researcher's own system gets what a catalog entry gets (issue 28), tested on the issue's example: the
Chaplygin sleigh with a servo-constraint of the second kind on SE(2), I = diag(1, 2, 0.7), a = (0, 1, 0),
b = (0.3, 1, 0.2), from Python (Entry.from_system) and as TOML (examples/servo2_sleigh.toml).

Expected values come from hand derivations written here: the Casimir |z_(u,v)|^2 of se(2)* at
z = m + lambda b, the realizability (I^-1 a, b) = b_2 / I_22 for a diagonal inertia and a = e_2, the path
x' = u cos(theta), y' = u sin(theta), theta' = w on SE(2) by quadrature, rotations about a fixed axis
on SO(3) and SE(3), and orders of synthetic error ladders.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.integrate
import scipy.interpolate

import catalog
from catalog import Entry
from catalog.cli.main import main
from catalog.errors import CatalogError, TomlEntryError
from liegroups import named
from servo import EulerPoincare, ServoSecondKind

ROOT = Path(__file__).resolve().parents[2]
TOML = ROOT / "examples" / "servo2_sleigh.toml"
I = np.array([1.0, 2.0, 0.7])
A = np.array([0.0, 1.0, 0.0])
B = np.array([0.3, 1.0, 0.2])
W0 = np.array([1.0, 0.0, 0.5])


def own_entry(b=B, inertia=I, t_end=10.0, **kw):
    s = ServoSecondKind(named.se2(), np.diag(inertia), a=A, b=np.asarray(b, float))
    return Entry.from_system(s, np.concatenate([np.asarray(inertia) * W0, [0.0]]), t_end, name="servo2_sleigh",
                             **kw)


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------------------- the two routes
def test_python_and_toml_routes_give_the_same_entry_and_run():
    mine, filed = own_entry(), catalog.from_file(TOML)
    assert np.array_equal(mine.initial_state, filed.initial_state)
    assert mine.model == filed.model == "servo2"
    r1, r2 = catalog.simulate(mine), catalog.simulate(filed)
    assert np.allclose(r1.y, r2.y, rtol=0, atol=1e-12)


def test_both_routes_claim_the_same_integrals_under_the_names_a_reader_writes():
    """The Python route names its claims as the TOML route (catalog.verify.claims) does: no Python syntax."""
    mine, filed = own_entry(), catalog.from_file(TOML)
    assert list(mine.first_integrals) == list(filed.first_integrals) == ["Casimir F(m + λ b), F = m1² + m2²"]
    free = Entry.from_system(EulerPoincare(named.so3(), np.diag([1.0, 2.0, 3.0])), [0.0, 0.0, 3.0], 1.0)
    assert list(free.first_integrals) == ["energy (m, I^-1 m)/2", "Casimir m1² + m2² + m3²"]
    assert not any("**" in k or "casimir:" in k for e in (mine, free) for k in e.first_integrals)
    # and `liedyn show` lists the system's own integrals the same way, the expansion after the label
    from catalog.output import describe

    own = [f for f in describe.integrals(filed) if f["source"] == "system"]
    assert [f["name"] for f in own] == ["Casimir m1² + m2² at m + λ b"]
    # |z_(u,v)|^2 at z = m + lambda b, b = (0.3, 1, 0.2): (m1 + 0.3 lambda)^2 + (m2 + lambda)^2
    assert own[0]["expr"] == "(109/100) λ² + (3/5) λ m1 + 2 λ m2 + m1² + m2²"


def test_claims_are_filled_in_from_what_the_system_knows():
    """se(2)* has the Casimir m1^2 + m2^2; for the second kind it is conserved at z = m + lambda b."""
    e = own_entry()
    (name, F), = e.first_integrals.items()
    y = np.array([0.7, 0.0, -0.4, 0.9])
    z = y[:3] + y[3] * B
    assert np.isclose(F(y), z[0] ** 2 + z[1] ** 2, rtol=1e-14)
    assert "(a, w)" in e.extras["constraints"]
    res = e.extras["constraints"]["(a, w)"](np.array([[2.0, 0.6, 0.0, 0.1]]))
    assert np.allclose(res, 0.6 / 2.0)  # (a, w) = v = m2 / I22
    run = catalog.simulate(e)
    verdicts = catalog.checks(e, run)
    assert [v.what for v in verdicts] == ["integral", "constraint"] and all(v.passed for v in verdicts)


def test_from_system_refuses_what_it_cannot_run():
    s = ServoSecondKind(named.se2(), np.diag(I), a=A, b=B)
    with pytest.raises(ValueError, match="off the constraint"):
        Entry.from_system(s, [1.0, 0.5, 0.35, 0.0], 10.0)
    with pytest.raises(CatalogError, match="t_end"):
        Entry.from_system(s, [1.0, 0.0, 0.35, 0.0], -1.0)
    with pytest.raises(CatalogError, match="Lie-group system"):
        Entry.from_system(object(), [1.0], 1.0)


# --------------------------------------------------------------------------------- TOML numbers as keys
def test_overrides_set_any_number_of_the_file():
    """Realizability (I^-1 a, b) = b_2 / I_22 for diagonal I and a = e_2."""
    e = catalog.from_file(TOML, **{"b[1]": 0.5, "inertia[1][1]": 4.0}, t_end=3)
    assert e.system.realizability() == pytest.approx(0.5 / 4.0, rel=1e-14)
    assert e.t_end == 3.0 and e.parameters["inertia[1]"] == 4.0 and e.parameters["b[1]"] == 0.5
    same = catalog.from_file(TOML, b=[0.3, 0.5, 0.2], inertia=[1.0, 4.0, 0.7], **{"simulation.t_end": 3.0})
    assert np.array_equal(same.system.b, e.system.b) and np.array_equal(same.system.I, e.system.I)
    assert catalog.from_file(TOML, **{"w[0]": 2.0}).initial_state[0] == pytest.approx(2.0 * I[0])


@pytest.mark.parametrize("over, match", [
    ({"c[0]": 1.0}, r"servo2_sleigh.toml: key 'c\[0\]': not a key of the file; its numbers are: inertia\[0\]"),
    ({"b[3]": 1.0}, r"key 'b\[3\]': index 3 is out of range \(b has 3 entries\)"),
    ({"inertia[0][1]": 1.0}, r"key 'inertia\[0\]\[1\]': the file gives the inertia as its diagonal"),
    ({"b[0]": "x"}, r"key 'b\[0\]': expected a number"),
    ({"b[1]": 0.0}, r"servo2_sleigh.toml: UnrealizableConstraintError"),
    ({"method": "rk5"}, r"servo2_sleigh.toml: key 'simulation.method': unknown integration method 'rk5'"),
    ({"method": "splitting"}, r"key 'simulation.method': method 'splitting' does not apply"),
])
def test_override_errors_name_the_file_and_the_key(over, match):
    with pytest.raises(TomlEntryError, match=match):
        catalog.from_file(TOML, **over)


def test_a_method_in_the_file_is_checked(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(TOML.read_text().replace("steps = 1000", 'steps = 1000\nmethod = "rk5"'))
    with pytest.raises(TomlEntryError, match=r"bad.toml: key 'simulation.method': unknown integration method 'rk5'"):
        catalog.from_file(p)


# ------------------------------------------------------------------------------------------ sweeps
def test_sweep_any_number_of_the_file_from_python_and_the_cli(tmp_path, capsys):
    r = catalog.sweep(str(TOML), {"inertia[1][1]": "1:4:4", "b[1]": [0.5, 1.0]}, "realizability", serial=True)
    expect = r.column("b[1]") / r.column("inertia[1][1]")
    assert np.allclose(r.column("realizability"), expect, rtol=1e-14)
    code, out, err = cli(capsys, "sweep", TOML, "-p", "b[0]=0:1:3", "-p", "y0[2]=0.2:0.4:2", "--measure",
                         "integrals_drift", "--serial", "--out", tmp_path / "sw", "--json")
    assert code == 0, err
    import json

    meta = json.loads(out)
    assert meta["points"] == 6 and meta["failed"] == 0
    code, out, err = cli(capsys, "sweep", TOML, "-p", "c[0]=0:1:3", "--measure", "realizability", "--serial",
                         "--out", tmp_path / "x")
    assert code == 2 and "has no parameter 'c[0]'" in err and "b[0]" in err


def test_integrals_drift_uses_the_systems_own_integrals_when_the_entry_claims_none():
    e = own_entry(first_integrals={})
    r = catalog.sweep(e, {"y0[2]": [0.2, 0.4]}, "integrals_drift", serial=True)
    col = [c for c in r.columns if c.startswith("drift[Casimir F(m + λ b)")]
    assert col and np.all(r.column(col[0]) < 1e-12)


# ------------------------------------------------------------------------------------------- the CLI
@pytest.mark.parametrize("cmd", ["show", "simulate", "lines"])
def test_every_command_takes_the_file_and_its_keys(capsys, tmp_path, cmd):
    extra = ["--out", tmp_path / "t.csv"] if cmd == "simulate" else []
    code, out, err = cli(capsys, cmd, TOML, "-p", "b[0]=0.5", "-p", "t_end=2", *extra)
    assert code == 0, err
    if cmd == "show":
        assert "b[0]=0.5" in out and "(1/2) λ̇" in out   # u' + b1 lambda' with b1 = 1/2, exact
    if cmd == "simulate":
        assert "t_end 2" in out


@pytest.mark.parametrize("cmd", ["show", "simulate", "lines", "compare", "sweep"])
def test_every_commands_help_says_it_takes_a_toml_file(capsys, cmd):
    with pytest.raises(SystemExit) as exc:
        main([cmd, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert exc.value.code == 0 and "a path to a .toml file" in out, out


def test_compare_takes_ladders(capsys):
    code, out, err = cli(capsys, "compare", TOML, "--methods", "rk4,lie_euler", "--steps", "100,200,400,800",
                         "--t-end", "5")
    assert code == 0, err
    assert "rk4: order fitted on" in out
    assert "lie_euler: no asymptotic range" in out
    code, out, err = cli(capsys, "compare", TOML, "--methods", "rk4", "--steps", "100")
    assert code == 2 and "at least two values" in err


def test_catalog_parameter_errors_are_the_projects_own(capsys):
    code, out, err = cli(capsys, "lines", "servo_sleigh", "-p", "b_v=0")
    assert code == 2 and "not realizable" in err and "division" not in err


def test_report_takes_a_toml_file(tmp_path, capsys):
    code, out, err = cli(capsys, "report", TOML, "--out", tmp_path / "rep", "--no-compare")
    assert code == 0, err
    assert (tmp_path / "rep" / "servo2_sleigh.html").is_file()
    # the file's name leaves the registry with the command: a later `liedyn list` in the same process
    # (or another test) sees the catalog only
    assert "servo2_sleigh" not in catalog.names()


# ----------------------------------------------------------------------------------- motion on the group
def test_path_in_the_plane_against_quadrature(tmp_path, capsys):
    """v = 0: x' = u cos(theta), y' = u sin(theta), theta' = w, with u = w1, w = w3 from the run."""
    e = own_entry(t_end=5.0, steps=4000)
    run = catalog.simulate(e)
    u, w = run.w[:, 0], run.w[:, 2]
    th = scipy.integrate.cumulative_trapezoid(w, run.t, initial=0.0)
    x = scipy.integrate.cumulative_trapezoid(u * np.cos(th), run.t, initial=0.0)
    y = scipy.integrate.cumulative_trapezoid(u * np.sin(th), run.t, initial=0.0)
    assert np.max(np.abs(run.outputs["path"] - np.stack([x, y], -1))) < 1e-5
    code, out, err = cli(capsys, "simulate", TOML, "--out", tmp_path / "t.csv", "-p", "t_end=5", "-p", "steps=4000")
    import pandas as pd

    t = pd.read_csv(tmp_path / "t.csv")
    assert list(t.columns[:8]) == ["t", "m1", "m2", "m3", "lambda", "x", "y", "theta"]
    assert np.allclose(t["x"], x, atol=1e-5) and np.allclose(t["theta"], th, atol=1e-5)


def test_second_kind_run_has_one_multiplier_per_time_and_writes_csv(tmp_path):
    """lambda is a state of the second kind: res.multiplier (= res["lambda"]) is the state's last column,
    one value per time, and res["lambda_dot"] is its rate: against the derivative of the lambda column by
    the spline of the saved values (a second method). The run (with its path on SE(2)) writes its CSV."""
    import pandas as pd

    run = catalog.simulate(own_entry(t_end=4.0, steps=4000))
    K = len(run.t)
    assert run.multiplier.shape == (K,) and run["lambda_dot"].shape == (K,)
    assert np.array_equal(run.multiplier, run.y[:, 3]) and np.array_equal(run["lambda"], run.y[:, 3])
    lamdot = scipy.interpolate.CubicSpline(run.t, run.y[:, 3]).derivative()(run.t)
    assert np.max(np.abs(run["lambda_dot"] - lamdot)[5:-5]) < 1e-6 * max(1.0, np.max(np.abs(lamdot)))
    assert np.max(np.abs(run["lambda_dot"])) > 1e-2          # lambda does move: the comparison can fail
    t = pd.read_csv(run.to_csv(tmp_path / "run.csv"))
    assert len(t) == K and np.allclose(t["multiplier"], run.y[:, 3], rtol=0, atol=1e-15)


def test_plot_draws_the_heading_of_an_own_se2_system():
    """The --plot figure of a system on SE(2) without a blade draws its heading as arrows: at each arrow's
    instant the direction is (cos theta, sin theta) with theta = int w dt (quadrature of the run's w3),
    and each arrow starts on the path. Drawing and reading the pose leave the run's CSV columns alone."""
    import matplotlib
    from catalog.output import plots

    run = catalog.simulate(own_entry(t_end=5.0, steps=4000))
    fig = plots.trajectory_figure(own_entry(), run)
    quivers = [c for ax in fig.axes for c in ax.collections if isinstance(c, matplotlib.quiver.Quiver)]
    assert len(quivers) == 1 and quivers[0].get_label() == "heading (body axis e1)"
    q = quivers[0]
    th = scipy.integrate.cumulative_trapezoid(run.w[:, 2], run.t, initial=0.0)
    k = np.linspace(0, len(run.t) - 1, len(q.U)).round().astype(int)
    assert np.allclose(np.arctan2(q.V, q.U), np.angle(np.exp(1j * th[k])), atol=1e-5)
    assert np.allclose(q.get_offsets(), run.outputs["path"][k], atol=1e-12)
    # a sleigh on a blade keeps its blade (segments, no arrows)
    blade = catalog.get("chaplygin_sleigh")
    fig = plots.trajectory_figure(blade, catalog.simulate(blade, steps=200))
    assert not [c for ax in fig.axes for c in ax.collections if isinstance(c, matplotlib.quiver.Quiver)]
    assert any(c.get_label() == "blade (along the heading)" for ax in fig.axes for c in ax.collections)
    matplotlib.pyplot.close("all")
    cols = list(run.to_dict())
    assert "pose" not in cols and "g" not in cols


def _rz(t):
    c, s = np.cos(t), np.sin(t)
    R = np.zeros(t.shape + (3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1], R[:, 2, 2] = c, -s, s, c, 1.0
    return R


def test_attitude_on_so3_and_motion_on_se3_against_rotations_about_a_fixed_axis(tmp_path, capsys):
    """A principal rotation w = e3 (steady: m x w = 0) has R(t) = Rz(t); on se(3) with I = 1 the screw
    w = (e3, e3) is steady (M x Omega + P x v = 0, P x Omega = 0), R = Rz(t) and the origin moves by R v = e3."""
    from catalog.verify.motion import attitude, motion

    e = Entry.from_system(EulerPoincare(named.so3(), np.diag([1.0, 2.0, 3.0])), [0.0, 0.0, 3.0], 4.0, steps=200)
    run = catalog.simulate(e)
    assert np.max(np.abs(attitude(run) - _rz(run.t))) < 1e-9
    e3 = Entry.from_system(EulerPoincare(named.se3(), np.eye(6)), [0, 0, 1.0, 0, 0, 1.0], 4.0, steps=200)
    run = catalog.simulate(e3)
    m = motion(run)
    assert np.max(np.abs(attitude(run) - _rz(run.t))) < 1e-9
    assert np.allclose(m["z"], run.t, atol=1e-9) and np.allclose(m["x"], 0, atol=1e-9)
    code, out, err = cli(capsys, "simulate", ROOT / "catalog" / "entries" / "data" / "flywheel.toml", "--out",
                         tmp_path / "f.csv", "--plot", tmp_path / "f.png")
    assert code == 0, err
    assert (tmp_path / "f-motion.png").is_file()
    head = (tmp_path / "f.csv").read_text().splitlines()[0].split(",")
    assert head[5:14] == [f"R{i}{j}" for i in (1, 2, 3) for j in (1, 2, 3)]


# ----------------------------------------------------------------------------------- printed summaries
def test_print_gives_summaries_of_at_most_30_lines():
    e = own_entry()
    run = catalog.simulate(e)
    texts = [str(run), repr(run), str(e), repr(e)]
    sw = catalog.sweep("flywheel_body", {"b2": "-1:1:5", "b3": "0.2:2:3"}, "invariant_lines", serial=True)
    texts.append(str(sw))
    L = e.system.reduced().system.invariant_lines()
    texts.append(str(L))
    for t in texts:
        assert len(t.splitlines()) <= 30 and "array(" not in t and "..., " not in t
    (k, _), = run.invariants.items()
    assert f"relative drift {float(np.max(run.drift(k))):.2e}" in str(run)
    assert "method rk853_projected" in str(run)
    assert f"{len(L)} lines ({L.real_count} real)" in str(L)
    assert "SweepResult: invariant_lines of entry 'flywheel_body'" in str(sw)


# ------------------------------------------------------------------------------------ the reduced system
def test_reduced_system_is_exact_and_agrees_with_the_numeric_tensor():
    import sympy as sp

    red = own_entry().system.reduced()
    exprs = red.exact_exprs
    assert all(isinstance(c, (sp.Integer, sp.Rational)) for e in exprs for c in sp.Poly(e, *red.variables).coeffs())
    f = sp.lambdify([red.variables], exprs, "numpy")
    x = np.random.default_rng(3).normal(size=(3, 3))
    for xi in x:
        assert np.allclose(f(xi), red.system.v(xi), rtol=1e-13, atol=1e-14)
    # hand derivation of the third equation: u' + (3/10) lambda' = w lambda (v = 0) and
    # 2 v' + lambda' = -u w - (3/10) w lambda give lambda' = -u w - (3/10) w lambda
    u, w, lam = red.variables
    assert sp.expand(exprs[2] - (-u * w - sp.Rational(3, 10) * w * lam)) == 0
    assert "\\frac{3}{10}" in red.latex() and "1.42857" not in repr(red)


def test_default_method_is_named_from_the_method_table():
    from servo.lie.method_choice import METHOD_TABLE

    assert f"'{METHOD_TABLE['casimirs']}'" in ServoSecondKind.__doc__
    assert "rkmk4" not in ServoSecondKind.__doc__.split("The default method")[1]


# ------------------------------------------------------------------------- the order fit and line tracking
def test_order_fit_uses_only_the_asymptotic_range():
    from catalog.verify.compare import fit_order

    h = 10.0 / np.array([25, 50, 100, 200, 400, 800])
    err = 1e-9 * (h / h[-1]) ** 4  # C h^4: 1e-9 at the finest rung, 1e-3 at 100 steps
    err[:2] = [1.3, 0.9]  # order-1 errors of unresolved steps
    p, used, note = fit_order(h, err)
    assert p == pytest.approx(4.0, abs=1e-9) and sorted(used) == [2, 3, 4, 5] and note == ""
    p, used, note = fit_order(h[:3], [1.3, 0.9, 0.4])
    assert p is None and "no asymptotic range" in note


def test_line_columns_follow_each_line_by_continuity():
    """Two lines rotate towards each other and c crosses: sorted by c the slots swap, by continuity not."""
    from catalog.sweeps import grid
    from catalog.sweeps.line_tracking import track_lines

    g = grid(s="0:1:11")
    s = g.values["s"]
    th_a, th_b = 0.1 + 0.3 * s, 1.4 - 0.3 * s
    c_a, c_b = 1.0 - s, s
    cols = {"index": np.arange(11), "s": s}
    slot1 = np.where(c_a <= c_b, 0, 1)  # the measure's order: by c
    dirs = np.stack([[np.cos(th_a), np.sin(th_a)], [np.cos(th_b), np.sin(th_b)]])  # (2 lines, 2, 11)
    cs = np.stack([c_a, c_b])
    for k, pick in ((1, slot1), (2, 1 - slot1)):
        cols[f"c_{k}"] = cs[pick, np.arange(11)]
        cols[f"stability_{k}"] = np.array(["saddle"] * 11, dtype=object)
        cols[f"xi_{k}"] = np.array([f"{dirs[pick[i], 0, i]};{dirs[pick[i], 1, i]}" for i in range(11)], dtype=object)
    cols["error"] = np.array([""] * 11, dtype=object)
    out, lines = track_lines(cols, g)
    assert len(lines) == 2
    first = 0 if lines[0]["direction"][0] == pytest.approx(np.cos(th_a[0])) else 1
    assert np.allclose(out[f"c_{first + 1}"], c_a) and np.allclose(out[f"c_{2 - first}"], c_b)
