"""The comparison harness: measured orders against the declared ones, the reference choice, and the
work-precision interpolation (against a power law computed by hand)."""

import numpy as np
import pytest

from integrators import compare
from integrators.analysis.compare import work_at_error
from integrators.analysis.rigid_body import REFERENCE_INERTIA, REFERENCE_M0, free_rigid_body, rigid_body_exact


def test_compare_measures_declared_orders_and_drift():
    body = free_rigid_body(REFERENCE_INERTIA)
    exact = lambda t: rigid_body_exact(REFERENCE_INERTIA, REFERENCE_M0, t)  # noqa: E731
    comp = compare(body, REFERENCE_M0, 5.0, methods=["rkmk4", "splitting", "rk4", "scipy:DOP853"], exact=exact,
                   steps=(25, 50, 100), tolerances=(1e-6, 1e-9))
    assert comp.reference == "exact solution"
    assert abs(comp["rkmk4"].measured_order - 4) < 0.2
    assert abs(comp["splitting"].measured_order - 2) < 0.2
    assert comp["scipy:DOP853"].measured_order is None and len(comp["scipy:DOP853"].error) == 2
    cas = "casimir:m1**2 + m2**2 + m3**2"
    assert comp["rkmk4"].drift[cas] < 1e-14 < comp["rk4"].drift[cas]
    table = comp.markdown(at_error=1e-6)
    assert table.count("\n") == 5 and "rkmk4" in table


def test_dop853_reference_when_no_exact_solution():
    body = free_rigid_body(REFERENCE_INERTIA)
    comp = compare(body, REFERENCE_M0, 2.0, methods=["rkmk4"], steps=(20, 40))
    assert comp.reference.startswith("scipy DOP853")
    err_exact = np.max(np.abs(
        compare(body, REFERENCE_M0, 2.0, methods=["rkmk4"], steps=(20, 40),
                exact=rigid_body_exact(REFERENCE_INERTIA, REFERENCE_M0, 2.0))["rkmk4"].error[-1]))
    assert abs(comp["rkmk4"].error[-1] - err_exact) < 1e-11


def test_work_precision_interpolation_is_log_log():
    errs = [1e-4, 1e-6, 1e-8]
    work = [1.0, 10.0, 100.0]  # work ~ err^(-1/2)
    assert work_at_error(errs, work, 1e-7) == pytest.approx(10 ** 1.5, rel=1e-12)
    assert work_at_error(errs, work, 1e-10) is None
