"""backends: turn generated text into callables and run them - exec'd Python (floats, numpy columns) or numba
(the optional extra ``liedyn[fast]``), the compiled ensembles, and the runner of the generated loops."""
