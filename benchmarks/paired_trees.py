"""Two trees of the library, timed on the same cases in the same run: paired, interleaved (the order of the
trees alternates per repetition), each in a fresh process (``benchmarks/paired/case.py``: medians of
repeated calls through the public ``integrate``), for the "no figure more than 10% worse" check of a
refactor. Usage: ``git worktree add /tmp/old REV`` then ``python benchmarks/paired_trees.py --old /tmp/old``.
``--cases so3_fixed`` times ``benchmarks/paired/so3_fixed.py`` instead (the fixed-step so(3) rows: one
trajectory and an ensemble of 10^4, numpy backend).

Writes its table to benchmarks/RESULTS.md (section ``paired_trees``, or ``paired_trees_<cases>``). With
``NUMBA_NUM_THREADS=1`` the parallel kernels' CPU time is one thread's work (with several threads it also
counts the threads' waits, which swing a row by up to 25% between runs on a shared machine: a kernel whose
text is the old tree's measured 0.98-1.25).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _results import markdown_table, update_section

HERE = Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True, help="the other tree (a git worktree of an older revision)")
    ap.add_argument("--new", default=str(HERE.parent))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="case", help="the case file in benchmarks/paired/ (without .py)")
    ap.add_argument("--group", default="core", choices=["core", "all"],
                    help="for the case file 'case': core, ten representative runs; all, the rows of every "
                         "integrator table of RESULTS.md")
    ap.add_argument("--only", default="", help="a regular expression: time only the cases whose name it finds "
                                               "(their own section, paired_trees_only)")
    args = ap.parse_args()
    trees = {"old": args.old, "new": args.new}
    res = {k: [] for k in trees}
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    for rep in range(args.repeat):
        order = list(trees.items()) if rep % 2 == 0 else list(trees.items())[::-1]
        for name, tree in order:
            out = subprocess.run([sys.executable, str(HERE / "paired" / f"{args.cases}.py"), tree, args.group, args.only],
                                 capture_output=True,
                                 text=True, env=env, cwd="/tmp", check=True)
            res[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    rows, ratios = [], []
    for k in res["old"][0]:
        o = statistics.median(r[k] for r in res["old"])
        n = statistics.median(r[k] for r in res["new"])
        # the paired ratio: new / old within each repetition (same load), median over the repetitions
        p = statistics.median(a[k] / b[k] for a, b in zip(res["new"], res["old"]))
        ratios.append((p, k))
        rows.append([k, f"{1e3 * o:.3f}", f"{1e3 * n:.3f}", f"{n / o:.2f}", f"{p:.2f}"])
    worse = sorted(r for r in ratios if r[0] > 1.10)
    rev = subprocess.run(["git", "-C", args.old, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    threads = os.environ.get("NUMBA_NUM_THREADS")   # one thread: a parallel kernel's CPU time is its work alone
    md = (f"Old tree {rev} against this tree, {args.repeat} interleaved fresh-process runs each (median of the "
          f"calls within a run, median over runs)" + (f", NUMBA_NUM_THREADS={threads}" if threads else "")
          + f"; load average {os.getloadavg()[0]:.1f}. {len(rows)} cases; "
          f"{len(worse)} more than 10% slower (paired ratio)"
          + (": " + ", ".join(f"{k} {p:.2f}" for p, k in worse) if worse else "") + ".\n\n"
          + markdown_table(["case", "old ms", "new ms", "new / old (medians)", "paired ratio (median)"], rows))
    section = "paired_trees" if args.cases == "case" else f"paired_trees_{args.cases}"
    if args.cases == "case" and args.group == "all":
        section += "_all"
    if args.only:
        section += "_only"
    extra = (("" if args.cases == "case" else f" --cases {args.cases}") + (" --group all" if args.group == "all" else "")
             + (f" --only '{args.only}'" if args.only else ""))
    update_section(section, md, (f"NUMBA_NUM_THREADS={threads} " if threads else "")
                   + f"python benchmarks/paired_trees.py --old <worktree of {rev}>{extra} --repeat {args.repeat}")
    print(md)


if __name__ == "__main__":
    main()
