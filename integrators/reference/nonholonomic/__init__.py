"""integrators.reference.nonholonomic: structure-preserving schemes for nonholonomic and vakonomic systems and
servo-constraints of the second kind (discrete Lagrange-d'Alembert and discrete Euler-Poincare schemes).

* ``problems``: the data the schemes need (``problem.discrete``) and builders of complete problems;
* ``retractions``: exp and Cayley as maps on g*; ``newton``: the batched Newton solve;
* ``lie_schemes``: discrete Lagrange-d'Alembert-Suslov (Fedorov and Zenkov 2005) and discrete
  vakonomic (Benito and Martin de Diego 2005) steps on Lie groups;
* ``coordinate_schemes``: McLachlan and Perlmutter (2006) eq. (4.18) and the nonholonomic RATTLE of
  Ferraro, Iglesias and Martin de Diego (2008) in coordinates;
* ``vakonomic_schemes``: the discrete vakonomic / second-kind scheme in coordinates (Benito and Martin
  de Diego 2005 with the midpoint discrete Lagrangian);
* ``steppers``: scheme name -> stepper (called by ``integrators.reference.stepping.make_stepper``).

The methods are rows of :data:`integrators.METHODS` (class ``DiscreteMechanics``).
"""

from .problems import (LagrangeDAlembertData, LieConstraintData, VakonomicCoordinateData, contact_oscillator, contact_oscillator_initial,
                       contact_oscillator_nonreversible, lagrange_dalembert_problem, suslov_problem)

__all__ = ["LagrangeDAlembertData", "LieConstraintData", "VakonomicCoordinateData", "contact_oscillator", "contact_oscillator_initial",
           "contact_oscillator_nonreversible", "lagrange_dalembert_problem",
           "suslov_problem"]
