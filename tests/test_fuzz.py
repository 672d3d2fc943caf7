"""Fuzz of the promise "never a silent wrong answer" (hypothesis, derandomized, small enough for CI):
every call of the public API or the CLI either answers with finite numbers (status 0), says that it
failed (status -1 and a message), or raises an error of the project's hierarchy; none leaks a NaN or
inf with status 0, none raises a foreign exception, none runs longer than BOUND seconds.
The long run (``make fuzz``, ``benchmarks/fuzz.py``) draws 10^4 cases from the same generators."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_cases import KINDS, classify

BOUND = 15.0          # seconds; a scipy run stops itself after max_wall_time = 1 s

units = st.lists(st.floats(0.0, 0.999), min_size=8, max_size=8)
reals = st.lists(st.floats(-10.0, 10.0, allow_nan=False), min_size=12, max_size=12)
FUZZ = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_promise(kind):
    @FUZZ
    @given(units, reals)
    def check(u, x):
        verdict, seconds, detail = classify(KINDS[kind](u, np.array(x)))
        assert verdict in ("ok", "failed", "refused"), (verdict, detail)
        assert seconds < BOUND, (seconds, detail)

    check()


def test_the_constraint_audit_flags_a_drifting_status_0_run():
    # a status-0 result whose (a, w) drifts is a leak; the same run with (a, w) = 0 passes
    from integrators.core.result import IntegrationResult
    from tests.fuzz_cases import PromiseBroken, audit_constraint
    inertia, a = np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.0, 1.0])
    kept = np.array([[1.0, 2.0, 0.0], [0.5, 1.0, 0.0]])
    ok = IntegrationResult(t=np.array([0.0, 1.0]), y=kept, status=0, message="")
    assert audit_constraint(ok, inertia, a) is ok
    drift = IntegrationResult(t=np.array([0.0, 1.0]), y=kept + [[0, 0, 0], [0, 0, 0.36]], status=0, message="")
    with pytest.raises(PromiseBroken, match=r"\(a, w\)"):
        audit_constraint(drift, inertia, a)
    assert classify(lambda: audit_constraint(drift, inertia, a))[0] == "leak"
