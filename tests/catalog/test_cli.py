"""The liedyn command line through subprocess calls of .venv/bin/liedyn, including the error paths
(exit status 2, one line on stderr, no traceback; --debug shows it), and the report's HTML referencing
only files that exist."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
LIEDYN = Path(sys.executable).parent / "liedyn"
DATA = Path(__file__).parents[2] / "catalog" / "entries" / "data"  # the example TOML the package ships


def to_lists(d):
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def run(*args, cwd=None):
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(ROOT))
    return subprocess.run([str(LIEDYN), *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=cwd or ROOT, timeout=300)


def cli(capsys, *args):
    """In-process call of the same entry point (catalog.cli.main.main): (status, stdout, stderr)."""
    from catalog.cli.main import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_json_matches_api():
    import catalog

    p = run("list", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert [r["name"] for r in rows] == catalog.names()
    assert all(r["defaults"] == to_lists(catalog.defaults(r["name"])) for r in rows)


def test_show_json_and_latex(capsys):
    code, out, err = cli(capsys, "show", "beghin_body", "--json")
    assert code == 0, err
    d = json.loads(out)
    # (I^-1 l, n) computed here from the entry's documented defaults
    import catalog

    e = catalog.get("beghin_body")
    expect = float(np.linalg.solve(e.extras["inertia"], e.extras["a"]) @ e.extras["b"])
    assert abs(d["realizability"] - expect) < 1e-12
    assert d["references"] and d["equations"] and d["model"] == "servo1"
    code, out, err = cli(capsys, "show", "beghin_body", "--latex")
    assert code == 0 and "\\omega" in out


def test_simulate_csv_plot_and_json(tmp_path):
    csv, png = tmp_path / "traj.csv", tmp_path / "p.png"
    p = run("simulate", "servo_sleigh", "--t-end", "2", "--steps", "200", "--out", csv, "--plot", png, "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert png.stat().st_size > 1000
    data = np.loadtxt(csv, delimiter=",", skiprows=1)
    assert data.shape == (201, 1 + 3 + 3 + 1)  # t, p_u, p_v, p_w, x, y, theta (the path on SE(2)), gamma
    # u(2) from u = gamma/(beta + C e^(gamma t)) with the entry's defaults (alpha = 0.5, beta = -0.5, u0 = 1, w0 = 0.5)
    alpha, beta, u0, w0 = 0.5, -0.5, 1.0, 0.5
    gamma = beta * u0 - alpha * w0
    u2 = gamma / (beta + (gamma / u0 - beta) * np.exp(gamma * 2.0))
    assert abs(data[-1, 1] - u2) < 1e-8 and abs(d["final_state"][0] - u2) < 1e-8
    assert all(v["passed"] for v in d["verdicts"])
    assert d["constraint_residual"]["(a, w)"] < 1e-12


def test_simulate_text_reports_drift_and_residual(capsys):
    code, out, err = cli(capsys, "simulate", "suslov", "--steps", "200")
    assert code == 0, err
    assert re.search(r"PASS\s+integral\s+energy .*relative drift", out)
    assert re.search(r"PASS\s+constraint\s+\(a, w\)", out)


def test_lines_json(capsys):
    """The Chaplygin servo-sleigh u' = alpha u w, w' = beta u w: the axes are lines of equilibria and
    (alpha, beta)/|.| is the invariant line with c = alpha beta / |(alpha, beta)| (v(xi) = c xi)."""
    code, out, err = cli(capsys, "lines", "servo_sleigh", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["p"] == 2 and d["total_multiplicity"] == 3 and d["certified"]
    eq = sorted(tuple(np.round(np.abs(r["direction"]), 12)) for r in d["lines"] if r["is_equilibrium_line"])
    assert eq == [(0.0, 1.0), (1.0, 0.0)]
    # in the momentum-free reduced variables (u, w): xi = (alpha, beta)/norm, c = alpha*beta/norm
    alpha, beta = 0.5, -0.5
    other = [r for r in d["lines"] if not r["is_equilibrium_line"]][0]
    xi = np.array(other["direction"], float)
    c = other["c"]
    v = np.array([alpha * xi[0] * xi[1], beta * xi[0] * xi[1]])
    assert np.allclose(v, c * xi, atol=1e-10) and abs(c) > 0.1


def test_compare_table(tmp_path, capsys):
    png = tmp_path / "c.png"
    code, out, err = cli(capsys, "compare", "euler_top", "--methods", "rk4,rkmk4,scipy:DOP853", "--t-end", "2",
                         "--plot", png, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["reference"] == "exact solution"
    assert abs(d["summary"]["rk4"]["order"] - 4) < 0.3 and abs(d["summary"]["rkmk4"]["order"] - 4) < 0.3
    assert png.stat().st_size > 1000


def test_compare_time_to_error_1e8_as_a_ratio_to_dop853(capsys):
    """Each method's time to a final error of 1e-8 over DOP853's: the column is printed, DOP853's row is
    1.00, and re-running each reported setting reaches <= 1e-8 against the entry's exact solution."""
    from catalog import get, simulate

    methods = "rk4,rkmk4,rkmk853,lie_euler,scipy:DOP853"
    code, out, err = cli(capsys, "compare", "euler_top", "--methods", methods, "--t-end", "2")
    assert code == 0, err
    assert "t(1e-8)/DOP853" in out
    dop_line = next(line for line in out.splitlines() if line.startswith("scipy:DOP853"))
    assert " 1.00x " in dop_line
    code, out, err = cli(capsys, "compare", "euler_top", "--methods", methods, "--t-end", "2", "--json")
    summary = json.loads(out)["summary"]
    assert summary["scipy:DOP853"]["vs_DOP853_at_1e-8"] == 1.0
    assert summary["lie_euler"]["time_at_1e-8"] is None  # order 1: beyond the search, shown as '-'
    e = get("euler_top")
    exact = np.asarray(e.exact_solution(np.array([2.0])), float)[-1]
    for m in ("rk4", "rkmk4", "rkmk853", "scipy:DOP853"):
        s = summary[m]
        assert s["error_at_1e-8"] <= 1e-8 and s["time_at_1e-8"] > 0 and s["vs_DOP853_at_1e-8"] > 0
        run = simulate(e, t_end=2.0, method=m, **s["kwargs_at_1e-8"])
        assert np.max(np.abs(run.y[-1] - exact)) <= 1e-8, m


