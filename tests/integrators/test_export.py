"""Trajectories out of an IntegrationResult: machine-readable column names, an exact CSV round trip, a dict
of arrays that keeps batch axes, pandas (when installed), the refusal to flatten a batch into CSV, and
``liedyn simulate --json`` carrying the trajectory or saying where it went."""

import csv
import json
import re

import numpy as np
import pytest

from integrators import integrate
from integrators.core.errors import IntegrationInputError
from integrators.core.export import column_name
from integrators.analysis.rigid_body import free_rigid_body

I = np.array([2.0, 1.0, 2.0 / 3.0])


def run(m0, steps=20):
    return integrate(free_rigid_body(tuple(I)), m0, (0.0, 1.0), method="rk4", steps=steps)


def test_column_names():
    assert column_name("energy (m; I^-1 m)/2") == "energy"
    assert column_name("casimir:m1**2 + m2**2 + m3**2") == "casimir"
    assert column_name("|m|^2 (Casimir)") == "m_2_Casimir"
    assert column_name("(a, w)") == "a_w"
    assert column_name("M3 (Lagrange top)") == "M3"
    assert column_name("energy", taken={"energy", "energy_2"}) == "energy_3"
    assert column_name("2nd") == "c_2nd"


def test_csv_round_trip_is_exact(tmp_path):
    res = run(np.array([np.cos(1.1), 0.0, np.sin(1.1)]))
    path = res.to_csv(tmp_path / "traj.csv")
    with open(path) as f:
        rows = list(csv.reader(f))
    head, data = rows[0], np.array(rows[1:], float)
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", h) for h in head)
    assert head[:4] == ["t", "y1", "y2", "y3"] and "energy" in head and "casimir" in head
    assert np.array_equal(data[:, 0], res.t) and np.array_equal(data[:, 1:4], res.y)
    # the energy column is (m, I^-1 m)/2 of the state columns, computed here independently
    assert np.allclose(data[:, head.index("energy")], 0.5 * np.sum(data[:, 1:4] ** 2 / I, axis=1), rtol=1e-15)
    assert res.columns()["casimir"] == "casimir:m1**2 + m2**2 + m3**2"


def test_batch_stays_a_batch_in_a_dict_and_is_refused_by_csv(tmp_path):
    res = run(np.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8]]), steps=5)
    d = res.to_dict()
    assert d["t"].shape == (6,) and d["y2"].shape == (6, 2) and np.array_equal(d["y3"], res.y[..., 2])
    with pytest.raises(IntegrationInputError, match=r"one trajectory.*'y1' has shape \(6, 2\)"):
        res.to_csv(tmp_path / "x.csv")


def test_pandas_frame_indexed_by_time():
    pd = pytest.importorskip("pandas")
    res = run(np.array([0.0, 1.0, 0.0]), steps=4)
    df = res.to_pandas()
    assert isinstance(df, pd.DataFrame) and df.index.name == "t"
    assert np.array_equal(df.index.to_numpy(), res.t) and np.array_equal(df["y2"].to_numpy(), res.y[:, 1])


def test_cli_json_carries_the_trajectory(capsys, tmp_path):
    from catalog.cli.main import main

    assert main(["simulate", "euler_top", "--steps", "10", "--t-end", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    tr = d["trajectory"]
    data = {k: np.asarray(v) for k, v in tr["data"].items()}
    assert len(data["t"]) == 11 and tr["columns"]["energy"].startswith("energy (")
    # euler_top's default inertia from the catalog; energy = sum m_i^2 / (2 I_i) from the state columns
    import catalog

    Id = np.diag(catalog.get("euler_top").extras["inertia"])
    m = np.column_stack([data["m1"], data["m2"], data["m3"]])
    assert np.allclose(data["energy"], 0.5 * np.sum(m**2 / Id, axis=1), rtol=1e-14)
    out = tmp_path / "t.csv"
    assert main(["simulate", "euler_top", "--steps", "10", "--t-end", "1", "--json", "--out", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["trajectory"]["csv"] == str(out) and "data" not in d["trajectory"]
    assert out.read_text().splitlines()[0] == ",".join(d["trajectory"]["columns"])


def test_xarray_keeps_batch_axes():
    pytest.importorskip("xarray")
    res = run(np.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8]]), steps=5)
    ds = res.to_xarray()
    assert ds["y1"].dims == ("t", "batch_0") and ds["y1"].shape == (6, 2)
    assert np.array_equal(ds["t"].to_numpy(), res.t) and np.array_equal(ds["y3"].to_numpy(), res.y[..., 2])
