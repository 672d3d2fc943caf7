"""Every exception class defined anywhere in integrators derives from IntegratorError (a ValueError);
there is one hierarchy, in integrators.core.errors."""

import numpy as np
import pytest

from integrators import (ConvergenceError, IntegrationInputError, IntegratorError, MethodError, ODEProblem,
                         integrate)


def test_one_exception_hierarchy_in_core_errors():
    """Every room raises the classes of integrators.core.errors (one hierarchy): the names a room imports
    are the very objects the package exports."""
    from integrators.core import errors
    from integrators.engine.driver import IntegrationInputError as a
    from integrators.methods.registry import MethodError as b
    from integrators.reference.stepping import ConvergenceError as c

    assert (a, b, c) == (IntegrationInputError, MethodError, ConvergenceError)
    assert (a, b, c) == (errors.IntegrationInputError, errors.MethodError, errors.ConvergenceError)


def test_problem_and_event_errors_are_integrator_errors():
    with pytest.raises(IntegratorError, match="outputs must map names"):
        ODEProblem(lambda t, y: -y, 1, outputs={"a": 1})
    with pytest.raises(IntegratorError, match="an event must be a callable"):
        integrate(lambda t, y: -y, [1.0], (0.0, 1.0), method="rk4", steps=2, events=[3])
    with pytest.raises(IntegratorError, match="inertia must be three positive"):
        from integrators.analysis.rigid_body import free_rigid_body

        free_rigid_body([1.0, -1.0, 2.0])
    with pytest.raises(IntegratorError, match="t_eval"):
        integrate(lambda t, y: -y, np.ones(1), (0.0, 1.0), method="rk4", t_eval=[0.5])


def test_an_output_grid_too_large_for_memory_is_refused_before_allocation():
    # an adaptive pair fills an output grid from its continuous extension: 10^10 points of 3 numbers
    # would need 224 GiB, refused with the save_every that fits (not a MemoryError from numpy)
    from integrators import integrate
    from integrators.analysis.rigid_body import free_rigid_body
    with pytest.raises(IntegrationInputError, match="output grid of 10000000000 intervals.*save_every >="):
        integrate(free_rigid_body((2.0, 1.0, 0.5)), [1.0, 0.2, 0.3], (0.0, 1.0), method="rkmk853", steps=10**10)
