"""catalog.simulate and the checks reuse the problem the entry's system keeps (servo.lie.built_once): two
simulations and their checks of one entry build one CoadjointProblem, and give the same states."""

import numpy as np
import pytest

import integrators.core.problems as problems
from catalog import registry
from catalog.verify.run import checks, simulate


@pytest.mark.parametrize("name", ["flywheel_body", "suslov", "heavy_top"])
def test_one_problem_per_entry(name, monkeypatch):
    entry = registry.get(name)
    built = []
    real = problems.CoadjointProblem.__init__
    monkeypatch.setattr(problems.CoadjointProblem, "__init__",
                        lambda self, *a, **k: built.append(1) or real(self, *a, **k))
    first = simulate(entry, steps=50)
    checks(entry, first)
    second = simulate(entry, steps=50)
    checks(entry, second)
    assert len(built) <= 1 and entry.system.problem() is entry.system.problem()
    assert np.array_equal(first.y, second.y)
