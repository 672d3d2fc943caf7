"""The long fuzz (``make fuzz``): N calls (default 10^4) of the public API and the CLI drawn from the
generators of ``tests/fuzz_cases.py`` with a seeded generator, classified as ok / failed (status -1
with a message) / refused (an error of the project's hierarchy) / leak (NaN or inf with status 0) /
foreign (another exception) / hang (a call longer than BOUND seconds). Targets: 0 leaks, 0 foreign
exceptions, 0 hangs. Writes the totals to benchmarks/RESULTS.md (section ``fuzz``).
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fuzz_cases import KINDS, classify  # noqa: E402

from _results import markdown_table, update_section  # noqa: E402

BOUND = 15.0
SHARE = {"simulation": 0.6, "special": 0.3, "cli": 0.1}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--budget", type=float, default=840.0, help="stop drawing after this many seconds")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    counts = {k: collections.Counter() for k in KINDS}
    worst = {k: 0.0 for k in KINDS}
    bad = []
    start = time.perf_counter()
    done = 0
    kinds, probs = list(SHARE), np.array(list(SHARE.values()))
    for i in range(args.n):
        if time.perf_counter() - start > args.budget:
            break
        kind = kinds[rng.choice(len(kinds), p=probs)]
        u, x = rng.random(8) * 0.999, rng.uniform(-10, 10, 12)
        verdict, sec, detail = classify(KINDS[kind](u, x))
        if sec > BOUND:
            verdict = "hang"
        counts[kind][verdict] += 1
        worst[kind] = max(worst[kind], sec)
        if verdict in ("leak", "foreign", "hang"):
            bad.append((kind, verdict, detail, u.round(3).tolist(), x.round(3).tolist()))
        done += 1
    wall = time.perf_counter() - start
    cols = ["ok", "failed", "refused", "leak", "foreign", "hang"]
    rows = [[k, sum(counts[k].values())] + [counts[k][c] for c in cols] + [f"{worst[k]:.2f}"] for k in KINDS]
    tot = [sum(counts[k][c] for k in KINDS) for c in cols]
    rows.append(["total", done] + tot + [f"{max(worst.values()):.2f}"])
    md = "\n\n".join([
        f"{done} fuzzed calls (seed {args.seed}; {done} of the {args.n} requested within the time budget) in "
        f"{wall:.0f} s: Euler-Poincare and servo simulations on so(3), se(2), se(3), sl(2), heisenberg, "
        f"so(2,1) with random inertia, covectors, velocities from 1e-2 to 1e4, 1-200 steps, t_end 0.01-10 "
        f"and 10 methods; extreme and bad inputs (NaN, inf, 1e300, complex, wrong step counts) to the algebra "
        f"operations, exponentials and `integrate`; and `liedyn simulate` on catalog entries.",
        markdown_table(["cases", "calls"] + cols + ["slowest [s]"], rows),
        f"Targets: 0 leak, 0 foreign, 0 hang (a call over {BOUND:g} s): "
        f"{'met' if tot[3] == tot[4] == tot[5] == 0 else 'MISSED'}."])
    for b in bad[:20]:
        md += f"\n\n- {b}"
    print(md)
    if not args.no_write:
        update_section("fuzz", md, f"make fuzz (python benchmarks/fuzz.py --n {args.n})")
    return 0 if tot[3] == tot[4] == tot[5] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
