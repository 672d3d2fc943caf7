"""Cases timed by benchmarks/paired_trees.py in one tree (its path the first argument; the second the
group, "core" or "all"): the public calls of the RESULTS tables that both trees run (integrate, simulate,
reconstruct with the same arguments); prints the medians as JSON.

"core": ten representative runs. "all" adds the rows of the tables of benchmarks/RESULTS.md that time the
integrators (compare_integrators: every system x method x backend at the table's rtol; RKMK4 per step;
batches: 10^4 bodies, shared and independent, and 10^5 bodies of RKMK4; dense_output: bare and with a
1000-point grid; guard_overhead; servo_reconstruction per step; servo_drift), each at the arguments its
script uses (shorter runs where the script's take seconds: marked in the case name). Times are the
process's CPU time (time.process_time: the machine is shared, and CPU time leaves out the waits for a core
that other processes add to wall time; a parallel numba loop counts all its threads, in both trees alike).
"""
import json
import statistics
import sys
import time

tree, group = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "core")
only = sys.argv[3] if len(sys.argv) > 3 else ""   # a regular expression: time only the cases it finds
sys.path.insert(0, tree)
import numpy as np  # noqa: E402
from integrators import CoadjointProblem, integrate, reconstruct  # noqa: E402
try:
    from integrators.analysis.rigid_body import free_rigid_body, REFERENCE_INERTIA, REFERENCE_M0
except ImportError:
    from integrators.rigid_body import free_rigid_body, REFERENCE_INERTIA, REFERENCE_M0
try:
    from integrators.backends.numba_kernels import available
except ImportError:
    from integrators.numba_kernels import available
from liegroups import SE2, SE3, SO3, named  # noqa: E402
from servo import EulerPoincare, Nonholonomic, ServoFirstKind, ServoSecondKind, Vakonomic  # noqa: E402

NUMBA = available()
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


def _spd(rng, n):
    B = rng.standard_normal((n, n))
    return B @ B.T / n + np.eye(n)


def _compare_integrators():
    """benchmarks/compare_integrators.py: its systems and the rtol of each row of its table."""
    out = {}
    rng = np.random.default_rng(11)
    systems = []
    for alg in ("se3", "so4"):
        g = getattr(named, alg)()
        n = g.dim
        s = ServoSecondKind(g, _spd(rng, n), a=rng.standard_normal(n), b=rng.standard_normal(n))
        x0 = s.state_from(w=0.5 * rng.standard_normal(n), lam=0.1, project=True)
        systems.append((f"ServoSecondKind {alg}", s.problem(), s.to_problem(x0)))
    J = np.array([1.0, 1.0, 0.5])
    Iinv = np.zeros((6, 6))
    Iinv[:3, :3] = np.diag(1 / J)
    top = EulerPoincare(named.se3(), inverse_inertia=Iinv, linear_term=[0, 0, 0, 0, 0, 1.0])
    systems.append(("heavy top", top.problem(), np.array([0.3, 0.1, 2.0, 0.0, np.sin(0.4), np.cos(0.4)])))
    systems.append(("Suslov", PS, zs))
    sl = ServoFirstKind(named.se2(), np.diag([1.0, 1.0, 1.0]), a=[0.0, 1.0, 0.0], b=[0.5, 1.0, -0.5])
    systems.append(("servo-sleigh", sl.problem(), np.array([1.0, 0.0, 0.5])))
    systems.append(("free rigid body", free_rigid_body(REFERENCE_INERTIA), np.array([np.cos(1.1), 0.0, np.sin(1.1)])))
    rtols = {  # (method, rtol) of the rows of the table of 2026-11-23
        "ServoSecondKind se3": [("rkmk853", 3e-8), ("rkmk45", 3e-8), ("rk853_projected", 1e-8)],
        "ServoSecondKind so4": [("rkmk853", 1e-9), ("rkmk45", 1e-9), ("rk853_projected", 3e-10)],
        "heavy top": [("rkmk853", 3e-10), ("rkmk45", 1e-9), ("rk853_projected", 3e-9)],
        "Suslov": [("rk853", 3e-7), ("rk45", 3e-7)],
        "servo-sleigh": [("rk853", 1e-4), ("rk45", 1e-6)],
        "free rigid body": [("rkmk853", 3e-9), ("rkmk45", 1e-8), ("rk853_projected", 3e-8)],
    }
    for name, P, z0 in systems:
        for meth, tol in rtols[name]:
            for be in ("numpy",) + (("numba",) if NUMBA else ()):
                out[f"ci {name} {meth} {be}"] = (lambda P=P, z0=z0, meth=meth, tol=tol, be=be:
                                                 integrate(P, z0, (0.0, 10.0), method=meth, rtol=tol, atol=tol * 1e-2,
                                                           backend=be))
    rng = np.random.default_rng(2)
    for alg in ("so3", "se3", "sl2", "so4"):   # RKMK4 per step
        g = getattr(named, alg)()
        n = g.dim
        M = _spd(rng, n)
        P = CoadjointProblem(g, lambda z, M=M: z @ M, velocity_matrix=M, record_casimirs=False)
        z0 = 0.3 * rng.standard_normal(n)
        for be in ("numpy",) + (("numba",) if NUMBA else ()):
            out[f"rkmk4 per step {alg} {be}"] = (lambda P=P, z0=z0, be=be:
                                                 integrate(P, z0, (0.0, 1.0), steps=2000, save_every=2000, backend=be))
    return out


