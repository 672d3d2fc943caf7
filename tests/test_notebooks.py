"""The example notebook is executed (nbclient + ipykernel), so it cannot rot, and its outputs are what a
reader should see: the equations typeset with exact coefficients, the algebra's type and Casimirs, the
drift table of a run, the invariant lines of the servo-sleigh.

Expected values come from outside the printer: the Beghin row is the hand derivation of
tests/servo/lie/test_symbolic_print.py; so(3) is semisimple with Casimir |m|^2, se(3) is neither solvable
nor semisimple (so(3) semidirect R^3); the servo-sleigh's reduced system u' = alpha u w, w' = beta u w with
(alpha, beta) = (1/2, -1/2) has the invariant line xi = (-1, 1)/sqrt(2) with c = sqrt(2)/4
(v(xi) = xi_1 xi_2 (alpha, beta) = (-1/4, 1/4) = c xi).
"""

import os
from pathlib import Path

import pytest

from .servo.lie.test_symbolic_print import BEGHIN, FLYWHEEL, SLEIGH

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]

BEGHIN_ROW_2 = (r"\frac{1}{5} \dot{\omega}_{1} + 2 \dot{\omega}_{2} + \frac{3}{10} \dot{\omega}_{3} &= "
                r"\frac{2}{5} \omega_{1}^{2} + \frac{3}{10} \omega_{1} \omega_{2} - 2 \omega_{1} \omega_{3} "
                r"- \frac{1}{5} \omega_{2} \omega_{3} - \frac{2}{5} \omega_{3}^{2} + \frac{3}{5} \lambda")


def _outputs(cell, mime):
    return "".join(o.get("data", {}).get(mime, "") + (o.get("text", "") if mime == "text/plain" else "")
                   for o in cell.get("outputs", []))


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.read(ROOT / "examples" / "tour.ipynb", as_version=4)
    env_path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    old = {k: os.environ.get(k) for k in ("PYTHONPATH", "MPLBACKEND")}
    os.environ["PYTHONPATH"] = env_path          # the kernel imports this tree
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"   # figures as image/png outputs
    try:
        client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                                         resources={"metadata": {"path": str(ROOT / "examples")}})
        client.execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return [c for c in nb.cells if c.cell_type == "code"]


def test_notebook_runs_without_errors(executed):
    for c in executed:
        assert not any(o.get("output_type") == "error" for o in c.get("outputs", [])), c.source


def test_algebras_show_type_and_casimirs(executed):
    so3, se3 = _outputs(executed[0], "text/markdown"), _outputs(executed[1], "text/markdown")
    assert "| type | semisimple |" in so3 and "m_{1}^{2} + m_{2}^{2} + m_{3}^{2}" in so3
    assert "| type | neither solvable nor semisimple |" in se3 and "| dimension | 6 |" in se3


def test_equations_are_typeset_as_written_by_hand(executed):
    entry = _outputs(executed[2], "text/markdown")
    eqs = _outputs(executed[3], "text/latex")
    printed = _outputs(executed[4], "text/plain")
    for text in (entry, eqs, printed):
        assert BEGHIN_ROW_2 in text
        assert "Derivative" not in text and "0.333" not in text
    assert eqs.startswith("$$") and printed.startswith("\\begin{align}")
    assert printed.strip() == BEGHIN                     # print(eq.latex()): the whole block to paste
    for row in BEGHIN.splitlines()[1:-1]:
        assert row in entry and row in eqs
    flywheel = _outputs(executed[8], "text/latex")
    assert r"\frac{1}{2} \dot{\lambda}" in flywheel
    for row in FLYWHEEL.splitlines()[1:-1]:
        assert row in flywheel
    sleigh = _outputs(executed[5], "text/markdown")
    assert SLEIGH.replace("{align}", "{aligned}") in sleigh
    # its integral beta u - alpha w = -(u + w)/2 (alpha = 1/2, beta = -1/2, I = 1 so m = w), exactly
    assert "$m_{1} + m_{3}$" in sleigh


def test_run_and_lines_tables(executed):
    res = _outputs(executed[6], "text/markdown")
    # the servo-sleigh records its constraint (a, w) = v, kept to round-off by every Runge-Kutta method (a
    # linear invariant); the default rk853 (servo.lie.method_choice) fills the grid of 500 steps
    assert res.startswith("**IntegrationResult** (rk853): reached the end; t in [0, 5], y (501, 3)")
    row = [r for r in res.splitlines() if r.startswith("| `(a, w)` |")]
    assert row and float(row[0].split("|")[2]) < 1e-12
    lines = _outputs(executed[7], "text/markdown")
    row = [r for r in lines.splitlines() if r.startswith("| (-0.7071, 0.7071) |")]
    assert row and row[0].split("|")[2].strip() == f"{2 ** 0.5 / 4:.6g}"
    assert any(o.get("data", {}).get("image/png") for o in executed[9].get("outputs", []))
