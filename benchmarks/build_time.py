"""Time to build a system on a new algebra: the algebra from its structure constants, its Casimirs and its
problem (issue 24, "time to the first result").

Each row is a fresh process that imports the package, builds the algebra (so(5) and sp(4) in a random basis,
a random solvable one: n(4) plus two random diagonal matrices, in a random basis; the draw's builders of
benchmarks/_drawn_algebras.py, taken from this tree so that the same code runs on an older tree, and imported after
the timed imports, which stay the package's), then
``servo.lie.EulerPoincare(alg, I).problem()`` (which finds the Casimirs and names them "casimir:<F>"). Times
are CPU time of the process (``time.process_time``: the machine is shared), the median of ``--reps`` fresh
processes for each tree, the trees interleaved (this tree and ``--old``, e.g. the main checkout, through
PYTHONPATH), once with OpenBLAS's default thread count and once with OPENBLAS_NUM_THREADS=1. The load average
is printed and written with the table. "names equal" compares the Casimir names of the two trees.

Usage: ``PYTHONPATH=. python benchmarks/build_time.py [--old /work/main] [--reps 5] [--no-write]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _results import markdown_table, update_section  # noqa: E402

ALGEBRAS = [("so(5) random basis", "so5r"), ("sp(4) random basis", "sp4r"),
            ("n(4) + 2 diag random basis (solvable)", "solv")]

CHILD = r"""
import time
T = time.process_time
t0 = T()
import json, numpy as np
from liegroups import named
from servo.lie import EulerPoincare
t1 = T()
# the draw's builders, from this tree's benchmarks/ whichever tree is measured (appended to sys.path: the measured
# tree's liegroups, through PYTHONPATH, stays the one they use); they import only numpy and liegroups, loaded above
import sys
sys.path.append(BENCH)
from _drawn_algebras import random_basis, solvable_triangular, sp4

rng = np.random.default_rng(24)
key = KEY
base = {"so5r": lambda: named.so(5), "sp4r": sp4, "solv": lambda: solvable_triangular(rng, 4, 2)}[key]()
alg = random_basis(rng, base)
n = alg.dim
A = rng.standard_normal((n, n))
P = EulerPoincare(alg, A @ A.T + n * np.eye(n)).problem()
t2 = T()
names = sorted(k for k in P.invariants if k.startswith("casimir:"))
print("BUILD" + json.dumps(dict(imp=t1 - t0, build=t2 - t1, total=t2 - t0, dim=n, names=names)))
"""


def child(key):
    """The fresh process's script for the algebra ``key``."""
    return CHILD.replace("KEY", repr(key)).replace("BENCH", repr(str(ROOT / "benchmarks")))


def run(tree, key, one_thread, timeout):
    env = dict(os.environ, PYTHONPATH=str(tree), MPLBACKEND="Agg")
    env.pop("OPENBLAS_NUM_THREADS", None)
    if one_thread:
        env["OPENBLAS_NUM_THREADS"] = "1"
    try:
        p = subprocess.run([sys.executable, "-c", child(key)], env=env, capture_output=True,
                           text=True, timeout=timeout, cwd="/")
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("BUILD")]
    return json.loads(line[0][5:]) if line else {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:120]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="/work/main", help="the tree to compare with (through PYTHONPATH)")
    ap.add_argument("--reps", type=int, default=5, help="fresh processes per tree and row (median)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--no-write", action="store_true", help="print, do not write RESULTS.md")
    args = ap.parse_args()
    old = Path(args.old).resolve()
    git = lambda p: subprocess.run(["git", "-C", str(p), "rev-parse", "--short", "HEAD"], capture_output=True,
                                   text=True).stdout.strip()
    loads = [os.getloadavg()[0]]
    print(f"load average {os.getloadavg()}; old tree {old} at {git(old)}, new {ROOT} at {git(ROOT)}", flush=True)
    rows = []
    for one_thread in (False, True):
        for label, key in ALGEBRAS:
            res = {"old": [], "new": []}
            for _ in range(args.reps):                     # interleaved: old, new, old, new, ...
                for which, tree in (("old", old), ("new", ROOT)):
                    r = run(tree, key, one_thread, args.timeout)
                    res[which].append(r)
                    loads.append(os.getloadavg()[0])
            med = {}
            for which in res:
                ok = [r for r in res[which] if "error" not in r]
                if len(ok) < len(res[which]):
                    print(f"  {which}: {[r['error'] for r in res[which] if 'error' in r][0]}")
                med[which] = {k: statistics.median(r[k] for r in ok) if ok else float("nan")
                              for k in ("imp", "build", "total")}
            names_equal = all(a.get("names") == b.get("names") for a, b in zip(res["old"], res["new"]))
            ncas = len(res["new"][0].get("names", []))
            row = [label, res["new"][0].get("dim", "?"), ncas, "1" if one_thread else "default",
                   f"{med['old']['build']:.2f}", f"{med['new']['build']:.2f}",
                   f"{med['old']['total']:.2f}", f"{med['new']['total']:.2f}", "yes" if names_equal else "NO"]
            rows.append(row)
            print("  " + " | ".join(str(v) for v in row), flush=True)
    header = ["algebra", "dim", "Casimirs", "BLAS threads", f"build, old {git(old)} (s)", "build, new (s)",
              "with imports, old (s)", "with imports, new (s)", "names equal"]
    table = markdown_table(header, rows)
    print(table)
    md = ["## Building a system on a new algebra (issue 24)", "",
          "CPU time (`time.process_time`) of a fresh process, median of "
          f"{args.reps} per cell, old and new trees interleaved; *build* = the algebra from its structure "
          "constants in a random basis, then `servo.lie.EulerPoincare(alg, I).problem()` (the Casimir search and "
          "the Casimir names included), *with imports* adds `import numpy, liegroups, servo.lie`. BLAS threads "
          "'default': OPENBLAS_NUM_THREADS unset. The new tree runs the Casimir search on one BLAS thread "
          "(threadpoolctl, when installed) and writes the Casimir names from the terms instead of sympy's printer. "
          "*names equal*: the Casimir names of the two trees, process by process; they differ in the 12th decimal of "
          "some coefficients when the old tree ran its search on several BLAS threads (the float search rounds "
          "to 12 decimals, and its SVDs round differently on several threads), so a random basis's names "
          "depended on OPENBLAS_NUM_THREADS; the new tree always searches on one thread. "
          f"Load average (1 min) during the run: {min(loads):.1f} to {max(loads):.1f} on 2 cores.", "", table]
    if not args.no_write:
        update_section("build_time", "\n".join(md), "PYTHONPATH=. python benchmarks/build_time.py")


if __name__ == "__main__":
    main()