def _batches():
    out = {}
    for meth, shared, indep in (("rkmk853", 6e-9, 1e-9), ("rk853_projected", 1e-7, 2e-8), ("rk45_projected", 2e-8, 3e-9)):
        for be in ("numpy",) + (("numba",) if NUMBA else ()):
            out[f"1e4 bodies {meth} {be} shared"] = (lambda meth=meth, tol=shared, be=be:
                                                     integrate(body, Z, (0, 10), meth, rtol=tol, atol=tol * 1e-2, backend=be,
                                                               save_every=10 ** 9))
            out[f"1e4 bodies {meth} {be} indep"] = (lambda meth=meth, tol=indep, be=be:
                                                    integrate(body, Z, (0, 10), meth, rtol=tol, atol=tol * 1e-2, backend=be,
                                                              ensemble="independent"))
    rng = np.random.default_rng(5)
    Zs = 0.3 * rng.standard_normal((100000, 3))
    kirch = EulerPoincare(named.se3(), [2.0, 1.0, 0.5, 1.0, 1.5, 2.0]).problem()
    Zk = 0.3 * rng.standard_normal((100000, 6))
    for be in ("numpy",) + (("numba",) if NUMBA else ()):
        out[f"1e5 bodies rkmk4 20 steps so3 {be}"] = lambda be=be: integrate(body, Zs, (0, 0.2), "rkmk4", steps=20, save_every=20, backend=be)
        out[f"1e5 bodies rkmk4 20 steps se3 {be}"] = lambda be=be: integrate(kirch, Zk, (0, 0.2), "rkmk4", steps=20, save_every=20, backend=be)
    return out


def _dense():
    out = {}
    for label, P, z0 in (("so3", body, m0), ("se3", P3, z3)):
        for meth in (("rkmk45", "rkmk853", "rk45", "rk853") if label == "so3" else ("rkmk45", "rkmk853")):
            out[f"dense {label} {meth} bare"] = lambda P=P, z0=z0, meth=meth: integrate(P, z0, (0, 10), meth, rtol=1e-10, atol=1e-12)
            out[f"dense {label} {meth} grid"] = lambda P=P, z0=z0, meth=meth: integrate(P, z0, (0, 10), meth, rtol=1e-10, atol=1e-12, t_eval=te)
    return out


def _guard_and_servo():
    out = {}
    s1 = ServoFirstKind(named.so3(), [2.0, 1.0, 0.5], a=[0.0, 0.0, 1.0], b=[0.0, 1.0, 1.0])
    b2 = free_rigid_body((2.0, 1.0, 0.5))
    for c in (False, True):
        out[f"guard EP se3 rkmk4 2000 steps check={c}"] = lambda c=c: integrate(P3, z3, (0, 10), "rkmk4", steps=2000, check=c)
        out[f"guard servo1 so3 rk4 2000 steps check={c}"] = lambda c=c: s1.simulate(s1.state_from(w=[1.0, 0.5, 0.0]), 10, steps=2000, method="rk4", check=c)
        out[f"guard rigid body rkmk4 20000 steps check={c}"] = lambda c=c: integrate(b2, [1.0, 0.2, 0.3], (0, 100), "rkmk4", steps=20000, check=c)
        out[f"guard suslov rk45 check={c}"] = lambda c=c: integrate(PS, zs, (0.0, 10.0), "rk45", rtol=3e-7, atol=3e-9, check=c)
    for G in (SO3, SE2, SE3):   # servo_reconstruction per step (20000 steps here, 100000 there)
        rng = np.random.default_rng(1)
        c, f = rng.standard_normal(G.dim), rng.uniform(0.5, 2.0, G.dim)
        w = (lambda s, c=c, f=f: c * np.cos(f * s) + 0.3)
        t = np.linspace(0.0, 10.0, 20001)
        for meth in ("lie_euler", "rkmk4"):
            out[f"reconstruct {G.name} {meth} 20000 steps"] = lambda G=G, w=w, t=t, meth=meth: reconstruct(G, w, G.identity(), t, method=meth)
    # servo_drift (1000 steps here, 5000 there)
    for name, seed in (("so3", 1), ("se3", 3)):
        g = named.get(name)
        n = g.dim
        rng = np.random.default_rng(seed)
        A = rng.standard_normal((n, n))
        s = ServoSecondKind(g, A @ A.T + n * np.eye(n), a=rng.standard_normal(n), b=rng.standard_normal(n))
        x0 = s.state_from(w=0.3 * rng.standard_normal(n), lam=0.2, project=True)
        for meth in ("rkmk4", "rk4"):
            out[f"drift second kind {name} {meth} 1000 steps"] = lambda s=s, x0=x0, meth=meth: s.simulate(x0, 10.0, steps=1000, method=meth)
    I = np.array([[2.0, 0.3, 0.4], [0.3, 1.5, -0.2], [0.4, -0.2, 1.0]])
    for cls in (Nonholonomic, Vakonomic):
        s = cls(named.so3(), I, a=[0, 0, 1])
        x0 = s.state_from(w=[0.8, -0.4, 0.0], **({"lam": 0.3} if cls is Vakonomic else {}))
        out[f"drift {cls.__name__} default 1000 steps"] = lambda s=s, x0=x0: s.simulate(x0, 10.0, steps=1000, method=s.default_method)
    return out


if group == "all":
    cases.update(_compare_integrators())
    cases.update(_batches())
    cases.update(_dense())
    cases.update(_guard_and_servo())

import re  # noqa: E402
out = {}
for k, f in cases.items():
    if only and not re.search(only, k):
        continue
    f()
    t0 = time.process_time(); f(); once = time.process_time() - t0
    reps = max(3, min(30, int(0.3 / max(once, 1e-6))))
    ts = []
    for _ in range(reps):
        t0 = time.process_time(); f(); ts.append(time.process_time() - t0)
    out[k] = statistics.median(ts)
print(json.dumps(out))
