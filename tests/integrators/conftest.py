"""Fixtures shared by the tests of the integrators' compiled paths."""

import pytest

from integrators.backends import auto_compile


@pytest.fixture
def cold_specialised(monkeypatch):
    """Every specialised loop "not compiled and not on disk", the background queue recording its jobs."""
    jobs = []
    monkeypatch.setattr(auto_compile, "submit", lambda key, job: jobs.append(key))
    monkeypatch.setattr(auto_compile, "compiled", lambda pl, kind: False)
    monkeypatch.setattr(auto_compile, "specialised_on_disk", lambda pl, kind: False)
    monkeypatch.delenv("LIEDYN_AUTO_COMPILE", raising=False)
    return jobs
