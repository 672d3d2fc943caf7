"""catalog.sweeps on a real 2-worker dask LocalCluster: the same table (bitwise) whatever the workers and
chunks, a worker killed mid-sweep loses and duplicates no point, dask's progress bar only on a terminal
(and on stderr), ``liedyn sweep --scheduler``."""

import io
import json
import os
import signal
import sys

import numpy as np
import pytest

from catalog.sweeps import sweep

distributed = pytest.importorskip("distributed")  # `make test` installs liedyn[distributed]


@pytest.fixture(scope="module")
def client():
    """Two single-threaded workers as threads of this process (cheap); tcp so that --scheduler can reach it."""
    import logging

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def same(a, b):
    assert list(a.columns) == list(b.columns)
    for k in a.columns:
        assert np.array_equal(a.columns[k], b.columns[k], equal_nan=a.columns[k].dtype.kind == "f"), k


def test_same_table_whatever_the_workers_and_chunks(client):
    g = {"a_u": [-1.0, 0.0, 0.5], "c_w": [-0.5, 0.5]}
    ref = sweep("servo_sleigh", g, "invariant_lines", serial=True)
    for chunk in (1, None):
        r = sweep("servo_sleigh", g, "invariant_lines", client=client, chunk=chunk)
        assert r.info["engine"] == "dask" and r.info["workers"] == 2
        same(r, ref)
    # a fixed-step integrator: the drift is bitwise the same on the workers as here
    opts = {"method": "rk4", "steps": 50}
    same(sweep("servo_sleigh", {"a_u": [0.5, 1.0, 2.0]}, "integrals_drift", client=client, chunk=1, options=opts),
         sweep("servo_sleigh", {"a_u": [0.5, 1.0, 2.0]}, "integrals_drift", serial=True, options=opts))


def test_progress_bar_only_on_a_terminal_and_on_stderr(client, capsys, monkeypatch):
    sweep("servo_sleigh", {"a_u": [0.5, 1.0]}, "empty", client=client)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""  # not a terminal: silent

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    sweep("servo_sleigh", {"a_u": [0.5, 1.0]}, "empty", client=client)
    assert "% Completed" in term.getvalue()
    assert capsys.readouterr().out == ""


def test_cli_uses_the_cluster_at_scheduler(client, capsys, tmp_path):
    from catalog.cli.main import main

    code = main(["sweep", "servo_sleigh", "-p", "a_u=0.5:1:3", "-p", "c_w=-0.5", "--measure", "invariant_lines",
                 "--scheduler", client.scheduler.address, "--out", str(tmp_path), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    d = json.loads(out.out)
    assert d["info"]["engine"] == "dask" and d["info"]["workers"] == 2 and d["failed"] == 0
    assert d["info"]["scheduler"] == client.scheduler.address
    assert (tmp_path / "sweep.csv").exists() and (tmp_path / "sweep.png").exists()


def test_worker_process_killed_mid_sweep_loses_and_duplicates_nothing(tmp_path):
    """A LocalCluster of 2 worker processes (with nannies), created by the sweep itself. The measure
    kills its own worker process (SIGKILL) the first time it meets point 5; the scheduler runs that chunk
    again elsewhere. Every point comes back once, with its value."""
    marker = tmp_path / "killed"

    def measure(point):
        x = point.values["I1"]
        if x == 5.0 and not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return {"square": x * x, "pid": os.getpid()}

    r = sweep("euler_top", {"I1": np.arange(12.0)}, measure, workers=2, chunk=1)
    killed = int(marker.read_text())
    assert r.info["engine"] == "dask" and r.info["workers"] >= 1
    assert np.array_equal(r.column("index"), np.arange(12)) and r.failed == 0
    assert np.array_equal(r.column("square"), np.arange(12.0) ** 2)
    # point 5 was run again by another process (its first run never returned); results the killed process
    # had already handed back may stay (they are gathered as each task ends), none is lost or duplicated
    pids = r.column("pid")
    assert os.getpid() not in set(pids.tolist()) and int(pids[5]) != killed
