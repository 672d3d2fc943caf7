"""Coefficients of the Lie-group methods that are products of exponentials rather than Runge-Kutta
tableaux, and of the splitting compositions.

* ``CF4_STAGES``, ``CF4_UPDATE``, ``CF4_C``: the commutator-free method of order 4 of Celledoni,
  Marthinsen and Owren (2003): stages Y_i and the update as products of exponentials of combinations of
  the F_j = xi(Y_j); the update exp(h sum beta2_i F_i) exp(h sum beta1_i F_i) with beta1 =
  (1/4, 1/6, 1/6, -1/12) acting FIRST (swapping the two gives order 2: ``CF4_SWAPPED_UPDATE``, tested).
* ``CG3_STAGES``, ``CG3_UPDATE``, ``CG3_C``: Crouch and Grossman (1993), order 3 (Hairer, Lubich and
  Wanner (2006), section IV.8.1).
* ``STRANG``, ``YOSHIDA4``, ``YOSHIDA6``: substep fractions of compositions of Strang steps: one step
  (order 2), Yoshida's triple jump (order 4) and Yoshida's (1990) seven-stage order-6 solution A.

``stages[i]`` lists coefficient vectors over the F_j of earlier stages; the exponentials are applied to
y0 in list order, Y_i = exp(h alpha_{i,last} . F) ... exp(h alpha_{i,0} . F) y0.
"""

CF4_BETA1 = (0.25, 1 / 6, 1 / 6, -1 / 12)
CF4_BETA2 = (-1 / 12, 1 / 6, 1 / 6, 0.25)
CF4_STAGES = ((), ((0.5,),), ((0.0, 0.5),), ((0.5,), (-0.5, 0.0, 1.0)))
CF4_UPDATE = (CF4_BETA1, CF4_BETA2)
CF4_SWAPPED_UPDATE = (CF4_BETA2, CF4_BETA1)
CF4_C = (0.0, 0.5, 0.5, 1.0)

CG3_STAGES = ((), ((0.75,),), ((119 / 216,), (0.0, 17 / 108)))
CG3_UPDATE = ((13 / 51,), (0.0, -2 / 3), (0.0, 0.0, 24 / 17))
CG3_C = (0.0, 0.75, 17 / 24)

STRANG = (1.0,)
_Y4 = 1.0 / (2.0 - 2.0 ** (1.0 / 3.0))
YOSHIDA4 = (_Y4, 1.0 - 2.0 * _Y4, _Y4)
# Yoshida (1990) order-6 composition, solution A: w3 w2 w1 w0 w1 w2 w3
_W6 = (0.784513610477560, 0.235573213359357, -1.17767998417887)
YOSHIDA6 = _W6 + (1.0 - 2.0 * sum(_W6),) + _W6[::-1]
