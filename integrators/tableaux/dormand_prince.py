"""The Dormand-Prince 5(4) pair RK5(4)7FM (Dormand and Prince 1980) with Shampine's continuous extension.

6 stages, FSAL (the 7th entry of the error weights and of the interpolant weighs h f(t + h, y1), the first
stage of the next step); the error estimator has order 4. The dense output of order 4 is Shampine's
(Shampine 1986, "Some practical Runge-Kutta formulas", Math. Comp. 46; Hairer, Norsett and Wanner I,
II.6): b_i(theta) = sum_q P[i, q-1] theta^q. The numbers are those of scipy's RK45 (A, B, C, E, P).
"""

from .tableau import Tableau

DP5 = Tableau(
    "dp5",
    A=((), (1 / 5,), (3 / 40, 9 / 40), (44 / 45, -56 / 15, 32 / 9),
       (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
       (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656)),
    b=(35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
    c=(0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0),
    order=5,
    E=((-71 / 57600, 0.0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40),),
    err_order=4,
    fsal=True,
    P=((1.0, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432),
       (0.0, 0.0, 0.0, 0.0),
       (0.0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799),
       (0.0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072),
       (0.0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632),
       (0.0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844),
       (0.0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423)),
    dense_order=4,
    reference="Dormand and Prince (1980); dense output Shampine (1986)",
)
