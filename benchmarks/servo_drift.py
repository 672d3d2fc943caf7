"""Drift of the first integrals and of the constraint for the servo systems.

Second kind (so(3), se(3), random I, a, b): relative drift of every shifted Casimir F(m + lambda b) and
max |(a, w)| for the default Lie-Poisson "rkmk4" against "rk4" and scipy DOP853 (rtol 1e-10).
Nonholonomic (Suslov, so(3)) and vakonomic: energy drift and max |(a, w)|.
Run: .venv/bin/python benchmarks/servo_drift.py [steps]
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from _results import markdown_table, update_section  # noqa: E402

from liegroups import named  # noqa: E402
from servo import Nonholonomic, ServoSecondKind, Vakonomic  # noqa: E402


def _random(name, seed):
    g = named.get(name)
    n = g.dim
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return g, A @ A.T + n * np.eye(n), rng.standard_normal(n), rng.standard_normal(n), rng


def _run(system, x0, T, steps, method):
    opts = {"rtol": 1e-10, "atol": 1e-12} if method.startswith("scipy") else {}
    start = time.perf_counter()
    res = system.simulate(x0, T, steps=steps, method=method, **opts)
    return res, time.perf_counter() - start


def main(steps=5000, T=50.0):
    rows = []
    for name, seed in (("so3", 1), ("se3", 3)):
        g, I, a, b, rng = _random(name, seed)
        s = ServoSecondKind(g, I, a=a, b=b)
        x0 = s.state_from(w=0.3 * rng.standard_normal(g.dim), lam=0.2, project=True)
        cas = [f for f in s.first_integrals() if f.kind == "casimir"]
        for method in ("rkmk4", "rk4", "scipy:DOP853"):
            res, wall = _run(s, x0, T, steps, method)
            drift = max(float(np.max(np.abs(f(res.y) - f(res.y[0])) / max(abs(f(res.y[0])), 1e-300))) for f in cas)
            rows.append([f"second kind on {g.name}", method, steps, f"{drift:.1e}",
                         f"{np.max(np.abs(s.constraint_residual(res.y))):.1e}", "-", f"{wall:.1f}"])
            print(*rows[-1], flush=True)
    I = np.array([[2.0, 0.3, 0.4], [0.3, 1.5, -0.2], [0.4, -0.2, 1.0]])
    for cls, label in ((Nonholonomic, "Suslov (nonholonomic)"), (Vakonomic, "vakonomic")):
        s = cls(named.so3(), I, a=[0, 0, 1])
        x0 = s.state_from(w=[0.8, -0.4, 0.0], **({"lam": 0.3} if cls is Vakonomic else {}))
        for method in (s.default_method, "scipy:DOP853"):
            res, wall = _run(s, x0, T, steps, method)
            E = s.energy(res.y)
            rows.append([f"{label} on so(3)", method, steps, "-",
                         f"{np.max(np.abs(s.constraint_residual(res.y))):.1e}",
                         f"{np.max(np.abs(E - E[0])) / E[0]:.1e}", f"{wall:.1f}"])
            print(*rows[-1], flush=True)
    table = markdown_table(["system", "method", "steps (output grid for scipy)", "Casimir drift (rel)",
                            "max |(a, w)|", "energy drift (rel)", "wall s"], rows)
    update_section("servo_drift", f"## Servo: drift of integrals and constraints, t in [0, {T:g}]\n\n"
                   + table, f"python benchmarks/servo_drift.py {steps}")
    print(table)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
