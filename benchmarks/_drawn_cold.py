"""The cold-start part of benchmarks/drawn_systems.py: a fresh process with an empty code cache (LIEDYN_CACHE_DIR a
new directory) times the import, building the algebra with its Casimirs and the system, the first default
``simulate`` and the first ``backend="numba"`` call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._drawn_algebras import draw
from benchmarks._drawn_common import sysseed

ROOT = Path(__file__).resolve().parents[1]

COLD_CODE = r"""
import os, sys, time, json
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import numpy as np
import benchmarks.drawn_systems                        # the benchmark's own imports, counted in "import" as always
from benchmarks._drawn_algebras import draw
from benchmarks._drawn_common import T, build_system
import servo, integrators
t1 = time.perf_counter()
label, make = draw({seed}, False)[{index}]
alg = make(); alg.casimirs()
t2 = time.perf_counter()
s, x0f = build_system(alg, {kind!r}, {sysseed})
x0 = x0f({r0})
t3 = time.perf_counter()
r = s.simulate(x0, T)
t4 = time.perf_counter()
out = dict(imp=t1 - t0, alg=t2 - t1, sys=t3 - t2, auto=t4 - t3, backend=r.backend)
try:
    t = time.perf_counter(); r = s.simulate(x0, T, backend="numba"); out["numba"] = time.perf_counter() - t
except Exception as exc:
    out["numba_error"] = str(exc)[:200]
print("COLD" + json.dumps(out))
"""


def cold(drawn, args, picks):
    rows = []
    for index, kind, r0 in picks:
        label = drawn[index][0]
        seed = sysseed(label, kind, args.seed)
        full_index = [lab for lab, _ in draw(args.seed, False)].index(label)
        with tempfile.TemporaryDirectory(prefix="liedyn-cold-") as cache:
            env = dict(os.environ, LIEDYN_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
            code = COLD_CODE.format(root=str(ROOT), seed=args.seed, index=full_index, kind=kind, sysseed=seed, r0=r0)
            t = time.perf_counter()
            try:
                p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                   timeout=args.cold_timeout)
                line = [ln for ln in p.stdout.splitlines() if ln.startswith("COLD")]
                out = json.loads(line[0][4:]) if line else {"numba_error": p.stderr[-300:]}
            except subprocess.TimeoutExpired:
                out = {"numba_error": f"timed out after {args.cold_timeout:.0f} s"}
            wall = time.perf_counter() - t
        nb = f"{out['numba']:.1f}" if "numba" in out else out.get("numba_error", "-")
        rows.append([label, kind, f"{out.get('imp', float('nan')):.2f}", f"{out.get('alg', float('nan')):.2f}",
                     f"{out.get('sys', float('nan')):.3f}", f"{out.get('auto', float('nan')):.3f}",
                     out.get("backend", "-"), nb, f"{wall:.1f}"])
        print(" | ".join(rows[-1]), flush=True)
    return rows
