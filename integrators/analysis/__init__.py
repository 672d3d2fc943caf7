"""analysis: what sits on top of a run - the comparison harness (measured orders, work-precision) and the free
rigid body with its exact solution, the reference problem of the comparisons."""
