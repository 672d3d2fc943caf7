"""Classical explicit Runge-Kutta tableaux of fixed-step methods (Hairer, Norsett and Wanner, *Solving ODEs I*, II.1).

* ``EULER``: the explicit Euler method, order 1 (Euler 1768).
* ``HEUN``: the explicit trapezoidal rule (Heun 1900), order 2: k1 = f(y), k2 = f(y + h k1), y1 = y + h (k1 + k2)/2.
* ``RK4``: the classical method of Kutta (1901), order 4.
"""

from .tableau import Tableau

EULER = Tableau("euler", A=((),), b=(1.0,), c=(0.0,), order=1, reference="Euler (1768)")

HEUN = Tableau("heun", A=((), (1.0,)), b=(0.5, 0.5), c=(0.0, 1.0), order=2, reference="Heun (1900)")

RK4 = Tableau("rk4", A=((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)), b=(1 / 6, 1 / 3, 1 / 3, 1 / 6),
              c=(0.0, 0.5, 0.5, 1.0), order=4, reference="Kutta (1901)")
