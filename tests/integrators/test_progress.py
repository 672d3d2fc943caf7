"""The progress line of integrators.integrate (integrators.core.progress): it never changes a result, it is
written to the given stream when forced on, and nothing is written when off, when the stream is not a
terminal, or under a caller's quiet()."""

import io
import sys

import numpy as np
import pytest

from integrators import CoadjointProblem, IntegrationInputError, integrate
from integrators.core import progress as progress_mod
from liegroups import named


class TTY(io.StringIO):
    def isatty(self):
        return True


def _problem():
    so3 = named.so3()
    inv_I = np.diag([1 / 1.0, 1 / 2.0, 1 / 3.0])
    return CoadjointProblem(so3, velocity=lambda z: z @ inv_I.T, name="Euler top")


Z0 = np.array([[0.3, 1.0, 0.2], [1.0, -0.5, 0.7]])


@pytest.mark.parametrize("method, kw", [("rkmk4", {"steps": 200}), ("rkmk45", {}), ("scipy:RK45", {})])
def test_results_identical_with_and_without_the_line(method, kw):
    off = integrate(_problem(), Z0, (0.0, 2.0), method=method, progress=False, **kw)
    on = integrate(_problem(), Z0, (0.0, 2.0), method=method, progress=io.StringIO(), **kw)
    np.testing.assert_array_equal(on.t, off.t)
    np.testing.assert_array_equal(on.y, off.y)  # bit for bit
    assert on.nsteps == off.nsteps and on.status == off.status == 0


def test_forced_on_writes_method_trajectories_and_steps_to_the_stream(monkeypatch):
    monkeypatch.setattr(progress_mod, "INTERVAL", 0.01)
    stream = io.StringIO()
    res = integrate(_problem(), Z0, (0.0, 1.0), method="rkmk4", steps=50, progress=stream)
    text = stream.getvalue()
    assert "integrate rkmk4 (2 trajectories)" in text
    assert f"done: {res.nsteps} steps" in text and res.nsteps == 50


def test_nothing_written_when_off_or_not_a_terminal(monkeypatch, capsys):
    tty = TTY()
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.setattr(progress_mod, "AUTO_DELAY", 0.0)
    monkeypatch.delenv("LIEDYN_PROGRESS", raising=False)
    integrate(_problem(), Z0, (0.0, 1.0), method="rkmk4", steps=20, progress=False)
    assert tty.getvalue() == ""
    # automatic mode on a terminal with no delay: the line appears (so the next assertions can fail)
    integrate(_problem(), Z0, (0.0, 1.0), method="rkmk4", steps=20)
    assert "integrate rkmk4" in tty.getvalue()
    # ... but not on a non-terminal stderr, not with LIEDYN_PROGRESS=0, not under quiet()
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    integrate(_problem(), Z0, (0.0, 1.0), method="rkmk4", steps=20)
    assert plain.getvalue() == ""
    tty2 = TTY()
    monkeypatch.setattr(sys, "stderr", tty2)
    with progress_mod.quiet():
        integrate(_problem(), Z0, (0.0, 1.0), method="rkmk4", steps=20)
    monkeypatch.setenv("LIEDYN_PROGRESS", "0")
    integrate(_problem(), Z0, (0.0, 1.0), method="rkmk4", steps=20)
    assert tty2.getvalue() == ""


def test_automatic_line_waits_for_a_long_run(monkeypatch):
    tty = TTY()
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.delenv("LIEDYN_PROGRESS", raising=False)
    monkeypatch.setattr(progress_mod, "AUTO_DELAY", 60.0)  # a run shorter than the delay prints nothing
    integrate(_problem(), Z0, (0.0, 1.0), method="rkmk4", steps=20)
    assert tty.getvalue() == ""


def test_bad_progress_value_is_named():
    with pytest.raises(IntegrationInputError, match="progress must be None, True, False or a writable text stream"):
        integrate(_problem(), Z0, (0.0, 1.0), method="rkmk4", steps=20, progress="yes")
