"""``liedyn sweep``: one-line errors with exit status 2 for bad ranges, unknown parameters and measures;
the files and the --json description of a serial run (values checked against the API's formula)."""

import json

import numpy as np
import pytest

from catalog.cli.main import main


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("args, words", [
    (["-p", "I1=1:3"], "sweep axis 'I1': range '1:3' must look like lo:hi:num"),
    (["-p", "I1=1:3:zero"], "number of values 'zero' is not a number"),
    (["-p", "I1=3:1:0"], "must be a positive integer"),
    (["-p", "I9=1:3:4"], "has no parameter 'I9'; accepted: I1=2.0"),
    (["-p", "I1"], "must look like KEY=lo:hi:num"),
    (["-p", "I1=1:2:3", "-p", "I1=1:2:3"], "'I1' is given twice"),
    (["-p", "I1=1:2:3", "--seed", "3"], "--seed applies to --random"),
    (["-p", "I1=1:2", "--random", "0"], "positive integer"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, words):
    code, out, err = cli(capsys, "sweep", "euler_top", *args, "--measure", "invariant_lines", "--serial")
    assert code == 2 and out == ""
    assert err.startswith("liedyn: error: ") and err.count("\n") == 1 and words in err, err


def test_unknown_measure_and_entry(capsys):
    code, _, err = cli(capsys, "sweep", "euler_top", "-p", "I1=1:2:3", "--measure", "lines", "--serial")
    assert code == 2 and "unknown measure 'lines'; known: empty, exact_error, friction_rate" in err
    code, _, err = cli(capsys, "sweep", "euler_topp", "-p", "I1=1:2:3", "--measure", "empty", "--serial")
    assert code == 2 and "unknown catalog entry 'euler_topp' (did you mean euler_top" in err
    with pytest.raises(SystemExit) as exc:  # argparse: --measure is required
        main(["sweep", "euler_top", "-p", "I1=1:2:3"])
    assert exc.value.code == 2 and "liedyn: error: the following arguments are required: --measure" in capsys.readouterr().err


def test_serial_run_writes_table_description_and_figure(capsys, tmp_path):
    import pandas as pd

    code, out, err = cli(capsys, "sweep", "beghin_body", "-p", "n[1]=-1:1:3", "-p", "n[2]=0.5,1",
                         "--measure", "realizability", "--serial", "--out", tmp_path, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["points"] == 6 and d["failed"] == 0 and d["info"]["engine"] == "serial"
    t = pd.read_csv(d["files"]["table"])
    I = np.array([[3.0, 0.2, 0.4], [0.2, 2.0, 0.3], [0.4, 0.3, 1.0]])  # the entry's documented inertia
    n = np.stack([np.zeros(6), t["n[1]"], t["n[2]"]], -1)
    assert np.allclose(t["realizability"], n @ np.linalg.inv(I)[:, 2], atol=1e-15)  # (I^-1 e3, n)
    assert json.loads((tmp_path / "sweep.json").read_text())["columns"] == list(t.columns)
    assert (tmp_path / "sweep.png").stat().st_size > 0


def test_random_samples_from_the_command_line(capsys, tmp_path):
    code, out, err = cli(capsys, "sweep", "servo_sleigh", "-p", "a_u=0.5:1", "-p", "c_w=-1:-0.5", "--random", "5",
                         "--seed", "7", "--measure", "empty", "--serial", "--out", tmp_path, "--no-plot")
    assert code == 0, err
    import pandas as pd

    t = pd.read_csv(tmp_path / "sweep.csv")
    rng = np.random.default_rng(7)
    assert np.allclose(t["a_u"], rng.uniform(0.5, 1, 5), rtol=1e-15) and np.allclose(t["c_w"], rng.uniform(-1, -0.5, 5))
    assert "5 random points (seed 7)" in out and "figure" not in out
