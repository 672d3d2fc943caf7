"""What a user notices first: the licence, the shipped example, error messages of the command line,
``--out`` by suffix, ``lines --plot`` on a reduced system with p > 3, and README examples that print what
their comments say.

Expected values: the MIT licence text and pyproject's PEP 639 fields; the dimension count p = dim g - 1
of a Lie-group system with one constraint (se(3): 6 - 1 = 5); the Heisenberg algebra's centre z (a
degree-1 Casimir); the README comments themselves (each literal after ``#`` is compared with the value of
the statement it annotates)."""

import ast
import contextlib
import io
import json
import re
import sys
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

import catalog

ROOT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def cli(capsys, *args):
    from catalog.cli.main import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error_line(code, err):
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("liedyn: error: "), err
    assert "Traceback" not in err


# ---- licence and packaging ----------------------------------------------------------------------

def test_license_file_and_pep639_fields():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "liedyn authors" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT" and meta["project"]["license-files"] == ["LICENSE"]
    # PEP 639 strings need setuptools >= 77; an older one would reject or warn
    req = [r for r in meta["build-system"]["requires"] if r.startswith("setuptools")][0]
    assert int(re.search(r">=(\d+)", req).group(1)) >= 77


def test_example_toml_is_package_data_and_loads():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "data/*.toml" in meta["tool"]["setuptools"]["package-data"]["catalog.entries"]
    path = files("catalog") / "entries/data/flywheel.toml"
    e = catalog.from_file(path)
    # servo2 on so(3): state (m, lambda), (a, w) = w3 = 0 at the start, as the file says
    assert e.model == "servo2" and np.asarray(e.initial_state).shape == (4,)
    assert e.references == ["kozlov_servo_lectures"]


# ---- error messages ------------------------------------------------------------------------------

def test_compare_unknown_method_is_one_error_line(capsys):
    code, out, err = cli(capsys, "compare", "euler_top", "--methods", "nosuch")
    one_error_line(code, err)
    assert "'nosuch'" in err and "rkmk4" in err and out == ""


def test_compare_inapplicable_method_is_refused(capsys):
    # the splittings integrate the free so(3) body only; beghin_body is forced (servo of the first kind)
    code, out, err = cli(capsys, "compare", "beghin_body", "--methods", "rk4,splitting")
    one_error_line(code, err)
    assert "'splitting'" in err


@pytest.mark.parametrize("degree", ["0", "1", "9", "100", "-3"])
def test_algebras_max_degree_out_of_range(degree, capsys):
    code, out, err = cli(capsys, "algebras", "--max-degree", degree)
    one_error_line(code, err)
    assert "between 2 and 8" in err and f"got {degree}" in err and out == ""


def test_algebras_max_degree_in_range_says_which_degree(capsys):
    code, out, err = cli(capsys, "algebras", "--max-degree", "2", "--json")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["heisenberg"]["casimirs"] == ["m3"]           # the centre z, degree 1
    assert rows["so3"]["casimirs"] == ["m1**2 + m2**2 + m3**2"]
    code, out, err = cli(capsys, "algebras", "--max-degree", "2")
    assert "(none polynomial up to degree 2)" in out and "degree 4" not in out


# ---- --out by suffix ------------------------------------------------------------------------------

def test_simulate_out_json_and_csv(tmp_path, capsys):
    j, c = tmp_path / "traj.json", tmp_path / "traj.csv"
    code, out, err = cli(capsys, "simulate", "euler_top", "--t-end", "1", "--steps", "40", "--out", j)
    assert code == 0, err
    d = json.loads(j.read_text())
    y = np.asarray(d["y"])
    assert y.shape == (41, 3) and len(d["t"]) == 41 and d["t"][-1] == pytest.approx(1.0)
    assert np.allclose(y[-1], d["final_state"])
    # the Euler top keeps |m|^2 (a Casimir of so(3)): the JSON's integral column is the same number
    key = next(k for k in d["integrals"] if "casimir" in k.lower())
    assert np.allclose(d["integrals"][key], np.sum(y * y, -1))
    code, out, err = cli(capsys, "simulate", "euler_top", "--t-end", "1", "--steps", "40", "--out", c)
    assert code == 0, err
    arr = np.loadtxt(c, delimiter=",", skiprows=1)
    assert np.allclose(arr[:, 1:4], y)


def test_simulate_out_unknown_suffix(tmp_path, capsys):
    code, out, err = cli(capsys, "simulate", "euler_top", "--out", tmp_path / "traj.txt")
    one_error_line(code, err)
    assert ".csv or .json" in err and not (tmp_path / "traj.txt").exists()


