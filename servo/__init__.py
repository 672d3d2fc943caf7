"""servo: mechanics on Lie groups and in coordinates with nonholonomic, vakonomic and servo-constraints.

Each module adds its public names below (one import block per module).
"""

from .quadratic import QuadraticSystem, QuadraticSystemError
