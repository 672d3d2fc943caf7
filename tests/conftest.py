import os

import matplotlib
import pytest
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")
# backend="auto" compiles nothing in a background thread of the test process (integrators.backends.auto_compile);
# the tests of that policy set it themselves
os.environ.setdefault("LIEDYN_AUTO_COMPILE", "off")

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _auto_without_the_generic_kernel(request, monkeypatch):
    """backend="auto" in a test runs what it runs on a machine without the generic kernel (numpy or the
    specialised loop), whatever an earlier test in the same process loaded or wrote to the disk cache: the
    tests' results do not depend on their order. tests/integrators/test_generic_kernel.py tests the kernel
    and the "auto" policy itself, test_generic_kernel_forced.py the kernel on forced problems,
    test_generic_kernel_grid.py its output grid, test_cold_numba.py the kernel under backend="numba",
    test_generic_ensemble.py the generic ensemble kernel (integrators.backends.generic_ensemble) and its choice."""
    if request.node.fspath.basename in ("test_generic_kernel.py", "test_generic_kernel_forced.py",
                                        "test_generic_kernel_grid.py", "test_cold_numba.py",
                                        "test_generic_ensemble.py"):
        return
    from integrators.backends import auto_compile, generic_kernel
    monkeypatch.setattr(generic_kernel, "compiled", lambda: False)
    monkeypatch.setattr(auto_compile, "generic_ready", lambda: False)
    monkeypatch.setattr(auto_compile, "generic_ensemble_ready", lambda: False)