def test_report_out_json(tmp_path, capsys, monkeypatch):
    from catalog.output import report
    from catalog.verify.run import Verdict

    seen = {}

    def fake_write_report(out, names=None, progress=None, compare=True):
        seen["out"] = Path(out)
        return Path(out) / "index.html", [Verdict("integral", "energy", 1e-15, 1e-9)], []

    monkeypatch.setattr(report, "write_report", fake_write_report)
    target = tmp_path / "checks.json"
    code, out, err = cli(capsys, "report", "--only", "euler_top", "--no-compare", "--out", target)
    assert code == 0, err
    d = json.loads(target.read_text())
    assert d["checks"] == 1 and d["passed"] == 1 and d["verdicts"][0]["what"] == "energy"
    assert seen["out"] != target and not seen["out"].exists()   # the HTML went to a dropped temporary dir


# ---- lines --plot with p > 3 ----------------------------------------------------------------------

# (equal translational masses: the lines of its p = 5 system are computed in ~2 s; distinct masses take
# ~60 s for the same test of the command line)
SE3_TOML = """algebra = "se3"
inertia = [2.0, 1.5, 1.0, 1.0, 1.0, 1.0]
model = "nonholonomic"
a = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
[initial]
w = [1.0, 0.5, 0.0, 0.2, 0.1, 0.3]
"""


def test_lines_plot_needs_p_at_most_3_said_before_computing(tmp_path, capsys, monkeypatch):
    f = tmp_path / "body.toml"
    f.write_text(SE3_TOML)
    png = tmp_path / "lines.png"
    from catalog.cli import lines

    def stop(entry, q=None):
        raise RuntimeError("stopped before the computation")

    monkeypatch.setattr(lines, "lines_of", stop)
    code, out, err = cli(capsys, "lines", f, "--plot", png)
    note, error = err.strip().split("\n")
    assert "p = 5" in note and "p = 3" in note and error.startswith("liedyn: error: stopped")
    monkeypatch.undo()
    code, out, err = cli(capsys, "lines", f, "--plot", png, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["p"] == 5 and "lines" in d and not png.exists()    # p = dim se(3) - 1 constraint
    assert "no figure" in err


# ---- README ----------------------------------------------------------------------------------------

def _readme_blocks():
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def _expected(comment):
    """The literal a README comment promises, or None: '# [0.0, 4.0]', '# text: [0.0, 4.0]', '# ~1e-16 ...'."""
    for cand in (comment, comment.rsplit(": ", 1)[-1]):
        try:
            return ("==", ast.literal_eval(cand.strip()))
        except (ValueError, SyntaxError):
            pass
    m = re.match(r"~(\d(?:\.\d+)?e-?\d+)", comment)
    if m:
        return ("~", float(m.group(1)))
    m = re.match(r"(\w+)\((.*)\)$", comment.strip())
    if m and "=" in m.group(2):
        return ("repr", comment.strip())
    return None


def test_readme_examples_print_what_their_comments_say(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    checked = 0
    for block in _readme_blocks():
        ns, lines = {}, block.splitlines()
        for node in ast.parse(block).body:
            src = "\n".join(lines[node.lineno - 1:node.end_lineno])
            last = lines[node.end_lineno - 1]
            comment = last.split("  # ", 1)[1] if "  # " in last else ""
            with contextlib.redirect_stdout(io.StringIO()):
                if isinstance(node, ast.Expr):
                    value = eval(compile(ast.Expression(node.value), "README", "eval"), ns)
                else:
                    exec(compile(ast.Module([node], []), "README", "exec"), ns)
                    value = ns.get(node.targets[0].id) if isinstance(node, ast.Assign) and \
                        isinstance(node.targets[0], ast.Name) else None
            exp = _expected(comment) if comment else None
            if exp is None:
                continue
            kind, want = exp
            if kind == "==" and isinstance(node, ast.Expr):
                got = list(value) if isinstance(want, list) and not isinstance(value, str) else value
                assert got == want or np.allclose(got, want, atol=1e-12), f"{src}: got {value!r}"
            elif kind == "~" and isinstance(node, ast.Expr):
                size = float(np.max(np.abs(value)))
                assert want / 10 <= size <= want * 10, f"{src}: got {size:.3g}"
            elif kind == "repr":
                pattern = re.escape(want).replace(r"\.\.\.", ".*")
                assert re.fullmatch(pattern, repr(value)), f"{src}: got {value!r}"
            else:
                continue
            checked += 1
    assert checked >= 9
