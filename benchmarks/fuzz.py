"""The long fuzz (``make fuzz``): N calls (default 10^4) of the public API and the CLI drawn from the
generators of ``tests/fuzz_cases.py`` with a seeded generator, classified as ok / failed (status -1
with a message) / refused (an error of the project's hierarchy) / leak (NaN or inf with status 0) /
foreign (another exception) / hang (a call longer than BOUND seconds, or one that has not returned after
HANG_LIMIT seconds: it is interrupted and counted). Targets: 0 leaks, 0 foreign exceptions, 0 hangs. Writes
the totals to benchmarks/RESULTS.md (section ``fuzz``).

The cases are drawn in the parent from one seeded generator (the same N cases whatever the number of
workers) and classified by ``--workers`` processes (default 2, one per core: most of the time goes into the
scipy runs that spend their 1 s wall-clock budget, which a second process halves); each call is timed in
its worker. The CLI calls run in process (``catalog.cli.main`` with captured output), as a user's shell
would run the same code.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import signal
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fuzz_cases import KINDS, METHODS, classify  # noqa: E402

from _results import markdown_table, update_section  # noqa: E402

BOUND = 15.0
#: a call still running after this many seconds is interrupted (SIGALRM) and counted as a hang
HANG_LIMIT = 60.0
SHARE = {"simulation": 0.6, "special": 0.3, "cli": 0.1}


class _Hang(BaseException):
    """Raised by the alarm inside a call that runs past HANG_LIMIT (a BaseException: no except clause of
    the library or of ``classify`` may swallow it)."""


def _alarm(signum, frame):
    raise _Hang()


def _draw(n, seed):
    """The n cases (index, kind, u, x) of the seeded generator, in the order a single process draws them."""
    rng = np.random.default_rng(seed)
    kinds, probs = list(SHARE), np.array(list(SHARE.values()))
    out = []
    for i in range(n):
        kind = kinds[rng.choice(len(kinds), p=probs)]
        out.append((i, kind, rng.random(8) * 0.999, rng.uniform(-10, 10, 12)))
    return out


_DEADLINE = None


def _init(deadline):
    global _DEADLINE
    _DEADLINE = deadline
    signal.signal(signal.SIGALRM, _alarm)


def _run(case):
    """(index, kind, verdict, seconds, detail) of one case; "skipped" once the time budget is spent."""
    i, kind, u, x = case
    if time.time() > _DEADLINE:
        return i, kind, "skipped", 0.0, ""
    t0 = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, HANG_LIMIT)
    try:
        verdict, sec, detail = classify(KINDS[kind](u, x))
    except _Hang:
        verdict, sec, detail = "hang", time.perf_counter() - t0, f"interrupted after {HANG_LIMIT:g} s"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if sec > BOUND:
        verdict = "hang"
    return i, kind, verdict, sec, detail


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--budget", type=float, default=840.0, help="stop drawing after this many seconds")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--workers", type=int, default=2, help="processes classifying the cases (1: in this one)")
    args = ap.parse_args(argv)
    cases = _draw(args.n, args.seed)
    counts = {k: collections.Counter() for k in KINDS}
    worst = {k: 0.0 for k in KINDS}
    bad = []
    start = time.perf_counter()
    deadline = time.time() + args.budget
    if args.workers > 1:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(args.workers, initializer=_init, initargs=(deadline,)) as pool:
            results = list(pool.imap_unordered(_run, cases, chunksize=4))
    else:
        _init(deadline)
        results = [_run(c) for c in cases]
    results.sort()
    done = 0
    for (i, kind, verdict, sec, detail), (_, _, u, x) in zip(results, cases):
        if verdict == "skipped":
            continue
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
        f"{wall:.0f} s with {args.workers} worker process(es): Euler-Poincare and servo simulations on so(3), "
        f"se(2), se(3), sl(2), heisenberg, so(2,1) with random inertia, covectors, velocities from 1e-2 to 1e4, "
        f"1-200 steps, t_end 0.01-10 and {len(METHODS)} methods (every constrained run with status 0 audited: (a, w) "
        f"recomputed from its states); extreme and bad inputs (NaN, inf, 1e300, complex, wrong step counts) to "
        f"the algebra operations, exponentials and `integrate`; and `liedyn simulate` on catalog entries.",
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
