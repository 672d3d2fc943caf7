"""Group defect of the reconstruction g' = g w through integrators over 10^5 steps.

For SO(3), SE(2), SE(3) and the methods lie_euler and rkmk4: max over the run of the group defect
(max |R^T R - 1|, |det R - 1|, homogeneous row) with w(t) = c cos(f t) + 0.3 on t in [0, 50].
Run: .venv/bin/python benchmarks/servo_reconstruction.py [steps]
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # the repository (servo is not always on the path)

from _results import markdown_table, update_section  # noqa: E402

from liegroups import SE2, SE3, SO3  # noqa: E402
from servo import reconstruct_motion  # noqa: E402


def main(steps=100_000):
    rows = []
    for G in (SO3, SE2, SE3):
        rng = np.random.default_rng(1)
        c, f = rng.standard_normal(G.dim), rng.uniform(0.5, 2.0, G.dim)
        t = np.linspace(0.0, 50.0, steps + 1)
        for method in ("lie_euler", "rkmk4"):
            start = time.perf_counter()
            res = reconstruct_motion((t, lambda s: c * np.cos(f * s) + 0.3), group=G, method=method)
            wall = time.perf_counter() - start
            defect = float(np.max(res.constraints["group_defect"]))
            rows.append([G.name, method, res.nsteps, f"{defect:.2e}", "yes" if defect < 1e-12 else "NO",
                         f"{wall:.1f}"])
            print(*rows[-1], flush=True)
    table = markdown_table(["group", "method", "steps", "max group defect", "< 1e-12", "wall s"], rows)
    update_section("servo_reconstruction", "## Servo: group reconstruction defect\n\n" + table,
                   f"python benchmarks/servo_reconstruction.py {steps}")
    print(table)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
