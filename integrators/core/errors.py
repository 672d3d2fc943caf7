"""Exceptions raised by integrators. All derive from :class:`IntegratorError` (a ValueError)."""


class IntegratorError(ValueError):
    """Base class of every exception raised by integrators."""


class IntegrationInputError(IntegratorError):
    """Bad arguments to ``integrate`` or ``reconstruct``, a problem or an event (names the argument,
    what was expected and what was given)."""


class MethodError(IntegratorError):
    """Unknown method name, or a method that does not apply to the problem."""


class ConvergenceError(IntegratorError):
    """An implicit stage did not converge (names the step time and the last increment)."""
