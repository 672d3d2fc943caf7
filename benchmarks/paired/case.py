"""Cases timed by benchmarks/paired_trees.py in one tree (its path the first argument): the public
integrate on the runs of the RESULTS tables; prints the medians as JSON."""
import sys, time, statistics, json
tree = sys.argv[1]; sys.path.insert(0, tree)
import numpy as np
from integrators import integrate
try:
    from integrators.analysis.rigid_body import free_rigid_body, REFERENCE_INERTIA, REFERENCE_M0
except ImportError:
    from integrators.rigid_body import free_rigid_body, REFERENCE_INERTIA, REFERENCE_M0
from liegroups import named
from servo import EulerPoincare, Nonholonomic
body = free_rigid_body(REFERENCE_INERTIA); m0 = np.array(REFERENCE_M0)
se3 = EulerPoincare(named.se3(), [2.0, 1.0, 0.5, 1.0, 1.0, 1.0]); P3 = se3.problem(); z3 = np.array([1.0, 0.3, 0.2, 0.1, 0.5, 0.2])
sus = Nonholonomic(named.so3(), np.diag(REFERENCE_INERTIA), a=[1.0, 0.5, -0.2]); PS, zs = sus.problem(), sus.state_from(w=[0.6, 0.4, 0.0], project=True)
Z = np.random.default_rng(0).standard_normal((10000, 3))
te = np.linspace(0, 10, 1000)
cases = {
 "so3 rk853_projected numpy": lambda: integrate(body, m0, (0, 10), "rk853_projected", rtol=1e-10, atol=1e-12, backend="numpy"),
 "so3 rk853_projected numba": lambda: integrate(body, m0, (0, 10), "rk853_projected", rtol=1e-10, atol=1e-12, backend="numba"),
 "so3 rkmk853 numba": lambda: integrate(body, m0, (0, 10), "rkmk853", rtol=1e-10, atol=1e-12, backend="numba"),
 "se3 rkmk853 numpy": lambda: integrate(P3, z3, (0, 10), "rkmk853", rtol=1e-10, atol=1e-12, backend="numpy"),
 "se3 rkmk45 numpy": lambda: integrate(P3, z3, (0, 10), "rkmk45", rtol=1e-10, atol=1e-12, backend="numpy"),
 "se3 rkmk4 2000 steps numpy": lambda: integrate(P3, z3, (0, 10), "rkmk4", steps=2000, backend="numpy"),
 "suslov rk45 numba": lambda: integrate(PS, zs, (0, 10), "rk45", rtol=3e-7, atol=3e-9, backend="numba"),
 "so3 rk853 grid numpy": lambda: integrate(body, m0, (0, 10), "rk853", rtol=1e-10, atol=1e-12, t_eval=te, backend="numpy"),
 "1e4 bodies rk853_projected numba indep": lambda: integrate(body, Z, (0, 10), "rk853_projected", rtol=1e-7, atol=1e-9, backend="numba", ensemble="independent"),
 "1e4 bodies rk853_projected numpy shared": lambda: integrate(body, Z, (0, 10), "rk853_projected", rtol=1e-7, atol=1e-9, backend="numpy"),
}
out = {}
for k, f in cases.items():
    f(); f()
    reps = 3 if "1e4" in k else 30
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    out[k] = statistics.median(ts)
print(json.dumps(out))
