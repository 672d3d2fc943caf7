"""backend="auto" on a fixed-step run or an independent ensemble that the engine would compile: a loop that a child
process (or an earlier process) left in numba's disk cache is loaded in the call and run ("numba"), instead of a
first call in numpy with the compile queued again; a failed load is reported in FAILED and the run takes numpy.
The compile itself is stubbed (the markers and the loads are what is tested)."""

import numpy as np
import pytest

from integrators import METHODS
from integrators.backends import auto_compile, batch_kernels, fastpath
from liegroups import named
from servo.lie import EulerPoincare


def _plan(method):
    s = EulerPoincare(named.so3(), np.diag([1.0, 2.0, 3.0]))
    m = METHODS[method]
    return fastpath.plan(s.problem(), m.tableau, m.lie, m.terms, np.array([0.3, 0.5, 0.7]))


@pytest.fixture
def disk(monkeypatch):
    """The markers on disk (a set of loop names), the loads recorded, nothing queued."""
    on_disk, loads, queued = set(), [], []
    monkeypatch.setenv("LIEDYN_AUTO_COMPILE", "background")
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, name: name in on_disk)
    monkeypatch.setattr(auto_compile, "busy", lambda: False)
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: queued.append(key[0]))
    monkeypatch.setattr(auto_compile, "_warm_fixed", lambda pl: loads.append("fixed"))
    monkeypatch.setattr(batch_kernels, "warm_fixed", lambda pl: loads.append("fixed_batch"))
    monkeypatch.setattr(batch_kernels, "warm_independent", lambda pl, grid: loads.append(("independent", grid)))
    monkeypatch.setattr(batch_kernels, "fixed_ready", lambda pl: False)
    monkeypatch.setattr(batch_kernels, "independent_ready", lambda pl, grid: False)
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    return on_disk, loads, queued


def test_loops_on_disk_are_loaded_in_the_call(disk):
    on_disk, loads, queued = disk
    fixed, pair = _plan("rk4"), _plan("rk853")
    assert auto_compile.choose_fixed(fixed, False) == "numpy" and auto_compile.choose_independent(pair, False) == "numpy"
    assert queued == ["fixed", "independent"] and loads == []              # nothing on disk: queued, numpy now
    on_disk.update({"fixed", "fixed_batch", "independent_grid"})
    queued.clear()
    assert auto_compile.choose_fixed(fixed, False) == "numba"
    assert auto_compile.choose_fixed(fixed, True) == "numba"
    assert auto_compile.choose_independent(pair, True) == "numba"
    assert auto_compile.choose_independent(pair, False) == "numpy"          # the grid-less kernel is not on disk
    assert loads == ["fixed", "fixed_batch", ("independent", True)] and queued == ["independent"]


def test_a_failed_load_is_reported_and_the_run_takes_numpy(disk, monkeypatch):
    on_disk, loads, queued = disk
    on_disk.add("independent")

    def broken(pl, grid):
        raise OSError("cache file truncated")

    monkeypatch.setattr(batch_kernels, "warm_independent", broken)
    n0 = len(auto_compile.FAILED)
    assert auto_compile.choose_independent(_plan("rk853"), False) == "numpy"
    assert "cache file truncated" in auto_compile.FAILED[-1][1] and len(auto_compile.FAILED) == n0 + 1
    assert queued == ["independent"]
    del auto_compile.FAILED[n0:]
