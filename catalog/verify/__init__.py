"""catalog.verify: what the entries claim, checked against simulations.

* ``claims``: the first integrals and constraint residuals of each model, written from the equations
  independently of ``servo``; ``exact``: exact solutions derived independently of ``servo``;
* ``run``: :func:`simulate` an entry and turn the result into PASS/FAIL :class:`Verdict` lines;
* ``relations``: numerical checks of the relation graph's edges; ``compare``: the integrator comparison.
"""
