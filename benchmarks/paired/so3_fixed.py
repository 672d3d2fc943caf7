"""Cases timed by ``benchmarks/paired_trees.py --cases so3_fixed`` in one tree (its path the first argument): the fixed-step
so(3) rows of the public integrate (rigid body, numpy backend), one trajectory and an ensemble of 10^4;
prints the medians as JSON. Times are the process's CPU time (time.process_time: the machine is shared, and
CPU time does not count the waits for a core that other processes' load adds to wall time); check=True
(the default guards) as a user calls it."""
import json
import statistics
import sys
import time

tree = sys.argv[1]
sys.path.insert(0, tree)
import numpy as np  # noqa: E402
from integrators import integrate  # noqa: E402
from integrators.analysis.rigid_body import free_rigid_body, REFERENCE_INERTIA, REFERENCE_M0  # noqa: E402

body = free_rigid_body(REFERENCE_INERTIA)
m0 = np.array(REFERENCE_M0)
Z = np.random.default_rng(0).standard_normal((10000, 3))
cases = {}
for meth in ("rkmk4", "cf4", "cg3", "splitting", "splitting4", "lie_euler"):
    for steps in (2000, 100000):
        cases[f"{meth} {steps} steps"] = (lambda m=meth, s=steps: integrate(body, m0, (0, 10), m, steps=s,
                                                                            backend="numpy", save_every=100))
    cases[f"{meth} 1e4 bodies 200 steps"] = (lambda m=meth: integrate(body, Z, (0, 10), m, steps=200,
                                                                       backend="numpy", save_every=100))
only = sys.argv[2].split(",") if len(sys.argv) > 2 else None
out = {}
for k, f in cases.items():
    if only and not any(o in k for o in only):
        continue
    f()
    reps = 3 if ("100000" in k or "1e4" in k) else 7
    ts = []
    for _ in range(reps):
        t0 = time.process_time()
        f()
        ts.append(time.process_time() - t0)
    out[k] = statistics.median(ts)
print(json.dumps(out))
