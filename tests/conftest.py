import os

import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")
# backend="auto" compiles nothing in a background thread of the test process (integrators.backends.auto_compile);
# the tests of that policy set it themselves
os.environ.setdefault("LIEDYN_AUTO_COMPILE", "off")

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
