"""core: the types every room shares - problems (the protocols an integrator consumes), the one result type, the one
exception hierarchy, input validation, step and output grids, export, display and the progress line."""
