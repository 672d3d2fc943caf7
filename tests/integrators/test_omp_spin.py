"""numba_kernels.require sets GOMP_SPINCOUNT (numba's OpenMP workers otherwise spin a core for milliseconds after
each parallel ensemble call) only where the user has not chosen: an existing GOMP_SPINCOUNT or OMP_WAIT_POLICY is
kept."""

import pytest

from integrators.backends import numba_kernels

pytestmark = pytest.mark.skipif(not numba_kernels.available(), reason="numba not installed")


def test_spin_count_set_when_unset(monkeypatch):
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    numba_kernels.require()
    import os
    assert os.environ["GOMP_SPINCOUNT"] == numba_kernels.GOMP_SPINCOUNT == "1000"


def test_the_users_choice_is_kept(monkeypatch):
    import os
    monkeypatch.setenv("GOMP_SPINCOUNT", "77")
    numba_kernels.require()
    assert os.environ["GOMP_SPINCOUNT"] == "77"
    monkeypatch.delenv("GOMP_SPINCOUNT")
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    numba_kernels.require()
    assert "GOMP_SPINCOUNT" not in os.environ