def test_toml_path_as_name(capsys):
    code, out, err = cli(capsys, "simulate", DATA / "flywheel.toml", "--steps", "100")
    assert code == 0, err
    assert "my_flywheel" in out and "FAIL" not in out


@pytest.mark.parametrize("args, msg", [
    (("show", "no_such_system"), "unknown catalog entry 'no_such_system'"),
    (("simulate", "euler_top", "-p", "mass=2"), "no parameter 'mass'"),
    (("simulate", "beghin_body", "-p", "n=1,0,0", "-p", "I13=0", "-p", "I12=0"), "realiz"),
    (("simulate", "euler_top", "--steps", "0"), "steps must be at least 1"),
    (("lines", "skate_inclined"), "no homogeneous quadratic reduced system"),
    (("simulate", "servo_sleigh", "--method", "splitting"), "does not apply"),
    (("simulate",), "required: NAME"),
    (("simulate", "euler_top", "--steps", "abc"), "invalid int value"),
])
def test_errors_exit_2_with_one_line(args, msg, capsys):
    try:
        code, out, err = cli(capsys, *args)
    except SystemExit as exc:  # argparse usage errors exit from inside main
        code, err = exc.code, capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("liedyn: error:"), err
    assert re.search(msg, lines[0], re.I), lines[0]
    assert "Traceback" not in err


def test_unknown_name_through_the_installed_script():
    p = run("show", "no_such_system")
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown catalog entry 'no_such_system'" in lines[0] and "Traceback" not in p.stderr


def test_bad_toml_and_off_constraint_state(tmp_path, capsys):
    from catalog import TomlEntryError

    f = tmp_path / "off.toml"
    f.write_text(DATA.joinpath("flywheel.toml").read_text().replace("w = [1.0, 0.5, 0.0]", "w = [1.0, 0.5, 0.3]"))
    code, out, err = cli(capsys, "simulate", f)
    assert code == 2 and "off the constraint" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(TomlEntryError, match="off the constraint"):  # --debug lets the exception through
        cli(capsys, "--debug", "simulate", f)


def test_report_references_only_existing_files(tmp_path):
    out = tmp_path / "rep"
    p = run("report", "--out", out, "--only", "euler_top", "--no-compare", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    html = (out / "index.html").read_text()
    refs = re.findall(r"""(?:src|href)=['"]([^'"#]+)['"]""", html)
    assert refs, "no figures referenced"
    for r in refs:
        assert not re.match(r"[a-z]+://", r), f"network reference {r}"
        assert (out / r).is_file(), f"missing {r}"
    assert "<script" not in html.lower()
    assert d["passed"] == d["checks"] and "PASS" in html
