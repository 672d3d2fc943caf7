"""The report's checks can fail: each compares against something that shares no code with the run (an
exact solution, equations written by hand in catalog.verify.reference, a closed form), and a wrong model,
a wrong axis or a rate that is not 1/N gives FAIL."""

import numpy as np
import pytest

import catalog
from catalog.verify import reference, relations
from catalog.verify.run import Verdict, checks, simulate


def test_beghin_reference_is_independent_of_servo():
    # Beghin's equations by hand once more, for one step: m' = m x w + lambda n, lambda from (l, w)' = 0
    e = catalog.get("beghin_body")
    I, l, n = e.extras["inertia"], e.extras["a"], e.extras["b"]
    m0 = np.asarray(e.initial_state, float)
    Iinv = np.linalg.inv(I)
    mxw = np.cross(m0, Iinv @ m0)
    lam = -(l @ Iinv @ mxw) / (l @ Iinv @ n)
    mdot = mxw + lam * n
    assert abs(l @ Iinv @ mdot) < 1e-14                      # the constraint's derivative vanishes
    h = 1e-4
    m = reference.first_kind(I, l, n, m0, np.array([0.0, h]))
    assert np.allclose((m[1] - m[0]) / h, mdot, atol=1e-3)


def test_beghin_page_check_passes_and_fails_for_a_wrong_axis():
    e = catalog.get("beghin_body", steps=200, t_end=4.0)
    run = simulate(e)
    v = [x for x in checks(e, run) if x.what == "reference"]
    assert len(v) == 1 and v[0].passed and v[0].against == "independent reference"
    assert 0 < v[0].value < 1e-8                              # an honest integration error, not a zero
    wrong = catalog.get("beghin_body", n=(0.0, 0.8, 0.6), steps=200, t_end=4.0)   # another control axis
    assert np.max(np.abs(run.y - reference.reference(wrong, run.t))) > 1e-2


@pytest.mark.parametrize("fn", [relations.suslov_is_beghin, relations.vakonomic_is_flywheel,
                                relations.on_blade_is_ell_zero, relations.on_blade_is_servo])
def test_special_cases_compare_with_an_independent_form(fn):
    v = fn()
    assert v.passed and v.value > 0, v.line()                 # not the same computation twice


def test_special_case_fails_for_the_wrong_model():
    # Suslov's run against the second-kind equations (a wrong model) must fail
    e = catalog.get("suslov", steps=200, t_end=4.0)
    run = simulate(e)
    ref = reference.second_kind(e.extras["inertia"], e.extras["a"], e.extras["a"], run.y[0], [0.3], run.t)[:, :3]
    assert np.max(np.abs(run.y - ref)) > 1e-3


def test_rate_uses_at_least_four_n_and_every_doubling():
    Ns = [25, 50, 100, 200, 400]
    good = relations._rate([1 / N for N in Ns], Ns, "x", "")
    assert good.passed and good.value < 1e-12 and good.data["N"] == Ns
    # 1/N^2 is not O(1/N) convergence at the promised rate: FAIL
    assert not relations._rate([1 / N**2 for N in Ns], Ns, "x", "").passed
    # a fit that looks right overall but one doubling that does not halve the error: FAIL
    errs = [4e-2, 2e-2, 1e-2, 1e-2, 2.5e-3]
    assert abs(np.polyfit(np.log(Ns), np.log(errs), 1)[0] + 1) < 0.15
    assert not relations._rate(errs, Ns, "x", "").passed
    with pytest.raises(ValueError, match="at least 4"):
        relations._rate([0.1, 0.05], [25, 50], "x", "")


def test_verdict_says_against_what_and_its_margin():
    v = Verdict("energy", "integral", 1e-12, 1e-9)
    assert v.against == "conserved quantity" and v.margin == pytest.approx(1e3)
    assert Verdict("c", "constraint", 0.0, 1e-9).margin == float("inf")
    assert Verdict("c", "claim", float("nan"), 1e-9).margin == 0.0
    assert Verdict("c", "exact", 1.0, 1e-9).against == "exact solution"
