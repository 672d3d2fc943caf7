"""Small helpers shared by the entry modules: Lie-group systems by model name and their requirements.

:func:`lie_system` maps a model name to the ``servo.lie`` class (imported on first use, so
importing the catalog does not import servo):

| model | class | state |
| --- | --- | --- |
| free | EulerPoincare(algebra, inertia) | m (n) |
| nonholonomic | Nonholonomic(algebra, inertia, a=a) | m (n) |
| servo1 | ServoFirstKind(algebra, inertia, a=a, b=b) | m (n) |
| servo2 | ServoSecondKind(algebra, inertia, a=a, b=b) | (m, lambda) (n + 1) |
| vakonomic | Vakonomic(algebra, inertia, a=a) | (m, lambda) (n + 1) |
"""

from __future__ import annotations

import numpy as np

MODELS = {
    "free": "EulerPoincare",
    "nonholonomic": "Nonholonomic",
    "servo1": "ServoFirstKind",
    "servo2": "ServoSecondKind",
    "vakonomic": "Vakonomic",
}


def lie_system(model, algebra, inertia, a=None, b=None):
    """The ``servo`` system for ``model`` (see the table in the module docstring)."""
    import servo

    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    cls = getattr(servo, MODELS[model])
    if model == "free":
        return cls(algebra, inertia)
    if model in ("nonholonomic", "vakonomic"):
        return cls(algebra, inertia, a=np.asarray(a, float))
    return cls(algebra, inertia, a=np.asarray(a, float), b=np.asarray(b, float))


def requires_for(model):
    """The ``requires`` tuple of an entry using ``model``."""
    return ("integrators.integrate", f"servo.{MODELS[model]}")
